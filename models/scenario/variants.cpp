#include "models/scenario/variants.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rsim {

using json = nlohmann::json;

namespace {

std::string escape_key(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// A variant's name becomes a folder name: one safe path component.
bool folder_safe(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.' || name[0] == '-') return false;
  if (name.size() >= 5 && name.compare(name.size() - 5, 5, ".html") == 0) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::vector<std::string> consumer_names(const json& doc) {
  std::vector<std::string> names;
  if (const auto it = doc.find("consumers"); it != doc.end() && it->is_array())
    for (const auto& c : *it)
      if (c.is_object() && c.contains("name") && c["name"].is_string())
        names.push_back(c["name"].get<std::string>());
  return names;
}

// A problem of the patched scenario, told with the variant and, where the path goes through
// /consumers/N, the consumer's name; and where the patch itself sets the value, the patch's path.
std::string variant_problem(const std::string& name, const std::string& problem,
                            const json& patched, const json& patch) {
  std::string text = fmt::format("variant \"{}\": {}", name, problem);
  const auto colon = problem.find(": ");
  if (colon == std::string::npos || problem.empty() || problem[0] != '/') return text;
  std::string path = problem.substr(0, colon);
  std::string patch_path = path;
  std::string consumer;
  if (path.rfind("/consumers/", 0) == 0) {
    const std::size_t start = 11;
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string index = path.substr(start, end - start);
    if (!index.empty() &&
        std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const std::size_t i = std::stoul(index);
      const json& cs = patched["consumers"];
      if (cs.is_array() && i < cs.size() && cs[i].is_object() && cs[i].contains("name") &&
          cs[i]["name"].is_string()) {
        consumer = cs[i]["name"].get<std::string>();
        patch_path = "/consumers/" + escape_key(consumer) + path.substr(end);
      }
    }
  }
  bool set_by_patch = false;
  try {
    set_by_patch = patch.contains(json::json_pointer(patch_path));
  } catch (const json::exception&) {
    set_by_patch = false;
  }
  if (set_by_patch)
    text += fmt::format(" (set by /variants/{}{})", escape_key(name), patch_path);
  else if (!consumer.empty())
    text += fmt::format(" (consumer \"{}\")", consumer);
  return text;
}

}  // namespace

json merge_patch(const json& target, const json& patch) {
  json out = target;
  out.merge_patch(patch);
  return out;
}

std::vector<std::string> settings_variant_names(const json& doc) {
  std::vector<std::string> names;
  if (!doc.is_object()) return names;
  const auto it = doc.find("variants");
  if (it == doc.end() || !it->is_object()) return names;
  for (const auto& [k, v] : it->items()) names.push_back(k);
  return names;  // json objects iterate in key order
}

json apply_settings_variant(const json& doc, const std::string& name,
                            std::vector<std::string>& problems) {
  json base = doc;
  base.erase("variants");
  const std::string at = "/variants/" + escape_key(name);
  const json& patch = doc.at("variants").at(name);
  if (!patch.is_object()) {
    problems.push_back(fmt::format(
        "{}: must be an object of overrides (a JSON Merge Patch of the scenario), got {}", at,
        shown(patch)));
    return base;
  }
  if (patch.contains("variants"))
    problems.push_back(at + "/variants: a variant cannot have variants of its own");
  if (patch.contains("seed"))
    problems.push_back(at +
                       "/seed: every variant runs on the scenario's seed (or --seed); set `seed` "
                       "at the top level");
  json rest = patch;
  rest.erase("variants");
  rest.erase("consumers");
  json out = merge_patch(base, rest);
  const auto it = patch.find("consumers");
  if (it == patch.end()) return out;
  if (it->is_null()) {
    out.erase("consumers");
    return out;
  }
  if (!it->is_object()) {
    problems.push_back(
        fmt::format("{}/consumers: must be an object keyed by consumer name, e.g. "
                    "{{\"A\": {{\"config\": {{\"session.timeout.ms\": 10000}}}}}}, got {}",
                    at, shown(*it)));
    return out;
  }
  if (!out.contains("consumers") || !out["consumers"].is_array()) return out;  // the base's problem
  json& consumers = out["consumers"];
  const std::vector<std::string> known = consumer_names(base);
  for (const auto& [cname, cpatch] : it->items()) {
    const std::string cat = at + "/consumers/" + escape_key(cname);
    std::size_t found = consumers.size();
    for (std::size_t i = 0; i < consumers.size(); ++i)
      if (consumers[i].is_object() && consumers[i].value("name", json()) == json(cname)) found = i;
    if (cpatch.is_null()) {
      if (found == consumers.size()) {
        const std::string guess = closest_match(cname, known);
        problems.push_back(fmt::format(
            "{}: null removes a consumer, but the scenario has no consumer \"{}\"{}", cat, cname,
            guess.empty() ? "" : fmt::format("; did you mean \"{}\"?", guess)));
      } else {
        consumers.erase(found);
      }
      continue;
    }
    if (!cpatch.is_object()) {
      problems.push_back(fmt::format(
          "{}: must be an object of the consumer's overrides or null, got {}", cat, shown(cpatch)));
      continue;
    }
    if (cpatch.contains("name") && cpatch["name"] != json(cname)) {
      problems.push_back(
          fmt::format("{}/name: a variant cannot rename a consumer (the key is its name), got {}",
                      cat, shown(cpatch["name"])));
      continue;
    }
    if (found != consumers.size()) {
      consumers[found].merge_patch(cpatch);
      continue;
    }
    // A new consumer: it needs what every consumer needs; a near miss is a typo.
    if (!cpatch.contains("group") || !cpatch.contains("topics")) {
      const std::string guess = closest_match(cname, known);
      problems.push_back(fmt::format(
          "{}: the scenario has no consumer \"{}\"{}; a new consumer needs \"group\" and "
          "\"topics\"",
          cat, cname, guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess)));
      continue;
    }
    json c{{"name", cname}};
    c.merge_patch(cpatch);
    consumers.push_back(std::move(c));
  }
  return out;
}

std::vector<SettingsVariant> expand_settings_variants(const json& doc, const std::string& source,
                                                      const std::vector<std::string>& pick,
                                                      const std::string& sha256) {
  std::vector<std::string> problems;
  json base = doc;
  if (base.is_object()) base.erase("variants");
  ScenarioSpec base_spec;
  try {
    base_spec = parse_scenario(base, source);
  } catch (const ScenarioError& e) {
    problems = e.problems();
  }
  const std::set<std::string> base_problems(problems.begin(), problems.end());
  std::vector<SettingsVariant> out;
  const bool has_variants = doc.is_object() && doc.contains("variants");
  if (!has_variants) {
    for (const auto& p : pick)
      problems.push_back(fmt::format("--variant {}: the scenario has no `variants`", p));
    if (!problems.empty()) throw ScenarioError(source, problems);
    base_spec.sha256 = sha256;
    out.push_back(SettingsVariant{"", base, std::move(base_spec)});
    return out;
  }
  const json& variants = doc["variants"];
  if (!variants.is_object() || variants.empty()) {
    problems.push_back(
        fmt::format("/variants: must be a non-empty object of name -> overrides, e.g. "
                    "{{\"static\": {{\"consumers\": {{\"A\": {{\"config\": "
                    "{{\"group.instance.id\": \"a\"}}}}}}}}}}, got {}",
                    shown(variants)));
    throw ScenarioError(source, problems);
  }
  const std::vector<std::string> names = settings_variant_names(doc);
  for (const auto& n : names)
    if (!folder_safe(n))
      problems.push_back(
          fmt::format("/variants/{}: a variant's name is a folder name: letters, digits, '.', '_' "
                      "and '-' (not first), at most 100, not ending in .html",
                      escape_key(n)));
  std::vector<std::string> chosen;
  for (const auto& p : pick) {
    if (std::find(names.begin(), names.end(), p) == names.end()) {
      const std::string guess = closest_match(p, names);
      problems.push_back(
          fmt::format("--variant {}: no such variant{}; the scenario's variants: {}", p,
                      guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess),
                      fmt::join(names, ", ")));
    } else if (std::find(chosen.begin(), chosen.end(), p) != chosen.end()) {
      problems.push_back(fmt::format("--variant {}: given twice", p));
    } else {
      chosen.push_back(p);
    }
  }
  // Picked variants run in the scenario's (name) order, whatever the order of --variant.
  std::vector<std::string> run;
  for (const auto& n : names)
    if (pick.empty() || std::find(chosen.begin(), chosen.end(), n) != chosen.end())
      run.push_back(n);
  for (const auto& n : run) {
    std::vector<std::string> patch_problems;
    json patched = apply_settings_variant(doc, n, patch_problems);
    if (!patch_problems.empty()) {
      for (auto& p : patch_problems) problems.push_back(std::move(p));
      continue;
    }
    try {
      ScenarioSpec spec = parse_scenario(patched, source);
      spec.sha256 = sha256;
      out.push_back(SettingsVariant{n, std::move(patched), std::move(spec)});
    } catch (const ScenarioError& e) {
      for (const auto& p : e.problems())
        if (base_problems.count(p) == 0)
          problems.push_back(variant_problem(n, p, patched, variants[n]));
    }
  }
  if (!problems.empty()) throw ScenarioError(source, problems);
  return out;
}

std::vector<SettingsVariant> load_settings_variants(const std::string& path,
                                                    const std::vector<std::string>& pick) {
  std::string sha;
  try {
    sha = load_scenario_file(path).sha256;
  } catch (const ScenarioError& e) {
    // The base's own problems, with the variants' too when the file is JSON with `variants`.
    const bool json_paths =
        std::all_of(e.problems().begin(), e.problems().end(),
                    [](const std::string& p) { return !p.empty() && p[0] == '/'; });
    if (!json_paths) throw;
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    json doc;
    try {
      doc = json::parse(bytes);
    } catch (const json::exception&) {
      throw e;
    }
    if (!doc.is_object() || !doc.contains("variants")) throw;
    expand_settings_variants(doc, path, pick, sha256_hex(bytes));
    throw;
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return expand_settings_variants(json::parse(bytes), path, pick, sha);
}

}  // namespace rsim
