// Running a scenario to files: every variant into a temporary directory that is renamed into
// place only when everything succeeded, and the expect checks over the summaries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "tools/expectations.hpp"

namespace rsim::cli {

struct VariantOutput {
  std::string protocol;
  std::string trace_jsonl;
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
};

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty).
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed);

/// Writes DIR/<protocol>/{trace.jsonl,summary.json} for every variant, and the `extra` files
/// (paths relative to DIR, such as report.html or <protocol>/perfetto.json), all or nothing.
void write_outputs(const std::string& dir, const std::vector<VariantOutput>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace rsim::cli
