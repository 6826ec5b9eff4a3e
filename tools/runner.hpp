// Running a scenario to files: every variant staged (fsynced) and moved into place only when
// everything succeeded, and the expect checks over the summaries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "sim/kernel.hpp"
#include "tools/expectations.hpp"

namespace rsim::cli {

class StagedOutput;

struct VariantOutput {
  std::string protocol;
  std::string trace_jsonl;
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
};

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty) under the
/// kernel watchdog's `limits`.
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const sim::WatchdogLimits& limits = {});

/// Stages DIR/<protocol>/{trace.jsonl,summary.json} for every variant, and the `extra` files
/// (paths relative to DIR, such as report.html or <protocol>/perfetto.json), in `out`.
void stage_outputs(StagedOutput& out, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra = {});

/// The same into a staging folder of `dir`, then moved into place: all or nothing (staged,
/// fsynced, renamed); throws OutputError naming the path that failed.
void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace rsim::cli
