// Kernel: (time, seq) order, timers re-armed and cancelled, processes paused, stalled, killed.
#include <doctest/doctest.h>

#include <vector>

#include "sim/kernel.hpp"

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
  Timer a(k, [&] { log.emplace_back("app", k.now().count()); }, &app);
  Timer h(k, [&] { log.emplace_back("hb", k.now().count()); }, &hb);
  a.arm(SimTime{10});
  h.arm(SimTime{20});
  app.stall();
  k.schedule_closure_after(SimTime{50}, [&] { app.unstall(); });
  k.run(SimTime{100});
  REQUIRE(log.size() == 2);
  CHECK(log[0] == std::make_pair(std::string("hb"), std::int64_t{20}));   // stall: only the app waits
  CHECK(log[1] == std::make_pair(std::string("app"), std::int64_t{50}));
}

TEST_CASE("a paused process runs nothing until resumed - a killed one drops its work") {
  Kernel k;
  sim::Process p(k);
  sim::Activity hb(p, "hb");
  p.attach(&hb);
  p.start();
  std::vector<std::int64_t> log;
  Timer h(k, [&] { log.push_back(k.now().count()); }, &hb);
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
