// The classic consumer's periodic metadata refresh (issue 40, model error 1; docs/fidelity.md,
// finding 12), at the instants Kafka's rules give:
// - Metadata.timeToNextUpdate: the next refresh is due metadata.max.age.ms after the last
//   successful one (lastSuccessfulRefreshMs, set by Metadata.update when the answer is handled);
//   NetworkClient.DefaultMetadataUpdater.maybeUpdate then sends a Metadata request to
//   leastLoadedNode (none while one is in flight);
// - with one broker the least loaded node is the connection of the consumer's Fetch, and the
//   broker reads the Metadata request only once its answer to that Fetch is sent (SocketServer
//   mutes a connection while one of its requests is served; finding 9). An empty Fetch is
//   answered fetch.max.wait.ms (500) after its arrival.
#include <doctest/doctest.h>

#include <algorithm>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

double ms(const json& e) {
  return e["t_us"].get<double>() / 1000.0;
}

std::vector<double> rpc_times(const std::vector<json>& trace, const std::string& dir,
                              const std::string& api, const std::string& consumer) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == dir && e["api"] == api &&
        e[dir == "send" ? "from" : "to"] == consumer)
      out.push_back(ms(e));
  return out;
}

// One broker, 1 ms links, the ideal machine, no records; A alone reads t (4 partitions) with
// metadata.max.age.ms=5000 and starts at 1000 ms.
json scenario(const json& extra_events = json::array(), std::int64_t duration_ms = 26000) {
  json doc = json::parse(R"({
    "name": "metadata-refresh", "seed": 1, "protocols": ["classic-eager"],
    "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
    "network": {"latency_ms": 1},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"], "config": {"metadata.max.age.ms": 5000}}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"}]})");
  doc["duration_ms"] = duration_ms;
  for (const auto& e : extra_events) doc["events"].push_back(e);
  return doc;
}
}  // namespace

TEST_CASE(
    "classic metadata.max.age.ms refresh: the Metadata request waits behind the Fetch, the next is "
    "timed from its answer") {
  const auto spec = testing::ideal_machine(scenario());
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
  // A's join at 1000 ms: FindCoordinator 1000-1002, JoinGroup 1002-1004 (MEMBER_ID_REQUIRED),
  // JoinGroup 1004-1006, SyncGroup 1006-1008, OffsetFetch 1008-1010, ListOffsets 1010-1012
  // (no committed offset): its first Fetch goes at 1012 and the cycle is 1 + 500 + 1 = 502 ms.
  const auto fetches = rpc_times(trace, "send", "Fetch", "A");
  REQUIRE(fetches.size() > 40);
  CHECK(fetches.front() == 1012);
  CHECK(fetches[1] == 1514);
  // The bootstrap metadata of A's start (1000 ms) is due again at 6000. The Fetch in flight then
  // was sent at 1012 + 9 x 502 = 5530 and is answered at 6032 (read by the broker at 5531, answered
  // there at 6031); the broker reads the Metadata request at 6031 and its answer arrives at 6032.
  // The next refresh is due at 6032 + 5000 = 11032, behind the Fetch of 10550 (answered 11052),
  // and so on: each wait for the Fetch is 502 - (5000 mod 502) = 20 ms, a period of 5020 ms, where
  // the simulator without the round trip refreshed at 6000, 11000, 16000, 21000.
  CHECK(rpc_times(trace, "send", "Metadata", "A") ==
        std::vector<double>{6000, 11032, 16052, 21072});
  CHECK(rpc_times(trace, "recv", "Metadata", "A") ==
        std::vector<double>{6032, 11052, 16072, 21092});
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["api"] == "Metadata")
      CHECK(e[e["dir"] == "send" ? "to" : "from"] == "broker-0");
}

TEST_CASE("classic metadata.max.age.ms refresh: a partition increase is seen at the late answer") {
  // t grows to 6 partitions at 7000 ms: A's cached metadata changes at the answer of the refresh
  // sent at 11032 (answered 11052, not at 11000), and its next poll() pass rejoins then: the
  // empty Fetch answered at 11052 ends poll()'s wait.
  const auto events =
      json::parse(R"([{"at_ms": 7000, "do": "add-partitions", "topic": "t", "partitions": 6}])");
  const auto spec = testing::ideal_machine(scenario(events, 16000));
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
  double seen = -1;
  for (const auto& e : trace)
    if (seen < 0 && e["type"] == "consumer.metadata" && e["consumer"] == "A" && ms(e) > 7000)
      seen = ms(e);
  CHECK(seen == 11052);
  const auto rejoin = testing::first_time(trace, "consumer.rejoin", "consumer", "A");
  CHECK(rejoin == 11052);
}

// KIP-848 client after its coordinator dies (issue 40, model error 2; docs/fidelity.md,
// finding 13). scenarios/consumer/coordinator-failover.json on the ideal machine (3 brokers,
// 1 ms links; the coordinator broker-0 of g fails at 20000 and stays down; the active controller,
// broker-1, fences it at its first check after broker-0's last heartbeat +
// broker.session.timeout.ms, 28539.959 ms (failover_test.cpp), and the new coordinator loads g for
// 500 ms), with a third member C that starts at 25000, during the outage:
// - until the fence, FindCoordinator still names broker-0 (it still leads g's __consumer_offsets
//   partition), and the connection to it is refused at once;
// - C is JOINING, so it heartbeats as soon as a coordinator is known, whatever its backoff
//   (AbstractHeartbeatRequestManager.poll: shouldHeartbeatNow, nothing in flight);
// - its next FindCoordinator waits CoordinatorRequestManager's RequestState backoff, which a
//   success resets to its first step: retry.backoff.ms (100) x a jitter factor in [0.8, 1.2)
//   after the answer (RequestState.onSuccessfulAttempt, ExponentialBackoff), not nothing, and
//   not the heartbeat's grown backoff.
TEST_CASE(
    "consumer protocol: a joining member looks the dead coordinator up every retry.backoff.ms and "
    "heartbeats at once") {
  auto doc = nlohmann::json::parse(R"({
    "name": "join-while-coordinator-dead", "seed": 1, "duration_ms": 40000, "protocols": ["consumer"],
    "cluster": {"brokers": 3, "config": {"group.initial.rebalance.delay.ms": 0},
                "coordinator_load": {"base_ms": 500, "us_per_record": 5}},
    "network": {"latency_ms": 1},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]}, {"name": "B", "group": "g", "topics": ["t"]},
                  {"name": "C", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"}, {"at_ms": 1100, "do": "start", "consumer": "B"},
               {"at_ms": 20000, "do": "fail-coordinator", "group": "g", "down_ms": 60000},
               {"at_ms": 25000, "do": "start", "consumer": "C"}]})");
  const auto spec = testing::ideal_machine(doc);
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "consumer", spec.seed).trace_lines);
  constexpr double kFence = 28539.959;
  std::vector<double> lookups, answers, heartbeats;
  std::vector<std::string> hb_to;
  for (const auto& e : trace) {
    if (e["type"] != "rpc") continue;
    if (e["dir"] == "send" && e["from"] == "C" && e["api"] == "FindCoordinator")
      lookups.push_back(ms(e));
    if (e["dir"] == "recv" && e["to"] == "C" && e["api"] == "FindCoordinator")
      answers.push_back(ms(e));
    if (e["dir"] == "send" && e["from"] == "C" && e["api"] == "ConsumerGroupHeartbeat") {
      heartbeats.push_back(ms(e));
      hb_to.push_back(e["to"]);
    }
  }
  REQUIRE(lookups.size() > 30);
  CHECK(lookups.front() == 25000);
  // Before the fence (28539.959): each answer names broker-0, C heartbeats it at that instant, the
  // connection is refused, and the next lookup goes 80-120 ms after the answer (1 ms + 1 ms
  // round trip: 82-122 ms after the previous lookup).
  std::size_t before_fence = 0;
  for (std::size_t i = 0; i + 1 < lookups.size() && lookups[i + 1] < kFence; ++i) {
    CAPTURE(lookups[i]);
    CHECK(answers[i] == lookups[i] + 2);
    CHECK(std::find(heartbeats.begin(), heartbeats.end(), answers[i]) != heartbeats.end());
    CHECK(lookups[i + 1] - answers[i] >= 80);
    CHECK(lookups[i + 1] - answers[i] < 120);
    ++before_fence;
  }
  // The seeded draws (C's find-coordinator RNG stream): backoffs of 112, 92 and 96 ms first, 34
  // lookups before the fence.
  CHECK(std::vector<double>(lookups.begin(), lookups.begin() + 4) ==
        std::vector<double>{25000, 25114, 25208, 25306});
  CHECK(before_fence == 34);
  // 3540 ms of 82-122 ms cycles.
  CHECK(before_fence >= 29);
  CHECK(before_fence <= 44);
  // After the election (28539.959) the first answer names the new coordinator, and C heartbeats
  // it at once; its join is answered when the load is over (29040).
  double learned = -1;
  for (std::size_t i = 0; i < answers.size(); ++i)
    if (answers[i] > kFence && learned < 0) learned = answers[i];
  REQUIRE(learned > 0);
  CHECK(learned < kFence + 122 + 2);
  CHECK(learned == 28573);
  std::size_t k = 0;
  while (k < heartbeats.size() && heartbeats[k] < learned) ++k;
  REQUIRE(k < heartbeats.size());
  CHECK(heartbeats[k] == learned);
  CHECK(hb_to[k] != "broker-0");
}
