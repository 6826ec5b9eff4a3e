// The processing metrics (not_processed_*, group_stopped_*, fatal_errors), the steady window, the
// decisive moments and the verdict: on a hand-written trace, and on scenarios whose numbers
// follow from Kafka's timers (every number derived by hand in the comments).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// A alone: it joins (no owner until 4 ms), runs onPartitionsAssigned 4..5 ms, its application
// stalls 6..9 ms, its process is paused 10..11 ms, and at 12 ms it dies of a fatal error.
const std::vector<std::string> kStallTrace{
    R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":20})",
    R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":2})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"]})",
    R"({"t_us":2000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member A joined"})",
    R"({"t_us":3000,"type":"group.epoch","group":"g","generation":1,"members":["A"]})",
    R"({"t_us":3000,"type":"group.state","group":"g","state":"Stable","generation":1})",
    R"({"t_us":4000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]})",
    R"({"t_us":4000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"})",
    R"({"t_us":5000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"end"})",
    R"({"t_us":6000,"type":"consumer.stall","consumer":"A","for_ms":3})",
    R"({"t_us":9000,"type":"consumer.resume","consumer":"A","after":"stall"})",
    R"({"t_us":10000,"type":"consumer.pause","consumer":"A","for_ms":1})",
    R"({"t_us":11000,"type":"consumer.resume","consumer":"A"})",
    R"({"t_us":12000,"type":"consumer.error","consumer":"A","error":"INVALID_SESSION_TIMEOUT","where":"JoinGroup"})",
};

json summary(const std::vector<std::string>& lines, std::optional<std::vector<std::string>> steady) {
  reports::SummaryInputs in;
  in.steady_consumers = std::move(steady);
  return json::parse(reports::summarize(lines, in).dump());
}

/// The script's leading `start` events' consumers, as the CLI computes them.
std::vector<std::string> leading_starts(const rsim::ScenarioSpec& spec) {
  std::vector<std::string> out;
  for (const auto& e : spec.events) {
    if (e.kind != "start") break;
    out.push_back(e.consumer);
  }
  return out;
}

/// A scenario document's run under `variant` on the idealized machine, summarized with its
/// steady window.
json run_summary(const json& doc, const std::string& variant) {
  const auto spec = testing::ideal_machine(doc);
  reports::SummaryInputs in;
  in.scenario = spec.name;
  in.protocol = variant;
  in.steady_consumers = leading_starts(spec);
  return json::parse(reports::summarize(rsim::run_scenario(spec, variant, spec.seed).trace_lines, in).dump());
}

}  // namespace

TEST_CASE("not processed: no owner, a callback, a stall and a pause each count; a stalled owner still counts as owning") {
  const json s = summary(kStallTrace, std::vector<std::string>{"A"});
  const json& m = s["metrics"];
  // Each partition: 1..5 ms (no owner 1..4, then inside onPartitionsAssigned), 6..9 stalled,
  // 10..11 paused: 8 ms; after the fatal error at 12 ms no live member wants them.
  CHECK(m["not_processed_partition_ms"] == 16.0);
  CHECK(m["max_not_processed_ms"] == 4.0);
  CHECK(m["not_processed_ms_by_partition"] == json{{"t-0", 8.0}, {"t-1", 8.0}});
  // A is responsible from its assignment on (the callback, the stall, the pause): 5 ms x 2.
  CHECK(m["not_processed_ms_by_consumer"] == json{{"A", 10.0}});
  CHECK(m["group_stopped_ms"] == 8.0);
  CHECK(m["max_group_stopped_ms"] == 4.0);
  CHECK(s["stops"] == json::parse(R"([{"group":"g","start_us":1000,"end_us":5000},
                                      {"group":"g","start_us":6000,"end_us":9000},
                                      {"group":"g","start_us":10000,"end_us":11000}])"));
  // The ownership view keeps its meaning: no owner 1..4 ms and paused 10..11 ms.
  CHECK(m["unavailable_partition_ms"] == 8.0);
  CHECK(m["stop_the_world_ms"] == 4.0);
  CHECK(m["fatal_errors"] == 1);
  REQUIRE(s["moments"].size() == 1);
  CHECK(s["moments"][0] == json{{"t_us", 12000}, {"kind", "fatal_error"}, {"consumer", "A"},
                                {"text", "fatal error INVALID_SESSION_TIMEOUT (JoinGroup): the consumer stopped"}});
}

TEST_CASE("steady window: from the end of the instant the first consumers all hold a stable assignment") {
  const json s = summary(kStallTrace, std::vector<std::string>{"A"});
  // The rebalance ends with A's onPartitionsAssigned at 5 ms.
  CHECK(s["steady"]["from_us"] == 5000);
  const json& m = s["steady"]["metrics"];
  CHECK(m["not_processed_partition_ms"] == 8.0);  // the stall and the pause: (3 + 1) x 2
  CHECK(m["max_not_processed_ms"] == 3.0);
  CHECK(m["group_stopped_ms"] == 4.0);
  CHECK(m["rebalance_count"] == 0);
  CHECK(m["fatal_errors"] == 1);
  CHECK(m["stop_the_world_ms"] == 1.0);  // the pause
  CHECK(s["verdict"] ==
        "After start-up (from 5 ms): 1 consumer stopped by a fatal error (A); 0 rebalances; the whole group stopped "
        "2 times (3 ms at most); 2 of 2 partitions were not processed for 8 ms in all (3 ms at most).");
}

TEST_CASE("steady window: none without the first consumers, null when one of them never holds an assignment") {
  const json none = summary(kStallTrace, std::nullopt);
  CHECK_FALSE(none.contains("steady"));
  CHECK_FALSE(none.contains("verdict"));
  const json never = summary(kStallTrace, std::vector<std::string>{"A", "B"});
  CHECK(never["steady"]["from_us"].is_null());
  CHECK(never["steady"]["metrics"].is_null());
  CHECK(never["verdict"].get<std::string>().rfind("The group never settled after start-up; over the whole run: ", 0) == 0);
}

namespace {

json barrier_doc() {
  return json::parse(R"({"name":"barrier","duration_ms":20000,"protocols":["classic-eager"],
    "cluster":{"config":{"group.initial.rebalance.delay.ms":0}},
    "network":{"latency_ms":1},
    "topics":[{"name":"t","partitions":4}],
    "consumers":[{"name":"A","group":"g","topics":["t"],"callbacks":{"revoke_ms":2000}},
                 {"name":"B","group":"g","topics":["t"]}],
    "events":[{"at_ms":0,"do":"start","consumer":"A"},{"at_ms":5000,"do":"network","between":["A","coordinator"],"latency_ms":1},
              {"at_ms":10000,"do":"start","consumer":"B"}]})");
}

}  // namespace

TEST_CASE("eager: a member slow in onPartitionsRevoked holds the join barrier, and the whole group stops that long") {
  const json s = run_summary(barrier_doc(), "classic-eager");
  MESSAGE(s.dump());
}
