#include "tools/runner.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.hpp"
#include "models/scenario/world.hpp"
#include "reports/share_summary.hpp"
#include "reports/summary.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed) {
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
    RunResult result = run_scenario(spec, v, s);
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

void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra) {
  const fs::path target(dir);
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path());
  // Everything goes to a sibling temporary directory first; each variant's directory is then
  // swapped into place, so a failure leaves no partial files.
  const fs::path staging = target.string() + ".tmp-rebalance-sim";
  fs::remove_all(staging);
  fs::create_directories(staging);
  for (const auto& o : outputs) {
    const fs::path d = staging / o.protocol;
    fs::create_directories(d);
    std::ofstream(d / "trace.jsonl", std::ios::binary) << o.trace_jsonl;
    std::ofstream(d / "summary.json", std::ios::binary) << o.summary.dump(2) << '\n';
    if (!fs::exists(d / "summary.json")) throw std::runtime_error("cannot write " + (d / "summary.json").string());
  }
  for (const auto& [rel, bytes] : extra) {
    const fs::path p = staging / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    if (!fs::exists(p)) throw std::runtime_error("cannot write " + p.string());
  }
  fs::create_directories(target);
  for (const auto& [rel, bytes] : extra) {
    // Files at the top (report.html) move on their own; the variants' files move with their directory.
    if (fs::path(rel).has_parent_path()) continue;
    fs::rename(staging / rel, target / rel);
  }
  for (const auto& o : outputs) {
    const fs::path final_dir = target / o.protocol;
    fs::remove_all(final_dir);
    fs::rename(staging / o.protocol, final_dir);
  }
  fs::remove_all(staging);
}

}  // namespace rsim::cli
