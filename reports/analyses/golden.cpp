#include "reports/analyses/golden.hpp"

#include <cmath>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "reports/analyses/baseline.hpp"

namespace rsim::cli {

namespace {

using ojson = nlohmann::ordered_json;

// The metrics a golden keeps: timings (compared within `time_ms`) and counts (within `count`).
const std::vector<std::string> kTimeMetrics{
    "max_rebalance_ms",  "total_rebalance_ms",    "unavailable_partition_ms", "max_unavailable_ms",
    "stop_the_world_ms", "max_stop_the_world_ms", "overlap_partition_ms"};
const std::vector<std::string> kCountMetrics{"rebalance_count", "revocations", "records_processed",
                                             "duplicates",      "lost",        "max_lag"};

double ms(const ojson& us) {
  return us.is_number() ? us.get<double>() / 1000.0 : 0.0;
}

std::string signed_ms(double d) {
  return fmt::format("{}{:.3f} ms", d >= 0 ? "+" : "", d);
}

std::string num(const ojson& v) {
  return v.dump();
}

}  // namespace

std::string golden_path(const std::string& scenario_path) {
  const std::string ext = ".json";
  if (scenario_path.size() > ext.size() && scenario_path.ends_with(ext))
    return scenario_path.substr(0, scenario_path.size() - ext.size()) + ".golden.json";
  return scenario_path + ".golden.json";
}

ojson golden_of(const ojson& summary) {
  ojson g;
  ojson rebalances = ojson::array();
  for (const auto& r : summary.at("rebalances")) {
    rebalances.push_back({{"group", r.at("group")},
                          {"start_ms", ms(r.at("start_us"))},
                          {"end_ms", ms(r.at("end_us"))},
                          {"trigger", r.at("trigger")},
                          {"causes", r.at("causes")}});
  }
  g["rebalances"] = rebalances;
  ojson metrics;
  const auto& m = summary.at("metrics");
  for (const auto& k : kCountMetrics) metrics[k] = m.at(k);
  for (const auto& k : kTimeMetrics) metrics[k] = m.at(k);
  metrics["final_assignment"] = m.at("final_assignment");
  g["metrics"] = metrics;
  return g;
}

ojson golden_file(const std::string& scenario_name,
                  const std::vector<std::pair<std::string, ojson>>& variants) {
  ojson f;
  f["scenario"] = scenario_name;
  f["comment"] = "written by `rebalance-sim check --update-golden`; review its diff like code";
  f["tolerances"] = {{"time_ms", 1.0}, {"count", 0}};
  ojson v = ojson::object();
  for (const auto& [protocol, summary] : variants) v[protocol] = golden_of(summary);
  f["variants"] = v;
  return f;
}

GoldenDiff golden_compare(const ojson& golden, const ojson& actual, const ojson& tolerances) {
  GoldenDiff out;
  const double tol_ms = tolerances.value("time_ms", 0.0);
  const double tol_count = tolerances.value("count", 0.0);
  const ojson directed = tolerances.contains("metrics") && tolerances.at("metrics").is_object()
                             ? tolerances.at("metrics")
                             : ojson::object();
  // With tolerances per metric, a single rebalance moving in time is detail, not a failure.
  const bool timing_is_detail = !directed.empty();
  const auto& gm = golden.at("metrics");
  const auto& am = actual.at("metrics");
  // The headline: the main metrics beyond their tolerance.
  auto compare = [&](const std::string& k, double tol, const char* unit) {
    if (!gm.contains(k) || !am.contains(k)) return;
    const auto& g = gm.at(k);
    const auto& a = am.at(k);
    if (!g.is_number() || !a.is_number()) {
      if (g != a) out.headline.push_back(fmt::format("{}: {} -> {}", k, g.dump(), a.dump()));
      return;
    }
    const double gv = g.get<double>(), av = a.get<double>();
    const double d = std::round((av - gv) * 1000.0) / 1000.0;
    const std::string pct =
        gv == 0 ? std::string() : fmt::format(", {:+.1f}%", d / std::fabs(gv) * 100.0);
    if (directed.contains(k) && directed.at(k).is_string()) {
      const auto t = parse_regression_tolerance(directed.at(k).get<std::string>());
      if (t) {
        const double worse = t->rise_is_worse ? d : -d;
        const double limit = t->percent ? std::fabs(gv) * t->amount / 100.0 : t->amount;
        if (worse > limit + 1e-9)
          out.headline.push_back(fmt::format("{}: {} -> {} ({}{}{}{}; tolerance {})", k,
                                             show_number(gv), show_number(av), d >= 0 ? "+" : "",
                                             show_number(d), unit, pct, t->text));
        return;
      }
    }
    if (std::fabs(d) > tol + 1e-9)
      out.headline.push_back(fmt::format("{}: {} -> {} ({}{}{}{})", k, show_number(gv),
                                         show_number(av), d >= 0 ? "+" : "", show_number(d), unit,
                                         pct));
  };
  for (const auto& k : kTimeMetrics) compare(k, tol_ms, " ms");
  for (const auto& k : kCountMetrics) compare(k, tol_count, "");
  bool detail_fails = false;
  auto failing = [&](std::string line) {
    out.detail.push_back(std::move(line));
    detail_fails = true;
  };
  const auto& gr = golden.at("rebalances");
  const auto& ar = actual.at("rebalances");
  const std::size_t common = std::min(gr.size(), ar.size());
  for (std::size_t i = 0; i < common; ++i) {
    const auto& g = gr[i];
    const auto& a = ar[i];
    const std::string label =
        fmt::format("rebalance {} ({})", i, g.at("trigger").get<std::string>());
    if (g.at("trigger") != a.at("trigger"))
      failing(fmt::format("{}: trigger is now \"{}\"", label, a.at("trigger").get<std::string>()));
    for (const char* k : {"start_ms", "end_ms"}) {
      const double d = a.at(k).get<double>() - g.at(k).get<double>();
      if (std::fabs(d) > tol_ms + 1e-9) {
        std::string line = fmt::format("{}: {} moved {} ({} -> {})", label,
                                       std::string(k).substr(0, std::string(k).size() - 3),
                                       signed_ms(d), num(g.at(k)), num(a.at(k)));
        if (timing_is_detail)
          out.detail.push_back(std::move(line));
        else
          failing(std::move(line));
      }
    }
    if (g.at("causes") != a.at("causes"))
      failing(
          fmt::format("{}: causes {} -> {}", label, g.at("causes").dump(), a.at("causes").dump()));
  }
  for (std::size_t i = common; i < ar.size(); ++i)
    failing(fmt::format("extra rebalance {} at {} ms: {}", i, num(ar[i].at("start_ms")),
                        ar[i].at("trigger").get<std::string>()));
  for (std::size_t i = common; i < gr.size(); ++i)
    failing(fmt::format("missing rebalance {} (was at {} ms: {})", i, num(gr[i].at("start_ms")),
                        gr[i].at("trigger").get<std::string>()));
  const auto& gf = gm.at("final_assignment");
  const auto& af = am.at("final_assignment");
  for (const auto& [c, parts] : gf.items()) {
    if (!af.contains(c))
      failing(fmt::format("final_assignment/{}: {} -> (not live)", c, parts.dump()));
    else if (af.at(c) != parts)
      failing(fmt::format("final_assignment/{}: {} -> {}", c, parts.dump(), af.at(c).dump()));
  }
  for (const auto& [c, parts] : af.items())
    if (!gf.contains(c))
      failing(fmt::format("final_assignment/{}: (not live) -> {}", c, parts.dump()));
  out.failed = !out.headline.empty() || detail_fails;
  return out;
}

std::vector<std::string> golden_shape_problems(const ojson& golden) {
  std::vector<std::string> problems;
  const auto type_of = [](const ojson& v) -> std::string {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_array()) return "an array";
    return "an object";
  };
  const auto bad = [&](const std::string& at, const char* want, const ojson& got) {
    problems.push_back(
        fmt::format("{}: must be {}, got {}", at.empty() ? "/" : at, want, type_of(got)));
  };
  const auto pointer = [](const std::string& key) {  // a JSON pointer token (RFC 6901)
    std::string t = "/";
    for (const char c : key)
      t += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    return t;
  };
  if (!golden.is_object()) {
    bad("", "an object with \"variants\" (as `check --update-golden` writes it)", golden);
    return problems;
  }
  if (golden.contains("tolerances")) {
    const auto& t = golden.at("tolerances");
    if (!t.is_object())
      bad("/tolerances", "an object", t);
    else {
      for (const char* k : {"time_ms", "count"})
        if (t.contains(k) && !t.at(k).is_number())
          bad(std::string("/tolerances/") + k, "a number", t.at(k));
      if (t.contains("metrics")) {
        const auto& m = t.at("metrics");
        if (!m.is_object())
          bad("/tolerances/metrics", "an object", m);
        else
          for (const auto& [k, v] : m.items())
            if (!v.is_string())
              bad("/tolerances/metrics" + pointer(k), "a string such as \"+10%\"", v);
      }
    }
  }
  if (!golden.contains("variants")) {
    problems.push_back("/variants: missing (rerun with --update-golden)");
    return problems;
  }
  const auto& variants = golden.at("variants");
  if (!variants.is_object()) {
    bad("/variants", "an object (variant name -> summary)", variants);
    return problems;
  }
  for (const auto& [name, v] : variants.items()) {
    const std::string at = "/variants" + pointer(name);
    if (!v.is_object()) {
      bad(at, "an object with \"metrics\" and \"rebalances\"", v);
      continue;
    }
    if (!v.contains("metrics"))
      problems.push_back(at + "/metrics: missing");
    else if (const auto& m = v.at("metrics"); !m.is_object())
      bad(at + "/metrics", "an object", m);
    else {
      if (!m.contains("final_assignment"))
        problems.push_back(at + "/metrics/final_assignment: missing");
      else if (!m.at("final_assignment").is_object())
        bad(at + "/metrics/final_assignment", "an object (consumer -> partitions)",
            m.at("final_assignment"));
    }
    if (!v.contains("rebalances")) {
      problems.push_back(at + "/rebalances: missing");
      continue;
    }
    const auto& rs = v.at("rebalances");
    if (!rs.is_array()) {
      bad(at + "/rebalances", "an array", rs);
      continue;
    }
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const std::string ri = fmt::format("{}/rebalances/{}", at, i);
      if (!rs[i].is_object()) {
        bad(ri, "an object", rs[i]);
        continue;
      }
      if (!rs[i].contains("trigger"))
        problems.push_back(ri + "/trigger: missing");
      else if (!rs[i].at("trigger").is_string())
        bad(ri + "/trigger", "a string", rs[i].at("trigger"));
      for (const char* k : {"start_ms", "end_ms"}) {
        if (!rs[i].contains(k))
          problems.push_back(fmt::format("{}/{}: missing", ri, k));
        else if (!rs[i].at(k).is_number())
          bad(ri + "/" + k, "a number", rs[i].at(k));
      }
      if (!rs[i].contains("causes")) problems.push_back(ri + "/causes: missing");
    }
  }
  return problems;
}

std::vector<std::string> golden_diff(const ojson& golden, const ojson& actual,
                                     const ojson& tolerances) {
  auto d = golden_compare(golden, actual, tolerances);
  std::vector<std::string> out = std::move(d.headline);
  out.insert(out.end(), d.detail.begin(), d.detail.end());
  return out;
}

}  // namespace rsim::cli
