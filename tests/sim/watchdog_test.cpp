// The kernel's watchdog and its time arithmetic: a loop that never lets the clock advance ends
// with WatchdogTripped naming the actor and the instant; times saturate instead of overflowing.
#include <doctest/doctest.h>

#include <string>

#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"
#include "sim/trace.hpp"

namespace {

// Re-schedules itself at the same instant forever, as a zero backoff used to.
class Spinner : public sim::EventTarget {
 public:
  explicit Spinner(sim::Kernel& k) : kernel_(k) {}
  void fire(std::uint64_t) override { kernel_.schedule_after(sim::SimTime::zero(), this); }
  std::string actor() const override { return "spinner-7"; }

 private:
  sim::Kernel& kernel_;
};

class Ticker : public sim::EventTarget {
 public:
  explicit Ticker(sim::Kernel& k) : kernel_(k) {}
  void fire(std::uint64_t) override { kernel_.schedule_after(sim::us(1), this); }

 private:
  sim::Kernel& kernel_;
};

}  // namespace

TEST_CASE(
    "watchdog: events at one instant past the bound end the run, naming the actor and the "
    "instant") {
  sim::Kernel k;
  sim::WatchdogLimits limits;
  limits.max_events_per_instant = 1000;
  k.set_watchdog(limits);
  Spinner spin(k);
  k.schedule_at(sim::ms(5), &spin);
  CHECK_THROWS_WITH_AS(
      k.run(sim::ms(10)),
      "watchdog: 1001 events at t=5000 us without the clock advancing (a loop that "
      "takes no time), most of the last ones by spinner-7; raise "
      "--max-events-per-instant if the scenario really needs more",
      sim::WatchdogTripped);
}

TEST_CASE("watchdog: events that advance the clock are bounded by the total") {
  sim::Kernel k;
  sim::WatchdogLimits limits;
  limits.max_events = 500;
  k.set_watchdog(limits);
  Ticker t(k);
  k.schedule_at(sim::SimTime::zero(), &t);
  CHECK_THROWS_WITH_AS(
      k.run(sim::ms(10)),
      "watchdog: 500 events fired, the limit of one run, at t=500 us (the last by an "
      "unnamed event target); raise --max-events if the scenario really needs more",
      sim::WatchdogTripped);
  // Below the bound nothing trips.
  sim::Kernel quiet;
  quiet.set_watchdog(limits);
  Ticker q(quiet);
  quiet.schedule_at(sim::SimTime::zero(), &q);
  CHECK(quiet.run(sim::us(400)) == 401);
}

TEST_CASE("watchdog: a timer names its process and activity") {
  sim::Kernel k;
  sim::Process p(k);
  p.set_name("consumer-A");
  sim::Activity a(p, "heartbeat-thread");
  p.attach(&a);
  sim::Timer t(
      k, [] {}, &a);
  CHECK(t.actor() == "consumer-A/heartbeat-thread");
}

TEST_CASE("time: arithmetic saturates at kNever instead of overflowing") {
  CHECK(sim::ms(INT64_MAX) == sim::kNever);
  CHECK(sim::ms(INT64_MAX / 1000 + 1) == sim::kNever);
  CHECK(sim::ms(9'223'372'036'854'775) == sim::SimTime{9'223'372'036'854'775'000});
  CHECK(sim::saturating_add(sim::ms(5), sim::kNever) == sim::kNever);
  CHECK(sim::saturating_add(sim::ms(5), sim::ms(1)) == sim::ms(6));
  // A timer "forever" away after the clock moved: queued at kNever, never fired, no overflow.
  sim::Kernel k;
  Ticker t(k);
  k.schedule_at(sim::SimTime::zero(), &t);
  k.run(sim::us(10));
  int fired = 0;
  sim::Timer far(k, [&] { ++fired; });
  far.arm(sim::kNever);
  CHECK(far.deadline() == sim::kNever);
  k.run(sim::ms(1));
  CHECK(fired == 0);
}

TEST_CASE("distributions: every draw is in [0, 7 days], a huge lognormal included") {
  sim::Rng rng(1, "d");
  sim::Distribution d;
  d.kind = sim::Distribution::Kind::Lognormal;
  d.median = 604800000;
  d.sigma = 604800000;
  for (int i = 0; i < 1000; ++i) {
    const double v = d.sample_ms(rng);
    CHECK(v >= 0);
    CHECK(v <= sim::kMaxSampleMs);
    CHECK(d.sample(rng) >= sim::SimTime::zero());
  }
  CHECK(d.expected_ms() == sim::kMaxSampleMs);
}
