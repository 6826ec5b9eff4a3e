#include "tools/runner.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.hpp"
#include "models/scenario/world.hpp"
#include "reports/summary.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

std::string ExpectResult::describe() const {
  return fmt::format("expect[{}] {} {} {} {}: actual {}", index, protocol, metric, op,
                     expected.dump(), actual.is_null() ? "(missing from summary.json)" : actual.dump());
}

std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const sim::WatchdogLimits& limits) {
  const std::vector<std::string>& variants = protocols.empty() ? spec.protocols : protocols;
  std::vector<std::string> problems;
  for (const auto& v : variants)
    for (auto& p : unsupported_features(spec, v)) problems.push_back(std::move(p));
  if (!problems.empty()) {
    std::sort(problems.begin(), problems.end());
    problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
    throw ScenarioError(spec.source_path, problems);
  }
  std::vector<VariantOutput> out;
  const std::uint64_t s = seed.value_or(spec.seed);
  for (const auto& v : variants) {
    RunResult result = run_scenario(spec, v, s, limits);
    VariantOutput o;
    o.protocol = v;
    for (const auto& line : result.trace_lines) {
      o.trace_jsonl += line;
      o.trace_jsonl += '\n';
    }
    reports::SummaryInputs in;
    in.scenario = spec.name;
    in.protocol = v;
    in.seed = s;
    in.produced_by = {{"simulator", "rebalance-sim"},
                      {"version", build::kVersion},
                      {"commit", build::kCommit},
                      {"scenario_file", spec.source_path},
                      {"scenario_sha256", spec.sha256}};
    o.summary = reports::summarize(result.trace_lines, in);
    o.expectations = check_expectations(spec, v, o.summary);
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& e : o.expectations) {
      checks.push_back({{"index", e.index}, {"metric", e.metric}, {"op", e.op}, {"value", e.expected},
                        {"actual", e.actual}, {"passed", e.passed}});
    }
    o.summary["expectations"] = checks;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<ExpectResult> check_expectations(const ScenarioSpec& spec, const std::string& protocol,
                                             const nlohmann::ordered_json& summary) {
  std::vector<ExpectResult> out;
  const auto& metrics = summary.at("metrics");
  for (const auto& x : spec.expect) {
    if (x.protocol && *x.protocol != protocol) continue;
    ExpectResult r;
    r.index = x.index;
    r.protocol = protocol;
    r.metric = x.metric;
    r.op = x.op;
    r.expected = x.value;
    if (metrics.contains(x.metric)) {
      r.actual = nlohmann::json::parse(metrics.at(x.metric).dump());
      const nlohmann::json& a = r.actual;
      const nlohmann::json& v = x.value;
      if (x.op == "==") r.passed = a.is_number() && v.is_number() ? a.get<double>() == v.get<double>() : a == v;
      else if (x.op == "!=") r.passed = a.is_number() && v.is_number() ? a.get<double>() != v.get<double>() : a != v;
      else if (a.is_number() && v.is_number()) {
        const double av = a.get<double>(), vv = v.get<double>();
        r.passed = x.op == "<" ? av < vv : x.op == "<=" ? av <= vv : x.op == ">" ? av > vv : av >= vv;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs) {
  StagedOutput out{fs::path(dir)};
  for (const auto& o : outputs) {
    out.write_file(fs::path(o.protocol) / "trace.jsonl", o.trace_jsonl);
    out.write_file(fs::path(o.protocol) / "summary.json", o.summary.dump(2) + "\n");
  }
  out.commit();
}

}  // namespace rsim::cli
