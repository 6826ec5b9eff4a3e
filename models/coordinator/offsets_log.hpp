// The __consumer_offsets topic (its replicated log, shared by the brokers): every record a group
// coordinator appends (OffsetCommit, GroupMetadata, ConsumerGroup* records) gets the next offset of
// its group's partition and is emitted as a `record` trace event at append time, in log order.
// Records commit after the write latency, in append order; with more than one replica, once the
// in-sync followers have fetched them (the replication wait set_replication() installs,
// models/broker/replication.hpp).
// In memory the log is kept as Kafka's log cleaner would leave it: once a later record of the
// same key (record type and group, plus the member id or the topic and partition, as Kafka's
// record keys) has committed, the earlier one is gone, and a committed tombstone goes with all
// its key's records (Kafka keeps it delete.retention.ms longer; a replay of it deletes nothing
// that is left). Only the latest value per live key remains, so memory follows the groups,
// members and offsets that exist, not how often they changed; the replay of the compacted log
// gives the same groups. The full log stays in the trace (`record` events), which is where
// `dump-log` reads it.
// Records are typed (records::GroupRecord); OffsetCommit records, most of the log, are held in a
// smaller form (names interned) and go to the trace typed (trace::OffsetCommitValue). The other
// records become JSON only for the trace's `record` event (trace::record_json), and only when
// something listens.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "models/protocol/group_records.hpp"
#include "models/protocol/messages.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/rng.hpp"

namespace rsim {

class OffsetsLog final : public sim::EventTarget {
 public:
  OffsetsLog(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng, sim::Distribution write_latency,
             std::int32_t num_partitions);
  OffsetsLog(const OffsetsLog&) = delete;
  OffsetsLog& operator=(const OffsetsLog&) = delete;

  /// The commit time of a write to `partition` whose leader's write ends at `written` (when the
  /// high watermark passes it); none: the leader's write commits (one replica).
  using ReplicationWait = std::function<sim::SimTime(std::int32_t partition, sim::SimTime written)>;
  void set_replication(ReplicationWait wait) { replication_ = std::move(wait); }

  /// Appends the records of one write; `on_commit`, if set, runs once they are committed.
  void append(std::vector<records::GroupRecord> records, std::function<void()> on_commit);

  /// Told when an OffsetCommit write has committed: the write's group and offsets, and the
  /// request it answers (the node and correlation id given to append_offset_commits()).
  class CommitListener {
   public:
    virtual void on_offsets_committed(const std::string& group_id,
                                      std::span<const CommittedOffset> offsets, sim::NodeId node,
                                      std::int32_t correlation_id) = 0;

   protected:
    ~CommitListener() = default;
  };
  /// Appends one OffsetCommit record per offset (the records::OffsetCommit records append()
  /// would get), then tells `listener` once they have committed: at once if they commit now,
  /// else from an event at their commit time (the one event append() would schedule for its
  /// `on_commit`). `offsets` must not be empty.
  void append_offset_commits(const std::string& group_id, std::span<const CommittedOffset> offsets,
                             std::int64_t commit_timestamp_ms, CommitListener& listener,
                             sim::NodeId node, std::int32_t correlation_id);

  /// Runs `then` once every record appended so far has committed (at once if none is pending).
  void after_pending_writes(std::function<void()> then);
  /// Whether some record appended so far has not committed yet (after_pending_writes() waits).
  bool writes_pending() const { return last_commit_at_ > kernel_.now(); }
  /// The next offset of the group's partition.
  std::int64_t log_end_offset(const std::string& group_id) const;
  /// The records of a partition committed by `at`, in offset order, after compaction (what a
  /// new leader loads).
  std::vector<records::GroupRecord> committed_records(std::int32_t partition, sim::SimTime at);
  /// How many records of the partition had committed by `at`, compacted ones included (the
  /// length of the log a new leader reads).
  std::int64_t committed_count(std::int32_t partition, sim::SimTime at);
  /// Records held in memory, all partitions (bounded by the live keys plus pending writes).
  std::size_t retained_records() const;
  /// A new leader's log is the committed prefix: records appended but not committed by `at` are
  /// dropped (a `log.truncate` trace event says from which offset).
  void truncate_uncommitted(std::int32_t partition, sim::SimTime at);
  std::int32_t num_partitions() const { return num_partitions_; }

  // sim::EventTarget: an OffsetCommit write committed (the argument is its pending slot).
  void fire(std::uint64_t slot) override;
  // As the kernel's closures say (the event this one stands for was a closure).
  std::string actor() const override { return "the scenario script or a scheduled closure"; }

 private:
  /// An OffsetCommit value: group and topic are indexes into names_.
  struct OffsetCommitValue {
    std::uint32_t group = 0;
    std::uint32_t topic = 0;
    std::int32_t partition_index = 0;
    std::int32_t leader_epoch = -1;
    std::int64_t committed_offset = 0;
    std::int64_t commit_timestamp = 0;
  };
  /// The compaction key of a record, as Kafka's record keys have it: the record type and its
  /// group, plus the member id (member records) or the topic and partition (OffsetCommit);
  /// the type is a records::RecordType, names are interned ids, kNoName where the key has no
  /// such field.
  static constexpr std::uint32_t kNoName = UINT32_MAX;
  struct RecordKey {
    std::uint32_t type = 0;
    std::uint32_t group = 0;
    std::uint32_t member = kNoName;
    std::uint32_t topic = kNoName;
    std::int32_t partition = -1;
    bool operator==(const RecordKey&) const = default;
  };
  struct RecordKeyHash {
    std::size_t operator()(const RecordKey& k) const {
      std::uint64_t h = (std::uint64_t{k.group} << 32 | k.topic) * 0x9E3779B97F4A7C15ULL;
      h ^= (std::uint64_t{k.type} << 32 | k.member) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
      h ^= static_cast<std::uint32_t>(k.partition) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  struct Stored {
    sim::SimTime committed_at;
    std::int64_t offset = 0;  // in its partition
    RecordKey key;
    bool tombstone = false;
    bool removed = false;  // compacted away: superseded, or a tombstone that has committed
    // An OffsetCommit (interned), or any record as append() was given it, boxed: the rare large
    // records (a GroupRecord is over 300 bytes) do not size every slot of the log.
    std::variant<OffsetCommitValue, std::unique_ptr<const records::GroupRecord>> value;
  };
  struct Partition {
    std::vector<Stored> records;  // offset order
    std::size_t settled = 0;      // records before this index are committed and compacted
    std::size_t removed = 0;      // removed entries still in `records`
    std::int64_t compacted = 0;   // records compacted away since the start
    // key -> index of its latest committed value (hashed: only looked up, and renumbered whole),
    // for every key but an OffsetCommit's
    std::unordered_map<RecordKey, std::size_t, RecordKeyHash> latest;
    // The same for OffsetCommit keys (most of the log), by group and topic (group << 32 | topic)
    // then by partition index (kNoIndex: none): a commit's offsets are of neighbouring
    // partitions, whose slots share a cache line, where the hash spread them over the table.
    std::map<std::uint64_t, std::vector<std::uint32_t>> latest_offsets;
  };
  static constexpr std::uint32_t kNoIndex = UINT32_MAX;
  /// The slot of latest_offsets holding an OffsetCommit key's latest index; nullptr for the keys
  /// `latest` holds.
  static std::uint32_t* offset_slot(Partition& p, const RecordKey& key);
  /// An OffsetCommit write waiting for its commit event (slots are reused: no allocation once
  /// the pool has grown to the writes in flight).
  struct PendingCommit {
    std::string group_id;
    std::vector<CommittedOffset> offsets;
    CommitListener* listener = nullptr;
    sim::NodeId node = 0;
    std::int32_t correlation_id = 0;
  };
  /// Compacts the records committed by `at`.
  void settle(Partition& p, sim::SimTime at);
  /// The id of a group, topic or member id (interned for good: a member id per member
  /// incarnation, the others are few).
  std::uint32_t intern(const std::string& name);
  /// The record as committed_records() returns it.
  records::GroupRecord materialise(const Stored& s) const;
  /// The commit time of a write to `partition` appended now (draws the write latency, then the
  /// replication wait).
  sim::SimTime next_commit_at(std::int32_t partition);

  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Rng rng_;
  sim::Distribution write_latency_;
  ReplicationWait replication_;
  std::int32_t num_partitions_;
  std::map<std::int32_t, std::int64_t> log_end_offset_;
  std::map<std::int32_t, Partition> records_;
  sim::SimTime last_commit_at_{0};
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::deque<PendingCommit> pending_;  // a deque: a listener may append while its slot is read
  std::vector<std::uint64_t> free_pending_;
};

}  // namespace rsim
