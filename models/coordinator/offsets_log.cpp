#include "models/coordinator/offsets_log.hpp"

#include <algorithm>
#include <charconv>

#include "models/coordinator/group_coordinator.hpp"

namespace rsim {

OffsetsLog::OffsetsLog(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng,
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
    const std::int32_t partition =
        coordinator_partition(rec.at("group").get_ref<const std::string&>(), num_partitions_);
    const std::int64_t offset = log_end_offset_[partition]++;
    tracer_.publish(trace::Record{.partition = partition, .offset = offset, .value = {&rec}});
    nlohmann::ordered_json fields{{"partition", partition}, {"offset", offset}};
    // The record's own keys follow, appended without ordered_json's search for an equal key
    // (O(keys^2) per record) unless one could be "partition" or "offset" (then it replaces).
    auto& members = fields.get_ref<nlohmann::ordered_json::object_t&>();
    auto& list = static_cast<nlohmann::ordered_json::object_t::Container&>(members);
    list.reserve(2 + rec.size());
    for (auto it = rec.begin(); it != rec.end(); ++it) {
      if (it.key() == "partition" || it.key() == "offset") fields[it.key()] = std::move(it.value());
      else list.emplace_back(it.key(), std::move(it.value()));
    }
    Partition& stored = records_[partition];
    stored.records.push_back({std::move(fields), commit_at});
    settle(stored, kernel_.now());
  }
  if (!on_commit) return;
  if (commit_at == kernel_.now()) {
    on_commit();
  } else {
    kernel_.schedule_closure_after(commit_at - kernel_.now(), std::move(on_commit));
  }
}

namespace {

// The compaction key of a record, empty for records never compacted here. Only OffsetCommit
// values are dropped: their replay is last-value-wins whatever comes between.
std::string compaction_key(const nlohmann::ordered_json& r) {
  const auto& type = r.at("record");
  if (!type.is_string() || type.get_ref<const std::string&>() != std::string_view("OffsetCommit")) return {};
  // group \0 topic \0 partition, built in one string.
  const auto& group = r.at("group").get_ref<const std::string&>();
  const auto& topic = r.at("topic").get_ref<const std::string&>();
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, r.at("partition_index").get<std::int32_t>()).ptr;
  std::string key;
  key.reserve(group.size() + topic.size() + 2 + static_cast<std::size_t>(end - digits));
  key.append(group).append(1, '\0').append(topic).append(1, '\0').append(digits, end);
  return key;
}

}  // namespace

void OffsetsLog::settle(Partition& p, sim::SimTime at) {
  while (p.settled < p.records.size() && p.records[p.settled].committed_at <= at) {
    const std::string key = compaction_key(p.records[p.settled].record);
    if (!key.empty()) {
      auto [it, inserted] = p.latest.try_emplace(key, p.settled);
      if (!inserted) {
        p.records[it->second].removed = true;
        ++p.removed;
        ++p.compacted;
        it->second = p.settled;
      }
    }
    ++p.settled;
  }
  if (p.removed * 2 <= p.records.size() || p.removed < 64) return;
  // Drop the removed entries and renumber the index.
  std::vector<Stored> kept;
  kept.reserve(p.records.size() - p.removed);
  std::vector<std::size_t> new_index(p.records.size());
  std::size_t settled = 0;
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    if (p.records[i].removed) continue;
    new_index[i] = kept.size();
    if (i < p.settled) ++settled;
    kept.push_back(std::move(p.records[i]));
  }
  for (auto& [key, index] : p.latest) index = new_index[index];
  p.records = std::move(kept);
  p.settled = settled;
  p.removed = 0;
}

std::vector<nlohmann::ordered_json> OffsetsLog::committed_records(std::int32_t partition, sim::SimTime at) {
  std::vector<nlohmann::ordered_json> out;
  const auto it = records_.find(partition);
  if (it == records_.end()) return out;
  settle(it->second, at);
  for (const auto& r : it->second.records)
    if (r.committed_at <= at && !r.removed) out.push_back(r.record);
  return out;
}

std::int64_t OffsetsLog::committed_count(std::int32_t partition, sim::SimTime at) {
  const auto it = records_.find(partition);
  if (it == records_.end()) return 0;
  settle(it->second, at);
  std::int64_t n = it->second.compacted;
  for (const auto& r : it->second.records)
    if (r.committed_at <= at && !r.removed) ++n;
  return n;
}

std::size_t OffsetsLog::retained_records() const {
  std::size_t n = 0;
  for (const auto& [partition, p] : records_) n += p.records.size() - p.removed;
  return n;
}

void OffsetsLog::truncate_uncommitted(std::int32_t partition, sim::SimTime at) {
  auto it = records_.find(partition);
  if (it == records_.end()) return;
  settle(it->second, at);
  auto& v = it->second.records;
  const auto first_uncommitted =
      std::find_if(v.begin(), v.end(), [at](const Stored& r) { return r.committed_at > at; });
  if (first_uncommitted == v.end()) return;
  const std::int64_t from = first_uncommitted->record.at("offset").get<std::int64_t>();
  tracer_.publish(trace::LogTruncate{.partition = partition, .from_offset = from,
                                     .records = static_cast<std::int64_t>(v.end() - first_uncommitted)});
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
