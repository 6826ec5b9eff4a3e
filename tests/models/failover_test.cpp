// Coordinator failover (`fail-coordinator`): the new coordinator rebuilds the group by replaying
// the committed records of its __consumer_offsets partition, and the clients find it again with
// Kafka's error codes and backoffs. Defaults: broker.session.timeout.ms 9000, retry.backoff.ms 100.
// The controller's fence (models/broker/controller_quorum.hpp) at seed 1 in a 3-broker cluster:
// broker-1 is the active controller; broker-0 last heartbeat it at 19372.460 ms (its heartbeats
// go out every broker.heartbeat.interval.ms, 2000, from a drawn phase of 1372.460 ms), so its
// session expires after 28372.460; the controller checks every 9000 / 8 = 1125 ms at
// 414.959 + k x 1125 ms (a drawn phase): the first check after the expiry is 28539.959 ms.
#include <doctest/doctest.h>

#include "models/broker/controller_quorum.hpp"
#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

const json& first_of(const std::vector<json>& trace, const std::string& type) {
  for (const auto& e : trace)
    if (e["type"] == type) return e;
  static const json none;
  return none;
}

double ms(const json& e) {
  return e["t_us"].get<double>() / 1000.0;
}

constexpr double kFence = 28539.959;  // broker-0's fence after its death at 20000 (seed 1)
}  // namespace

TEST_CASE("failover: the replayed group equals the group the failed coordinator held") {
  const auto trace =
      testing::run_trace("scenarios/classic/coordinator-failover.json", "classic-eager");
  const json& unloaded = first_of(trace, "coordinator.unloaded");
  const json& loaded = first_of(trace, "coordinator.loaded");
  REQUIRE(unloaded.is_object());
  REQUIRE(loaded.is_object());
  // g -> partition 3 (Java hashCode 103 % 50), led by broker-0 (3 % 3), replicas 0, 1, 2.
  CHECK(unloaded["broker"] == 0);
  CHECK(unloaded["partition"] == 3);
  CHECK(loaded["broker"] == 1);
  REQUIRE(unloaded["groups"].size() == 1);
  // State, generation, protocol, leader, members with their assignments, committed offsets.
  CHECK(loaded["groups"] == unloaded["groups"]);
  const json& g = loaded["groups"][0];
  CHECK(g["state"] == "Stable");
  CHECK(g["generation"] == 2);
  CHECK(g["members"].size() == 2);
  CHECK(g["offsets"].size() == 4);
}

TEST_CASE("failover: the clients' timeline follows Kafka's errors and timings") {
  const auto trace =
      testing::run_trace("scenarios/classic/coordinator-failover.json", "classic-eager");
  // The broker dies at 20000: its connections reset at once.
  CHECK(ms(first_of(trace, "broker.fail")) == 20000);
  CHECK(testing::responses(trace, "A", "Heartbeat", "NETWORK_EXCEPTION").front() > 20000);
  // Until the controller fences broker-0 (its first check after the last heartbeat +
  // broker.session.timeout.ms), FindCoordinator still names it; connecting to it is refused.
  const json& fenced = first_of(trace, "broker.fenced");
  CHECK(ms(fenced) == kFence);
  CHECK(fenced["broker"] == 0);
  CHECK(fenced["controller"] == 1);
  CHECK(fenced["last_contact_us"] == 19372460);
  // Broker-1 is the active controller: the voters' first election timeouts drawn at seed 1.
  rsim::ControllerQuorum quorum(rsim::BrokerConfig{}, 3, 1);
  CHECK(quorum.active() == 1);
  quorum.broker_down(0, sim::ms(20000), false);
  CHECK(quorum.last_contact(0) == sim::us(19372460));
  const json& elected = first_of(trace, "coordinator.elected");
  CHECK(ms(elected) == kFence);
  CHECK(elected["broker"] == 1);
  // (Fetches go on to the data partitions' leaders, broker-1 and broker-2.)
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["api"] != "FindCoordinator" &&
        e["api"] != "Fetch" && ms(e) > 20000 && ms(e) < kFence)
      CHECK(e["to"] == "broker-0");
  // Broker-1 loads the partition in 500 ms + 5 us x 19 records; meanwhile commits are told
  // COORDINATOR_LOAD_IN_PROGRESS and retried after retry.backoff.ms.
  const json& load = first_of(trace, "coordinator.load");
  CHECK(load["records"] == 19);
  CHECK(ms(first_of(trace, "coordinator.loaded")) == doctest::Approx(kFence + 500 + 0.095));
  const auto busy = testing::responses(trace, "A", "OffsetCommit", "COORDINATOR_LOAD_IN_PROGRESS");
  REQUIRE(busy.size() >= 2);
  for (const double t : busy) CHECK((t > kFence && t < kFence + 500.095));
  CHECK(busy[1] - busy[0] == doctest::Approx(102).epsilon(0.01));  // 100 ms backoff + round trip
  // Afterwards the group goes on with its generation: no rebalance, commits accepted.
  int preparing = 0;
  for (const auto& e : trace)
    if (e["type"] == "group.state" && e["state"] == "PreparingRebalance") ++preparing;
  CHECK(preparing == 2);  // A's and B's joins at the start only
  const auto ok = testing::responses(trace, "A", "OffsetCommit", "NONE");
  CHECK(ok.back() > kFence + 500);
}

TEST_CASE("failover with one broker: nothing can take over until it is back") {
  const auto trace = testing::run_trace("scenarios/classic/coordinator-failover-single-broker.json",
                                        "classic-eager");
  std::vector<json> elections;
  for (const auto& e : trace)
    if (e["type"] == "coordinator.elected") elections.push_back(e);
  // The only broker is the only KRaft voter: with it dead there is no active controller, so no
  // fence; back after down_ms it registers again: its old incarnation loses the leadership (no
  // live replica: no leader) and the new one, the only replica, leads again and loads.
  CHECK(testing::events(trace, "broker.fenced").empty());
  REQUIRE(elections.size() == 2);
  CHECK(ms(elections[0]) == 35000);
  CHECK(elections[0]["broker"].is_null());
  CHECK(ms(elections[1]) == 35000);
  CHECK(elections[1]["broker"] == 0);
  CHECK(first_of(trace, "coordinator.loaded")["groups"] ==
        first_of(trace, "coordinator.unloaded")["groups"]);
  for (const auto& e : trace)
    if (e["type"] == "member.leave") FAIL("no member may be removed: sessions restart at load");
}

TEST_CASE("a coordinator that restarts before being fenced answers NOT_COORDINATOR") {
  const auto trace =
      testing::run_trace("scenarios/classic/coordinator-restart.json", "classic-eager");
  // Back at 23000 (down_ms 3000 < broker.session.timeout.ms): leadership moves to broker-1 then.
  const json& elected = first_of(trace, "coordinator.elected");
  CHECK(ms(elected) == 23000);
  CHECK(elected["broker"] == 1);
  // Clients still pointed at broker-0 are told NOT_COORDINATOR, forget it and look it up again.
  for (const char* c : {"A", "B"}) {
    CAPTURE(c);
    const auto refused = testing::responses(trace, c, "Heartbeat", "NOT_COORDINATOR");
    REQUIRE(refused.size() == 1);
    CHECK(refused[0] > 23000);
    bool found_new = false;
    for (const auto& e : trace)
      if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == c && e["api"] == "Heartbeat" &&
          ms(e) > refused[0])
        found_new = found_new || e["to"] == "broker-1";
    CHECK(found_new);
  }
  CHECK(first_of(trace, "coordinator.loaded")["groups"] ==
        first_of(trace, "coordinator.unloaded")["groups"]);
}

TEST_CASE(
    "no live replica: FindCoordinator answers COORDINATOR_NOT_AVAILABLE, retried with backoff") {
  const auto trace =
      testing::run_trace("scenarios/classic/coordinator-failover-no-replica.json", "classic-eager");
  const json& elected = first_of(trace, "coordinator.elected");
  CHECK(ms(elected) == kFence);
  CHECK(elected["broker"].is_null());
  // A's lookups: each failure backs off exponentially from retry.backoff.ms (100 ms) to
  // retry.backoff.max.ms (1000 ms), with +-20 % jitter, plus the 2 ms round trip.
  const auto refused =
      testing::responses(trace, "A", "FindCoordinator", "COORDINATOR_NOT_AVAILABLE");
  REQUIRE(refused.size() >= 6);
  for (std::size_t i = 1; i < refused.size(); ++i) {
    CAPTURE(i);
    const double nominal = std::min(100.0 * (1 << std::min<std::size_t>(i - 1, 4)), 1000.0);
    const double gap = refused[i] - refused[i - 1] - 2;
    CHECK(gap >= 0.8 * nominal - 1);
    CHECK(gap <= 1.2 * nominal + 1);
  }
  // Broker-0 is back at 40000, leads its partition again and reloads the group unchanged.
  CHECK(refused.back() < 40000);
  const auto loaded = first_of(trace, "coordinator.loaded");
  CHECK(loaded["broker"] == 0);
  CHECK(loaded["groups"] == first_of(trace, "coordinator.unloaded")["groups"]);
}

TEST_CASE(
    "coordinator-failover (consumer): the new coordinator appears at the controller's fence") {
  // Seed 1: broker-1 is the active controller (the voters' first election timeouts, drawn in
  // [1000, 2000) ms: 1104, 1011, 1403), so the killed coordinator broker-0 is fenced at its
  // session's first check, 28539.959 ms (see the top of this file); broker-1 then loads the
  // records of partition 3 in 500 ms + 5 us each.
  const auto trace = testing::run_trace("scenarios/consumer/coordinator-failover.json", "consumer");
  const json& fenced = first_of(trace, "broker.fenced");
  CHECK(ms(fenced) == kFence);
  CHECK(ms(first_of(trace, "coordinator.elected")) == kFence);
  const json& loaded = first_of(trace, "coordinator.loaded");
  CHECK(loaded["broker"] == 1);
  const double records = first_of(trace, "coordinator.load")["records"].get<double>();
  CHECK(records > 0);
  CHECK(ms(loaded) == doctest::Approx(kFence + 500 + 0.005 * records));
}

TEST_CASE("the killed coordinator was the active controller: fenced 9 s after its successor rose") {
  // Seed 13: broker-0 is the active controller (election timeouts 1178, 1247, 1239 ms) and the
  // coordinator of g. It dies at 20000. The voters' last Fetch answers from it came 289.867 ms
  // (broker-1) and 198.087 ms (broker-2) before: broker-1 turns Prospective at 21710.133
  // (controller.quorum.fetch.timeout.ms, 2000, later) and broker-2, still following, refuses its
  // pre-vote; broker-2 turns Prospective at 21801.913, broker-1 grants, broker-2 is elected and
  // activates: every broker's contact starts there, and its eighth check, 9000 ms later
  // (30801.913 ms), fences broker-0: 10.8 s after the kill instead of 7.0-10.1 s.
  const auto trace =
      testing::run_trace("scenarios/consumer/coordinator-failover.json", "consumer", 13);
  const json& fenced = first_of(trace, "broker.fenced");
  CHECK(fenced["broker"] == 0);
  CHECK(fenced["controller"] == 2);
  CHECK(fenced["last_contact_us"] == 21801913);
  rsim::ControllerQuorum quorum(rsim::BrokerConfig{}, 3, 13);
  CHECK(quorum.active() == 0);
  quorum.broker_down(0, sim::ms(20000), false);
  CHECK(quorum.active() == 2);
  CHECK(quorum.activation() == sim::us(21801913));
  CHECK(ms(fenced) == 30801.913);
  CHECK(ms(first_of(trace, "coordinator.elected")) == 30801.913);
  const double records = first_of(trace, "coordinator.load")["records"].get<double>();
  CHECK(ms(first_of(trace, "coordinator.loaded")) ==
        doctest::Approx(30801.913 + 500 + 0.005 * records));
}
