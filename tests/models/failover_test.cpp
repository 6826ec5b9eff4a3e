// Coordinator failover (`fail-coordinator`): the new coordinator rebuilds the group by replaying
// the committed records of its __consumer_offsets partition, and the clients find it again with
// Kafka's error codes and backoffs. Defaults: broker.session.timeout.ms 9000, retry.backoff.ms 100.
#include <doctest/doctest.h>

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
  // Until the controller fences broker-0 (broker.session.timeout.ms later), FindCoordinator still
  // names it; connecting to it is refused.
  const json& elected = first_of(trace, "coordinator.elected");
  CHECK(ms(elected) == 20000 + 9000);
  CHECK(elected["broker"] == 1);
  // (Fetches go on to the data partitions' leaders, broker-1 and broker-2.)
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["api"] != "FindCoordinator" &&
        e["api"] != "Fetch" && ms(e) > 20000 && ms(e) < 29000)
      CHECK(e["to"] == "broker-0");
  // Broker-1 loads the partition in 500 ms + 5 us x 19 records; meanwhile commits are told
  // COORDINATOR_LOAD_IN_PROGRESS and retried after retry.backoff.ms.
  const json& load = first_of(trace, "coordinator.load");
  CHECK(load["records"] == 19);
  CHECK(ms(first_of(trace, "coordinator.loaded")) == 29000 + 500 + 0.095);
  const auto busy = testing::responses(trace, "A", "OffsetCommit", "COORDINATOR_LOAD_IN_PROGRESS");
  REQUIRE(busy.size() >= 2);
  for (const double t : busy) CHECK((t > 29000 && t < 29500.095));
  CHECK(busy[1] - busy[0] == doctest::Approx(102).epsilon(0.01));  // 100 ms backoff + round trip
  // Afterwards the group goes on with its generation: no rebalance, commits accepted.
  int preparing = 0;
  for (const auto& e : trace)
    if (e["type"] == "group.state" && e["state"] == "PreparingRebalance") ++preparing;
  CHECK(preparing == 2);  // A's and B's joins at the start only
  const auto ok = testing::responses(trace, "A", "OffsetCommit", "NONE");
  CHECK(ok.back() > 29500);
}

TEST_CASE("failover with one broker: nothing can take over until it is back") {
  const auto trace = testing::run_trace("scenarios/classic/coordinator-failover-single-broker.json",
                                        "classic-eager");
  std::vector<json> elections;
  for (const auto& e : trace)
    if (e["type"] == "coordinator.elected") elections.push_back(e);
  REQUIRE(elections.size() == 2);
  CHECK(ms(elections[0]) == 29000);
  CHECK(elections[0]["broker"].is_null());  // no live replica: the partition has no leader
  CHECK(ms(elections[1]) == 35000);         // back after down_ms, it leads again and loads
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
  CHECK(ms(elected) == 29000);
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
