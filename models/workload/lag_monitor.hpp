// Consumer lag, per group and partition, as `lag` trace events: every `period` (the scenario's
// `lag_sample_ms`, default 1000 ms; 0 turns the periodic samples off) for every partition the
// group has an offset for, and at every change of a partition's owner (the new owner's event
// comes when it is assigned the partition, the old owner's when it gives it up).
//
// lag = log end offset - the group's consumed offset, where the consumed offset is the owner's
// position when a member owns the partition and has a valid position, else the group's last
// committed offset. A partition with neither (never consumed, never committed) has no lag yet
// and no event. Fields: group, partition, lag, log_end_offset, offset (the consumed offset
// used), owner (consumer name or null), reason ("sample" or "owner").
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "models/protocol/topic_partition.hpp"
#include "sim/kernel.hpp"
#include "models/protocol/trace_events.hpp"

namespace rsim {

class Workload;
class RecordConsumption;

class LagMonitor {
 public:
  LagMonitor(sim::Kernel& kernel, Tracer& tracer, Workload& workload, sim::SimTime period);
  LagMonitor(const LagMonitor&) = delete;
  LagMonitor& operator=(const LagMonitor&) = delete;

  /// Arms the periodic sampling (first sample one period after now).
  void start();
  /// `owner` empty and `consumption` null: the partition has no owner any more.
  void set_owner(const std::string& group, const TopicPartition& tp, const std::string& owner,
                 const RecordConsumption* consumption);
  /// The group's coordinator stored a committed offset.
  void on_committed(const std::string& group, const TopicPartition& tp, std::int64_t offset);

 private:
  struct Entry {
    std::string owner;
    const RecordConsumption* consumption = nullptr;
    std::optional<std::int64_t> committed;
  };
  void emit(const std::pair<std::string, TopicPartition>& key, const Entry& e, const char* reason);
  void on_tick();

  Tracer& tracer_;
  Workload& workload_;
  sim::SimTime period_;
  sim::Timer timer_;
  std::map<std::pair<std::string, TopicPartition>, Entry> entries_;
};

}  // namespace rsim
