#include "models/coordinator/offsets_log.hpp"

#include <algorithm>

#include "models/coordinator/group_coordinator.hpp"

namespace rsim {

namespace {

using ojson = nlohmann::ordered_json;

ojson::object_t::Container& members_of(ojson& object) {
  return static_cast<ojson::object_t::Container&>(object.get_ref<ojson::object_t&>());
}


}  // namespace

OffsetsLog::OffsetsLog(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng,
                       sim::Distribution write_latency, std::int32_t num_partitions)
    : kernel_(kernel),
      tracer_(tracer),
      rng_(std::move(rng)),
      write_latency_(std::move(write_latency)),
      num_partitions_(num_partitions),
      offset_commit_type_(intern("OffsetCommit")) {}

std::int64_t OffsetsLog::log_end_offset(const std::string& group_id) const {
  const auto it = log_end_offset_.find(coordinator_partition(group_id, num_partitions_));
  return it == log_end_offset_.end() ? 0 : it->second;
}

sim::SimTime OffsetsLog::next_commit_at() {
  const sim::SimTime commit_at = std::max(last_commit_at_, kernel_.now() + write_latency_.sample(rng_));
  last_commit_at_ = commit_at;
  return commit_at;
}

std::uint32_t OffsetsLog::intern(const std::string& name) {
  const auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.push_back(name);
  name_ids_.emplace(name, id);
  return id;
}

void OffsetsLog::append(std::vector<nlohmann::ordered_json> records, std::function<void()> on_commit) {
  const sim::SimTime commit_at = next_commit_at();
  for (auto& rec : records) {
    const std::int32_t partition =
        coordinator_partition(rec.at("group").get_ref<const std::string&>(), num_partitions_);
    const std::int64_t offset = log_end_offset_[partition]++;
    tracer_.publish(trace::Record{.partition = partition, .offset = offset, .value = {&rec}});
    Stored s{.committed_at = commit_at, .offset = offset, .value = ojson()};
    const auto name = [&](const char* field) {
      const auto it = rec.find(field);
      return it != rec.end() && it->is_string() ? intern(it->get_ref<const std::string&>()) : kNoName;
    };
    s.key.type = name("record");
    s.key.group = name("group");
    s.key.member = name("member_id");
    s.key.topic = name("topic");
    if (const auto it = rec.find("partition_index"); it != rec.end() && it->is_number_integer())
      s.key.partition = it->get<std::int32_t>();
    if (const auto it = rec.find("tombstone"); it != rec.end() && it->is_boolean()) s.tombstone = it->get<bool>();
    s.value = std::move(rec);  // "partition" and "offset" are put in front when it is read
    Partition& stored = records_[partition];
    stored.records.push_back(std::move(s));
    settle(stored, kernel_.now());
  }
  if (!on_commit) return;
  if (commit_at == kernel_.now()) {
    on_commit();
  } else {
    kernel_.schedule_closure_after(commit_at - kernel_.now(), std::move(on_commit));
  }
}

void OffsetsLog::append_offset_commits(const std::string& group_id, std::span<const CommittedOffset> offsets,
                                       std::int64_t commit_timestamp_ms, CommitListener& listener,
                                       sim::NodeId node, std::int32_t correlation_id) {
  SIM_ASSERT(!offsets.empty());
  const sim::SimTime commit_at = next_commit_at();
  const std::int32_t partition = coordinator_partition(group_id, num_partitions_);
  std::int64_t& end = log_end_offset_[partition];
  Partition& stored = records_[partition];
  const std::uint32_t group = intern(group_id);
  const bool traced = tracer_.active();
  trace::OffsetCommitValue traced_value{.group = group_id, .commit_timestamp = commit_timestamp_ms};
  std::uint32_t topic = kNoName;
  const std::string* topic_name = nullptr;  // the offsets of a commit are mostly of one topic
  for (const auto& o : offsets) {
    if (topic_name == nullptr || *topic_name != o.partition.topic) {
      topic = intern(o.partition.topic);
      topic_name = &o.partition.topic;
    }
    const std::int64_t offset = end++;
    const OffsetCommitValue v{.group = group,
                              .topic = topic,
                              .partition_index = o.partition.partition,
                              .leader_epoch = o.leader_epoch,
                              .committed_offset = o.offset,
                              .commit_timestamp = commit_timestamp_ms};
    if (traced) {
      traced_value.topic = o.partition.topic;
      traced_value.partition_index = o.partition.partition;
      traced_value.committed_offset = o.offset;
      traced_value.leader_epoch = o.leader_epoch;
      tracer_.publish(
          trace::Record{.partition = partition, .offset = offset, .value = {.commit = &traced_value}});
    }
    stored.records.push_back(Stored{.committed_at = commit_at,
                                    .offset = offset,
                                    .key = RecordKey{.type = offset_commit_type_,
                                                     .group = group,
                                                     .topic = v.topic,
                                                     .partition = v.partition_index},
                                    .value = v});
  }
  settle(stored, kernel_.now());
  if (commit_at == kernel_.now()) {
    listener.on_offsets_committed(group_id, offsets, node, correlation_id);
    return;
  }
  std::uint64_t slot;
  if (!free_pending_.empty()) {
    slot = free_pending_.back();
    free_pending_.pop_back();
  } else {
    slot = pending_.size();
    pending_.emplace_back();
  }
  PendingCommit& p = pending_[slot];
  p.group_id = group_id;
  p.offsets.assign(offsets.begin(), offsets.end());
  p.listener = &listener;
  p.node = node;
  p.correlation_id = correlation_id;
  kernel_.schedule_after(commit_at - kernel_.now(), this, slot);
}

void OffsetsLog::fire(std::uint64_t slot) {
  const PendingCommit& p = pending_[slot];
  p.listener->on_offsets_committed(p.group_id, p.offsets, p.node, p.correlation_id);
  free_pending_.push_back(slot);  // only now: the listener may have appended (another slot)
}

void OffsetsLog::settle(Partition& p, sim::SimTime at) {
  while (p.settled < p.records.size() && p.records[p.settled].committed_at <= at) {
    Stored& s = p.records[p.settled];
    auto [it, inserted] = p.latest.try_emplace(s.key, p.settled);
    if (!inserted) {
      p.records[it->second].removed = true;
      ++p.removed;
      ++p.compacted;
      it->second = p.settled;
    }
    if (s.tombstone) {
      // The key is gone: the tombstone has nothing left to delete.
      s.removed = true;
      ++p.removed;
      ++p.compacted;
      p.latest.erase(it);
    }
    ++p.settled;
  }
  if (p.removed * 2 <= p.records.size() || p.removed < 64) return;
  // Drop the removed entries (in place, order kept) and renumber the index.
  std::vector<std::size_t> new_index(p.records.size());
  std::size_t kept = 0;
  std::size_t settled = 0;
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    if (p.records[i].removed) continue;
    new_index[i] = kept;
    if (i < p.settled) ++settled;
    if (kept != i) p.records[kept] = std::move(p.records[i]);
    ++kept;
  }
  p.records.erase(p.records.begin() + static_cast<std::ptrdiff_t>(kept), p.records.end());
  for (auto& [key, index] : p.latest) index = new_index[index];
  p.settled = settled;
  p.removed = 0;
}

ojson OffsetsLog::materialise(std::int32_t partition, const Stored& s) const {
  // The record's fields after its partition and offset, appended without ordered_json's search
  // for an equal key unless one could be "partition" or "offset" (then it replaces).
  ojson out{{"partition", partition}, {"offset", s.offset}};
  auto& list = members_of(out);
  if (const auto* rec = std::get_if<ojson>(&s.value)) {
    list.reserve(2 + rec->size());
    for (auto it = rec->begin(); it != rec->end(); ++it) {
      if (it.key() == "partition" || it.key() == "offset") out[it.key()] = it.value();
      else list.emplace_back(it.key(), it.value());
    }
    return out;
  }
  const auto& v = std::get<OffsetCommitValue>(s.value);
  list.reserve(10);
  list.emplace_back("record", "OffsetCommit");
  list.emplace_back("tombstone", false);
  list.emplace_back("group", names_[v.group]);
  list.emplace_back("topic", names_[v.topic]);
  list.emplace_back("partition_index", v.partition_index);
  list.emplace_back("committed_offset", v.committed_offset);
  list.emplace_back("leader_epoch", v.leader_epoch);
  list.emplace_back("commit_timestamp", v.commit_timestamp);
  return out;
}

std::vector<nlohmann::ordered_json> OffsetsLog::committed_records(std::int32_t partition, sim::SimTime at) {
  std::vector<nlohmann::ordered_json> out;
  const auto it = records_.find(partition);
  if (it == records_.end()) return out;
  settle(it->second, at);
  for (const auto& r : it->second.records)
    if (r.committed_at <= at && !r.removed) out.push_back(materialise(partition, r));
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
  const std::int64_t from = first_uncommitted->offset;
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
