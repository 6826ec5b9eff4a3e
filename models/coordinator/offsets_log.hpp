// The __consumer_offsets topic (its replicated log, shared by the brokers): every record a group coordinator
// appends (OffsetCommit, GroupMetadata, ConsumerGroup* records) gets the next offset of its
// group's partition and is emitted as a `record` trace event at append time, in log order.
// Records commit after the write (replication) latency, in append order.
// In memory the log is kept as Kafka's log cleaner would leave it: once a later OffsetCommit of
// the same (group, topic, partition) has committed, the earlier one is gone (only the latest
// value per key remains; the replay of the compacted log gives the same groups). The full log
// stays in the trace (`record` events), which is where `dump-log` reads it.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"
#include "models/protocol/trace_events.hpp"

namespace rsim {

class OffsetsLog {
 public:
  OffsetsLog(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng, sim::Distribution write_latency,
             std::int32_t num_partitions);
  OffsetsLog(const OffsetsLog&) = delete;
  OffsetsLog& operator=(const OffsetsLog&) = delete;

  /// Appends the records of one write (each must have a "group" field); `on_commit`, if set,
  /// runs once they are committed.
  void append(std::vector<nlohmann::ordered_json> records, std::function<void()> on_commit);
  /// Runs `then` once every record appended so far has committed (at once if none is pending).
  void after_pending_writes(std::function<void()> then);
  /// The next offset of the group's partition.
  std::int64_t log_end_offset(const std::string& group_id) const;
  /// The records of a partition committed by `at`, in offset order, after compaction (what a
  /// new leader loads).
  std::vector<nlohmann::ordered_json> committed_records(std::int32_t partition, sim::SimTime at);
  /// How many records of the partition had committed by `at`, compacted ones included (the
  /// length of the log a new leader reads).
  std::int64_t committed_count(std::int32_t partition, sim::SimTime at);
  /// Records held in memory, all partitions (bounded by the live keys plus pending writes).
  std::size_t retained_records() const;
  /// A new leader's log is the committed prefix: records appended but not committed by `at` are
  /// dropped (a `log.truncate` trace event says from which offset).
  void truncate_uncommitted(std::int32_t partition, sim::SimTime at);
  std::int32_t num_partitions() const { return num_partitions_; }

 private:
  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Rng rng_;
  sim::Distribution write_latency_;
  std::int32_t num_partitions_;
  struct Stored {
    nlohmann::ordered_json record;
    sim::SimTime committed_at;
    bool removed = false;  // superseded by a later committed value of its key
  };
  struct Partition {
    std::vector<Stored> records;  // offset order
    std::size_t settled = 0;      // records before this index are committed and compacted
    std::size_t removed = 0;      // removed entries still in `records`
    std::int64_t compacted = 0;   // records compacted away since the start
    // key -> index of its latest committed value (hashed: only looked up, and renumbered whole)
    std::unordered_map<std::string, std::size_t> latest;
  };
  /// Compacts the records committed by `at`.
  void settle(Partition& p, sim::SimTime at);
  std::map<std::int32_t, std::int64_t> log_end_offset_;
  std::map<std::int32_t, Partition> records_;
  sim::SimTime last_commit_at_{0};
};

}  // namespace rsim
