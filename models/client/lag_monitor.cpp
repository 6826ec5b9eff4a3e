#include "models/client/lag_monitor.hpp"

namespace rsim {

LagMonitor::LagMonitor(sim::Kernel& kernel, Tracer& tracer, Workload& workload, sim::SimTime period)
    : tracer_(tracer),
      workload_(workload),
      period_(period),
      timer_(kernel, [this] { on_tick(); }),
      committed_next_(entries_.end()) {}

void LagMonitor::start() {
  if (period_ > sim::SimTime::zero()) timer_.arm(period_);
}

void LagMonitor::on_tick() {
  if (order_.size() != entries_.size()) {
    order_.clear();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) order_.push_back(it);
  }
  // Each sample reads an entry (a map node), the owner's position (in that consumer's state)
  // and the partition's production (its Workload::Partition): at 100,000 partitions all three
  // miss the cache, one after the other. Loading them a few entries ahead lets the misses of
  // several entries overlap (a stale Ref's partition is only prefetched, never read).
  constexpr std::size_t kNodeAhead = 16, kPartAhead = 8;
  const std::size_t n = order_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kNodeAhead < n) __builtin_prefetch(&*order_[i + kNodeAhead]);
    if (i + kPartAhead < n) {
      const Entry& ahead = order_[i + kPartAhead]->second;
      if (ahead.part != nullptr) __builtin_prefetch(ahead.part);
      if (ahead.ref.partition != nullptr) __builtin_prefetch(ahead.ref.partition);
    }
    emit(order_[i]->first, order_[i]->second, "sample");
  }
  timer_.arm(period_);
}

LagMonitor::Entries::iterator LagMonitor::find_or_add(const std::string& group,
                                                      const TopicPartition& tp) {
  const KeyRef key{group, tp};
  if (const auto found = index_.find(key); found != index_.end()) return *found;
  const auto it = entries_.emplace(Key{group, tp}, Entry{}).first;
  it->second.slot = static_cast<std::uint32_t>(entries_.size());
  index_.insert(it);
  return it;
}

void LagMonitor::set_owner(const std::string& group, const TopicPartition& tp,
                           const std::string& owner, const RecordConsumption::Part* part) {
  const auto it = find_or_add(group, tp);
  Entry& e = it->second;
  e.owner = owner;
  e.part = part;
  emit(it->first, e, "owner");
}

void LagMonitor::on_committed(const std::string& group, const TopicPartition& tp,
                              std::int64_t offset) {
  // A commit's offsets come partition after partition: the entry after the last one is looked at
  // before the hash (which hashes both names and misses the cache twice).
  const bool next = committed_next_ != entries_.end() && committed_next_->first.second == tp &&
                    committed_next_->first.first == group;
  const auto it = next ? committed_next_ : find_or_add(group, tp);
  it->second.committed = offset;
  committed_next_ = std::next(it);
}

void LagMonitor::emit(const Key& key, Entry& e, const char* reason) {
  std::optional<std::int64_t> offset;
  if (e.part != nullptr) offset = RecordConsumption::position(*e.part);
  if (!offset) offset = e.committed;
  if (!offset) return;
  if (e.ref_layout != workload_.layout()) {
    e.ref = workload_.ref(key.second);
    e.ref_layout = workload_.layout();
  }
  const std::int64_t leo = workload_.log_end_offset(e.ref);
  trace::Lag f{.group = key.first,
               .partition = &key.second,
               .lag = leo - *offset,
               .log_end_offset = leo,
               .offset = *offset,
               .reason = reason,
               .slot = e.slot};
  if (!e.owner.empty()) f.owner.value = e.owner;
  tracer_.publish(f);
}

}  // namespace rsim
