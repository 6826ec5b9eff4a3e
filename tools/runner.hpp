// Running a scenario to files: the variants one at a time, each streaming its trace.jsonl into a
// temporary directory (renamed into place only when everything succeeded) while its summary
// accumulates online, and the expect checks over the summaries. Memory is the world's state:
// no trace is held.
#pragma once
#include <cstdint>
#include <functional>
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
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
  std::uint64_t events_fired = 0;
  std::uint64_t trace_bytes = 0;  // of trace.jsonl (0 when none was written)
  std::string trace_jsonl;        // the whole trace, only with RunOptions::keep_trace
};

/// `--trace`: how much trace.jsonl keeps.
enum class TraceLevel { Full, Standard, None };
/// "full" | "standard" | "none"; nullopt for anything else.
std::optional<TraceLevel> parse_trace_level(const std::string& s);

/// Files added to a run directory (paths relative to DIR, such as report.html), computed once
/// every variant has run from the staged directory (its <protocol>/trace.jsonl files).
using ExtraFiles = std::function<std::vector<std::pair<std::string, std::string>>(
    const std::string& staging_dir, const std::vector<struct VariantOutput>& outputs)>;

struct RunOptions {
  std::string out_dir;  // empty: write nothing
  TraceLevel level = TraceLevel::Standard;
  bool progress = false;    // a progress line on stderr while each variant runs (terminals)
  bool keep_trace = false;  // also keep each trace in memory (in-process readers: explain)
  ExtraFiles extra;         // with out_dir
};

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty), one at a time.
/// With `out_dir`, writes DIR/<protocol>/{trace.jsonl,summary.json} for every variant (only
/// summary.json at TraceLevel::None) and the extra files, all or nothing; without, keeps only
/// the summaries (and the traces with keep_trace).
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const RunOptions& options = {});

}  // namespace rsim::cli
