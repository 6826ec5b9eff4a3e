#include "sim/kernel.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sim {

void assertion_failed(const char* expr, const char* file, int line, const std::string& detail) {
  throw InvariantViolation(fmt::format("{}:{}: invariant violated: {}{}{}", file, line, expr,
                                       detail.empty() ? "" : ": ", detail));
}

// The queue is a calendar. Time is cut into buckets of 1024 us. The bucket being fired is
// sorted once when the clock reaches it and its events leave from the back; events pushed into
// it (or into an earlier bucket, after a peek ran ahead) while it fires go to a small binary
// heap beside it, and a pop takes the earlier of the two. The next kBuckets - 1 buckets are
// unordered vectors in a ring; events further ahead wait in a 4-ary heap and move into the ring
// as it turns. A push is then O(1) for most events, a pop O(1) or a small heap's, and the
// sorted bucket says which targets fire next, so the run loop prefetches them: at 10,000
// consumers a single heap over ~10^5 pending events missed the cache at every level, and each
// event's target (a timer of one of 10,000 consumers) missed it again. (at, seq) is unique and
// every event of a bucket precedes every event of a later one, so the firing order is exactly the
// (at, seq) order any heap would give. A ring slot holds storage only while it holds events: the
// ring's memory follows the pending events, at the cost of a few allocations per bucket (not per
// event).
namespace {
constexpr std::size_t kArity = 4;
// The storage a ring slot gets with its first event (grown by doubling from there).
constexpr std::size_t kFirstCapacity = 16;
}  // namespace

// The heap order for std::*_heap (a functor, so the comparisons inline).
struct Kernel::Later {
  bool operator()(const Event& a, const Event& b) const { return later(a, b); }
};

void Kernel::push_seq(SimTime at, std::uint64_t seq, EventTarget* target, std::uint64_t arg) {
  const Event e{at, seq, target, arg};
  ++size_;
  const std::int64_t b = bucket_of(at);
  if (b <= current_) {
    late_.push_back(e);
    std::push_heap(late_.begin(), late_.end(), Later{});
  } else if (b - current_ < kBuckets) {
    std::vector<Event>& slot = ring_[static_cast<std::size_t>(b & (kBuckets - 1))];
    if (slot.capacity() == 0) slot.reserve(kFirstCapacity);
    slot.push_back(e);
    ++in_ring_;
  } else {
    push_far(e);
  }
}

void Kernel::push_far(const Event& e) {
  std::size_t hole = far_.size();
  far_.emplace_back();
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!later(far_[parent], e)) break;
    far_[hole] = far_[parent];
    hole = parent;
  }
  far_[hole] = e;
}

Kernel::Event Kernel::pop_far() {
  const Event top = far_.front();
  const Event last = far_.back();
  far_.pop_back();
  const std::size_t n = far_.size();
  if (n == 0) return top;
  std::size_t hole = 0;
  for (;;) {
    const std::size_t first = hole * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + kArity, n);
    for (std::size_t c = first + 1; c < end; ++c)
      if (later(far_[best], far_[c])) best = c;
    if (!later(last, far_[best])) break;
    far_[hole] = far_[best];
    hole = best;
  }
  far_[hole] = last;
  return top;
}

bool Kernel::fill_current() {
  while (bucket_.empty() && late_.empty()) {
    if (size_ == 0) return false;
    SIM_ASSERT(in_ring_ > 0 || !far_.empty());
    // Nothing in the ring: jump to the bucket before the far heap's earliest.
    if (in_ring_ == 0) current_ = std::max(current_, bucket_of(far_.front().at) - 1);
    ++current_;
    // The ring now reaches one bucket further: take in the far events that fit.
    while (!far_.empty() && bucket_of(far_.front().at) - current_ < kBuckets) {
      const Event e = pop_far();
      ring_[static_cast<std::size_t>(bucket_of(e.at) & (kBuckets - 1))].push_back(e);
      ++in_ring_;
    }
    std::vector<Event>& slot = ring_[static_cast<std::size_t>(current_ & (kBuckets - 1))];
    if (slot.empty()) continue;
    bucket_.swap(slot);
    in_ring_ -= bucket_.size();
    // The slot gives back the drained bucket's storage: a slot holds storage only while it holds
    // events, so the ring's memory follows the pending events. Keeping it for the slot's next
    // turn would hold about the event rate times the ring's span (a million events at 10,000
    // consumers) to save a few allocations per bucket.
    std::vector<Event>().swap(slot);
    // Latest first: events leave from the back, and the next few are known (prefetched).
    std::sort(bucket_.begin(), bucket_.end(), Later{});
  }
  return true;
}

std::size_t Kernel::reserved_events() const {
  std::size_t n = bucket_.capacity() + late_.capacity() + far_.capacity();
  for (const auto& slot : ring_) n += slot.capacity();
  return n;
}

const Kernel::Event* Kernel::front() {
  if (!fill_current()) return nullptr;
  if (late_.empty()) return &bucket_.back();
  if (bucket_.empty() || later(bucket_.back(), late_.front())) return &late_.front();
  return &bucket_.back();
}

Kernel::Event Kernel::pop() {
  if (!late_.empty() && (bucket_.empty() || later(bucket_.back(), late_.front()))) {
    std::pop_heap(late_.begin(), late_.end(), Later{});
    const Event top = late_.back();
    late_.pop_back();
    --size_;
    return top;
  }
  const Event top = bucket_.back();
  bucket_.pop_back();
  --size_;
  return top;
}

void Kernel::schedule_closure_after(SimTime delay, std::function<void()> fn) {
  schedule_after(delay, &closures_, closures_.add(std::move(fn)));
}

std::uint64_t Kernel::run(SimTime stop_at, std::uint64_t max_events) {
  stopped_ = false;
  // While running, a re-armed timer may leave its later expiry out of the queue (elide()).
  struct Running {
    Kernel& k;
    Running(Kernel& kernel, SimTime stop_at) : k(kernel) {
      k.running_ = true;
      k.stop_at_ = stop_at;
    }
    ~Running() { k.running_ = false; }
  } running(*this, stop_at);
  const std::uint64_t elided_before = elided_;
  std::uint64_t count = 0;
  while (count < max_events && !stopped_) {
    const Event* next = front();
    if (next == nullptr) break;
    if (next->at > stop_at) {
      now_ = stop_at;
      return count + (elided_ - elided_before);
    }
    const Event e = pop();
    SIM_ASSERT(e.at >= now_);  // time never goes back
    watch(e);
    now_ = e.at;
    ++count;
    ++fired_;
    // The next events' targets are usually far from this one in memory: start loading the
    // third one from here now, while this event fires (the two before it were asked for in the
    // rounds before): its first three cache lines, which hold a timer or a consumer's quiet
    // chain whole.
    if (bucket_.size() >= 3) {
      const auto* ahead = reinterpret_cast<const char*>(bucket_[bucket_.size() - 3].target);
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + 64);
      __builtin_prefetch(ahead + 128);
    }
    e.target->fire(e.arg);
  }
  if (size_ == 0 && now_ < stop_at && !stopped_ && count < max_events) now_ = stop_at;
  return count + (elided_ - elided_before);
}

void Kernel::watch(const Event& e) {
  if (fired() >= limits_.max_events) {
    throw WatchdogTripped(fmt::format(
        "watchdog: {} events fired, the limit of one run, at t={} us (the last by {}); raise "
        "--max-events if the scenario really needs more",
        fired(), e.at.count(), e.target->actor()));
  }
  if (e.at != now_ || fired_ == 0) {
    at_instant_ = 0;
    busiest_.clear();
  }
  ++at_instant_;
  // Near the bound, remember who fires: the message names the busiest actor of the instant.
  constexpr std::uint64_t kSample = 4096;
  if (at_instant_ + kSample > limits_.max_events_per_instant) ++busiest_[e.target->actor()];
  if (at_instant_ > limits_.max_events_per_instant) trip_instant();
}

void Kernel::trip_instant() {
  std::string actor = "?";
  std::uint64_t most = 0;
  for (const auto& [name, n] : busiest_)
    if (n > most) {
      most = n;
      actor = name;
    }
  throw WatchdogTripped(fmt::format(
      "watchdog: {} events at t={} us without the clock advancing (a loop that takes no time), "
      "most of the last ones by {}; raise --max-events-per-instant if the scenario really needs "
      "more",
      at_instant_, now_.count(), actor));
}

std::uint64_t Kernel::ClosurePool::add(std::function<void()> fn) {
  if (!free_.empty()) {
    const std::uint64_t slot = free_.back();
    free_.pop_back();
    slots_[slot] = std::move(fn);
    return slot;
  }
  slots_.push_back(std::move(fn));
  return slots_.size() - 1;
}

void Kernel::ClosurePool::fire(std::uint64_t slot) {
  std::function<void()> fn = std::move(slots_[slot]);
  slots_[slot] = nullptr;
  free_.push_back(slot);
  fn();
}

void Activity::unstall() {
  stalled_ = false;
  release();
}

void Activity::release() {
  if (!runnable() || deferred_.empty()) return;
  // Deferred work runs now, in the order it was deferred, as fresh events at this instant.
  auto work = std::move(deferred_);
  deferred_.clear();
  for (const auto& [target, arg] : work)
    process_.kernel().schedule_after(SimTime::zero(), target, arg);
}

void Process::start() {
  alive_ = true;
  paused_ = false;
  ++incarnation_;
  for (Activity* a : activities_) {
    a->stalled_ = false;
    a->deferred_.clear();
  }
}

void Process::kill() {
  alive_ = false;
  paused_ = false;
  for (Activity* a : activities_) a->deferred_.clear();
}

void Process::resume() {
  paused_ = false;
  for (Activity* a : activities_) a->release();
}

std::string Timer::actor() const {
  if (activity_ == nullptr) return "a timer";
  return fmt::format("{}/{}", activity_->process().name(), activity_->name());
}

void Timer::fire(std::uint64_t generation) {
  // This call uses up the hold of the entry that made it; the hold stays while the callback
  // runs (it may retire this timer) and passes on to the activity when the expiry waits.
  struct Release {
    std::uint32_t* holds;
    ~Release() {
      if (holds != nullptr) --*holds;
    }
  } release{&holds_};
  if (generation != generation_) return;  // superseded by a later queue()
  if (deferred_) {
    deferred_ = false;  // the expiry waited for the activity; cancel() may have come meanwhile
    if (!armed_) return;
  } else {
    queued_ = false;
    if (!armed_) return;
    if (queued_at_ != deadline_ || queued_seq_ != seq_) {
      // An earlier entry: the timer was re-armed later since (arm_at() elided that entry).
      if (elided_counted_) kernel_.unelide();
      queue();
      return;
    }
  }
  if (activity_ != nullptr) {
    if (!activity_->process().alive()) {
      armed_ = false;
      return;
    }
    if (!activity_->runnable()) {
      deferred_ = true;
      activity_->defer(this, generation);
      release.holds = nullptr;  // kept by the activity until it runs the expiry
      return;
    }
  }
  armed_ = false;
  on_expiry_();
}

}  // namespace sim
