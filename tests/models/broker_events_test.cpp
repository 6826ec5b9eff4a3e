// Broker events by id and the metadata refreshes they cause, checked at the instants Kafka's
// rules give (1 ms one-way latency, broker.session.timeout.ms 9000, retry.backoff.ms 100):
// - a controlled shutdown moves leadership first (KRaft: the controller moves the leaders when the
//   broker's heartbeat asks for shutdown) and the process stops at its next heartbeat, 50 ms later
//   (BrokerLifecycleManager, PENDING_CONTROLLED_SHUTDOWN);
// - a Fetch to a broker that no longer leads answers NOT_LEADER_OR_FOLLOWER, and the client
//   requests a metadata update (FetchCollector.handleInitializeErrors); every disconnect requests
//   one too (NetworkClient.DefaultMetadataUpdater.handleServerDisconnect);
// - Kafka's test_broker_rolling_bounce (tests/kafkatest/tests/client/consumer_test.py) expects
//   no rebalance from a rolling bounce of the brokers.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;
using testing::events;
using testing::times;

constexpr const char* kBounce = "scenarios/brokers/broker-rolling-bounce.json";
constexpr const char* kGrowth = "scenarios/classic/add-partitions-after-disconnect.json";

double ms(const json& e) {
  return e["t_us"].get<double>() / 1000.0;
}
}  // namespace

TEST_CASE("a rolling bounce of three brokers: leaders move, fetches follow, no rebalance") {
  for (const char* variant : {"classic-eager", "classic-cooperative", "consumer"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace(kBounce, variant);
    // No group changes after the initial ones (which end by 7.007 s classic, 6.5 s consumer).
    for (const auto& e : trace) {
      if (ms(e) < 20000) continue;
      CHECK(e["type"] != "group.epoch");
      CHECK(e["type"] != "member.leave");
      // (The old coordinator's copy of the group goes Dead when it resigns its shard.)
      if (e["type"] == "group.state") {
        CHECK(e["state"] != "PreparingRebalance");
        CHECK(e["state"] != "CompletingRebalance");
      }
      CHECK(e["type"] != "callback");
    }
    // Each broker stops at its event, is down 50 ms later, starts 10 s after that.
    CHECK(times(trace, "broker.stop", "graceful", true) ==
          std::vector<double>{20000, 40000, 60000});
    CHECK(times(trace, "broker.start", "broker", 0) == std::vector<double>{30050});
    CHECK(times(trace, "broker.start", "broker", 1) == std::vector<double>{50050});
    CHECK(times(trace, "broker.start", "broker", 2) == std::vector<double>{70050});
    // broker-0 leads t-0 and t-3 (replicas of t-p: brokers p, p+1, p+2 mod 3), which move to
    // broker-1; the group's coordinator (__consumer_offsets-3, on broker-0) moves too.
    const auto moves = events(trace, "partition.leaders");
    REQUIRE(moves.size() == 3);
    CHECK(moves[0]["leaders"] == json{{"t-0", 1}, {"t-3", 1}});
    CHECK(ms(moves[0]) == 20000);
    // broker-1 then leads t-0, t-1, t-3, t-4 (broker-0 came back as a follower of t-0 and t-3).
    CHECK(moves[1]["leaders"] == json{{"t-0", 0}, {"t-1", 2}, {"t-3", 0}, {"t-4", 2}});
    CHECK(times(trace, "coordinator.elected", "partition", 3) == std::vector<double>{20000, 40000});
    // The consumers fetching from the stopping broker get NOT_LEADER_OR_FOLLOWER one round trip
    // after the move, and their metadata refresh (the last one was long ago: no backoff) names the
    // new leader at the same instant.
    const auto errors = events(trace, "fetch.error");
    REQUIRE(!errors.empty());
    for (const auto& e : errors) {
      CHECK(e["error"] == "NOT_LEADER_OR_FOLLOWER");
      const double t = ms(e);
      CHECK((t == 20002 || t == 40002 || t == 60002));
    }
    for (const auto& e : events(trace, "consumer.leaders")) {
      const double t = ms(e);
      CHECK((t == 20002 || t == 40002 || t == 60002));
    }
    CHECK(testing::summary_of(kBounce, variant)["metrics"]["lost"] == 0);
  }
}

TEST_CASE("after NOT_LEADER_OR_FOLLOWER the consumer fetches from the new leader") {
  const auto trace = testing::run_trace(kBounce, "classic-eager");
  // A owns t-0 and t-1. t-0's record 999 is appended at 20000 (50 records/s: one every 20 ms);
  // broker-0 no longer leads t-0 then, so A gets it from broker-1 after the error and the
  // refresh, at 20002, instead of 20001; t-1 (broker-1) is not disturbed.
  std::vector<std::pair<double, std::string>> fetched;
  for (const auto& e : events(trace, "records.fetched")) {
    if (e["consumer"] != "A" || ms(e) < 20000 || ms(e) > 20030) continue;
    for (const auto& r : e["ranges"])
      fetched.emplace_back(ms(e), r["partition"].get<std::string>());
  }
  CHECK(fetched == std::vector<std::pair<double, std::string>>{
                       {20001, "t-1"}, {20002, "t-0"}, {20021, "t-0"}, {20021, "t-1"}});
  // The clients' connections to broker-0 reset when its process stops, 50 ms after the stop.
  CHECK(times(trace, "net.disconnect", "node", "broker-0") ==
        std::vector<double>{20050, 20050, 20050});
}

TEST_CASE("a crashed broker's leadership moves only when the controller fences it") {
  // The bounce with crash-broker instead: t-0 and t-3 stay with the dead broker-0 until the
  // active controller (broker-1 at seed 1) fences it at its first check after broker-0's last
  // heartbeat (19372.460 ms) + broker.session.timeout.ms: 28539.959 ms (checks every 1125 ms
  // from -710.041; controller_quorum_test.cpp has the rules), while their consumers refresh
  // with a growing backoff.
  auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + kBounce);
  spec.events.resize(3);  // the starts
  spec.events.push_back(
      rsim::EventSpec{.at = sim::ms(20000), .verb = rsim::verb::CrashBroker{.broker = 0}});
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
  constexpr double kFence = 28539.959;
  CHECK(times(trace, "broker.fenced", "broker", 0) == std::vector<double>{kFence});
  const auto moves = events(trace, "partition.leaders");
  REQUIRE(moves.size() == 1);
  CHECK(ms(moves[0]) == kFence);
  CHECK(moves[0]["reason"] == "leader fenced");
  CHECK(times(trace, "coordinator.elected", "partition", 3) == std::vector<double>{kFence});
  // No record of t-0 reaches A between the crash and the fencing; the next after it does.
  double first_after = -1;
  for (const auto& e : events(trace, "records.fetched")) {
    if (e["consumer"] != "A" || ms(e) < 20000) continue;
    for (const auto& r : e["ranges"])
      if (r["partition"] == "t-0" && first_after < 0) first_after = ms(e);
  }
  CHECK(first_after >= kFence);
  CHECK(first_after <= kFence + 1000);  // within one retry.backoff.max.ms of the election
  // The crash costs no rebalance either (the new coordinator loads the group as Stable).
  for (const auto& e : trace)
    if (ms(e) >= 20000) CHECK(e["type"] != "group.epoch");
}

TEST_CASE("partition growth is noticed at the leader's first disconnect after it") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace(kGrowth, variant);
    // t grows at 20 s; broker-1 crashes at 60 s: A (the leader, fetching t-1 from broker-1) sees
    // its connection reset, the disconnect's metadata update shows 8 partitions at once (A's last
    // refresh was at 1 s, far beyond retry.backoff.ms). The Fetch in flight to broker-1 fails
    // with the reset, which ends poll()'s network wait, and the pass that follows rejoins (the
    // refresh being instantaneous here, at once). Before it rejoins, A commits (eager: before its
    // revocation); broker-1 follows the group's __consumer_offsets partition and, dead but not
    // fenced, is still in its ISR: the high watermark stays behind the commit until the active
    // controller fences broker-1 (70851.804 ms) and takes it out of the ISR (finding 22,
    // models/broker/replication.hpp). The answer reaches A 1 ms later, its JoinGroup the
    // coordinator 1 ms after that.
    CHECK(times(trace, "consumer.metadata", "consumer", "A") == std::vector<double>{1000, 60000});
    CHECK(events(trace, "consumer.metadata")[2]["reason"] == "disconnect");
    CHECK(times(trace, "consumer.rejoin", "consumer", "A") == std::vector<double>{60000});
    CHECK(times(trace, "broker.fenced", "broker", 1) == std::vector<double>{70851.804});
    CHECK(times(trace, "group.state", "reason", "leader A rejoined").back() == 70853.804);
    CHECK(testing::responses(trace, "A", "Fetch", "NETWORK_EXCEPTION").front() == 60000);
  }
}
