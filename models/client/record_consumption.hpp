// The records side of a KafkaConsumer, shared by the classic client (ClassicConsumer) and the
// KIP-848 client: which assigned partitions have a fetch position, where each position is, what
// poll() returns, how long the application spends on a batch, and what a commit of "all
// consumed" carries. It sends nothing itself: the client sends OffsetFetch / ListOffsets and
// feeds the answers in, so the same component works under either group protocol.
//
// How a client drives it (Kafka's SubscriptionState + FetchCollector, reduced to offsets):
//
//   on assignment            assign(added)                     positions unknown (INITIALIZING)
//   on revocation / lost     revoke(removed) / clear()
//   EAGER onJoinPrepare      mark_pending_revocation(owned)    no longer fetchable
//   in poll(), group active  (updateFetchPositions, in this order)
//                            awaiting_validation() -> send OffsetForLeaderEpoch to each
//                            partition's leader -> lookup_sent(tps); on its answer:
//                            on_validated(answers)
//                            has_all_fetch_positions(): keep it; while false a poll() waiting
//                            for records wakes after retry.backoff.ms at the latest
//                            awaiting_committed() -> send OffsetFetch -> lookup_sent(tps)
//                            on its answer: on_committed(offsets) (-1 = none; an offset with
//                            a leader epoch awaits validation at the NEXT updateFetchPositions)
//                            awaiting_reset() -> send ListOffsets -> lookup_sent(tps)
//                            on its answer: on_reset(offsets)
//                            (auto.offset.reset=none: missing_offset() names the partition,
//                             the client fails with NoOffsetForPartitionException)
//                            lookup_failed(tps) when a lookup fails: asked again next pass
//   then                     poll() -> a Batch (up to max.poll.records), or nothing;
//                            next_fetchable() -> when to wake up a waiting poll()
//   the application          processing_time(batch) (draw), then processed(batch)
//   commits                  all_consumed(): every partition with a valid position (FETCHING;
//                            not INITIALIZING, AWAIT_RESET or AWAIT_VALIDATION), with its epoch
//
// Wiring a client (what ClassicConsumer does; the KIP-848 client does the same):
//  - construct it with the World's Workload and LagMonitor (World passes both to consumers),
//    Options{consumer name, group.id, max.poll.records, auto.offset.reset, the scenario's
//    processing, leader_reachable, reach_epoch} and an Rng stream of its own
//    ("processing-<name>");
//  - OffsetFetchRequest / ListOffsetsRequest / OffsetsForLeaderEpochRequest (messages.hpp) are
//    answered by the coordinator / any live broker / the partition's leader (send the last two
//    to the leader); the KIP-848 client fills OffsetFetchRequest.member_id/member_epoch;
//  - its commits (auto-commit from the background thread every auto.commit.interval.ms, the
//    commit before revocation, commitSync/commitAsync) send all_consumed(), and nothing when it
//    is empty; the `commit` trace event (consumer, group, phase sent/completed/failed, purpose,
//    generation, offsets, error) is the client's to emit.
//
// Records are fetched from the Workload's log end offsets at the instant of poll(): a consumer
// with records waiting gets them at once (in steady state Kafka's prefetch has them buffered);
// a consumer waiting in poll() for new records gets them `Route::delay` after their append (the
// long-poll Fetch answers at once, fetch.min.bytes=1, and the answer crosses the link). Record
// sizes, fetch.max.bytes and max.partition.fetch.bytes are not modelled. Positions advance when
// poll() returns the records, as in Kafka.
// A position's leader epoch: none after a reset (ListOffsets), kDataLeaderEpoch once poll()
// returned records of the partition, the committed one after OffsetFetch; commits carry it.
// Trace events: `position` (consumer, group, partition, offset, source "committed",
// "reset:<strategy>", "validated" or "truncated", state "FETCHING" or "AWAIT_VALIDATION");
// `records.fetched` (consumer, group, batch, count, ranges: one {partition, first_offset,
// last_offset} per partition of the batch) when poll() returns a batch, and `records.processed`
// (consumer, group, batch, count) when the application is done with it (its ranges are those of
// the records.fetched event with the same consumer and batch).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/protocol/messages.hpp"
#include "models/protocol/topic_partition.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "models/workload/workload.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"

namespace rsim {

class LagMonitor;

struct Batch {
  std::int64_t id = 0;  // the consumer's batch number, from 1
  std::vector<FetchedRange> ranges;
  std::int64_t records = 0;
};

class RecordConsumption {
 public:
  /// The partition's leader as the client's metadata names it, kept with the partition (Kafka's
  /// fetch position carries its current leader too) so that leader_reachable, which runs per
  /// partition per poll pass, looks nothing up by partition. The client fills it when its
  /// `version` is stale; RecordConsumption only keeps it and reads `delay`.
  struct Route {
    std::uint64_t version = 0;  // the client's version it was filled at (0: never)
    std::int32_t leader = -1;   // the leader's broker id in the client's metadata (-1: none)
    std::size_t broker = 0;     // the broker a Fetch for it goes to, by index
    bool cut = false;           // a link between the client and that broker is cut
    /// How long a record takes to reach a consumer waiting in poll() once appended: the
    /// long-poll Fetch answers at once and the answer crosses the link.
    sim::SimTime delay{0};
  };
  struct Options {
    std::string consumer;  // the scenario's name, for the trace
    std::string group;
    std::int32_t max_poll_records = 500;
    std::string auto_offset_reset = "latest";  // latest | earliest | none
    ProcessingSpec processing;
    /// Whether the consumer can fetch from the partition's leader now, its route brought up to
    /// date (empty: always, with no delay). A cut link stops the records; positions are kept.
    std::function<bool(const TopicPartition&, Route&)> leader_reachable;
    /// A value that names what leader_reachable answers (and the routes it fills) for every
    /// partition: equal values, equal answers. 0 (or empty): unknown. While it holds, what was
    /// derived from those answers is kept (see the quiet state below) instead of asking again per
    /// partition per poll pass.
    std::function<std::uint64_t()> reach_epoch;
  };
  // Opaque to callers (LagMonitor holds an assigned partition's Part, see position(const Part&)).
  // Kafka's FetchStates: INITIALIZING, AWAIT_RESET, AWAIT_VALIDATION, FETCHING.
  enum class State { Initializing, AwaitingReset, AwaitingValidation, Fetching };
  struct Part {
    State state = State::Initializing;
    bool lookup_in_flight = false;  // OffsetFetch, ListOffsets or OffsetForLeaderEpoch
    bool pending_revocation = false;
    std::int64_t position = 0;
    std::int32_t offset_epoch = -1;  // the position's leader epoch (-1: none)
    // The fetchable-data index (valid while index_valid_): the partition's rank in parts_, its
    // Workload::Ref, and whether it leaves ready_ at the end of this pass.
    std::uint32_t rank = 0;
    Workload::Ref ref;
    bool drained = false;
    mutable Route route;  // the client's, through leader_reachable
  };

  RecordConsumption(sim::Kernel& kernel, Tracer& tracer, Workload& workload, LagMonitor* lag,
                    Options options, sim::Rng rng);
  RecordConsumption(const RecordConsumption&) = delete;
  RecordConsumption& operator=(const RecordConsumption&) = delete;

  /// The consumer_slot its records.* events carry: a number naming this consumer for the run
  /// (0: none).
  void set_trace_slot(std::uint32_t slot) { trace_slot_ = slot; }

  // Assignment.
  void assign(const TopicPartitions& added);
  void revoke(const TopicPartitions& removed);
  void clear();
  void mark_pending_revocation(const TopicPartitions& tps);
  bool assigned(const TopicPartition& tp) const { return parts_.count(tp) > 0; }

  // Positions.
  /// Assigned partitions without a position, no committed-offset lookup yet and no lookup in
  /// flight.
  TopicPartitions awaiting_committed() const;
  /// Partitions with no committed offset that need the reset offset (ListOffsets).
  TopicPartitions awaiting_reset() const;
  void lookup_sent(const TopicPartitions& tps);
  void lookup_failed(const TopicPartitions& tps);
  /// OffsetFetch answer: offset >= 0 seeks there (with a leader epoch: AWAIT_VALIDATION, else
  /// FETCHING); -1 (none) applies auto.offset.reset. Only partitions whose lookup is in flight.
  void on_committed(const std::vector<PartitionOffset>& offsets);
  /// ListOffsets answer for partitions awaiting a reset.
  void on_reset(const std::vector<std::pair<TopicPartition, std::int64_t>>& offsets);
  /// Partitions awaiting validation (a committed position with a leader epoch) and no
  /// OffsetForLeaderEpoch in flight, with the epoch to look up.
  std::vector<EpochOffsetQuery> awaiting_validation() const;
  /// OffsetForLeaderEpoch answer: FETCHING from the position, or from the epoch's end offset when
  /// the log ends below it; an unknown epoch applies auto.offset.reset; an error asks again.
  void on_validated(const std::vector<EpochEndOffset>& answers);
  /// Kafka's hasAllFetchPositions(): every assigned partition has a valid position. O(1).
  bool has_all_fetch_positions() const { return not_fetching_ == 0; }
  /// Whether some partition is fetchable now (see for_each_fetchable). O(1) while the
  /// reach_epoch and the fetchable partitions' states are unchanged.
  bool any_fetchable() const;
  /// poll() would return nothing now and next_fetchable() would answer quiet_next(): nothing
  /// changed since a poll() and next_fetchable() found every reachable partition drained, and
  /// no partition can have a record before its next append.
  bool finds_nothing() const { return !parts_.empty() && quiet(); }
  /// next_fetchable()'s answer while finds_nothing().
  sim::SimTime quiet_next() const { return quiet_.next; }
  /// While finds_nothing(), it stays true until quiet_until(), unless the reach epoch leaves
  /// quiet_epoch(), production changes (Workload::layout()) or the client itself changes
  /// something (an entry into the client).
  sim::SimTime quiet_until() const { return quiet_.until; }
  std::uint64_t quiet_epoch() const { return quiet_.epoch; }
  const Workload& workload() const { return workload_; }
  /// Calls f(tp) for every partition a Fetch would ask for now (a valid position, not pending
  /// revocation, its leader reachable), in partition order.
  template <class F>
  void for_each_fetchable(F&& f) const {
    for (const auto& [tp, p] : parts_)
      if (fetchable(tp, p)) f(tp);
  }
  /// Calls f(b) for each broker a fetchable partition's Fetch goes to (Route::broker), in the
  /// order of its first fetchable partition, while f returns true. What a walk of
  /// for_each_fetchable() that sends one Fetch per broker needs; kept while the reach_epoch and
  /// the fetchable partitions' states are unchanged.
  template <class F>
  void for_each_fetch_broker_while(F&& f) const {
    const std::uint64_t epoch = reach_epoch();
    if (epoch == 0) {
      std::vector<std::size_t> seen;
      for (const auto& [tp, p] : parts_) {
        if (!fetchable(tp, p) || std::find(seen.begin(), seen.end(), p.route.broker) != seen.end())
          continue;
        seen.push_back(p.route.broker);
        if (!f(p.route.broker)) return;
      }
      return;
    }
    for (const std::size_t b : fetch_brokers(epoch))
      if (!f(b)) return;
  }
  /// Calls f(tp) for every assigned partition, in partition order.
  template <class F>
  void for_each_assigned(F&& f) const {
    for (const auto& [tp, p] : parts_) f(tp);
  }
  /// With auto.offset.reset=none, a partition that has no committed offset.
  std::optional<TopicPartition> missing_offset() const {
    if (!reset_none_ || resetting_ == 0) return std::nullopt;  // asked per poll pass
    return first_resetting();
  }
  /// The timestamp ListOffsets asks for: -1 (latest) or -2 (earliest).
  std::int64_t reset_timestamp() const {
    return options_.auto_offset_reset == "earliest" ? -2 : -1;
  }
  std::optional<std::int64_t> position(const TopicPartition& tp) const;
  /// position() of a partition found once: its Part, which stays where it is while the
  /// partition is assigned (LagMonitor::set_owner is told of it at assign() and revoke()).
  static std::optional<std::int64_t> position(const Part& p) {
    if (p.state != State::Fetching) return std::nullopt;
    return p.position;
  }
  /// Kafka's allConsumed(): the position (and its epoch) of every assigned partition with a valid
  /// position; partitions awaiting validation or a reset are left out.
  std::vector<CommittedOffset> all_consumed() const;

  // Fetching and processing.
  /// O(partitions that may have records) plus O(log assigned), not O(assigned): see the
  /// fetchable-data index below; O(1) in the quiet state.
  std::optional<Batch> poll();
  /// When a record the consumer has not returned yet reaches it, at the earliest: the next append
  /// to a fetchable partition plus its Route::delay (sim::kNever: never). Same cost as poll().
  sim::SimTime next_fetchable() const;
  /// next_fetchable() <= now: a record not returned yet has reached the consumer. Looks only at
  /// the partitions that may have records (any other one's next record arrives after now).
  bool records_waiting() const;
  sim::SimTime processing_time(const Batch& batch);
  void processed(const Batch& batch);

 private:
  using Entry = std::map<TopicPartition, Part>::value_type;

  void set_position(const TopicPartition& tp, Part& p, std::int64_t offset, std::int32_t epoch,
                    State state, const std::string& source);
  void set_state(Part& p, State state);
  /// Which partitions are fetchable may have changed (assignment, state, pending revocation, a
  /// position): the index is rebuilt at its next use, and what was kept of it is stale.
  void invalidate() {
    index_valid_ = false;
    ++fetchable_changes_;
  }
  std::optional<TopicPartition> first_resetting() const;
  bool fetchable(const TopicPartition& tp, const Part& p) const;
  std::uint64_t reach_epoch() const { return options_.reach_epoch ? options_.reach_epoch() : 0; }
  const std::vector<std::size_t>& fetch_brokers(std::uint64_t epoch) const;
  bool reachable(const TopicPartition& tp, Route& route) const {
    return !options_.leader_reachable || options_.leader_reachable(tp, route);
  }

  // The fetchable-data index. Every partition a Fetch would ask for (FETCHING, not pending
  // revocation) is either in ready_ (it may have records now: visited by poll()) or in later_,
  // a min-heap of (the instant its log next grows, rank): it has no record past its position
  // until then, so poll() need not look at it. poll() moves a partition it drained to later_;
  // once its instant comes it is back in ready_. Any change of assignment, state or production
  // (Workload::layout()) rebuilds the index (O(assigned), rare): everything fetchable is ready.
  void ensure_index() const;
  void promote_due() const;
  void demote_drained() const;
  /// Walks ready_: true at the first reachable partition with a record past its position; the
  /// others visited are marked drained (and leave ready_ with demote_drained()). With `best`,
  /// also lowers it to the earliest arrival among the drained ones.
  bool walk_ready(sim::SimTime* best) const;
  mutable bool index_valid_ = false;
  mutable std::uint64_t index_layout_ = 0;
  mutable std::vector<Entry*> order_;  // every assigned partition, by rank (= partition order)
  mutable std::vector<Entry*> ready_;  // by rank
  mutable std::vector<std::pair<sim::SimTime, std::uint32_t>> later_;  // min-heap
  mutable std::vector<std::size_t> scratch_;  // next_fetchable()'s walk of later_
  mutable std::vector<std::uint32_t> due_;    // promote_due()'s ranks
  std::int32_t not_fetching_ = 0;             // assigned partitions not FETCHING
  std::int32_t validating_ = 0;               // assigned partitions AWAIT_VALIDATION
  std::int32_t resetting_ = 0;                // assigned partitions AWAIT_RESET
  bool reset_none_ = false;                   // auto.offset.reset=none

  // The quiet state: a poll pass with nothing to return and the same reach_epoch as the last
  // one asks nothing per partition. next_fetchable() found no reachable partition in ready_ with
  // a record (all of them went to later_) and `next`; until later_'s earliest instant (`until`),
  // with no change of the index (`changes`) and the same reach_epoch, poll() returns nothing,
  // records_waiting() is false and next_fetchable() is `next` again.
  struct Quiet {
    std::uint64_t epoch = 0;  // 0: nothing kept
    std::uint64_t changes = 0;
    sim::SimTime until{0};
    sim::SimTime next{0};
  };
  bool quiet() const;
  mutable Quiet quiet_;
  mutable std::uint64_t index_changes_ = 0;  // a rebuild, or a partition moved or polled
  std::uint64_t fetchable_changes_ = 0;      // counts invalidate()
  // any_fetchable() and fetch_brokers() as of a reach_epoch and fetchable_changes_ (epoch 0: none).
  mutable std::uint64_t any_epoch_ = 0, any_changes_ = 0;
  mutable bool any_ = false;
  mutable std::uint64_t brokers_epoch_ = 0, brokers_changes_ = 0;
  mutable std::vector<std::size_t> brokers_;

  sim::Kernel& kernel_;
  Tracer& tracer_;
  Workload& workload_;
  LagMonitor* lag_;
  Options options_;
  std::uint32_t trace_slot_ = 0;
  sim::Rng rng_;
  std::map<TopicPartition, Part> parts_;
  std::optional<TopicPartition> next_in_line_;  // a partition a poll() left partly drained
  mutable std::uint32_t next_rank_ = 0;  // where poll() starts: next_in_line_'s rank (in the index)
  std::int64_t batches_ = 0;

 public:
  /// For tests: how many partitions poll() and next_fetchable() looked at so far.
  std::uint64_t partitions_visited() const { return visited_; }

 private:
  mutable std::uint64_t visited_ = 0;
};

}  // namespace rsim
