#include "models/client/record_consumption.hpp"

#include <algorithm>

#include "models/client/lag_monitor.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {
/// The passes of poll() and next_fetchable() read a few partitions' map entries (each a node of
/// its own, two or three cache lines: the partition, its position and route) and, through each,
/// its Workload::Partition. At 10,000 consumers none of it is in the cache; loading a walk's
/// entries before it starts lets their misses overlap instead of coming one after the other.
/// Only the first kPrefetched entries of a walk are loaded so (a consumer holds about ten).
constexpr std::size_t kPrefetched = 16;
template <class E>
void prefetch_entry(const E* e) {
  const char* c = reinterpret_cast<const char*>(e);
  __builtin_prefetch(c);
  __builtin_prefetch(c + 64);
  __builtin_prefetch(c + sizeof(E) - 1);
}
}  // namespace

RecordConsumption::RecordConsumption(sim::Kernel& kernel, Tracer& tracer, Workload& workload,
                                     LagMonitor* lag, Options options, sim::Rng rng)
    : kernel_(kernel),
      tracer_(tracer),
      workload_(workload),
      lag_(lag),
      options_(std::move(options)),
      rng_(std::move(rng)) {
  reset_none_ = options_.auto_offset_reset == "none";
}

void RecordConsumption::assign(const TopicPartitions& added) {
  for (const auto& tp : added) {
    const auto [it, added_now] = parts_.emplace(tp, Part{});
    if (!added_now) continue;
    ++not_fetching_;  // INITIALIZING
    invalidate();
    if (lag_ != nullptr) lag_->set_owner(options_.group, tp, options_.consumer, &it->second);
  }
}

void RecordConsumption::revoke(const TopicPartitions& removed) {
  for (const auto& tp : removed) {
    const auto it = parts_.find(tp);
    if (it == parts_.end()) continue;
    if (it->second.state != State::Fetching) --not_fetching_;
    if (it->second.state == State::AwaitingValidation) --validating_;
    if (it->second.state == State::AwaitingReset) --resetting_;
    parts_.erase(it);
    invalidate();
    if (lag_ != nullptr) lag_->set_owner(options_.group, tp, "", nullptr);
  }
}

void RecordConsumption::set_state(Part& p, State state) {
  if (p.state == state) return;
  not_fetching_ += (state != State::Fetching ? 1 : 0) - (p.state != State::Fetching ? 1 : 0);
  validating_ +=
      (state == State::AwaitingValidation ? 1 : 0) - (p.state == State::AwaitingValidation ? 1 : 0);
  resetting_ += (state == State::AwaitingReset ? 1 : 0) - (p.state == State::AwaitingReset ? 1 : 0);
  p.state = state;
  invalidate();
}

void RecordConsumption::clear() {
  TopicPartitions all;
  for (const auto& [tp, p] : parts_) all.push_back(tp);
  revoke(all);
  next_in_line_.reset();
  invalidate();
}

void RecordConsumption::mark_pending_revocation(const TopicPartitions& tps) {
  for (const auto& tp : tps)
    if (auto it = parts_.find(tp); it != parts_.end()) it->second.pending_revocation = true;
  invalidate();
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

std::optional<TopicPartition> RecordConsumption::first_resetting() const {
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
  set_state(p, state);
  invalidate();  // a new position
  p.lookup_in_flight = false;
  p.position = offset;
  p.offset_epoch = epoch;
  tracer_.publish(
      trace::Position{.consumer = options_.consumer,
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
      set_state(it->second, State::AwaitingReset);
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
  if (validating_ == 0) return out;  // every poll pass asks: O(1) in steady state
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
      set_state(p, State::AwaitingReset);
      p.lookup_in_flight = false;
    } else if (a.end_offset < p.position) {
      // The log diverged below the position: continue from the end of the epoch.
      set_position(a.partition, p, a.end_offset, a.leader_epoch, State::Fetching, "truncated");
    } else {
      set_position(a.partition, p, p.position, p.offset_epoch, State::Fetching, "validated");
    }
  }
}

std::optional<std::int64_t> RecordConsumption::position(const TopicPartition& tp) const {
  const auto it = parts_.find(tp);
  if (it == parts_.end()) return std::nullopt;
  return position(it->second);
}

std::vector<CommittedOffset> RecordConsumption::all_consumed() const {
  std::vector<CommittedOffset> out;
  if (index_valid_) {
    // order_ is every assigned partition in the map's order while the index is valid (no
    // assignment changed since it was built): a walk of it loads the entries together instead of
    // one tree step after the other (each auto-commit of every consumer).
    for (std::size_t i = 0; i < order_.size() && i < kPrefetched; ++i) prefetch_entry(order_[i]);
    out.reserve(order_.size());
    for (const Entry* e : order_)
      if (e->second.state == State::Fetching)
        out.push_back({e->first, e->second.position, e->second.offset_epoch});
    return out;
  }
  for (const auto& [tp, p] : parts_)
    if (p.state == State::Fetching) out.push_back({tp, p.position, p.offset_epoch});
  return out;
}

bool RecordConsumption::fetchable(const TopicPartition& tp, const Part& p) const {
  return p.state == State::Fetching && !p.pending_revocation && reachable(tp, p.route);
}

bool RecordConsumption::any_fetchable() const {
  const std::uint64_t epoch = reach_epoch();
  if (epoch != 0 && epoch == any_epoch_ && fetchable_changes_ == any_changes_) return any_;
  bool any = false;
  for (const auto& [tp, p] : parts_)
    if (fetchable(tp, p)) {
      any = true;
      break;
    }
  any_epoch_ = epoch;
  any_changes_ = fetchable_changes_;
  any_ = any;
  return any;
}

const std::vector<std::size_t>& RecordConsumption::fetch_brokers(std::uint64_t epoch) const {
  if (epoch == brokers_epoch_ && fetchable_changes_ == brokers_changes_) return brokers_;
  brokers_.clear();
  for (const auto& [tp, p] : parts_)
    if (fetchable(tp, p) &&
        std::find(brokers_.begin(), brokers_.end(), p.route.broker) == brokers_.end())
      brokers_.push_back(p.route.broker);
  brokers_epoch_ = epoch;
  brokers_changes_ = fetchable_changes_;
  return brokers_;
}

bool RecordConsumption::quiet() const {
  if (quiet_.epoch == 0 || quiet_.changes != index_changes_ || kernel_.now() >= quiet_.until ||
      !index_valid_ || index_layout_ != workload_.layout())
    return false;
  return quiet_.epoch == reach_epoch();
}

void RecordConsumption::ensure_index() const {
  if (index_valid_ && index_layout_ == workload_.layout()) return;
  ++index_changes_;
  order_.clear();
  ready_.clear();
  later_.clear();
  std::uint32_t rank = 0;
  for (auto& e : const_cast<std::map<TopicPartition, Part>&>(parts_)) {
    Part& p = e.second;
    p.rank = rank++;
    p.ref = workload_.ref(e.first);
    p.drained = false;
    order_.push_back(&e);
    if (p.state == State::Fetching && !p.pending_revocation) ready_.push_back(&e);
  }
  // Where the next poll() starts: the next in line, or the partition after it if it is gone.
  next_rank_ = 0;
  if (next_in_line_)
    if (const auto it = parts_.lower_bound(*next_in_line_); it != parts_.end())
      next_rank_ = it->second.rank;
  index_valid_ = true;
  index_layout_ = workload_.layout();
}

void RecordConsumption::promote_due() const {
  const sim::SimTime now = kernel_.now();
  const auto later = [](const auto& a, const auto& b) { return a > b; };
  if (later_.empty() || later_.front().first > now) return;
  ++index_changes_;
  // The due partitions join ready_ in rank order: sorted by rank among themselves (no partition
  // is looked at), then merged with those already there (often none: all were drained).
  due_.clear();
  while (!later_.empty() && later_.front().first <= now) {
    std::pop_heap(later_.begin(), later_.end(), later);
    due_.push_back(later_.back().second);
    later_.pop_back();
  }
  std::sort(due_.begin(), due_.end());
  const std::size_t kept = ready_.size();
  for (const std::uint32_t rank : due_) ready_.push_back(order_[rank]);
  if (kept > 0)
    std::inplace_merge(
        ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(kept), ready_.end(),
        [](const Entry* a, const Entry* b) { return a->second.rank < b->second.rank; });
}

void RecordConsumption::demote_drained() const {
  const auto later = [](const auto& a, const auto& b) { return a > b; };
  std::erase_if(ready_, [&](Entry* e) {
    Part& p = e->second;
    if (!p.drained) return false;
    p.drained = false;
    // No record past the position until the log next grows (sim::kNever: never, until
    // production changes and the index is rebuilt).
    later_.emplace_back(workload_.next_append(p.ref), p.rank);
    std::push_heap(later_.begin(), later_.end(), later);
    ++index_changes_;
    return true;
  });
}

std::optional<Batch> RecordConsumption::poll() {
  if (parts_.empty() || quiet()) return std::nullopt;
  ensure_index();
  promote_due();
  // Partitions in order, starting with the one a previous poll() left partly drained (Kafka's
  // next-in-line fetch), else after the last one that returned records. Only partitions that may
  // have records are looked at: the others would return nothing.
  const std::uint32_t start_rank = next_rank_;
  const std::size_t first = static_cast<std::size_t>(
      std::lower_bound(ready_.begin(), ready_.end(), start_rank,
                       [](const Entry* x, std::uint32_t r) { return x->second.rank < r; }) -
      ready_.begin());
  Batch batch;
  std::int64_t room = options_.max_poll_records;
  batch.ranges.reserve(static_cast<std::size_t>(
      std::min<std::int64_t>(room, static_cast<std::int64_t>(ready_.size()))));
  std::optional<std::uint32_t> next;  // by rank
  const std::size_t n_ready = ready_.size();
  for (std::size_t i = 0; i < n_ready && i < kPrefetched; ++i)
    prefetch_entry(ready_[(first + i) % n_ready]);
  for (std::size_t i = 0; i < n_ready && room > 0; ++i) {
    if (i + 2 < n_ready && i + 2 < kPrefetched)
      __builtin_prefetch(ready_[(first + i + 2) % n_ready]->second.ref.partition);
    Entry* e = ready_[(first + i) % n_ready];
    const TopicPartition& tp = e->first;
    Part& p = e->second;
    ++visited_;
    if (reachable(tp, p.route)) {
      const std::int64_t available = workload_.log_end_offset(p.ref) - p.position;
      if (available > 0) {
        const std::int64_t n = std::min(room, available);
        batch.ranges.push_back({tp, p.position, p.position + n - 1});
        batch.records += n;
        p.position += n;
        p.offset_epoch = kDataLeaderEpoch;  // the epoch of the last record returned
        room -= n;
        if (n < available)
          next = p.rank;  // stays next in line
        else
          p.drained = true;
      } else {
        p.drained = true;
      }
    }
    // Full: the next poll() starts at the partition after this one (in every assigned one).
    if (room == 0 && !next) next = static_cast<std::uint32_t>((p.rank + 1) % order_.size());
  }
  demote_drained();
  if (batch.records == 0) return std::nullopt;
  ++index_changes_;  // positions moved
  next_rank_ = next ? *next : start_rank;
  next_in_line_ = order_[next_rank_]->first;
  batch.id = ++batches_;
  tracer_.publish(trace::RecordsFetched{.consumer = options_.consumer,
                                        .group = options_.group,
                                        .batch = batch.id,
                                        .count = batch.records,
                                        .ranges = batch.ranges,
                                        .consumer_slot = trace_slot_});
  return batch;
}

sim::SimTime RecordConsumption::next_fetchable() const {
  sim::SimTime best = sim::kNever;
  if (parts_.empty()) return best;
  if (quiet()) return quiet_.next;
  ensure_index();
  promote_due();
  if (walk_ready(&best)) return kernel_.now();
  // Every reachable partition of ready_ went to later_: quiet until later_'s earliest instant.
  const std::uint64_t epoch = reach_epoch();
  quiet_ = Quiet{epoch, index_changes_, later_.empty() ? sim::kNever : later_.front().first, best};
  // The rest are in later_, each until its instant (delays are >= 0): walk the heap from its
  // root, leaving out every subtree whose root's instant is no earlier than the best so far (its
  // instants are all later). The minimum does not depend on the order of the walk.
  if (later_.empty()) return best;
  for (std::size_t i = 0; i < later_.size() && i < kPrefetched; ++i)
    if (later_[i].first != sim::kNever && later_[i].first < best)
      prefetch_entry(order_[later_[i].second]);
  scratch_.clear();
  scratch_.push_back(0);
  while (!scratch_.empty()) {
    const std::size_t i = scratch_.back();
    scratch_.pop_back();
    const auto [at, rank] = later_[i];
    if (at == sim::kNever || at >= best) continue;
    auto& [tp, p] = *order_[rank];
    ++visited_;
    if (reachable(tp, p.route)) best = std::min(best, at + p.route.delay);
    if (2 * i + 2 < later_.size()) scratch_.push_back(2 * i + 2);
    if (2 * i + 1 < later_.size()) scratch_.push_back(2 * i + 1);
  }
  quiet_.next = best;
  return best;
}

bool RecordConsumption::records_waiting() const {
  if (parts_.empty() || quiet()) return false;
  ensure_index();
  promote_due();
  // next_fetchable()'s walk of ready_ up to its answer `now`; later_ holds only instants after now.
  return walk_ready(nullptr);
}

bool RecordConsumption::walk_ready(sim::SimTime* best) const {
  for (std::size_t i = 0; i < ready_.size() && i < kPrefetched; ++i) prefetch_entry(ready_[i]);
  for (Entry* e : ready_) {
    const TopicPartition& tp = e->first;
    Part& p = e->second;
    ++visited_;
    if (!reachable(tp, p.route)) continue;
    if (workload_.log_end_offset(p.ref) > p.position) {
      demote_drained();
      return true;
    }
    p.drained = true;
    if (best == nullptr) continue;
    const sim::SimTime next = workload_.next_append(p.ref);
    if (next != sim::kNever) *best = std::min(*best, next + p.route.delay);
  }
  demote_drained();
  return false;
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
                                          .count = batch.records,
                                          .consumer_slot = trace_slot_});
}

}  // namespace rsim
