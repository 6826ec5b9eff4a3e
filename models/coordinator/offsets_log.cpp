#include "models/coordinator/offsets_log.hpp"

#include <algorithm>

#include "models/coordinator/group_coordinator.hpp"
#include "models/trace/group_records_json.hpp"

namespace rsim {

namespace {
constexpr auto kOffsetCommitType = static_cast<std::uint32_t>(records::RecordType::OffsetCommit);
}  // namespace

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

sim::SimTime OffsetsLog::next_commit_at(std::int32_t partition) {
  sim::SimTime written = kernel_.now() + write_latency_.sample(rng_);
  if (replication_ && partition >= 0) written = replication_(partition, written);
  const sim::SimTime commit_at = std::max(last_commit_at_, written);
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

void OffsetsLog::append(std::vector<records::GroupRecord> records,
                        std::function<void()> on_commit) {
  const sim::SimTime commit_at = next_commit_at(
      records.empty() ? -1
                      : coordinator_partition(records::group_of(records.front()), num_partitions_));
  for (auto& rec : records) {
    const std::int32_t partition = coordinator_partition(records::group_of(rec), num_partitions_);
    const std::int64_t offset = log_end_offset_[partition]++;
    if (tracer_.active()) trace::publish_record(tracer_, partition, offset, rec);
    Stored s{.committed_at = commit_at, .offset = offset, .value = OffsetCommitValue{}};
    s.key.type = static_cast<std::uint32_t>(records::type_of(rec));
    s.key.group = intern(records::group_of(rec));
    if (const std::string* member = records::member_id_of(rec)) s.key.member = intern(*member);
    if (const auto* c = std::get_if<records::OffsetCommit>(&rec)) {
      s.key.topic = intern(c->topic);
      s.key.partition = c->partition_index;
      s.value = OffsetCommitValue{.group = s.key.group,
                                  .topic = s.key.topic,
                                  .partition_index = c->partition_index,
                                  .leader_epoch = c->leader_epoch,
                                  .committed_offset = c->committed_offset,
                                  .commit_timestamp = c->commit_timestamp};
    } else if (const auto* t = std::get_if<records::Tombstone>(&rec)) {
      if (t->topic) s.key.topic = intern(*t->topic);
      if (t->partition_index) s.key.partition = *t->partition_index;
    }
    s.tombstone = records::is_tombstone(rec);
    if (!std::holds_alternative<records::OffsetCommit>(rec))  // set above, interned
      s.value = std::make_unique<const records::GroupRecord>(std::move(rec));
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

void OffsetsLog::append_offset_commits(const std::string& group_id,
                                       std::span<const CommittedOffset> offsets,
                                       std::int64_t commit_timestamp_ms, CommitListener& listener,
                                       sim::NodeId node, std::int32_t correlation_id) {
  SIM_ASSERT(!offsets.empty());
  const std::int32_t partition = coordinator_partition(group_id, num_partitions_);
  const sim::SimTime commit_at = next_commit_at(partition);
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
      tracer_.publish(trace::Record{
          .partition = partition, .offset = offset, .value = {.commit = &traced_value}});
    }
    stored.records.push_back(Stored{.committed_at = commit_at,
                                    .offset = offset,
                                    .key = RecordKey{.type = kOffsetCommitType,
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

std::uint32_t* OffsetsLog::offset_slot(Partition& p, const RecordKey& key) {
  // (A partition index beyond any topic's size stays in the hash: no slot array that long.)
  if (key.type != kOffsetCommitType || key.member != kNoName || key.topic == kNoName ||
      key.partition < 0 || key.partition >= (1 << 24))
    return nullptr;
  auto& slots = p.latest_offsets[std::uint64_t{key.group} << 32 | key.topic];
  const auto i = static_cast<std::size_t>(key.partition);
  if (slots.size() <= i) slots.resize(i + 1, kNoIndex);
  return &slots[i];
}

void OffsetsLog::settle(Partition& p, sim::SimTime at) {
  while (p.settled < p.records.size() && p.records[p.settled].committed_at <= at) {
    Stored& s = p.records[p.settled];
    if (std::uint32_t* slot = offset_slot(p, s.key)) {
      SIM_ASSERT(p.settled < kNoIndex);
      if (*slot != kNoIndex) {
        p.records[*slot].removed = true;
        ++p.removed;
        ++p.compacted;
      }
      *slot = static_cast<std::uint32_t>(p.settled);
      if (s.tombstone) {
        // The key is gone: the tombstone has nothing left to delete.
        s.removed = true;
        ++p.removed;
        ++p.compacted;
        *slot = kNoIndex;
      }
      ++p.settled;
      continue;
    }
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
  for (auto& [group_topic, slots] : p.latest_offsets)
    for (std::uint32_t& index : slots)
      if (index != kNoIndex) index = static_cast<std::uint32_t>(new_index[index]);
  p.settled = settled;
  p.removed = 0;
}

records::GroupRecord OffsetsLog::materialise(const Stored& s) const {
  if (const auto* rec = std::get_if<std::unique_ptr<const records::GroupRecord>>(&s.value))
    return **rec;
  const auto& v = std::get<OffsetCommitValue>(s.value);
  return records::OffsetCommit{.group = names_[v.group],
                               .topic = names_[v.topic],
                               .partition_index = v.partition_index,
                               .committed_offset = v.committed_offset,
                               .leader_epoch = v.leader_epoch,
                               .commit_timestamp = v.commit_timestamp};
}

std::vector<records::GroupRecord> OffsetsLog::committed_records(std::int32_t partition,
                                                                sim::SimTime at) {
  std::vector<records::GroupRecord> out;
  const auto it = records_.find(partition);
  if (it == records_.end()) return out;
  settle(it->second, at);
  for (const auto& r : it->second.records)
    if (r.committed_at <= at && !r.removed) out.push_back(materialise(r));
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
  tracer_.publish(
      trace::LogTruncate{.partition = partition,
                         .from_offset = from,
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
