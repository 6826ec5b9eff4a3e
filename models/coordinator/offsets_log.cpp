#include "models/coordinator/offsets_log.hpp"

#include <algorithm>

#include "models/coordinator/group_coordinator.hpp"

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
  const sim::SimTime commit_at = std::max(last_commit_at_, kernel_.now() + write_latency_.sample(rng_));
  last_commit_at_ = commit_at;
  for (auto& rec : records) {
    const std::int32_t partition = coordinator_partition(rec.at("group").get<std::string>(), num_partitions_);
    nlohmann::ordered_json fields{{"partition", partition}, {"offset", log_end_offset_[partition]++}};
    for (const auto& [k, v] : rec.items()) fields[k] = v;
    tracer_.emit("record", fields);
    records_[partition].push_back({std::move(fields), commit_at});
  }
  if (!on_commit) return;
  if (commit_at == kernel_.now()) {
    on_commit();
  } else {
    kernel_.schedule_closure_after(commit_at - kernel_.now(), std::move(on_commit));
  }
}

std::vector<nlohmann::ordered_json> OffsetsLog::committed_records(std::int32_t partition,
                                                                 sim::SimTime at) const {
  std::vector<nlohmann::ordered_json> out;
  const auto it = records_.find(partition);
  if (it == records_.end()) return out;
  for (const auto& r : it->second)
    if (r.committed_at <= at) out.push_back(r.record);
  return out;
}

void OffsetsLog::truncate_uncommitted(std::int32_t partition, sim::SimTime at) {
  auto it = records_.find(partition);
  if (it == records_.end()) return;
  auto& v = it->second;
  const auto first_uncommitted =
      std::find_if(v.begin(), v.end(), [at](const Stored& r) { return r.committed_at > at; });
  if (first_uncommitted == v.end()) return;
  const std::int64_t from = first_uncommitted->record.at("offset").get<std::int64_t>();
  tracer_.emit("log.truncate", {{"partition", partition}, {"from_offset", from},
                                {"records", static_cast<std::int64_t>(v.end() - first_uncommitted)}});
  v.erase(first_uncommitted, v.end());
  log_end_offset_[partition] = from;
}

void OffsetsLog::after_pending_writes(std::function<void()> then) {
  if (last_commit_at_ <= kernel_.now()) {
    then();
    return;
  }
  kernel_.schedule_closure_after(last_commit_at_ - kernel_.now(), std::move(then));
}

}  // namespace rsim
