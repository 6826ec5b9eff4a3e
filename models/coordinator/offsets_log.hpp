// The __consumer_offsets topic (its replicated log, shared by the brokers): every record a group coordinator
// appends (OffsetCommit, GroupMetadata, ConsumerGroup* records) gets the next offset of its
// group's partition and is emitted as a `record` trace event at append time, in log order.
// Records commit after the write (replication) latency, in append order.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"
#include "sim/trace.hpp"

namespace rsim {

class OffsetsLog {
 public:
  OffsetsLog(sim::Kernel& kernel, sim::Tracer& tracer, sim::Rng rng, sim::Distribution write_latency,
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
  /// The records of a partition committed by `at`, in offset order (what a new leader loads).
  std::vector<nlohmann::ordered_json> committed_records(std::int32_t partition, sim::SimTime at) const;
  /// A new leader's log is the committed prefix: records appended but not committed by `at` are
  /// dropped (a `log.truncate` trace event says from which offset).
  void truncate_uncommitted(std::int32_t partition, sim::SimTime at);
  std::int32_t num_partitions() const { return num_partitions_; }

 private:
  sim::Kernel& kernel_;
  sim::Tracer& tracer_;
  sim::Rng rng_;
  sim::Distribution write_latency_;
  std::int32_t num_partitions_;
  struct Stored {
    nlohmann::ordered_json record;
    sim::SimTime committed_at;
  };
  std::map<std::int32_t, std::int64_t> log_end_offset_;
  std::map<std::int32_t, std::vector<Stored>> records_;
  sim::SimTime last_commit_at_{0};
};

}  // namespace rsim
