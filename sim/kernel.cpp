#include "sim/kernel.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sim {

void assertion_failed(const char* expr, const char* file, int line, const std::string& detail) {
  throw InvariantViolation(fmt::format("{}:{}: invariant violated: {}{}{}", file, line, expr,
                                       detail.empty() ? "" : ": ", detail));
}

// The queue is a 4-ary min-heap kept by hand: half the levels of a binary heap, and the four
// children of a node share a cache line or two, so a pop over ~10^5 pending events (one per
// timer of 10,000 consumers) touches far fewer lines. Moving a hole instead of swapping writes
// each event once. (at, seq) is unique, so the firing order is the same as any other heap's.
namespace {
constexpr std::size_t kArity = 4;
}  // namespace

void Kernel::push_seq(SimTime at, std::uint64_t seq, EventTarget* target, std::uint64_t arg) {
  const Event e{at, seq, target, arg};
  std::size_t hole = heap_.size();
  heap_.emplace_back();
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!later(heap_[parent], e)) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = e;
}

Kernel::Event Kernel::pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  std::size_t hole = 0;
  for (;;) {
    const std::size_t first = hole * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + kArity, n);
    for (std::size_t c = first + 1; c < end; ++c)
      if (later(heap_[best], heap_[c])) best = c;
    if (!later(last, heap_[best])) break;
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = last;
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
  while (!heap_.empty() && count < max_events && !stopped_) {
    if (heap_.front().at > stop_at) {
      now_ = stop_at;
      return count + (elided_ - elided_before);
    }
    const Event e = pop();
    SIM_ASSERT(e.at >= now_);  // time never goes back
    watch(e);
    now_ = e.at;
    ++count;
    ++fired_;
    e.target->fire(e.arg);
  }
  if (heap_.empty() && now_ < stop_at && !stopped_ && count < max_events) now_ = stop_at;
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
  for (const auto& [target, arg] : work) process_.kernel().schedule_after(SimTime::zero(), target, arg);
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
      return;
    }
  }
  armed_ = false;
  on_expiry_();
}

}  // namespace sim
