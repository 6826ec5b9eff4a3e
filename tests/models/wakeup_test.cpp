// `stop` through consumer.wakeup() (on_stop: wakeup, the default) against an application that only
// checks a flag after poll() returns (on_stop: after_poll), with Kafka's own tools' poll timeout:
// VerifiableConsumer polls with Duration.ofMillis(Long.MAX_VALUE) and its close() calls
// consumer.wakeup(); the loop then catches WakeupException and calls close()
// (tools/.../VerifiableConsumer.java run()/close()). ConsumerNetworkClient.poll throws the
// WakeupException after its network wait (maybeTriggerWakeup), so a blocked poll() ends at once.
// Defaults: 1 ms one-way latency, group.initial.rebalance.delay.ms 3000.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;
using testing::times;

constexpr const char* kWakeup = "scenarios/classic/rolling-bounce-long-poll.json";
constexpr const char* kNoWakeup = "scenarios/classic/rolling-bounce-long-poll-no-wakeup.json";
}  // namespace

TEST_CASE(
    "stop wakes a 7-day poll(): WakeupException at once, close(), two rebalances per bounce") {
  const auto trace = testing::run_trace(kWakeup, "classic-eager");
  // The stops at 20, 40 and 60 s find each consumer blocked in poll(604800000): the wakeup ends
  // it at the same instant.
  CHECK(times(trace, "consumer.wakeup", "exception", "WakeupException") ==
        std::vector<double>{20000, 40000, 60000});
  // close(): commitSync of the positions (round trip, 2 ms), onPartitionsRevoked, LeaveGroup
  // (arrives 1 ms later: the group prepares a rebalance), its answer 1 ms after that.
  struct Bounce {
    const char* name;
    double first_start;
    double stop;
  };
  for (const auto& row :
       {Bounce{"A", 1000, 20000}, Bounce{"B", 1100, 40000}, Bounce{"C", 1200, 60000}}) {
    const char* name = row.name;
    const double first_start = row.first_start;
    const double at = row.stop;
    CAPTURE(name);
    CHECK(testing::last_send_before(trace, name, {"LeaveGroup"}, at + 10) == at + 2);
    CHECK(times(trace, "member.leave", "consumer", name) == std::vector<double>{at + 3});
    CHECK(times(trace, "consumer.closed", "consumer", name) == std::vector<double>{at + 4});
    // The new incarnation starts 10 s after the stop and joins as a new member: its JoinGroup
    // arrives after the FindCoordinator and MEMBER_ID_REQUIRED round trips (+5 ms, below).
    CHECK(times(trace, "consumer.start", "consumer", name) ==
          std::vector<double>{first_start, at + 10000});
  }
  const auto preparing = times(trace, "group.state", "state", "PreparingRebalance");
  CHECK(preparing == std::vector<double>{1005, 20003, 30005, 40003, 50005, 60003, 70005});
  CHECK(testing::summary_of(kWakeup, "classic-eager")["metrics"]["rebalance_count"] == 1 + 2 * 3);
  CHECK(testing::summary_of(kWakeup, "classic-cooperative")["metrics"]["rebalance_count"] == 10);
}

TEST_CASE("on_stop after_poll: a 7-day poll() never returns, so nobody closes or restarts") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace(kNoWakeup, variant);
    CHECK(testing::events(trace, "consumer.stop").size() == 3);
    CHECK(testing::events(trace, "consumer.wakeup").empty());
    CHECK(testing::events(trace, "consumer.closed").empty());
    CHECK(testing::events(trace, "consumer.start").size() == 3);  // the first incarnations only
    CHECK(times(trace, "group.state", "state", "PreparingRebalance") == std::vector<double>{1005});
    CHECK(testing::summary_of(kNoWakeup, variant)["metrics"]["rebalance_count"] == 1);
  }
}

TEST_CASE("the example runs close at their poll() return, as their reference program did") {
  // Both reference programs stop with a flag checked after poll(100 ms) returns (on_stop:
  // after_poll): B's stop requests at 24451 (classic) and 31443 (consumer) reach close() at
  // their next poll() return, no WakeupException.
  const auto classic = testing::run_trace("scenarios/examples/two-consumers.json", "classic-eager");
  CHECK(testing::events(classic, "consumer.wakeup").empty());
  const auto kip848 =
      testing::run_trace("scenarios/examples/two-consumers-kip848.json", "consumer");
  CHECK(testing::events(kip848, "consumer.wakeup").empty());
}
