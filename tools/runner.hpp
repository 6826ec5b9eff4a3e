// Running a scenario to files: the variants one at a time, each streaming its trace.jsonl into
// the staging folder of a StagedOutput (fsynced, moved into place only when every write
// succeeded) while its summary accumulates online, and the expect checks over the summaries.
// Memory is the world's state: no trace is held.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/model_options.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/analyses/expectations.hpp"
#include "reports/invariants.hpp"
#include "reports/summary.hpp"
#include "sim/kernel.hpp"

namespace rsim::cli {

class StagedOutput;

struct VariantOutput {
  std::string protocol;
  std::string variant;  // the settings variant ("" without `variants`)
  nlohmann::ordered_json summary;
  std::vector<ExpectResult> expectations;
  std::uint64_t events_fired = 0;
  std::uint64_t trace_bytes = 0;  // of trace.jsonl (0 when none was written)
  std::string trace_jsonl;        // the whole trace, only with RunOptions::keep_trace
  /// What the invariant checks found, only with RunOptions::invariants.
  std::vector<reports::Violation> violations;
  /// The summary's not-processed intervals per partition, only with RunOptions::not_processed_gaps
  /// (the report's partition view, built without reading the trace twice).
  std::vector<reports::NotProcessedGaps> not_processed;
};

/// `--trace`: how much trace.jsonl keeps.
enum class TraceLevel { Full, Standard, None };
/// "full" | "standard" | "none"; nullopt for anything else.
std::optional<TraceLevel> parse_trace_level(const std::string& s);

struct RunOptions {
  /// Where DIR/<protocol>/{trace.jsonl,summary.json} are staged (only summary.json at
  /// TraceLevel::None); the caller commits. Null: nothing is written.
  StagedOutput* staged = nullptr;
  TraceLevel level = TraceLevel::Standard;
  bool progress = false;    // a progress line on stderr while each variant runs (terminals)
  bool keep_trace = false;  // also keep each trace in memory, as its level writes it (explain)
  /// The invariant checks (`--check-invariants`): a reports::InvariantSink on the bus of each
  /// variant, with the context this gives for its protocol; VariantOutput::violations gets what it
  /// finds. Nothing of the trace is held. They see every event the bus carries, whatever `level`
  /// writes, and number them as a `full` trace.jsonl does.
  std::function<reports::InvariantContext(const std::string& protocol)> invariants;
  /// Also keep the summary's not-processed intervals (VariantOutput::not_processed).
  bool not_processed_gaps = false;
  sim::WatchdogLimits limits;  // the kernel watchdog's; max_trace_bytes bounds each trace.jsonl
  ModelOptions model;          // test-only injected bugs, developer checks
  /// A settings variant's name (scenario `variants`): outputs go to DIR/<variant>/<protocol>/ and
  /// summary.json names it (`"variant"`, after `"protocol"`). Empty: DIR/<protocol>/.
  std::string variant;
  /// A folder under the staging root for every file of the run (e.g. a sweep's worst/c3/seed-7).
  std::string prefix;
  /// summary.json streamed (reports::SummarySink::spool_rebalances): each rebalance's entry is
  /// written to the staging folder when it closes and read back one at a time into summary.json,
  /// so that memory holds the open rebalances only. VariantOutput::summary's `rebalances` then
  /// holds reports::kStreamedRebalances, not the entries: for callers that read only its metrics,
  /// verdict and moments (`run --trace none`). Not for the share protocol (its own rebalances), nor
  /// when an expectation reads `rebalances/...`, nor without `staged`: those get the entries.
  bool stream_summary = false;
};

/// Runs each variant (the scenario's `protocols`, or `protocols` when not empty), one at a time.
/// Write failures are OutputError (naming the path); the watchdog's, sim::WatchdogTripped.
std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed,
                                        const RunOptions& options = {});

/// The consumers of start-up (start_up_consumers): the steady window opens once each holds a
/// stable assignment (summary.json's `steady`).
std::vector<std::string> steady_consumers_of(const ScenarioSpec& spec);

/// summary.json's `config` for one protocol variant of the scenario: the effective values (Kafka's
/// defaults applied) of the configs the critical paths' causes name: `cluster` (the group.*
/// broker configs), `consumer` (a consumer config's value where every consumer, pod template and
/// incarnation has the same), `consumers` (per consumer, the others; null where its incarnations
/// disagree). Null for a variant the scenario cannot run.
nlohmann::ordered_json effective_config(const ScenarioSpec& spec, const std::string& variant);

/// The staged path of a variant's trace.jsonl (to read it back before commit).
std::filesystem::path staged_trace_path(StagedOutput& out, const std::string& protocol);

}  // namespace rsim::cli
