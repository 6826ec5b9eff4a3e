// `rebalance-sim compare SCENARIO --real DIR`: the simulator against a recorded real-Kafka run
// (tools/kafka-oracle/). A pure function of two traces in the trace vocabulary of
// docs/writing-scenarios.md: callbacks matched by consumer, kind and partitions with their time
// deviation; the groups' __consumer_offsets record sequence (OffsetCommit aside); the final
// assignment; rebalances, duplicates and lost records; for share groups (KIP-932) the records
// acquired, redelivered, acknowledged, released, rejected and archived, and the sequence of
// redeliveries and archivals (docs/fidelity.md, "Share groups").
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_events.hpp"

namespace rsim::compare {

struct Tolerances {
  std::int64_t classic_ms = 150;   // per callback under classic-eager / classic-cooperative
  std::int64_t consumer_ms = 400;  // per callback under consumer (KIP-848)
  std::int64_t match_window_ms =
      10000;                    // a real callback further from the simulator's is another one
  std::int64_t share_ms = 400;  // per redelivery or archival under share
  /// A share count (acquired, released, ...) agrees within max(share_count_min, share_count_pct %
  /// of the real run's): the application's random outcomes are drawn by another generator there.
  std::int64_t share_count_pct = 10;
  std::int64_t share_count_min = 2;
  /// The counts that the application's per-record outcome draws decide (accepted, released,
  /// rejected, archived) agree within the larger of that and this many standard deviations of
  /// the difference of two independent binomial draws (docs/fidelity.md, finding 25).
  std::int64_t share_draw_sigmas = 3;
};

/// One callback invocation (its `phase: start` event).
struct Callback {
  std::int64_t t_us = 0;
  std::string consumer;
  std::string kind;  // onPartitionsRevoked, onPartitionsAssigned, onPartitionsLost
  std::vector<std::string> partitions;
  bool operator==(const Callback& o) const {
    return consumer == o.consumer && kind == o.kind && partitions == o.partitions;
  }
};

/// One non-OffsetCommit __consumer_offsets record, reduced to what both sides share.
struct Record {
  std::int64_t t_us = 0;   // when it was written (a real run's: its CreateTime, ms)
  std::string record;      // Kafka's record name
  std::string consumer;    // the scenario's member name, "" for group-level records
  std::int64_t epoch = 0;  // epoch, member_epoch, assignment_epoch or generation
  std::vector<std::string> partitions;
  bool tombstone = false;
  bool operator==(const Record& o) const {
    return record == o.record && consumer == o.consumer && epoch == o.epoch &&
           partitions == o.partitions && tombstone == o.tombstone;
  }
  std::string str() const;
};

/// One record redelivered (delivery count 2 or more) or archived by an acknowledgement.
struct ShareEvent {
  std::int64_t t_us = 0;
  std::string kind;  // redelivered, archived
  std::string partition;
  std::int64_t offset = 0, delivery_count = 0;
  bool operator==(const ShareEvent& o) const {
    return kind == o.kind && partition == o.partition && offset == o.offset &&
           delivery_count == o.delivery_count;
  }
  std::string str() const;  // "redelivered jobs-0@30 (delivery count 2)"
};

/// What a share consumer's trace shows (share.records lines, in both the simulator's and the
/// oracle's traces). Only what the client sees is counted: acknowledgements (ACCEPT, RELEASE,
/// REJECT) and what they archived; the broker's own transitions (lock_timeout, session_close) are
/// in no real trace, and show there only as the redeliveries that follow them.
struct ShareFacts {
  bool present = false;          // any share.records line
  std::int64_t acquired = 0;     // records acquired (AVAILABLE -> ACQUIRED), every delivery
  std::int64_t redelivered = 0;  // ... of them with delivery count 2 or more
  std::int64_t accepted = 0, released = 0, rejected = 0;  // acknowledgements, by type
  std::int64_t archived = 0;  // records an acknowledgement archived (REJECT, RELEASE at the limit)
  std::int64_t max_delivery_count = 0;
  /// Records acquired by delivery count (for max_delivery_count when an acquisition is taken
  /// back: see add_share_records).
  std::map<std::int64_t, std::int64_t> acquired_by_delivery_count;
  /// Each redelivered record and each archived one, in time order; without the consumer (which
  /// member of a share group gets a record is no fact of the group).
  std::vector<ShareEvent> events;
};

/// Members of a share group stopped at the same instant (two or more): each one's close() waits
/// for the ShareFetch it has parked in the broker's purgatory before its closing ShareAcknowledge
/// and its leave (ShareConsumeRequestManager skips a node with a request in flight), so their
/// leaves come in the order in which those fetches are answered, set by each partition's next
/// records and by which member of a partition's sharers holds the parked fetch: the runs' own
/// timing, decided differently by each run (docs/fidelity.md, finding 32). Between the stop and
/// the last of their leaves (no later than `bound_us` after the stop) `compare` takes each
/// trace's records in a canonical order (see canonical_close_windows in compare.cpp).
struct SimultaneousStop {
  std::int64_t at_us = 0;
  std::vector<std::string> members;
  /// fetch.max.wait.ms (the longest a parked ShareFetch waits) plus the variant's tolerance.
  std::int64_t bound_us = 0;
};

/// What compare reads of one trace.
struct TraceFacts {
  std::vector<Callback> callbacks;
  std::vector<Record> records;
  nlohmann::ordered_json final_assignment = nlohmann::ordered_json::object();
  std::int64_t rebalances = 0;  // distinct group generations / epochs in the group records
  std::int64_t duplicates = 0;  // (partition, offset) delivered to the application more than once
  std::int64_t lost = 0;        // offsets below a partition's highest delivered one never delivered
  ShareFacts share;
  /// Set by the caller on the simulator's facts (simultaneous_starts): groups of members started
  /// at the same instant with the same spec. A real run's records of such a group are compared
  /// in the order its members reached the coordinator (docs/fidelity.md, finding 17).
  std::vector<std::vector<std::string>> simultaneous;
  /// Set by the caller on the simulator's facts of a share run: its simultaneous stops.
  std::vector<SimultaneousStop> simultaneous_stops;
  /// Set by the caller on the simulator's facts: the scenario's production, records per second
  /// over all partitions. A duplicate count is records re-read from a window of time, so it
  /// agrees within what is produced during the variant's time tolerance (docs/fidelity.md,
  /// finding 5).
  double produced_per_sec = 0;
  /// Per consumer, the member ids it was given, in the order they first appear: from the
  /// recording's `member.id` lines (`consumer`, `member_id`; the empty id before a first join is
  /// none) and from member records (`member_id` and `consumer` at the top level: the KIP-848 and
  /// share records). `compare` replays a real run's as the simulator's member ids
  /// (ConsumerSpec::member_ids; docs/fidelity.md, finding 21).
  std::map<std::string, std::vector<std::string>> member_ids;
};

/// A consumer of the scenario: its name, the instant of its first `start` (µs; -1 if it has
/// none), and its spec written without its name and client.id (two members alike but for their
/// names have equal `spec`).
struct StartedMember {
  std::string name;
  std::int64_t first_start_us = -1;
  std::string spec;
};
/// Groups of two or more members (each in script order) started at the same instant with the
/// same spec: which of them reaches the coordinator first is the machine's order, a fact of
/// neither side.
std::vector<std::vector<std::string>> simultaneous_starts(
    const std::vector<StartedMember>& members);

/// The facts of a trace, one line at a time (add() each line, then finish() once).
class FactsBuilder {
 public:
  FactsBuilder();
  ~FactsBuilder();
  /// One trace line read as its typed event (reports::TraceReader), at `t_us`; `line` is its
  /// JSON object (a recording's `incarnation` is read from it).
  void add(std::int64_t t_us, const rsim::trace::Event& e, const nlohmann::ordered_json& line);
  TraceFacts finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

TraceFacts facts_of(const std::vector<nlohmann::json>& trace);
/// The same, streaming a trace's lines (it is never held whole); a malformed or wrongly typed
/// line, or (with require_run_end) a trace whose last line is not run.end, is a
/// std::runtime_error "SOURCE: line N: ...".
TraceFacts facts_of_stream(std::istream& trace_jsonl, const std::string& source,
                           bool require_run_end = true);
std::vector<nlohmann::json> parse_jsonl(const std::string& text, const std::string& source);

struct CallbackRow {
  Callback callback;  // from the simulator, or from the real run when unmatched
  std::optional<std::int64_t> sim_us;
  std::vector<std::optional<std::int64_t>> real_us;  // one per real run
  bool within = true;
  /// "race: matches run 2" where the real runs differ beyond the tolerance on this callback (or
  /// only some of them have it) and the simulator has one of their outcomes; "" otherwise.
  std::string race;
};

/// One real run's (or the simulator's) __consumer_offsets records against another's: matched in
/// order (longest common subsequence, no further apart than the match window), and each matched
/// pair within the tolerance in time.
struct RecordMatch {
  std::size_t matched = 0;
  std::size_t beyond = 0;  // matched pairs further apart in time than the tolerance
  bool equal = true;       // every record matched, in order, within the tolerance
  std::string first_difference;
  /// Where `first_difference` is, as the 1-based index of `a`'s record (the simulator's): the
  /// first record where the two sequences part, or the first matched pair beyond the tolerance
  /// (`a.size() + 1` when only `b` goes on); 0 when equal.
  std::size_t first_index = 0;
};

/// Where the simulator's records first differ from one real run's (run: 0-based), when they
/// differ from every run: `at` is the simulator's record (1-based), `difference` the run's
/// first difference as the records line prints it.
struct RecordDeparture {
  std::size_t run = 0;
  std::size_t at = 0;
  std::string difference;
};
RecordMatch match_records(const std::vector<Record>& a, const std::vector<Record>& b,
                          std::int64_t tolerance_us, std::int64_t window_us,
                          const char* a_name = "sim", const char* b_name = "real");

struct VariantComparison {
  std::string variant;
  std::vector<std::string> real_dirs;
  std::int64_t tolerance_ms = 0;
  std::vector<CallbackRow> callbacks;
  std::size_t callbacks_unmatched = 0;
  std::size_t deviations = 0;           // matched (callback, real run) pairs
  std::size_t deviations_beyond = 0;    // ... of them with |real - sim| beyond the tolerance
  std::int64_t worst_deviation_us = 0;  // largest |real - sim| of matched callbacks (signed)
  std::string worst_callback;
  std::int64_t spread_us = 0;  // largest difference between two real runs of one callback
  // records: the first real run against the simulator
  std::size_t records_sim = 0, records_real = 0, records_matched = 0;
  std::size_t records_beyond = 0;  // matched records further apart in time than the tolerance
  std::string first_record_difference;
  bool records_equal =
      true;  // against run 1, or against another run where the runs differ (a race)
  /// With two or more real runs whose records all differ from the simulator's: each run's first
  /// difference, so that the table says where the simulator departs from every run, and whether
  /// it departed from run 1 on a record where another run has the simulator's (the runs decide
  /// that record differently). Empty otherwise.
  std::vector<RecordDeparture> record_departures;
  /// Every event on which the real runs differ beyond the tolerance and the simulator has one of
  /// their outcomes: "callback B onPartitionsAssigned [t-2,t-3]: race: matches run 1", "final
  /// assignment: race: matches run 2". Such an event agrees.
  std::vector<std::string> races;
  nlohmann::ordered_json final_sim, final_real;
  std::int64_t rebalances_sim = 0, rebalances_real = 0, duplicates_sim = 0, duplicates_real = 0,
               lost_sim = 0, lost_real = 0;  // the *_real: run 1's
  // each fact equal to run 1's, or to another run's where the runs differ (a race, in races)
  bool final_equal = true, rebalances_equal = true, duplicates_equal = true, lost_equal = true;
  /// How far the duplicate counts may differ: the records produced in the time tolerance.
  std::int64_t duplicates_tolerance = 0;
  bool final_observed = true;  // false under share: a KafkaShareConsumer has no assignment()
  // share groups: run 1's counts against the simulator's, and the redeliveries and archivals
  // matched in order (no further apart than the match window); a matched pair beyond share_ms
  // differs. Unmatched ones are shown, not failed: which records an application releases is its
  // own random draw.
  bool share = false;  // either side has share.records
  ShareFacts share_sim, share_real;
  std::vector<std::string> share_count_differences;  // "released: sim 40 real 30 (beyond ±3)"
  std::size_t share_events_matched = 0, share_events_beyond = 0;
  std::int64_t share_tolerance_ms = 0;
  std::string first_share_difference;
  bool passed() const;
  std::vector<std::string> failures() const;
};

VariantComparison compare_variant(const std::string& variant, const TraceFacts& sim,
                                  const std::vector<TraceFacts>& real,
                                  const std::vector<std::string>& real_dirs, const Tolerances& tol);

/// The share facts of sim against real (fills the share_* fields of c); the counts also against
/// `other_runs` (the further real runs), where the runs' own counts differ (a race).
void compare_share(VariantComparison& c, const ShareFacts& sim, const ShareFacts& real,
                   const Tolerances& tol, const std::vector<ShareFacts>& other_runs = {});

std::string render_table(const std::string& scenario, const VariantComparison& c);
/// "records against each run: ..." (the line summary_lines prints for record_departures), or ""
/// when there are none.
std::string departures_line(const std::vector<RecordDeparture>& departures);
/// The lines render_table prints below the callback rows (worst deviation, records, final
/// assignment, counts, the verdict), without their indentation.
std::vector<std::string> summary_lines(const VariantComparison& c);
/// "orders-0..5" for a run of one topic's consecutive partitions, as the table prints them.
std::string compact_partitions(const std::vector<std::string>& partitions);
nlohmann::ordered_json to_json(const std::string& scenario, const VariantComparison& c);

}  // namespace rsim::compare
