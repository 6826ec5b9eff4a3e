#include "models/coordinator/share_partition.hpp"

#include <algorithm>

namespace rsim {

namespace {
bool terminal(RecordState s) {
  return s == RecordState::ACKNOWLEDGED || s == RecordState::ARCHIVED;
}
}  // namespace

SharePartition::SharePartition(SharePartitionConfig config, std::int64_t start_offset)
    : config_(config), start_(start_offset) {}

std::int64_t SharePartition::end_offset() const {
  return cache_.empty() ? start_ : start_ + static_cast<std::int64_t>(cache_.size()) - 1;
}

SharePartition::Slot* SharePartition::slot(std::int64_t offset) {
  if (offset < start_ || offset >= start_ + static_cast<std::int64_t>(cache_.size()))
    return nullptr;
  return &cache_[static_cast<std::size_t>(offset - start_)];
}

const SharePartition::Slot* SharePartition::slot(std::int64_t offset) const {
  if (offset < start_ || offset >= start_ + static_cast<std::int64_t>(cache_.size()))
    return nullptr;
  return &cache_[static_cast<std::size_t>(offset - start_)];
}

std::int64_t SharePartition::next_fetch_offset() const {
  for (std::size_t i = 0; i < cache_.size(); ++i) {
    if (cache_[i].state == RecordState::AVAILABLE && !cache_[i].in_transition) {
      return start_ + static_cast<std::int64_t>(i);
    }
  }
  return start_ + static_cast<std::int64_t>(cache_.size());
}

bool SharePartition::can_acquire(std::int64_t log_end_offset) const {
  const std::int64_t next = next_fetch_offset();
  if (next < start_ + static_cast<std::int64_t>(cache_.size())) return true;
  return in_flight() < config_.max_record_locks && next < log_end_offset;
}

RecordState SharePartition::released_state(const Slot& s) const {
  return s.delivery_count >= config_.delivery_count_limit ? RecordState::ARCHIVED
                                                          : RecordState::AVAILABLE;
}

void SharePartition::add_change(std::vector<StateChange>& out, std::int64_t offset,
                                RecordState from, RecordState to, std::int32_t count,
                                std::int32_t member) {
  if (!out.empty()) {
    StateChange& last = out.back();
    if (last.last_offset + 1 == offset && last.from == from && last.to == to &&
        last.delivery_count == count && last.member == member) {
      last.last_offset = offset;
      return;
    }
  }
  out.push_back({offset, offset, from, to, count, member});
}

void SharePartition::add_persist(std::vector<PersistedBatch>& out, std::int64_t offset,
                                 RecordState state, std::int32_t count) {
  if (!out.empty()) {
    PersistedBatch& last = out.back();
    if (last.last_offset + 1 == offset && last.state == state && last.delivery_count == count) {
      last.last_offset = offset;
      return;
    }
  }
  out.push_back({offset, offset, state, count});
}

std::vector<AcquiredRecords> SharePartition::acquire(std::int32_t member, std::int32_t max_records,
                                                     std::int64_t log_end_offset, sim::SimTime now,
                                                     std::vector<StateChange>* changes) {
  std::vector<AcquiredRecords> out;
  const sim::SimTime lock_until = now + config_.record_lock_duration;
  const std::int64_t fetch_offset = next_fetch_offset();
  const std::int64_t past_end = start_ + static_cast<std::int64_t>(cache_.size());
  // Kafka's lastOffsetAndMaxRecordsToAcquire: room left in the in-flight window, or, when the
  // window is full, only what lies between the fetch offset and SPEO.
  std::int64_t budget = std::min<std::int64_t>(max_records, config_.max_record_locks - in_flight());
  bool new_records = true;
  if (budget <= 0) {
    if (fetch_offset >= past_end) return out;
    budget = std::min<std::int64_t>(max_records, past_end - fetch_offset);
    new_records = false;
  }
  std::int64_t acquired = 0;
  const auto take = [&](std::int64_t offset, Slot& s) {
    const RecordState from = s.state;
    s.state = RecordState::ACQUIRED;
    ++s.delivery_count;
    s.owner = member;
    s.lock_until = lock_until;
    if (!out.empty() && out.back().last_offset + 1 == offset &&
        out.back().delivery_count == s.delivery_count) {
      out.back().last_offset = offset;
    } else {
      out.push_back({offset, offset, s.delivery_count});
    }
    if (changes != nullptr)
      add_change(*changes, offset, from, RecordState::ACQUIRED, s.delivery_count, member);
    ++acquired;
  };

  // Re-available cached records first. Kafka throttles records that were delivered often, to
  // isolate a poison record: from L = max(2, ceil(limit / 2)) deliveries on, such a record is
  // never added to a response that already has others, and a record about to get its last
  // delivery is acquired alone.
  const std::int32_t limit = config_.delivery_count_limit;
  const std::int32_t throttle_from = std::max(2, (limit + 1) / 2);
  bool stop = false;
  for (std::int64_t offset = fetch_offset; offset < past_end && acquired < budget && !stop;
       ++offset) {
    Slot& s = cache_[static_cast<std::size_t>(offset - start_)];
    if (s.state != RecordState::AVAILABLE || s.in_transition) continue;
    const bool last_delivery = limit > 2 && s.delivery_count == limit - 1;
    if ((s.delivery_count >= throttle_from || last_delivery) && acquired > 0) {
      stop = true;
      break;
    }
    take(offset, s);
    if (last_delivery) stop = true;
  }
  if (stop || !new_records) return out;
  // Then new records past SPEO, up to the log end offset.
  for (std::int64_t offset = past_end; offset < log_end_offset && acquired < budget; ++offset) {
    cache_.push_back(Slot{});
    take(offset, cache_.back());
  }
  return out;
}

ShareChange SharePartition::acknowledge(std::int32_t member, std::int64_t first, std::int64_t last,
                                        AcknowledgeType type, sim::SimTime now) {
  ShareChange result;
  const std::int64_t from = std::max(first, start_);
  for (std::int64_t offset = from; offset <= last; ++offset) {
    const Slot* s = slot(offset);
    if (s == nullptr || s->state != RecordState::ACQUIRED || s->owner != member ||
        s->in_transition) {
      result.error = ErrorCode::INVALID_RECORD_STATE;
      return result;
    }
  }
  if (from > last) return result;  // all below SPSO: already archived
  if (type == AcknowledgeType::RENEW) {
    if (!config_.renew_acknowledge_enable) {
      result.error = ErrorCode::INVALID_REQUEST;
      return result;
    }
    for (std::int64_t offset = from; offset <= last; ++offset) {
      slot(offset)->lock_until = now + config_.record_lock_duration;
    }
    return result;
  }
  for (std::int64_t offset = from; offset <= last; ++offset) {
    Slot& s = *slot(offset);
    RecordState to = RecordState::ARCHIVED;
    if (type == AcknowledgeType::ACCEPT) to = RecordState::ACKNOWLEDGED;
    if (type == AcknowledgeType::RELEASE) to = released_state(s);
    add_change(result.changes, offset, s.state, to, s.delivery_count, s.owner);
    add_persist(result.persist, offset, to, s.delivery_count);
    s.state = to;
    s.owner = -1;
    s.lock_until = sim::kNever;
    s.in_transition = true;  // excluded from fetches and acks until the write completes
  }
  result.first_offset = from;
  result.last_offset = last;
  return result;
}

ShareChange SharePartition::expire_locks(std::int64_t first, std::int64_t last,
                                         sim::SimTime deadline) {
  ShareChange result;
  std::int64_t lo = -1;
  std::int64_t hi = -2;
  for (std::int64_t offset = std::max(first, start_); offset <= last; ++offset) {
    Slot* s = slot(offset);
    if (s == nullptr) break;
    if (s->state != RecordState::ACQUIRED || s->in_transition || s->lock_until != deadline)
      continue;
    const RecordState to = released_state(*s);
    add_change(result.changes, offset, RecordState::ACQUIRED, to, s->delivery_count, s->owner);
    add_persist(result.persist, offset, to, s->delivery_count);
    s->state = to;
    s->owner = -1;
    s->lock_until = sim::kNever;
    if (lo < 0) lo = offset;
    hi = offset;
  }
  // The change is already visible to fetches; the write that follows only moves SPSO.
  result.first_offset = lo;
  result.last_offset = hi;
  return result;
}

ShareChange SharePartition::release_member(std::int32_t member) {
  ShareChange result;
  std::int64_t lo = -1;
  std::int64_t hi = -2;
  for (std::size_t i = 0; i < cache_.size(); ++i) {
    Slot& s = cache_[i];
    if (s.state != RecordState::ACQUIRED || s.owner != member || s.in_transition) continue;
    const std::int64_t offset = start_ + static_cast<std::int64_t>(i);
    const RecordState to = released_state(s);
    add_change(result.changes, offset, RecordState::ACQUIRED, to, s.delivery_count, member);
    add_persist(result.persist, offset, to, s.delivery_count);
    s.state = to;
    s.owner = -1;
    s.lock_until = sim::kNever;
    s.in_transition = true;
    if (lo < 0) lo = offset;
    hi = offset;
  }
  result.first_offset = lo;
  result.last_offset = hi;
  return result;
}

void SharePartition::commit(std::int64_t first, std::int64_t last) {
  for (std::int64_t offset = std::max(first, start_); offset <= last; ++offset) {
    Slot* s = slot(offset);
    if (s == nullptr) break;
    s->in_transition = false;
  }
  advance_start();
}

void SharePartition::advance_start() {
  while (!cache_.empty() && terminal(cache_.front().state) && !cache_.front().in_transition) {
    cache_.pop_front();
    ++start_;
  }
}

sim::SimTime SharePartition::lock_deadline(std::int64_t offset) const {
  const Slot* s = slot(offset);
  return s != nullptr && s->state == RecordState::ACQUIRED ? s->lock_until : sim::kNever;
}

RecordState SharePartition::state(std::int64_t offset) const {
  if (offset < start_) return RecordState::ARCHIVED;  // below SPSO: done with
  const Slot* s = slot(offset);
  return s == nullptr ? RecordState::AVAILABLE : s->state;
}

std::int32_t SharePartition::delivery_count(std::int64_t offset) const {
  const Slot* s = slot(offset);
  return s == nullptr ? 0 : s->delivery_count;
}

std::int32_t SharePartition::delivery_complete_count() const {
  std::int32_t n = 0;
  for (const Slot& s : cache_) n += terminal(s.state) ? 1 : 0;
  return n;
}

}  // namespace rsim
