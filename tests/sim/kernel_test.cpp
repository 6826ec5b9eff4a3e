// Kernel: (time, seq) order, timers re-armed and cancelled, processes paused, stalled, killed.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "sim/kernel.hpp"
#include "sim/rng.hpp"

using sim::Kernel;
using sim::SimTime;
using sim::Timer;

namespace {
struct Recorder : sim::EventTarget {
  std::vector<std::uint64_t> fired;
  std::vector<std::int64_t> at;
  Kernel* k = nullptr;
  void fire(std::uint64_t arg) override {
    fired.push_back(arg);
    at.push_back(k->now().count());
  }
};
}  // namespace

TEST_CASE("events fire in time order, and equal times in scheduling order") {
  Kernel k;
  Recorder r;
  r.k = &k;
  k.schedule_after(SimTime{5}, &r, 1);
  k.schedule_after(SimTime{3}, &r, 2);
  k.schedule_after(SimTime{5}, &r, 3);
  k.schedule_after(SimTime{0}, &r, 4);
  k.schedule_after(SimTime{5}, &r, 5);
  CHECK(k.run(SimTime{100}) == 5);
  CHECK(r.fired == std::vector<std::uint64_t>{4, 2, 1, 3, 5});
  CHECK(r.at == std::vector<std::int64_t>{0, 3, 5, 5, 5});
  CHECK(k.now() == SimTime{100});
}

TEST_CASE("run stops before events later than stop_at and resumes them later") {
  Kernel k;
  Recorder r;
  r.k = &k;
  k.schedule_after(SimTime{10}, &r, 1);
  k.schedule_after(SimTime{20}, &r, 2);
  CHECK(k.run(SimTime{15}) == 1);
  CHECK(k.now() == SimTime{15});
  CHECK(k.run(SimTime{25}) == 1);
  CHECK(r.at == std::vector<std::int64_t>{10, 20});
}

TEST_CASE("a re-armed timer fires once, at its last deadline - a cancelled one never") {
  Kernel k;
  std::vector<std::int64_t> fired;
  Timer t(k, [&] { fired.push_back(k.now().count()); });
  t.arm(SimTime{100});
  t.arm(SimTime{50});   // earlier
  t.arm(SimTime{300});  // later again: only this one counts
  Timer c(k, [&] { fired.push_back(-1); });
  c.arm(SimTime{10});
  c.cancel();
  k.run(SimTime{1000});
  CHECK(fired == std::vector<std::int64_t>{300});
  CHECK_FALSE(t.armed());
}

TEST_CASE("re-arming a timer many times is cheap: stale entries are skipped, not searched") {
  Kernel k;
  int fired = 0;
  Timer t(k, [&] { ++fired; });
  for (int i = 1; i <= 10000; ++i) t.arm(SimTime{i});
  CHECK(k.pending() == 10000);  // O(log n) pushes; nothing scanned
  k.run(SimTime{20000});
  CHECK(fired == 1);
  CHECK(k.pending() == 0);
}

TEST_CASE("a stalled activity's timers wait and fire when it runs again") {
  Kernel k;
  sim::Process p(k);
  sim::Activity app(p, "app"), hb(p, "hb");
  p.attach(&app);
  p.attach(&hb);
  p.start();
  std::vector<std::pair<std::string, std::int64_t>> log;
  Timer a(
      k, [&] { log.emplace_back("app", k.now().count()); }, &app);
  Timer h(
      k, [&] { log.emplace_back("hb", k.now().count()); }, &hb);
  a.arm(SimTime{10});
  h.arm(SimTime{20});
  app.stall();
  k.schedule_closure_after(SimTime{50}, [&] { app.unstall(); });
  k.run(SimTime{100});
  REQUIRE(log.size() == 2);
  CHECK(log[0] ==
        std::make_pair(std::string("hb"), std::int64_t{20}));  // stall: only the app waits
  CHECK(log[1] == std::make_pair(std::string("app"), std::int64_t{50}));
}

TEST_CASE("a paused process runs nothing until resumed - a killed one drops its work") {
  Kernel k;
  sim::Process p(k);
  sim::Activity hb(p, "hb");
  p.attach(&hb);
  p.start();
  std::vector<std::int64_t> log;
  Timer h(
      k, [&] { log.push_back(k.now().count()); }, &hb);
  h.arm(SimTime{20});
  p.pause();
  k.schedule_closure_after(SimTime{70}, [&] { p.resume(); });
  k.run(SimTime{100});
  CHECK(log == std::vector<std::int64_t>{70});
  h.arm(SimTime{10});
  p.kill();
  k.run(SimTime{200});
  CHECK(log == std::vector<std::int64_t>{70});
}

TEST_CASE("time never goes back: scheduling in the past is an invariant violation") {
  Kernel k;
  Recorder r;
  r.k = &k;
  k.schedule_after(SimTime{10}, &r, 1);
  k.run(SimTime{10});
  CHECK_THROWS_AS(k.schedule_at(SimTime{5}, &r, 2), sim::InvariantViolation);
}

namespace {
// The timer as it was before re-arms were elided: one queued entry per arm(), stale entries
// skipped when they surface. The reference the elision must match event for event.
class QueueEveryArmTimer : public sim::EventTarget {
 public:
  QueueEveryArmTimer(Kernel& k, std::function<void()> on_expiry, sim::Activity* activity)
      : k_(k), on_expiry_(std::move(on_expiry)), activity_(activity) {}
  void arm(SimTime delay) {
    ++generation_;
    armed_ = true;
    k_.schedule_at(k_.now() + delay, this, generation_);
  }
  void cancel() {
    ++generation_;
    armed_ = false;
  }
  void fire(std::uint64_t generation) override {
    if (generation != generation_ || !armed_) return;
    if (activity_ != nullptr) {
      if (!activity_->process().alive()) {
        armed_ = false;
        return;
      }
      if (!activity_->runnable()) {
        activity_->defer(this, generation);
        return;
      }
    }
    armed_ = false;
    on_expiry_();
  }

 private:
  Kernel& k_;
  std::function<void()> on_expiry_;
  sim::Activity* activity_;
  std::uint64_t generation_ = 0;
  bool armed_ = false;
};

// Random arms (mostly pushed later, as a poll timer is), cancels, pauses, stalls and kills over
// eight timers, some on activities; returns every expiry as (time, timer, order) and fired().
template <class T>
std::pair<std::vector<std::int64_t>, std::uint64_t> random_timer_run(std::uint64_t seed,
                                                                     bool arm_before_run) {
  Kernel k;
  sim::Rng rng(seed, "timers");
  sim::Process p(k);
  sim::Activity app(p, "app"), hb(p, "hb");
  p.attach(&app);
  p.attach(&hb);
  p.start();
  std::vector<std::int64_t> log;
  std::vector<std::unique_ptr<T>> timers;
  for (int i = 0; i < 8; ++i) {
    sim::Activity* a = i % 4 == 1 ? &app : i % 4 == 2 ? &hb : nullptr;
    timers.push_back(std::make_unique<T>(
        k, [&log, &k, i] { log.push_back(k.now().count() * 16 + i); }, a));
  }
  if (arm_before_run)
    for (auto& t : timers) t->arm(SimTime{rng.uniform(0, 50)});
  struct Driver : sim::EventTarget {
    std::function<void()> step;
    void fire(std::uint64_t) override { step(); }
  } driver;
  driver.step = [&] {
    for (int n = static_cast<int>(rng.uniform(1, 4)); n > 0; --n) {
      auto& t = *timers[static_cast<std::size_t>(rng.uniform(0, 7))];
      const std::int64_t what = rng.uniform(0, 99);
      if (what < 70)
        t.arm(SimTime{rng.uniform(0, 200)});  // often later, sometimes earlier
      else if (what < 80)
        t.cancel();
      else if (what < 85)
        p.pause();
      else if (what < 90)
        p.resume();
      else if (what < 94)
        app.stall();
      else if (what < 97)
        app.unstall();
      else if (what < 98)
        p.kill();
      else
        p.start();
    }
    k.schedule_after(SimTime{rng.uniform(0, 20)}, &driver);  // equal times happen: ties matter
  };
  k.schedule_at(SimTime::zero(), &driver);
  k.run(SimTime{20000});
  return {log, k.fired()};
}
}  // namespace

TEST_CASE("a timer re-armed later queues no new entry, yet everything fires as if it had") {
  // Same expiries at the same instants in the same order, and the same fired() count, as the
  // timer that queues an entry per arm().
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    for (const bool before : {false, true}) {
      CAPTURE(seed);
      const auto expected = random_timer_run<QueueEveryArmTimer>(seed, before);
      const auto got = random_timer_run<Timer>(seed, before);
      REQUIRE(expected.first.size() > 100);
      CHECK(got.first == expected.first);
      CHECK(got.second == expected.second);
    }
  }
  // And the queue holds one entry, not one per arm().
  Kernel k;
  int fired = 0;
  Timer poll(k, [&] { ++fired; });
  struct Poller : sim::EventTarget {
    Kernel* k;
    Timer* t;
    int left = 10000;
    void fire(std::uint64_t) override {
      t->arm(sim::ms(300'000));
      if (--left > 0) k->schedule_after(sim::ms(1), this);
    }
  } poller;
  poller.k = &k;
  poller.t = &poll;
  k.schedule_at(SimTime::zero(), &poller);
  k.run(sim::ms(5000));
  CHECK(k.pending() <= 2);
  CHECK(fired == 0);
}

TEST_CASE("the calendar queue fires in exactly (time, seq) order, near, ahead and far") {
  // Events scheduled at random distances: the same microsecond, the same 1 ms bucket, the
  // ring's next seconds, beyond the ring (far heap), and never. A reference ordered set with
  // the same sequence numbers gives the expected order. run() in slices makes the kernel peek
  // past its stop, and events scheduled between slices land in buckets it has looked past.
  struct Chain : sim::EventTarget {
    Kernel* k = nullptr;
    sim::Rng* rng = nullptr;
    std::set<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>>* expected = nullptr;
    std::uint64_t* seq = nullptr;
    std::vector<std::pair<std::int64_t, std::uint64_t>> fired;
    std::uint64_t next_id = 0;
    std::int64_t distance() {
      switch (rng->next() % 6) {
        case 0:
          return 0;
        case 1:
          return static_cast<std::int64_t>(rng->next() % 1024);
        case 2:
          return static_cast<std::int64_t>(rng->next() % 8'000'000);
        case 3:
          return static_cast<std::int64_t>(rng->next() % 60'000'000);
        case 4:
          return 8'388'608 + static_cast<std::int64_t>(rng->next() % 3);  // the ring's edge
        default:
          return rng->next() % 97 == 0 ? -1 : static_cast<std::int64_t>(rng->next() % 2048);
      }
    }
    void add() {
      const std::int64_t d = distance();
      const SimTime at = d < 0 ? sim::kNever : k->now() + SimTime{d};
      const std::uint64_t id = next_id++;
      expected->insert({at.count(), (*seq)++, id});
      k->schedule_at(at, this, id);
    }
    void fire(std::uint64_t id) override {
      fired.emplace_back(k->now().count(), id);
      if (fired.size() < 40'000) {
        add();
        if (rng->next() % 3 == 0) add();
      }
    }
  };
  Kernel k;
  sim::Rng rng(7, "calendar");
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>> expected;
  std::uint64_t seq = 0;
  Chain chain;
  chain.k = &k;
  chain.rng = &rng;
  chain.expected = &expected;
  chain.seq = &seq;
  for (int i = 0; i < 200; ++i) chain.add();
  for (std::int64_t stop = 0; stop < 3'600'000'000;
       stop += 1 + static_cast<std::int64_t>(rng.next() % 5'000'000)) {
    k.run(SimTime{stop});
    CHECK(k.now() == SimTime{stop});
    if (rng.next() % 4 == 0) chain.add();  // between slices: maybe before where run() peeked
  }
  k.run(SimTime{3'600'000'000});
  std::vector<std::pair<std::int64_t, std::uint64_t>> want;
  for (const auto& [at, s, id] : expected)
    if (at <= 3'600'000'000) want.emplace_back(at, id);
  REQUIRE(chain.fired.size() > 40'000);
  CHECK(chain.fired == want);
  CHECK(k.pending() == expected.size() - want.size());  // only the kNever ones are left
}

namespace {
// A timer that re-arms itself 1 to `max_ms` ms ahead (drawn from `rng`) when armed and whenever
// it fires: a steady source of queue traffic.
struct RearmingTimer {
  RearmingTimer(Kernel& k, sim::Rng& r, std::int64_t max)
      : rng(r), max_ms(max), timer(k, [this] { arm(); }) {
    arm();
  }
  void arm() {
    timer.arm(
        sim::ms(1 + static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(max_ms))));
  }
  sim::Rng& rng;
  std::int64_t max_ms;
  Timer timer;
};

std::vector<std::unique_ptr<RearmingTimer>> rearming_timers(Kernel& k, sim::Rng& rng, int n,
                                                            std::int64_t max_ms) {
  std::vector<std::unique_ptr<RearmingTimer>> timers;
  for (int i = 0; i < n; ++i) timers.push_back(std::make_unique<RearmingTimer>(k, rng, max_ms));
  return timers;
}
}  // namespace

TEST_CASE("the queue's memory follows the pending events, not the busiest bucket so far") {
  // 1,000 timers re-arming at random 1 ms .. 2 s, and every 10 s a burst of 400 events at one
  // instant, for a virtual hour. The calendar's ring slots must not each keep a burst's worth of
  // storage: what the queue reserves stays within a few times what is pending plus a small
  // fixed amount per ring slot, at 10 minutes as at the hour.
  Kernel k;
  sim::Rng rng(3, "memory");
  const auto timers = rearming_timers(k, rng, 1000, 2000);
  struct Burst : sim::EventTarget {
    Kernel* k = nullptr;
    sim::Rng* rng = nullptr;
    int fired = 0;
    void fire(std::uint64_t arg) override {
      ++fired;
      if (arg != 1) return;  // one of a burst
      const SimTime at = k->now() + SimTime{static_cast<std::int64_t>(rng->next() % 3'000'000)};
      for (int i = 0; i < 400; ++i) k->schedule_at(at, this, 0);
      k->schedule_after(sim::ms(10'000), this, 1);
    }
  } burst;
  burst.k = &k;
  burst.rng = &rng;
  k.schedule_after(sim::ms(10'000), &burst, 1);
  // Twice the pending events and a few empty slots' worth per ring slot (a slot that held one
  // or two events keeps room for them); a burst's 400 may be pending too.
  const auto bound = [&k] { return 3 * k.pending() + 8192 * 16 + 2 * 400; };
  k.run(sim::ms(600'000));
  const std::size_t at_ten_minutes = k.reserved_events();
  CHECK(at_ten_minutes <= bound());
  k.run(sim::ms(3'600'000));
  CHECK(burst.fired > 100'000);
  CHECK(k.reserved_events() <= bound());
  CHECK(k.reserved_events() <= at_ten_minutes + at_ten_minutes / 2);
}

TEST_CASE("the queue's memory follows the pending events, not the event rate") {
  // 1,000 timers re-arming 1 to 20 ms ahead: about 100,000 events per virtual second pass
  // through the ring while about 1,000 are pending. A ring slot must not keep the storage of
  // the events that passed through it (that would be the rate times the ring's 8 s).
  Kernel k;
  sim::Rng rng(5, "rate");
  const auto timers = rearming_timers(k, rng, 1000, 20);
  const std::uint64_t fired = k.run(sim::ms(30'000));
  CHECK(fired > 2'000'000);
  CHECK(k.pending() == 1000);
  // The pending events' slots (at most 20 buckets hold them, 16 events' room at least each).
  CHECK(k.reserved_events() <= 3 * k.pending() + 20 * 16 + 4096);
}

TEST_CASE(
    "a timer is idle only when nothing will call fire() again: queued, stale, deferred or "
    "running") {
  Kernel k;
  sim::Process p(k);
  sim::Activity app(p, "app");
  p.attach(&app);
  p.start();
  bool idle_in_callback = true;
  Timer t(
      k, [&] { idle_in_callback = false; }, &app);
  Timer* self = &t;
  Timer u(k, [&] { idle_in_callback = self->idle(); });
  CHECK(t.idle());
  t.arm(SimTime{100});
  t.arm(SimTime{50});  // an earlier deadline: the entry at 100 stays queued, stale
  t.cancel();
  CHECK_FALSE(t.idle());
  k.run(SimTime{60});
  CHECK_FALSE(t.idle());  // the stale entry at 100 is still queued
  k.run(SimTime{100});
  CHECK(t.idle());
  // An expiry that waits for its stalled activity still holds the timer.
  t.arm(SimTime{10});
  app.stall();
  k.run(SimTime{150});
  CHECK_FALSE(t.idle());
  app.unstall();
  k.run(SimTime{160});
  CHECK(t.idle());
  CHECK_FALSE(idle_in_callback);  // it ran, after the stall
  // A timer is not idle while its own callback runs.
  self = &u;
  u.arm(SimTime{5});
  k.run(SimTime{200});
  CHECK_FALSE(idle_in_callback);
  CHECK(u.idle());
}

TEST_CASE(
    "retired timers are freed once idle: the pool follows the busy timers, not every retirement") {
  Kernel k;
  sim::RetiredTimers retired;
  int fired = 0;
  std::size_t most = 0;
  // 10,000 timers, each armed 1 s ahead and retired 1 ms later (a member that left): each keeps
  // a queued entry for a second, so about 1,000 are busy at any time.
  for (int i = 0; i < 10'000; ++i) {
    auto t = std::make_unique<Timer>(k, [&] { ++fired; });
    t->arm(sim::ms(1000));
    k.run(k.now() + sim::ms(1));
    retired.retire(std::move(t));
    most = std::max(most, retired.size());
  }
  CHECK(fired == 0);  // retired timers are cancelled
  CHECK(most <= 2 * 1001 + 16);
  CHECK(most >= 1000);
  k.run(k.now() + sim::ms(2000));
  // A timer retired from inside its own callback survives the sweep it triggers.
  std::unique_ptr<Timer> last;
  bool ran = false;
  last = std::make_unique<Timer>(k, [&] {
    ran = true;
    retired.retire(std::move(last));
    for (int i = 0; i < 4000; ++i) retired.retire(std::make_unique<Timer>(k, [] {}));
  });
  last->arm(sim::ms(1));
  k.run(k.now() + sim::ms(5));
  CHECK(ran);
  CHECK(retired.size() < 4000);
}
