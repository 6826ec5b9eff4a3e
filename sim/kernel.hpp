// The discrete-event kernel: a virtual clock, an event queue ordered by (time, insertion
// sequence), re-armable timers, and processes whose activities (threads) can be stopped.
// It knows nothing about Kafka. Hot-path events carry a target pointer and a 64-bit argument,
// so firing them allocates nothing; closures (std::function) are for rare, scripted events.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/time.hpp"

namespace sim {

class Kernel;

/// Anything an event can fire. `arg` is the event's own 64-bit payload.
class EventTarget {
 public:
  virtual ~EventTarget() = default;
  virtual void fire(std::uint64_t arg) = 0;
  /// Who acts when this fires, for the watchdog's message ("consumer-1/heartbeat-thread").
  virtual std::string actor() const { return "an unnamed event target"; }
};

/// The kernel's watchdog: bounds that end a run instead of letting it hang or eat the machine.
/// The defaults leave room for 10,000 consumers x 100,000 partitions x 1 h; tests lower them.
struct WatchdogLimits {
  /// Events fired at one instant (a loop that never lets the clock advance).
  std::uint64_t max_events_per_instant = 50'000'000;
  /// Events fired in one run.
  std::uint64_t max_events = 20'000'000'000;
  /// Bytes of trace one run may produce (checked by the tracer).
  std::uint64_t max_trace_bytes = std::uint64_t{16} << 30;
};

/// A watchdog bound was reached: the run ends (the CLI exits 2 with this message).
class WatchdogTripped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Kernel {
 public:
  SimTime now() const { return now_; }

  /// Queues target->fire(arg) at now + delay. Equal times fire in scheduling order.
  void schedule_after(SimTime delay, EventTarget* target, std::uint64_t arg = 0) {
    SIM_ASSERT(delay >= SimTime::zero());
    push(saturating_add(now_, delay), target, arg);
  }
  void schedule_at(SimTime at, EventTarget* target, std::uint64_t arg = 0) {
    SIM_ASSERT(at >= now_);
    push(at, target, arg);
  }
  /// A one-off closure (scenario script, rare protocol steps). Allocates; not for hot paths.
  void schedule_closure_after(SimTime delay, std::function<void()> fn);

  /// Takes the sequence number the next scheduled event would get: an event pushed later with
  /// schedule_at_seq() keeps the place it would have had among events at the same time.
  std::uint64_t take_seq() { return next_seq_++; }
  /// The sequence number take_seq() gives next.
  std::uint64_t next_seq() const { return next_seq_; }
  void schedule_at_seq(SimTime at, std::uint64_t seq, EventTarget* target, std::uint64_t arg) {
    SIM_ASSERT(at >= now_);
    SIM_ASSERT(seq < next_seq_);
    push_seq(at, seq, target, arg);
  }
  /// Whether an event at `at` may be left out of the queue (see Timer::arm_at), and if so,
  /// whether it is counted in fired() as the stale entry would have been when it surfaced:
  /// only during run() (before it, the run's end is unknown), counted when `at` <= its end.
  enum class Elision { No, Uncounted, Counted };
  Elision elide(SimTime at) {
    if (!running_) return Elision::No;
    if (at > stop_at_) return Elision::Uncounted;
    ++elided_;
    return Elision::Counted;
  }
  /// An elided event was queued after all (it is no longer an uncounted pop).
  void unelide() { --elided_; }

  /// Fires events in (at, seq) order until none are left, the next is later than `stop_at`,
  /// or `max_events` have fired. Returns the number fired. The clock ends at the last event
  /// fired, or at `stop_at` if the queue ran past it.
  std::uint64_t run(SimTime stop_at, std::uint64_t max_events = UINT64_MAX);
  /// Ends run() after the current event.
  void stop() { stopped_ = true; }
  std::size_t pending() const { return size_; }
  /// Event slots the queue holds storage for (pending or not): what it costs in memory, for
  /// tests that memory follows the pending events and not the run's length. O(buckets).
  std::size_t reserved_events() const;
  /// Events fired so far, counting each elided stale timer entry of the runs so far as fired
  /// (they used to be queued and skipped when they surfaced; the count stays the same).
  std::uint64_t fired() const { return fired_ + elided_; }
  void set_watchdog(const WatchdogLimits& limits) { limits_ = limits; }
  const WatchdogLimits& watchdog() const { return limits_; }

 private:
  struct Event {
    SimTime at;
    std::uint64_t seq;
    EventTarget* target;
    std::uint64_t arg;
  };
  static bool later(const Event& a, const Event& b) {
    return a.at != b.at ? a.at > b.at : a.seq > b.seq;
  }
  struct Later;
  void push(SimTime at, EventTarget* target, std::uint64_t arg) {
    push_seq(at, next_seq_++, target, arg);
  }
  void push_seq(SimTime at, std::uint64_t seq, EventTarget* target, std::uint64_t arg);
  // The earliest event, or nullptr when none is queued. May move the calendar forward.
  const Event* front();
  Event pop();  // the earliest event; front() must have returned one
  // Makes the current bucket non-empty if any event is queued (see kernel.cpp).
  bool fill_current();
  void push_far(const Event& e);
  Event pop_far();

  // The queue is a calendar (see kernel.cpp): events by time bucket, each bucket's events
  // ordered only when the clock reaches it.
  static constexpr int kBucketShift = 10;         // a bucket spans 1024 us
  static constexpr std::int64_t kBuckets = 8192;  // the ring covers about 8.4 s ahead
  static std::int64_t bucket_of(SimTime at) { return at.count() >> kBucketShift; }

  class ClosurePool : public EventTarget {
   public:
    std::uint64_t add(std::function<void()> fn);
    void fire(std::uint64_t arg) override;
    std::string actor() const override { return "the scenario script or a scheduled closure"; }

   private:
    std::vector<std::function<void()>> slots_;
    std::vector<std::uint64_t> free_;
  };

  // The watchdog's view of the current instant: events fired at it, and near the bound, by whom.
  void watch(const Event& e);
  [[noreturn]] void trip_instant();

  SimTime now_{0};
  std::uint64_t next_seq_ = 0;
  std::uint64_t fired_ = 0;
  std::uint64_t elided_ = 0;  // stale timer entries never queued, counted as fired (see elide())
  bool stopped_ = false;
  bool running_ = false;
  SimTime stop_at_{0};
  WatchdogLimits limits_;
  std::uint64_t at_instant_ = 0;
  std::map<std::string, std::uint64_t> busiest_;
  std::int64_t current_ = 0;   // the bucket being fired
  std::vector<Event> bucket_;  // bucket current_'s events, latest first (fired from the back)
  std::vector<Event> late_;    // binary min-heap: pushed for buckets <= current_ meanwhile
  std::vector<std::vector<Event>> ring_ = std::vector<std::vector<Event>>(kBuckets);
  std::size_t in_ring_ = 0;  // events in ring_ (buckets current_+1 .. current_+kBuckets-1)
  std::vector<Event> far_;   // 4-ary min-heap: buckets >= current_ + kBuckets
  std::size_t size_ = 0;
  ClosurePool closures_;
};

class Process;

/// One thread of a process (an application thread, a heartbeat thread). Work for a stopped
/// activity waits, in order, and runs when it may run again.
class Activity {
 public:
  Activity(Process& process, std::string name) : process_(process), name_(std::move(name)) {}
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  bool runnable() const;
  bool stalled() const { return stalled_; }
  void stall() { stalled_ = true; }
  void unstall();
  /// Keeps target->fire(arg) until the activity can run; then it runs at that instant.
  void defer(EventTarget* target, std::uint64_t arg) { deferred_.push_back({target, arg}); }
  Process& process() { return process_; }
  const std::string& name() const { return name_; }

 private:
  friend class Process;
  void release();
  Process& process_;
  std::string name_;
  bool stalled_ = false;
  std::vector<std::pair<EventTarget*, std::uint64_t>> deferred_;
};

/// A simulated OS process: it runs, is paused (everything freezes, work waits), or is dead
/// (crashed or stopped: work is dropped). Restarting is modelled by the owner building a new
/// incarnation; `incarnation()` lets stale work recognise itself.
class Process {
 public:
  explicit Process(Kernel& kernel) : kernel_(kernel) {}
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  Kernel& kernel() { return kernel_; }
  bool alive() const { return alive_; }
  bool paused() const { return paused_; }
  std::uint64_t incarnation() const { return incarnation_; }

  void start();  // alive again, a new incarnation
  void kill();   // dead: deferred work dropped
  void pause() { paused_ = true; }
  void resume();
  void attach(Activity* activity) { activities_.push_back(activity); }
  /// Who the process is ("consumer-1"), for messages.
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }

 private:
  Kernel& kernel_;
  std::string name_ = "a process";
  bool alive_ = false;
  bool paused_ = false;
  std::uint64_t incarnation_ = 0;
  std::vector<Activity*> activities_;
};

inline bool Activity::runnable() const {
  return process_.alive() && !process_.paused() && !stalled_;
}

/// A re-armable timer. arm() replaces any pending expiry in O(log n); cancel() is O(1).
/// If bound to an activity that cannot run when it expires, the callback waits for the activity.
/// A timer re-armed to a later deadline while its earlier entry is still queued (a poll timer
/// pushed back at every poll) queues nothing new: that entry wakes it at its old time and it
/// queues its real expiry then, with the sequence number taken when it was armed. Events fire
/// in the same (time, seq) order as if every arm() had queued an entry, the queue stays at about
/// one entry per timer instead of one per arm() within the timeout, and Kernel::fired() counts
/// the entries left out as the skipped pops they used to be.
class Timer : public EventTarget {
 public:
  Timer(Kernel& kernel, std::function<void()> on_expiry, Activity* activity = nullptr)
      : kernel_(kernel), on_expiry_(std::move(on_expiry)), activity_(activity) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void arm(SimTime delay) { arm_at(saturating_add(kernel_.now(), delay)); }
  void arm_at(SimTime at) {
    deadline_ = at;
    seq_ = kernel_.take_seq();
    armed_ = true;
    if (queued_ && queued_at_ <= at) {
      const Kernel::Elision e = kernel_.elide(at);
      if (e != Kernel::Elision::No) {
        elided_counted_ = e == Kernel::Elision::Counted;
        return;
      }
    }
    queue();
  }
  void cancel() { armed_ = false; }
  bool armed() const { return armed_; }
  /// Whether the live entry waits in the kernel's queue, at queued_at() (not deferred).
  bool queued() const { return queued_ && !deferred_; }
  SimTime queued_at() const { return queued_at_; }
  /// What arm_at(at) would have left, had it been called when `seq` was taken, for a timer
  /// neither armed nor queued, except that the entry (at, seq) is another target's, already
  /// queued: that target calls fire() with the generation returned when its entry fires. (A
  /// target that stood in for the timer's entries hands them back so; see rsim::AsyncConsumer's
  /// quiet chains.)
  std::uint64_t adopt_queued(SimTime at, std::uint64_t seq) {
    SIM_ASSERT(!armed_ && !queued_ && !deferred_);
    deadline_ = at;
    seq_ = seq;
    armed_ = true;
    ++holds_;
    ++generation_;
    queued_ = true;
    elided_counted_ = false;
    queued_at_ = at;
    queued_seq_ = seq;
    return generation_;
  }
  /// What arm_at(at) would have left, had it been called when `seq` was taken and elided the
  /// entry (`counted`: Kernel::elide() counted it), for a timer whose live entry is queued no
  /// later than `at` (the caller asked Kernel::elide() itself).
  void restore_elided(SimTime at, std::uint64_t seq, bool counted) {
    SIM_ASSERT(queued() && queued_at_ <= at);
    deadline_ = at;
    seq_ = seq;
    armed_ = true;
    elided_counted_ = counted;
  }
  /// Nothing will call fire() any more: no queued entry (live or stale), no expiry waiting for
  /// its activity, and no fire() in progress. Only an idle timer may be destroyed while the
  /// kernel runs (see RetiredTimers).
  bool idle() const { return holds_ == 0; }
  SimTime deadline() const { return deadline_; }
  void fire(std::uint64_t generation) override;
  std::string actor() const override;

 private:
  // Queues the expiry (deadline_, seq_) as the timer's one live entry; earlier ones go stale.
  void queue() {
    ++holds_;
    ++generation_;
    queued_ = true;
    deferred_ = false;
    elided_counted_ = false;
    queued_at_ = deadline_;
    queued_seq_ = seq_;
    kernel_.schedule_at_seq(deadline_, seq_, this, generation_);
  }
  Kernel& kernel_;
  std::function<void()> on_expiry_;
  Activity* activity_;
  std::uint64_t generation_ = 0;  // the live entry's; any other entry is stale
  SimTime deadline_{0};
  std::uint64_t seq_ = 0;  // the expiry's place among events at deadline_
  SimTime queued_at_{0};   // the live entry, when queued_
  std::uint64_t queued_seq_ = 0;
  bool armed_ = false;
  bool queued_ = false;          // the live entry is in the kernel's queue
  bool deferred_ = false;        // the live entry expired and waits for the activity
  bool elided_counted_ = false;  // the expiry (deadline_, seq_) was elided and counted
  // Calls of fire() to come: one per queued entry (a deferred expiry keeps its entry's), plus
  // one while fire() runs.
  std::uint32_t holds_ = 0;
};

/// Timers that nothing arms any more (those of a member that left), kept until the kernel
/// can no longer fire them: a cancelled timer may still have entries queued, or be running its
/// own callback. Idle ones are freed in sweeps whose cost is amortised over the retirements,
/// so the pool holds about twice the timers still busy, not every timer ever retired.
class RetiredTimers {
 public:
  void retire(std::unique_ptr<Timer> t) {
    if (!t) return;
    t->cancel();
    timers_.push_back(std::move(t));
    if (timers_.size() >= sweep_at_) {
      std::erase_if(timers_, [](const std::unique_ptr<Timer>& x) { return x->idle(); });
      sweep_at_ = 2 * timers_.size() + 16;
    }
  }
  /// Timers held (busy, or idle since the last sweep).
  std::size_t size() const { return timers_.size(); }

 private:
  std::vector<std::unique_ptr<Timer>> timers_;
  std::size_t sweep_at_ = 16;
};

}  // namespace sim
