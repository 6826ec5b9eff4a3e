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

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

double ms(const json& e) { return e["t_us"].get<double>() / 1000.0; }

std::vector<double> rpc_times(const std::vector<json>& trace, const std::string& dir, const std::string& api,
                              const std::string& consumer) {
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

TEST_CASE("classic metadata.max.age.ms refresh: the Metadata request waits behind the Fetch, the next is timed from its answer") {
  const auto spec = testing::ideal_machine(scenario());
  const auto trace = testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
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
  CHECK(rpc_times(trace, "send", "Metadata", "A") == std::vector<double>{6000, 11032, 16052, 21072});
  CHECK(rpc_times(trace, "recv", "Metadata", "A") == std::vector<double>{6032, 11052, 16072, 21092});
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["api"] == "Metadata") CHECK(e[e["dir"] == "send" ? "to" : "from"] == "broker-0");
}

TEST_CASE("classic metadata.max.age.ms refresh: a partition increase is seen at the late answer") {
  // t grows to 6 partitions at 7000 ms: A's cached metadata changes at the answer of the refresh
  // sent at 11032 (answered 11052, not at 11000), and its next poll() pass rejoins then: the
  // empty Fetch answered at 11052 ends poll()'s wait.
  const auto events = json::parse(R"([{"at_ms": 7000, "do": "add-partitions", "topic": "t", "partitions": 6}])");
  const auto spec = testing::ideal_machine(scenario(events, 16000));
  const auto trace = testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
  double seen = -1;
  for (const auto& e : trace)
    if (seen < 0 && e["type"] == "consumer.metadata" && e["consumer"] == "A" && ms(e) > 7000) seen = ms(e);
  CHECK(seen == 11052);
  const auto rejoin = testing::first_time(trace, "consumer.rejoin", "consumer", "A");
  CHECK(rejoin == 11052);
}
