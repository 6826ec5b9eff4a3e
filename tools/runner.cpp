#include "tools/runner.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.hpp"
#include "models/scenario/world.hpp"
#include "reports/share_summary.hpp"
#include "reports/summary.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

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
    reports::add_share_metrics(result.trace_lines, o.summary);
    o.expectations = check_expectations(spec, v, o.summary, result.trace_lines);
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& e : o.expectations) {
      nlohmann::ordered_json c{{"index", e.index}, {"assertion", e.what}, {"metric", e.metric}, {"op", e.op},
                               {"value", e.expected}, {"actual", e.actual}, {"passed", e.passed}};
      if (!e.detail.empty()) c["detail"] = e.detail;
      if (!e.message.empty()) c["message"] = e.message;
      checks.push_back(std::move(c));
    }
    o.summary["expectations"] = checks;
    out.push_back(std::move(o));
  }
  return out;
}

void stage_outputs(StagedOutput& out, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra) {
  for (const auto& o : outputs) {
    out.write_file(fs::path(o.protocol) / "trace.jsonl", o.trace_jsonl);
    out.write_file(fs::path(o.protocol) / "summary.json", o.summary.dump(2) + "\n");
  }
  for (const auto& [rel, bytes] : extra) out.write_file(fs::path(rel), bytes);
}

void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra) {
  StagedOutput out{fs::path(dir)};
  stage_outputs(out, outputs, extra);
  out.commit();
}

}  // namespace rsim::cli
