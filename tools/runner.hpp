// Running a scenario to files: the variants one at a time, each streaming its trace.jsonl into a
// temporary directory (renamed into place only when everything succeeded) while its summary
// accumulates online, and the expect checks over the summaries. Memory is the world's state:
// no trace is held.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"

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
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
  std::uint64_t events_fired = 0;
  std::uint64_t trace_bytes = 0;  // of trace.jsonl (0 when none was written)
};

/// `--trace`: how much trace.jsonl keeps.
enum class TraceLevel { Full, Standard, None };
/// "full" | "standard" | "none"; nullopt for anything else.
std::optional<TraceLevel> parse_trace_level(const std::string& s);

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty), one at a time.
/// With `out_dir`, writes DIR/<protocol>/{trace.jsonl,summary.json} for every variant (only
/// summary.json at TraceLevel::None), all or nothing; without, keeps only the summaries.
/// `progress`: a progress line on stderr while each variant runs (for terminals).
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const std::string& out_dir = "",
                                        TraceLevel level = TraceLevel::Standard, bool progress = false);

/// Evaluates the expect entries that apply to one variant against its summary.
std::vector<ExpectResult> check_expectations(const ScenarioSpec& spec, const std::string& protocol,
                                             const nlohmann::ordered_json& summary);

}  // namespace rsim::cli
