#include "models/client/record_consumption.hpp"

#include <algorithm>

#include "models/workload/lag_monitor.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"

namespace rsim {

RecordConsumption::RecordConsumption(sim::Kernel& kernel, Tracer& tracer, Workload& workload,
                                     LagMonitor* lag, Options options, sim::Rng rng)
    : kernel_(kernel),
      tracer_(tracer),
      workload_(workload),
      lag_(lag),
      options_(std::move(options)),
      rng_(std::move(rng)) {}

void RecordConsumption::assign(const TopicPartitions& added) {
  for (const auto& tp : added) {
    if (parts_.count(tp) > 0) continue;
    parts_.emplace(tp, Part{});
    if (lag_ != nullptr) lag_->set_owner(options_.group, tp, options_.consumer, this);
  }
}

void RecordConsumption::revoke(const TopicPartitions& removed) {
  for (const auto& tp : removed) {
    if (parts_.erase(tp) == 0) continue;
    if (lag_ != nullptr) lag_->set_owner(options_.group, tp, "", nullptr);
  }
}

void RecordConsumption::clear() {
  TopicPartitions all;
  for (const auto& [tp, p] : parts_) all.push_back(tp);
  revoke(all);
  next_in_line_.reset();
}

void RecordConsumption::mark_pending_revocation(const TopicPartitions& tps) {
  for (const auto& tp : tps)
    if (auto it = parts_.find(tp); it != parts_.end()) it->second.pending_revocation = true;
}

TopicPartitions RecordConsumption::awaiting_committed() const {
  TopicPartitions out;
  for (const auto& [tp, p] : parts_)
    if (p.state == State::Initializing && !p.lookup_in_flight) out.push_back(tp);
  return out;
}

TopicPartitions RecordConsumption::awaiting_reset() const {
  TopicPartitions out;
  if (options_.auto_offset_reset == "none") return out;
  for (const auto& [tp, p] : parts_)
    if (p.state == State::AwaitingReset && !p.lookup_in_flight) out.push_back(tp);
  return out;
}

std::optional<TopicPartition> RecordConsumption::missing_offset() const {
  if (options_.auto_offset_reset != "none") return std::nullopt;
  for (const auto& [tp, p] : parts_)
    if (p.state == State::AwaitingReset) return tp;
  return std::nullopt;
}

void RecordConsumption::lookup_sent(const TopicPartitions& tps) {
  for (const auto& tp : tps)
    if (auto it = parts_.find(tp); it != parts_.end()) it->second.lookup_in_flight = true;
}

void RecordConsumption::lookup_failed(const TopicPartitions& tps) {
  for (const auto& tp : tps)
    if (auto it = parts_.find(tp); it != parts_.end()) it->second.lookup_in_flight = false;
}

void RecordConsumption::set_position(const TopicPartition& tp, Part& p, std::int64_t offset,
                                     std::int32_t epoch, State state, const std::string& source) {
  p.state = state;
  p.lookup_in_flight = false;
  p.position = offset;
  p.offset_epoch = epoch;
  tracer_.publish(trace::Position{.consumer = options_.consumer,
                                  .group = options_.group,
                                  .partition = &tp,
                                  .offset = offset,
                                  .source = source,
                                  .state = state == State::Fetching ? "FETCHING" : "AWAIT_VALIDATION"});
}

void RecordConsumption::on_committed(const std::vector<PartitionOffset>& offsets) {
  for (const auto& o : offsets) {
    auto it = parts_.find(o.partition);
    // Revoked meanwhile, or assigned again since (a fresh lookup is due): not for us.
    if (it == parts_.end() || it->second.state != State::Initializing ||
        !it->second.lookup_in_flight)
      continue;
    if (o.offset >= 0) {
      // seekUnvalidated: a committed offset with a leader epoch must be validated against the
      // leader's log (AWAIT_VALIDATION) before it is fetched from or committed; one without an
      // epoch is FETCHING at once.
      set_position(o.partition, it->second, o.offset, o.leader_epoch,
                   o.leader_epoch >= 0 ? State::AwaitingValidation : State::Fetching, "committed");
    } else {
      it->second.state = State::AwaitingReset;
      it->second.lookup_in_flight = false;
    }
  }
}

void RecordConsumption::on_reset(
    const std::vector<std::pair<TopicPartition, std::int64_t>>& offsets) {
  for (const auto& [tp, offset] : offsets) {
    auto it = parts_.find(tp);
    if (it == parts_.end() || it->second.state != State::AwaitingReset) continue;
    // A reset position carries no epoch (Kafka skips its validation).
    set_position(tp, it->second, offset, -1, State::Fetching,
                 "reset:" + options_.auto_offset_reset);
  }
}

std::vector<EpochOffsetQuery> RecordConsumption::awaiting_validation() const {
  std::vector<EpochOffsetQuery> out;
  for (const auto& [tp, p] : parts_)
    if (p.state == State::AwaitingValidation && !p.lookup_in_flight)
      out.push_back({tp, kDataLeaderEpoch, p.offset_epoch});
  return out;
}

void RecordConsumption::on_validated(const std::vector<EpochEndOffset>& answers) {
  for (const auto& a : answers) {
    auto it = parts_.find(a.partition);
    if (it == parts_.end() || it->second.state != State::AwaitingValidation ||
        !it->second.lookup_in_flight)
      continue;  // revoked, or no longer awaiting this validation
    Part& p = it->second;
    if (a.error != ErrorCode::NONE) {
      p.lookup_in_flight = false;  // validated again at a later pass
    } else if (a.end_offset < 0 || a.leader_epoch < 0) {
      // The epoch is unknown to the leader: truncation, the reset policy applies.
      p.state = State::AwaitingReset;
      p.lookup_in_flight = false;
    } else if (a.end_offset < p.position) {
      // The log diverged below the position: continue from the end of the epoch.
      set_position(a.partition, p, a.end_offset, a.leader_epoch, State::Fetching, "truncated");
    } else {
      set_position(a.partition, p, p.position, p.offset_epoch, State::Fetching, "validated");
    }
  }
}

bool RecordConsumption::has_all_fetch_positions() const {
  for (const auto& [tp, p] : parts_)
    if (p.state != State::Fetching) return false;
  return true;
}

std::optional<std::int64_t> RecordConsumption::position(const TopicPartition& tp) const {
  const auto it = parts_.find(tp);
  if (it == parts_.end() || it->second.state != State::Fetching) return std::nullopt;
  return it->second.position;
}

std::vector<CommittedOffset> RecordConsumption::all_consumed() const {
  std::vector<CommittedOffset> out;
  for (const auto& [tp, p] : parts_)
    if (p.state == State::Fetching) out.push_back({tp, p.position, p.offset_epoch});
  return out;
}

bool RecordConsumption::fetchable(const TopicPartition& tp, const Part& p) const {
  return p.state == State::Fetching && !p.pending_revocation &&
         (!options_.leader_reachable || options_.leader_reachable(tp));
}

std::optional<Batch> RecordConsumption::poll() {
  if (parts_.empty()) return std::nullopt;
  // Partitions in order, starting with the one a previous poll() left partly drained (Kafka's
  // next-in-line fetch), else after the last one that returned records.
  auto start = next_in_line_ ? parts_.lower_bound(*next_in_line_) : parts_.begin();
  if (start == parts_.end()) start = parts_.begin();
  Batch batch;
  std::int64_t room = options_.max_poll_records;
  auto it = start;
  std::optional<TopicPartition> next;
  do {
    auto& [tp, p] = *it;
    if (fetchable(tp, p)) {
      const std::int64_t available = workload_.log_end_offset(tp) - p.position;
      if (available > 0 && room > 0) {
        const std::int64_t n = std::min(room, available);
        batch.ranges.push_back({tp, p.position, p.position + n - 1});
        batch.records += n;
        p.position += n;
        p.offset_epoch = kDataLeaderEpoch;  // the epoch of the last record returned
        room -= n;
        if (n < available) next = tp;  // stays next in line
      }
    }
    if (++it == parts_.end()) it = parts_.begin();
    if (room == 0 && !next) next = it->first;
  } while (it != start && room > 0);
  if (batch.records == 0) return std::nullopt;
  next_in_line_ = next ? next : std::optional<TopicPartition>(it->first);
  batch.id = ++batches_;
  tracer_.publish(trace::RecordsFetched{.consumer = options_.consumer,
                                        .group = options_.group,
                                        .batch = batch.id,
                                        .count = batch.records,
                                        .ranges = batch.ranges});
  return batch;
}

sim::SimTime RecordConsumption::next_fetchable() const {
  sim::SimTime best = sim::kNever;
  for (const auto& [tp, p] : parts_) {
    if (!fetchable(tp, p)) continue;
    if (workload_.log_end_offset(tp) > p.position) return kernel_.now();
    const sim::SimTime next = workload_.next_append(tp);
    if (next == sim::kNever) continue;
    best = std::min(
        best, next + (options_.fetch_delay ? options_.fetch_delay(tp) : sim::SimTime::zero()));
  }
  return best;
}

sim::SimTime RecordConsumption::processing_time(const Batch& batch) {
  sim::SimTime t = options_.processing.per_batch.sample(rng_);
  const auto& per_record = options_.processing.per_record;
  if (per_record.is_constant()) {
    t += per_record.sample(rng_) * batch.records;
  } else {
    for (std::int64_t i = 0; i < batch.records; ++i) t += per_record.sample(rng_);
  }
  return t;
}

void RecordConsumption::processed(const Batch& batch) {
  tracer_.publish(trace::RecordsProcessed{.consumer = options_.consumer,
                                          .group = options_.group,
                                          .batch = batch.id,
                                          .count = batch.records});
}

}  // namespace rsim
