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
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "models/client/record_consumption.hpp"
#include "models/protocol/topic_partition.hpp"
#include "models/trace/trace_events.hpp"
#include "models/workload/workload.hpp"
#include "sim/kernel.hpp"

namespace rsim {

class LagMonitor {
 public:
  LagMonitor(sim::Kernel& kernel, Tracer& tracer, Workload& workload, sim::SimTime period);
  LagMonitor(const LagMonitor&) = delete;
  LagMonitor& operator=(const LagMonitor&) = delete;

  /// Arms the periodic sampling (first sample one period after now).
  void start();
  /// `owner` is the consumer the partition is assigned to now, `part` its state in that
  /// consumer's RecordConsumption (where its position is read: no lookup per sample);
  /// `owner` empty and `part` null: the partition has no owner any more.
  void set_owner(const std::string& group, const TopicPartition& tp, const std::string& owner,
                 const RecordConsumption::Part* part);
  /// The group's coordinator stored a committed offset.
  void on_committed(const std::string& group, const TopicPartition& tp, std::int64_t offset);
  /// The group's last committed offset of `tp`, if any (what an admin client's OffsetFetch reads).
  std::optional<std::int64_t> committed(const std::string& group, const TopicPartition& tp) const {
    const auto it = index_.find(KeyRef{group, tp});
    return it == index_.end() ? std::nullopt : (*it)->second.committed;
  }

 private:
  using Key = std::pair<std::string, TopicPartition>;
  /// A key to look up without building one (no copy of the group's name per commit).
  struct KeyRef {
    const std::string& group;
    const TopicPartition& tp;
  };
  struct Entry {
    std::string owner;
    const RecordConsumption::Part* part = nullptr;
    std::optional<std::int64_t> committed;
    // The partition in the Workload, found once: valid while ref_layout is Workload::layout().
    Workload::Ref ref;
    std::optional<std::uint64_t> ref_layout;
    std::uint32_t slot = 0;  // trace::Lag::slot: 1 + the number of entries before it
  };
  using Entries = std::map<Key, Entry>;
  /// entries_ by hash (commits and owner changes find their entry without a walk down the map's
  /// string comparisons); never iterated.
  struct IndexHash {
    using is_transparent = void;
    std::size_t operator()(const KeyRef& k) const {
      std::size_t h = std::hash<std::string_view>{}(k.group);
      h = h * 1000003 ^ std::hash<std::string_view>{}(k.tp.topic);
      return h * 1000003 ^ static_cast<std::size_t>(static_cast<std::uint32_t>(k.tp.partition));
    }
    std::size_t operator()(Entries::iterator it) const {
      return (*this)(KeyRef{it->first.first, it->first.second});
    }
  };
  struct IndexEqual {
    using is_transparent = void;
    static KeyRef ref(const KeyRef& k) { return k; }
    static KeyRef ref(Entries::iterator it) { return KeyRef{it->first.first, it->first.second}; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const KeyRef x = ref(a), y = ref(b);
      return x.tp.partition == y.tp.partition && x.group == y.group && x.tp.topic == y.tp.topic;
    }
  };
  Entries::iterator find_or_add(const std::string& group, const TopicPartition& tp);
  void emit(const Key& key, Entry& e, const char* reason);
  void on_tick();

  Tracer& tracer_;
  Workload& workload_;
  sim::SimTime period_;
  sim::Timer timer_;
  Entries entries_;
  std::unordered_set<Entries::iterator, IndexHash, IndexEqual> index_;
  /// entries_ in its order, for the samples' walk (a vector, not the map's tree); entries are
  /// never removed, so it is rebuilt only when one was added.
  std::vector<Entries::iterator> order_;
  /// The entry after the one the last committed offset went to (end() at first).
  Entries::iterator committed_next_;
};

}  // namespace rsim
