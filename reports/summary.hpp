// summary.json, computed from the trace alone: the rebalances (start, end, trigger, causes,
// partitions revoked and assigned) and the metrics. A sink of the trace bus, accumulated online
// as the run goes; the same sink reads a trace.jsonl back (summarize). Knows no model class,
// only the trace vocabulary. The handlers inside are organised per trace event kind (one method
// each).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_events.hpp"

namespace reports {

struct SummaryInputs {
  std::string scenario;
  std::string protocol;
  std::uint64_t seed = 0;
  nlohmann::ordered_json produced_by;  // simulator version, commit, scenario SHA-256
  /// A window of the run ([from_us, to_us)): times are clipped to it, counts keep what happened
  /// inside it, rebalances are those that started inside it, final_assignment is the one at to_us.
  /// `lost` is always over the whole run.
  std::optional<std::int64_t> from_us;
  std::optional<std::int64_t> to_us;
  /// Each rebalance's `critical_path` (reports/critical_path.hpp); off only to measure its cost.
  bool critical_paths = true;
  /// The consumers of start-up (start_up_consumers in models/spec): with them, the
  /// summary gains `steady` (the same metrics from the first moment at which each of them holds
  /// a stable assignment), `verdict`, computed from it. Without: neither key.
  std::optional<std::vector<std::string>> steady_consumers;
  /// summary.json's `config`: the effective values of the configs that the critical paths'
  /// causes name (tools/runner.cpp, effective_config), written as given; null: no such key.
  nlohmann::ordered_json config;
  /// Keep every interval in which a partition was not processed (the intervals whose lengths
  /// not_processed_ms_by_partition adds up), for not_processed_gaps(): the report's partition view.
  bool not_processed_gaps = false;
};

/// A partition's not-processed intervals [start_us, end_us), in time order.
struct NotProcessedGaps {
  std::string partition;  // "orders-3"
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
};

/// The summary as a sink: attach it to the run's bus, then finish() once the run has ended.
/// What `rebalances` holds in finish_streamed()'s summary until SummarySink::write_json().
inline constexpr std::string_view kStreamedRebalances =
    "\x01rebalances streamed by SummarySink::write_json";

class SummarySink final : public rsim::TraceSink {
 public:
  explicit SummarySink(SummaryInputs inputs);
  ~SummarySink() override;
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override;
  /// summary.json of everything received so far.
  nlohmann::ordered_json finish();
  /// Streams `rebalances`: each rebalance's entry goes to the file `spool` when it closes, so that
  /// memory holds the open rebalances only (a few fixed fields of each closed one stay, for the
  /// totals and their order). Call before the first event; the sink removes the file when it goes.
  void spool_rebalances(const std::filesystem::path& spool);
  /// finish() without the `rebalances` entries: that key holds kStreamedRebalances until
  /// write_json() writes the entries in its place, read back one at a time.
  nlohmann::ordered_json finish_streamed();
  /// Writes `summary` (finish_streamed()'s, amended as the caller likes: keys added or moved) as
  /// `summary.dump(2)` would have written it with finish()'s `rebalances`: the same bytes.
  void write_json(std::ostream& out, const nlohmann::ordered_json& summary) const;
  /// The same, handed to `put` in pieces of about a MiB.
  void write_json(const std::function<void(std::string_view)>& put,
                  const nlohmann::ordered_json& summary) const;
  /// The bytes of closed rebalances' entries held in memory (none when spooled): what the
  /// bounded-memory test reads.
  std::size_t retained_entry_bytes() const;
  /// After finish(), with SummaryInputs::not_processed_gaps: every partition with time not
  /// processed, in Kafka's partition order, and its intervals (empty without the input).
  std::vector<NotProcessedGaps> not_processed_gaps() const;
  /// The member ids the consumer-protocol rebalances hold for their waits (slots, and members
  /// noted for their next look): only open rebalances hold any, each at most twice its wait.
  /// What the bounded-memory test reads.
  std::size_t retained_wait_entries() const;
  /// Whether the index of the consumer-protocol members the sink keeps for the rebalances' waits
  /// (each group's members in id order, with their epochs and dense numbers, and the member of
  /// each dense number) holds exactly the members the coordinator's records left: what the
  /// index test reads after joins, leaves and fencing.
  bool member_index_consistent() const;
  /// The vertices the critical paths' happens-before graph holds now (CriticalPaths::prune):
  /// what the bounded-memory test reads.
  std::size_t retained_path_vertices() const;
  /// The rebalances held in full (the open ones: a closed rebalance keeps only its entry of
  /// `rebalances`, written as text when it closes) and the partition names their revoked / lost /
  /// assigned maps hold: what the bounded-memory test reads.
  std::pair<std::size_t, std::size_t> retained_rebalances() const;

 private:
  struct State;
  nlohmann::ordered_json finish(bool entries);
  void steady_event(std::int64_t t, const rsim::trace::Event& e);
  SummaryInputs inputs_;
  std::unique_ptr<State> s_;
};

/// The summary of a trace read back from its lines / from a trace.jsonl stream.
nlohmann::ordered_json summarize(const std::vector<std::string>& trace_lines,
                                 const SummaryInputs& inputs);
nlohmann::ordered_json summarize_jsonl(std::istream& trace_jsonl, const SummaryInputs& inputs);

/// The names under summary.json's `metrics`, sorted.
const std::vector<std::string>& metric_names();
/// The metrics whose value is an object keyed by consumer name, or by partition ("orders-3").
const std::vector<std::string>& metrics_by_consumer();
const std::vector<std::string>& metrics_by_partition();
/// The fields of one entry of summary.json's `rebalances`, and the top-level keys.
const std::vector<std::string>& rebalance_fields();
const std::vector<std::string>& summary_keys();

/// One plain sentence on a variant's summary.json (its steady window when it has one).
std::string verdict_of(const nlohmann::ordered_json& summary);
/// The numbers behind the verdict on one line: the steady window's (or the whole run's).
std::string headline_of(const nlohmann::ordered_json& summary);
/// The decisive moments (summary.json's `moments`), one line each: "at 7.7 ms: C: fatal error ...".
std::vector<std::string> moment_lines(const nlohmann::ordered_json& summary);
/// "60 ms", "3.9 s", "300 s".
std::string duration_text(double ms);

/// Orders "topic-partition" names as Kafka orders TopicPartition: by topic, then by number.
bool kafka_partition_less(const std::string& a, const std::string& b);

}  // namespace reports
