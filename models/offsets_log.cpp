#include "models/offsets_log.hpp"

#include <algorithm>

#include "models/group_coordinator.hpp"

namespace rsim {

OffsetsLog::OffsetsLog(sim::Kernel& kernel, sim::Tracer& tracer, sim::Rng rng,
                       sim::Distribution write_latency, std::int32_t num_partitions)
    : kernel_(kernel),
      tracer_(tracer),
      rng_(std::move(rng)),
      write_latency_(std::move(write_latency)),
      num_partitions_(num_partitions) {}

std::int64_t OffsetsLog::log_end_offset(const std::string& group_id) const {
  const auto it = log_end_offset_.find(coordinator_partition(group_id, num_partitions_));
  return it == log_end_offset_.end() ? 0 : it->second;
}

void OffsetsLog::append(std::vector<nlohmann::ordered_json> records, std::function<void()> on_commit) {
  for (auto& rec : records) {
    const std::int32_t partition = coordinator_partition(rec.at("group").get<std::string>(), num_partitions_);
    nlohmann::ordered_json fields{{"partition", partition}, {"offset", log_end_offset_[partition]++}};
    for (const auto& [k, v] : rec.items()) fields[k] = v;
    tracer_.emit("record", fields);
  }
  const sim::SimTime commit_at = std::max(last_commit_at_, kernel_.now() + write_latency_.sample(rng_));
  last_commit_at_ = commit_at;
  if (!on_commit) return;
  if (commit_at == kernel_.now()) {
    on_commit();
  } else {
    kernel_.schedule_closure_after(commit_at - kernel_.now(), std::move(on_commit));
  }
}

void OffsetsLog::after_pending_writes(std::function<void()> then) {
  if (last_commit_at_ <= kernel_.now()) {
    then();
    return;
  }
  kernel_.schedule_closure_after(last_commit_at_ - kernel_.now(), std::move(then));
}

}  // namespace rsim
