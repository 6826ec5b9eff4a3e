#include "models/workload/lag_monitor.hpp"

#include "models/client/record_consumption.hpp"
#include "models/workload/workload.hpp"

namespace rsim {

LagMonitor::LagMonitor(sim::Kernel& kernel, Tracer& tracer, Workload& workload,
                       sim::SimTime period)
    : tracer_(tracer),
      workload_(workload),
      period_(period),
      timer_(kernel, [this] { on_tick(); }) {}

void LagMonitor::start() {
  if (period_ > sim::SimTime::zero()) timer_.arm(period_);
}

void LagMonitor::on_tick() {
  for (const auto& [key, e] : entries_) emit(key, e, "sample");
  timer_.arm(period_);
}

void LagMonitor::set_owner(const std::string& group, const TopicPartition& tp,
                           const std::string& owner, const RecordConsumption* consumption) {
  const auto key = std::make_pair(group, tp);
  Entry& e = entries_[key];
  e.owner = owner;
  e.consumption = consumption;
  emit(key, e, "owner");
}

void LagMonitor::on_committed(const std::string& group, const TopicPartition& tp,
                              std::int64_t offset) {
  entries_[std::make_pair(group, tp)].committed = offset;
}

void LagMonitor::emit(const std::pair<std::string, TopicPartition>& key, const Entry& e,
                      const char* reason) {
  std::optional<std::int64_t> offset;
  if (e.consumption != nullptr) offset = e.consumption->position(key.second);
  if (!offset) offset = e.committed;
  if (!offset) return;
  const std::int64_t leo = workload_.log_end_offset(key.second);
  trace::Lag f{.group = key.first, .partition = &key.second, .lag = leo - *offset, .log_end_offset = leo,
               .offset = *offset, .reason = reason};
  if (!e.owner.empty()) f.owner.value = e.owner;
  tracer_.publish(f);
}

}  // namespace rsim
