#include "tools/check.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "build_info.hpp"
#include "reports/escape.hpp"
#include "sim/assert.hpp"
#include "tools/golden.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kBadInput = 2;
constexpr int kInternalError = 3;

/// One test case of the report.
struct Case {
  std::string name;
  bool passed = false;
  bool skipped = false;  // a warning: nothing to check
  std::string failure;   // the failure line (or the warning)
  double time_s = 0;     // virtual seconds: the instant the assertion is about
  ExpectResult result;   // for assertions
  bool assertion = false;
};

/// One testsuite: a scenario under one variant (or an invalid scenario).
struct Suite {
  std::string scenario, file, variant;
  std::uint64_t seed = 0;
  double time_s = 0;  // the variant's simulated duration
  std::vector<Case> cases;
};

struct ScenarioResult {
  std::string file, out_name;
  std::vector<Suite> suites;
  std::vector<VariantOutput> outputs;
  std::string golden_written;
  std::string write_error;  // --out could not be written
  bool invalid = false, internal_error = false;
};

std::string xml_escape(const std::string& s) { return reports::markup_escape(s); }

std::string md_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += "<br>";
    else out += c;
  }
  return out;
}

ScenarioResult check_one(const std::string& file, const std::string& out_name, bool update_golden,
                         const std::string& out_root, bool force, const ModelOptions& model) {
  ScenarioResult res;
  res.file = file;
  res.out_name = out_name;
  auto invalid = [&](const std::string& why, bool internal) {
    Suite s;
    s.scenario = file;
    s.file = file;
    s.variant = "-";
    Case c;
    c.name = "scenario is valid";
    c.failure = why;
    s.cases.push_back(std::move(c));
    res.suites.push_back(std::move(s));
    (internal ? res.internal_error : res.invalid) = true;
  };
  ScenarioSpec spec;
  try {
    spec = load_checked_scenario(file);
    // With --out, each variant streams its files into DIR/<scenario>/ (staged) as it runs.
    try {
      std::optional<StagedOutput> staged;
      RunOptions options;
      options.model = model;
      if (!out_root.empty()) {
        staged.emplace(fs::path(out_root) / out_name, OutputOwner{spec.name, file, force});
        staged->claim(spec.protocols);
        options.staged = &*staged;
      }
      try {
        res.outputs = run_variants(spec, {}, std::nullopt, options);
        if (staged) staged->commit();
      } catch (const OutputError& e) {
        if (staged) throw staged->retold(e);
        throw;
      }
    } catch (const OutputError& e) {
      res.write_error = e.what();
      res.outputs = run_variants(spec, {}, std::nullopt);
    }
  } catch (const ScenarioError& e) {
    invalid(e.what(), false);
    return res;
  } catch (const sim::InvariantViolation& e) {
    invalid(fmt::format("internal error (a model invariant broke; please report): {} [seed {}]", e.what(), spec.seed), true);
    return res;
  } catch (const std::exception& e) {
    invalid(fmt::format("internal error: {}", e.what()), true);
    return res;
  }
  // Golden: compare against the stored file, or rewrite it.
  const std::string gpath = golden_path(file);
  ojson golden;
  if (update_golden) {
    std::vector<std::pair<std::string, ojson>> variants;
    for (const auto& o : res.outputs) variants.emplace_back(o.protocol, o.summary);
    res.golden_written = golden_file(spec.name, variants).dump(2) + "\n";
  } else if (fs::exists(gpath)) {
    std::ifstream in(gpath);
    try {
      golden = ojson::parse(in);
    } catch (const std::exception& e) {
      invalid(fmt::format("{}: not a golden file: {}", gpath, e.what()), false);
      return res;
    }
  }
  for (const auto& o : res.outputs) {
    Suite s;
    s.scenario = spec.name;
    s.file = file;
    s.variant = o.protocol;
    s.seed = spec.seed;
    s.time_s = static_cast<double>(spec.duration.count()) / 1e6;
    for (const auto& e : o.expectations) {
      Case c;
      c.assertion = true;
      c.name = fmt::format("expect[{}] {}", e.index, e.what);
      c.passed = e.passed;
      if (!e.passed) c.failure = e.describe(/*with_protocol=*/false);
      c.time_s = static_cast<double>(e.at_us) / 1e6;
      c.result = e;
      s.cases.push_back(std::move(c));
    }
    if (!golden.is_null()) {
      Case c;
      c.name = "matches golden " + fs::path(gpath).filename().string();
      c.time_s = s.time_s;
      if (!golden.contains("variants") || !golden.at("variants").contains(o.protocol)) {
        c.failure = fmt::format("{} has no variant \"{}\" (rerun with --update-golden)", gpath, o.protocol);
      } else {
        const auto diff = golden_diff(golden.at("variants").at(o.protocol), golden_of(o.summary),
                                      golden.value("tolerances", ojson::object()));
        c.passed = diff.empty();
        std::string text;
        for (const auto& d : diff) text += "\n    " + d;
        if (!c.passed) c.failure = fmt::format("differs from {}:{}", gpath, text);
      }
      s.cases.push_back(std::move(c));
    }
    if (s.cases.empty()) {
      Case c;
      c.name = "assertions";
      c.skipped = true;
      c.failure = "no assertions for this variant (add an `expect` list, or a golden file with --update-golden)";
      s.cases.push_back(std::move(c));
    }
    res.suites.push_back(std::move(s));
  }
  return res;
}

std::string junit_of(const std::vector<ScenarioResult>& results) {
  int tests = 0, failures = 0, skipped = 0;
  for (const auto& r : results)
    for (const auto& s : r.suites)
      for (const auto& c : s.cases) {
        ++tests;
        if (c.skipped) ++skipped;
        else if (!c.passed) ++failures;
      }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"rebalance-sim check\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
                   tests, failures, skipped);
  for (const auto& r : results) {
    for (const auto& s : r.suites) {
      int f = 0, k = 0;
      for (const auto& c : s.cases) {
        if (c.skipped) ++k;
        else if (!c.passed) ++f;
      }
      const std::string suite_name = s.variant == "-" ? s.file : fmt::format("{} [{}]", s.scenario, s.variant);
      x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       xml_escape(suite_name), s.cases.size(), f, k, s.time_s);
      x += "    <properties>\n";
      x += fmt::format("      <property name=\"scenario_file\" value=\"{}\"/>\n", xml_escape(s.file));
      if (s.variant != "-") {
        x += fmt::format("      <property name=\"seed\" value=\"{}\"/>\n", s.seed);
        x += fmt::format("      <property name=\"variant\" value=\"{}\"/>\n", xml_escape(s.variant));
      }
      x += fmt::format("      <property name=\"commit\" value=\"{}\"/>\n", xml_escape(build::kCommit));
      x += "    </properties>\n";
      const std::string classname = s.variant == "-" ? s.file : fmt::format("{}.{}", s.scenario, s.variant);
      for (const auto& c : s.cases) {
        x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(classname),
                         xml_escape(c.name), c.time_s);
        if (c.passed) {
          x += "/>\n";
        } else if (c.skipped) {
          x += fmt::format("><skipped message=\"{}\"/></testcase>\n", xml_escape(c.failure));
        } else {
          const std::string first_line = c.failure.substr(0, c.failure.find('\n'));
          x += fmt::format("><failure message=\"{}\">{}</failure></testcase>\n", xml_escape(first_line),
                           xml_escape(c.failure));
        }
      }
      x += "  </testsuite>\n";
    }
  }
  x += "</testsuites>\n";
  return x;
}

std::string markdown_of(const std::vector<ScenarioResult>& results, int passed, int failed, int warnings) {
  std::string m = "## rebalance-sim check\n\n";
  m += fmt::format("**{} passed, {} failed, {} warnings** (commit `{}`)\n\n", passed, failed, warnings, build::kCommit);
  m += "| | scenario | variant | assertion | actual |\n|---|---|---|---|---|\n";
  for (const auto& r : results) {
    for (const auto& s : r.suites) {
      for (const auto& c : s.cases) {
        const char* mark = c.skipped ? ":warning:" : c.passed ? ":white_check_mark:" : ":x:";
        std::string actual;
        if (c.assertion) actual = c.result.actual.dump() + (c.result.detail.empty() ? "" : " (" + c.result.detail + ")");
        else if (!c.passed) actual = c.failure;
        m += fmt::format("| {} | {} | {} | `{}` | {} |\n", mark, md_escape(s.variant == "-" ? s.file : s.scenario),
                         s.variant, md_escape(c.name), md_escape(actual));
      }
    }
  }
  return m;
}

std::string json_of(const std::vector<ScenarioResult>& results, int passed, int failed, int warnings) {
  ojson doc;
  doc["passed"] = passed;
  doc["failed"] = failed;
  doc["warnings"] = warnings;
  doc["commit"] = build::kCommit;
  ojson list = ojson::array();
  for (const auto& r : results) {
    for (const auto& s : r.suites) {
      for (const auto& c : s.cases) {
        ojson j;
        j["file"] = s.file;
        j["scenario"] = s.scenario;
        j["variant"] = s.variant;
        if (s.variant != "-") j["seed"] = s.seed;
        j["name"] = c.name;
        j["status"] = c.skipped ? "warning" : c.passed ? "passed" : "failed";
        if (c.assertion) {
          j["index"] = c.result.index;
          j["metric"] = c.result.metric;
          j["op"] = c.result.op;
          j["expected"] = c.result.expected;
          j["actual"] = c.result.actual;
          if (!c.result.detail.empty()) j["detail"] = c.result.detail;
          if (!c.result.message.empty()) j["message"] = c.result.message;
        }
        if (!c.passed && !c.failure.empty()) j["failure"] = c.failure;
        list.push_back(std::move(j));
      }
    }
  }
  doc["results"] = list;
  return doc.dump(2) + "\n";
}

/// A report file must be writable before anything runs: exit 2 otherwise, with no output.
std::string unwritable(const std::string& file) {
  if (file.empty()) return "";
  const fs::path p(file);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (fs::is_directory(p, ec)) return fmt::format("cannot write {}: it is a directory", file);
  if (!fs::is_directory(dir, ec)) return fmt::format("cannot write {}: no directory {}", file, dir.string());
  if (fs::exists(p, ec) ? ::access(file.c_str(), W_OK) != 0 : ::access(dir.c_str(), W_OK) != 0)
    return fmt::format("cannot write {}: permission denied", file);
  return "";
}

/// Writes `file` atomically and fsynced (tools/staged_output.hpp); "" or why it failed.
std::string write_file(const std::string& file, const std::string& text) {
  try {
    write_file_atomically(file, text);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

/// A relative path (without .json) as an output folder name: each component made safe.
std::string out_name_of(const fs::path& rel) {
  std::string out;
  for (const auto& c : rel) {
    if (c.empty()) continue;
    if (!out.empty()) out += '/';
    out += safe_component(c.string());
  }
  return out.empty() ? "_" : out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> scenario_files(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& a : args) {
    if (fs::is_directory(a)) {
      std::vector<std::pair<std::string, std::string>> found;
      for (auto it = fs::recursive_directory_iterator(a); it != fs::recursive_directory_iterator(); ++it) {
        const auto& entry = *it;
        const auto p = entry.path();
        // scenarios/assign/ holds `rebalance-sim assign` cases, not scenarios.
        if (entry.is_directory() && p.filename() == "assign") {
          it.disable_recursion_pending();
          continue;
        }
        // Output folders (owned: a manifest) and staging folders hold outputs, not scenarios.
        std::error_code ec;
        if (entry.is_directory() && (fs::exists(p / kManifestName, ec) ||
                                     p.filename().string().find(".rebalance-sim-staging-") != std::string::npos)) {
          it.disable_recursion_pending();
          continue;
        }
        const std::string name = p.filename().string();
        if (entry.is_regular_file() && p.extension() == ".json" && name != "schema.json" && !name.ends_with(".golden.json"))
          found.emplace_back(p.string(), out_name_of(fs::relative(p, a).replace_extension()));
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.emplace_back(a, out_name_of(fs::path(a).filename().replace_extension()));
    }
  }
  // Unique, and never a folder that another name lies in.
  std::set<std::string> folders, taken;
  for (const auto& f : files)
    for (std::size_t slash = f.second.find('/'); slash != std::string::npos; slash = f.second.find('/', slash + 1))
      folders.insert(f.second.substr(0, slash));
  for (auto& f : files) {
    std::string name = f.second;
    for (int k = 2; taken.count(name) > 0 || folders.count(name) > 0; ++k) name = fmt::format("{}-{}", f.second, k);
    taken.insert(name);
    f.second = name;
  }
  return files;
}

CLI::App* add_check_subcommand(CLI::App& app, CheckArgs& args) {
  auto* check = app.add_subcommand("check", "run scenarios and check their `expect` lists and golden files (exit 1 if any fails)");
  check->add_option("scenarios", args.paths, "scenario files or directories")->required();
  check->add_option("--junit", args.junit, "also write a JUnit XML report to FILE (a testsuite per scenario and variant)");
  check->add_option("--markdown", args.markdown, "also write a Markdown table to FILE (for a CI step summary)");
  check->add_option("--json", args.json, "also write the results as JSON to FILE");
  check->add_option("--jobs", args.jobs, "run N scenarios at a time (the results are the same for every N)")
      ->check(CLI::Range(1u, 256u));
  check->add_option("--out", args.out_dir,
                    "keep every run's outputs under DIR/<scenario>/<variant>/ (<scenario>: the file's path relative "
                    "to its argument, without .json, made safe and unique)");
  check->add_flag("--force", args.force,
                  "with --out: write into per-scenario folders that are not output folders of rebalance-sim");
  check->add_flag("--update-golden", args.update_golden,
                  "write each scenario's golden summary next to it (x.json -> x.golden.json)");
  check->footer("Example: rebalance-sim check scenarios/ --junit results.xml --markdown summary.md --jobs 2");
  return check;
}

int cmd_check(const CheckArgs& args) {
  for (const auto& f : {args.junit, args.markdown, args.json}) {
    if (const auto why = unwritable(f); !why.empty()) {
      std::cerr << "rebalance-sim check: " << why << "\n";
      return kBadInput;
    }
  }
  for (const auto& p : args.paths) {
    if (!fs::exists(p)) {
      std::cerr << fmt::format("rebalance-sim check: {}: no such file or directory\n", p);
      return kBadInput;
    }
  }
  const auto files = scenario_files(args.paths);
  if (files.empty()) {
    std::cerr << "rebalance-sim check: no scenario files found\n";
    return kBadInput;
  }
  // Each scenario is independent (its own world, kernel and random streams); the results are
  // collected by index and printed in file order, so any --jobs gives the same bytes.
  std::vector<ScenarioResult> results(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++)
      results[i] = check_one(files[i].first, files[i].second, args.update_golden, args.out_dir, args.force, args.model);
  };
  const unsigned jobs = std::max(1u, std::min<unsigned>(args.jobs, static_cast<unsigned>(files.size())));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned j = 0; j < jobs; ++j) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  int passed = 0, failed = 0, warnings = 0, invalid = 0;
  bool internal = false;
  std::vector<std::string> table;
  for (const auto& r : results) {
    internal = internal || r.internal_error;
    if (r.invalid) ++invalid;
    for (const auto& s : r.suites) {
      int sp = 0, sf = 0, sw = 0;
      for (const auto& c : s.cases) {
        if (c.skipped) {
          ++warnings, ++sw;
          std::cout << fmt::format("WARN {} [{}]: {}\n", s.scenario, s.variant, c.failure);
        } else if (c.passed) {
          ++passed, ++sp;
          std::cout << fmt::format("PASS {} [{}] {}\n", s.scenario, s.variant, c.name);
        } else {
          ++failed, ++sf;
          if (s.variant == "-") std::cout << fmt::format("FAIL {}: invalid scenario:\n{}\n", s.file, c.failure);
          else std::cout << fmt::format("FAIL {} [{}] {} ({})\n", s.scenario, s.variant, c.failure, s.file);
        }
      }
      table.push_back(fmt::format("| {:<44} | {:<19} | {:>4} | {:>4} | {:>4} |",
                                  s.variant == "-" ? s.file : s.scenario, s.variant, sp, sf, sw));
    }
  }
  std::cout << "\n" << fmt::format("| {:<44} | {:<19} | {:>4} | {:>4} | {:>4} |\n", "scenario", "variant", "pass", "fail", "warn");
  std::cout << fmt::format("|{:-<46}|{:-<21}|{:-<6}|{:-<6}|{:-<6}|\n", "", "", "", "", "");
  for (const auto& row : table) std::cout << row << "\n";
  std::cout << fmt::format("\n{} passed, {} failed, {} warnings ({} scenarios, {} invalid)\n", passed, failed, warnings,
                           files.size(), invalid);

  bool io_error = false;
  auto report = [&](const std::string& file, const std::string& text) {
    if (file.empty()) return;
    if (const std::string why = write_file(file, text); !why.empty()) {
      std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(why));
      io_error = true;
    }
  };
  report(args.junit, junit_of(results));
  report(args.markdown, markdown_of(results, passed, failed, warnings));
  report(args.json, json_of(results, passed, failed, warnings));
  for (const auto& r : results) {
    if (r.write_error.empty()) continue;
    std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(r.write_error));
    io_error = true;
  }
  for (const auto& r : results) {
    if (r.golden_written.empty()) continue;
    const std::string g = golden_path(r.file);
    if (const std::string why = write_file(g, r.golden_written); !why.empty()) {
      std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(why));
      io_error = true;
    } else {
      std::cout << fmt::format("wrote {}\n", g);
    }
  }
  if (internal) return kInternalError;
  if (invalid > 0 || io_error) return kBadInput;
  return failed > 0 ? kFailed : kOk;
}

}  // namespace rsim::cli
