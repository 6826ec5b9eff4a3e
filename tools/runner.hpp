// Running a scenario to files: every variant into a temporary directory that is renamed into
// place only when everything succeeded, and the expect checks over the summaries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "sim/kernel.hpp"

namespace rsim::cli {

struct ExpectResult {
  std::size_t index = 0;
  std::string protocol;
  std::string metric;
  std::string op;
  nlohmann::json expected;
  nlohmann::json actual;  // null when the metric is missing
  bool passed = false;
  std::string describe() const;
};

struct VariantOutput {
  std::string protocol;
  std::string trace_jsonl;
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
};

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty).
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const sim::WatchdogLimits& limits = {});

/// Evaluates the expect entries that apply to one variant against its summary.
std::vector<ExpectResult> check_expectations(const ScenarioSpec& spec, const std::string& protocol,
                                             const nlohmann::ordered_json& summary);

/// Writes DIR/<protocol>/{trace.jsonl,summary.json} for every variant, all or nothing (staged,
/// fsynced, renamed into place); throws OutputError naming the path that failed.
void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs);

}  // namespace rsim::cli
