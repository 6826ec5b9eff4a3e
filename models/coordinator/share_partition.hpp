// One share-partition (KIP-932) on the broker leading the topic-partition: the in-flight records
// between SPSO and SPEO with their states (AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED), delivery
// counts, owners and acquisition-lock deadlines, after Kafka's SharePartition. A pure state
// machine: time comes in as an argument, timers and persistence are the caller's (the caller
// writes what a change returns to the share coordinator and calls commit() when the write is
// done, as Kafka's two-phase acknowledgement does). Records are tracked per offset, in a window
// bounded by group.share.partition.max.record.locks, so memory does not grow with the run.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "models/protocol/errors.hpp"
#include "models/protocol/share_records.hpp"
#include "sim/time.hpp"

namespace rsim {

/// The group configs a share-partition obeys (broker defaults, GroupConfig overrides).
struct SharePartitionConfig {
  sim::SimTime record_lock_duration = sim::ms(30000);  // group.share.record.lock.duration.ms
  std::int32_t delivery_count_limit = 5;               // group.share.delivery.count.limit
  std::int32_t max_record_locks = 2000;                // group.share.partition.max.record.locks
  bool renew_acknowledge_enable = true;                // share.renew.acknowledge.enable
};

/// A persisted StateBatch of WriteShareGroupState / ShareUpdate (never ACQUIRED).
struct PersistedBatch {
  std::int64_t first_offset = 0;
  std::int64_t last_offset = 0;
  RecordState state = RecordState::AVAILABLE;
  std::int32_t delivery_count = 0;
  bool operator==(const PersistedBatch&) const = default;
};

/// A run of offsets that moved from one state to another in one step (for the trace).
struct StateChange {
  std::int64_t first_offset = 0;
  std::int64_t last_offset = 0;
  RecordState from = RecordState::AVAILABLE;
  RecordState to = RecordState::AVAILABLE;
  std::int32_t delivery_count = 0;
  std::int32_t member = -1;  // the owner before the change (-1: none)
  bool operator==(const StateChange&) const = default;
};

/// What a change asks the caller to do: persist `persist` (empty: nothing to write), then call
/// commit() with the same range; `changes` are what moved, for the trace.
struct ShareChange {
  ErrorCode error = ErrorCode::NONE;
  std::vector<PersistedBatch> persist;
  std::vector<StateChange> changes;
  std::int64_t first_offset = 0;  // the range to commit() (first > last: nothing)
  std::int64_t last_offset = -1;
};

class SharePartition {
 public:
  /// `start_offset`: the SPSO the share coordinator returned, or where share.auto.offset.reset
  /// puts a share-partition that never started (latest: the log end offset).
  SharePartition(SharePartitionConfig config, std::int64_t start_offset);

  /// SPSO: the first offset that is not yet in a terminal state.
  std::int64_t start_offset() const { return start_; }
  /// SPEO as Kafka keeps it: the last offset in the cache, or SPSO when the cache is empty.
  std::int64_t end_offset() const;
  /// In-flight records for the limit: SPEO - SPSO + 1, 0 when the cache is empty.
  std::int32_t in_flight() const { return static_cast<std::int32_t>(cache_.size()); }
  /// The next offset a fetch reads from: the first AVAILABLE cached offset, else past SPEO.
  std::int64_t next_fetch_offset() const;
  /// Whether a fetch would acquire anything with this log end offset.
  bool can_acquire(std::int64_t log_end_offset) const;
  const SharePartitionConfig& config() const { return config_; }

  /// ShareFetch: acquires up to `max_records` for `member` (re-available cached records first,
  /// then new ones below `log_end_offset`), each with delivery count + 1 and a lock until
  /// now + the lock duration. Nothing is persisted at acquisition.
  std::vector<AcquiredRecords> acquire(std::int32_t member, std::int32_t max_records,
                                       std::int64_t log_end_offset, sim::SimTime now,
                                       std::vector<StateChange>* changes = nullptr);

  /// One acknowledgement batch of `member` over [first, last]. Offsets below SPSO are ignored;
  /// every other offset must be ACQUIRED by `member` and not mid-write, else
  /// INVALID_RECORD_STATE and nothing changes. RENEW restarts the locks (nothing persisted).
  ShareChange acknowledge(std::int32_t member, std::int64_t first, std::int64_t last,
                          AcknowledgeType type, sim::SimTime now);

  /// Locks of [first, last] that end at `deadline` (<= now) and were neither renewed nor
  /// re-acquired since: those records become AVAILABLE, or ARCHIVED at the delivery limit,
  /// in memory at once (Kafka does not wait for the write here).
  ShareChange expire_locks(std::int64_t first, std::int64_t last, sim::SimTime deadline);

  /// The member's share session ended (close or disconnect): all it holds is released.
  ShareChange release_member(std::int32_t member);

  /// The write of a change's `persist` completed: its records stop being mid-transition and
  /// SPSO moves past the terminal records at its front.
  void commit(std::int64_t first, std::int64_t last);

  /// The lock deadline of an ACQUIRED offset (sim::kNever otherwise).
  sim::SimTime lock_deadline(std::int64_t offset) const;
  RecordState state(std::int64_t offset) const;
  std::int32_t delivery_count(std::int64_t offset) const;
  /// Terminal records at or past SPSO (Kafka's DeliveryCompleteCount).
  std::int32_t delivery_complete_count() const;

 private:
  struct Slot {
    RecordState state = RecordState::AVAILABLE;
    std::int32_t delivery_count = 0;
    std::int32_t owner = -1;
    bool in_transition = false;
    sim::SimTime lock_until = sim::kNever;
  };
  Slot* slot(std::int64_t offset);
  const Slot* slot(std::int64_t offset) const;
  /// AVAILABLE, or ARCHIVED when the record already had its last delivery.
  RecordState released_state(const Slot& s) const;
  static void add_change(std::vector<StateChange>& out, std::int64_t offset, RecordState from,
                         RecordState to, std::int32_t count, std::int32_t member);
  static void add_persist(std::vector<PersistedBatch>& out, std::int64_t offset, RecordState state,
                          std::int32_t count);
  void advance_start();

  SharePartitionConfig config_;
  std::int64_t start_;
  std::deque<Slot> cache_;  // offsets start_ .. start_ + size - 1
};

}  // namespace rsim
