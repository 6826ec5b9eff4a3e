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

json summary(const std::vector<std::string>& lines,
             std::optional<std::vector<std::string>> steady) {
  reports::SummaryInputs in;
  in.steady_consumers = std::move(steady);
  return json::parse(reports::summarize(lines, in).dump());
}

/// The script's leading `start` events' consumers, as the CLI computes them.
std::vector<std::string> leading_starts(const rsim::ScenarioSpec& spec) {
  return rsim::start_up_consumers(spec);
}

}  // namespace

TEST_CASE(
    "not processed: no owner, a callback, a stall and a pause each count; a stalled owner still "
    "counts as owning") {
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
  CHECK(s["moments"][0] ==
        json{{"t_us", 12000},
             {"kind", "fatal_error"},
             {"consumer", "A"},
             {"text", "fatal error INVALID_SESSION_TIMEOUT (JoinGroup): the consumer stopped"}});
}

TEST_CASE(
    "steady window: from the end of the instant the first consumers all hold a stable assignment") {
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
        "After start-up (from 5 ms): 1 consumer stopped by a fatal error (A); 0 rebalances; the "
        "whole group stopped "
        "2 times (3 ms at most); 2 of 2 partitions were not processed for 8 ms in all (3 ms at "
        "most).");
}

TEST_CASE(
    "steady window: none without the first consumers, null when one of them never holds an "
    "assignment") {
  const json none = summary(kStallTrace, std::nullopt);
  CHECK_FALSE(none.contains("steady"));
  CHECK_FALSE(none.contains("verdict"));
  const json never = summary(kStallTrace, std::vector<std::string>{"A", "B"});
  CHECK(never["steady"]["from_us"].is_null());
  CHECK(never["steady"]["metrics"].is_null());
  CHECK(never["verdict"].get<std::string>().rfind(
            "The group never settled after start-up; over the whole run: ", 0) == 0);
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

TEST_CASE(
    "eager: a member slow in onPartitionsRevoked holds the join barrier, and the whole group stops "
    "that long") {
  const auto spec = testing::ideal_machine(barrier_doc());
  const auto lines = rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines;
  const auto trace = testing::parse_trace(lines);
  reports::SummaryInputs in;
  in.steady_consumers = leading_starts(spec);  // A: B starts after the network event
  const json s = json::parse(reports::summarize(lines, in).dump());
  // A alone owns t-0..3 from its start-up rebalance; B joins at 10 s. A learns at its next
  // heartbeat and runs onPartitionsRevoked(t-0..3) for 2000 ms: the join phase cannot complete
  // before A's JoinGroup (the eager barrier), and B owns nothing yet. From the callback's start
  // the group processes nothing: 2000 ms of callback, A's JoinGroup to the coordinator (1 ms),
  // the JoinGroup responses (1 ms), the leader's SyncGroup (1 ms; writes take 0 ms on the
  // idealized machine), the SyncGroup responses (1 ms): 2004 ms, the barrier plus one round of
  // JoinGroup and SyncGroup.
  const auto revoked = testing::callback_starts(trace, "A", "onPartitionsRevoked");
  REQUIRE(revoked.size() == 1);
  const auto start_us = static_cast<std::int64_t>(revoked[0] * 1000);
  const json& steady = s["steady"]["metrics"];
  CHECK(steady["group_stopped_ms"] == 2004.0);
  CHECK(steady["max_group_stopped_ms"] == 2004.0);
  CHECK(steady["rebalance_count"] == 1);
  bool found = false;
  for (const auto& st : s["stops"])
    if (st["start_us"] == start_us) {
      found = true;
      CHECK(st["end_us"] == start_us + 2004000);
    }
  CHECK(found);
  // Each partition: the same 2004 ms (A revoked them all), charged to A, their last owner.
  CHECK(steady["not_processed_ms_by_partition"] ==
        json{{"t-0", 2004.0}, {"t-1", 2004.0}, {"t-2", 2004.0}, {"t-3", 2004.0}});
  CHECK(steady["not_processed_ms_by_consumer"] == json{{"A", 8016.0}});
  // The ownership view sees only the 4 ms after A's assignment emptied: A owned its partitions
  // throughout its callback.
  CHECK(steady["stop_the_world_ms"] == 4.0);
}

TEST_CASE(
    "a 360 s stall under max.poll.interval.ms=300000: the stalled consumer's partitions are not "
    "processed for 300 s plus the detection and A's takeover") {
  const json doc = json::parse(R"({"name":"stall","duration_ms":400000,"protocols":["consumer"],
    "network":{"latency_ms":1},
    "topics":[{"name":"t","partitions":2}],
    "consumers":[{"name":"A","group":"g","topics":["t"]},{"name":"B","group":"g","topics":["t"]}],
    "events":[{"at_ms":0,"do":"start","consumer":"A"},{"at_ms":0,"do":"start","consumer":"B"},
              {"at_ms":20050,"do":"stall","consumer":"B","for_ms":360000}]})");
  const auto spec = testing::ideal_machine(doc);
  const auto lines = rsim::run_scenario(spec, "consumer", spec.seed).trace_lines;
  const auto trace = testing::parse_trace(lines);
  reports::SummaryInputs in;
  in.steady_consumers = leading_starts(spec);
  const json s = json::parse(reports::summarize(lines, in).dump());
  // B's application last called poll() at 20.000 s (poll(100 ms) returns empty every 100 ms from
  // its start at 0) and stalls at 20.050 s. Its poll timer expires at 20.000 + 300 s = 320.000 s,
  // but KIP-848's background thread checks it only when it wakes for B's next heartbeat
  // (AbstractHeartbeatRequestManager.poll; issue 40), at 320.300 s (B heartbeats every 5 s
  // (group.consumer.heartbeat.interval.ms) at ....300 s): the leave (epoch -1) goes out then. A's
  // heartbeat, also sent at 320.300 s, arrives at the same instant and is handled first, so the
  // target assignment with t-1 comes with A's next one at 325.300 s (answered 325.302 s). A's
  // application thread is inside poll(), waiting for a Fetch that ends every 502 ms (..., 320.480
  // s, ..., 320.480 + 10 x 0.502 = 325.500 s): onPartitionsAssigned (0 ms) runs there, and A owns
  // t-1. So t-1 is not processed from 20.050 s to 325.500 s: 305,450 ms (before issue 40's fix the
  // leave went at 320.000 s, A got t-1 with its 320.300 s heartbeat and owned it at 320.480 s:
  // 300,430 ms).
  CHECK(testing::first_time(trace, "consumer.poll_timeout", "consumer", "B") == 320300.0);
  const json& m = s["steady"]["metrics"];
  CHECK(s["steady"]["from_us"] == 10300000);
  CHECK(m["max_not_processed_ms"] == 305450.0);
  // t-1 moves back to B when B polls again at 380.050 s (onPartitionsLost, rejoin). A's
  // heartbeats now run at ....500 s (its acknowledgement at 325.500 s reset the timer): the one at
  // 380.500 s brings the revocation (answered 380.502 s), A's next pass (380.600 s) commits, the
  // pass after the commit's answer (380.700 s) revokes t-1; B gets it at 385.450 s: 4,750 ms more,
  // charged to A.
  CHECK(m["not_processed_ms_by_partition"] == json{{"t-1", 305450.0 + 4750.0}});
  CHECK(m["not_processed_ms_by_consumer"] == json{{"A", 4750.0}, {"B", 305450.0}});
  // The ownership view: B owned t-1 throughout its stall; only the move back counts.
  CHECK(m["max_unavailable_ms"] == 4750.0);
  CHECK(m["group_stopped_ms"] == 0.0);  // A kept processing t-0
  REQUIRE(s["moments"].size() == 2);
  CHECK(s["moments"][0]["kind"] == "poll_timeout");
  CHECK(s["moments"][0]["t_us"] == 320300000);
  CHECK(s["moments"][1]["kind"] == "overlap");  // B still believes it owns t-1 until it polls
}

TEST_CASE(
    "static deploy: each pod's partitions are not processed for its downtime plus its rejoin, and "
    "nothing else stops") {
  // scenarios/library/rolling-restart-static.json: 4 static members with 2 partitions each;
  // A, B, C, D restart (graceful close, back 5 s later) at 30, 50, 70, 90 s.
  const auto spec = testing::load_ideal("scenarios/library/rolling-restart-static.json");
  reports::SummaryInputs in;
  in.steady_consumers = leading_starts(spec);
  const json s = json::parse(
      reports::summarize(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines, in)
          .dump());
  const json& m = s["steady"]["metrics"];
  // Each pod: close() begins at its restart (it processes no more), commits (2 ms: 1 ms each
  // way), revokes and closes; the new process starts 5000 ms after the restart, finds the
  // coordinator (2 ms), rejoins with its group.instance.id (JoinGroup, 2 ms: the coordinator
  // hands the static member its old assignment without a rebalance) and syncs (2 ms): its two
  // partitions are not processed for 5000 + 2 + 2 + 2 = 5006 ms, charged to the pod.
  CHECK(m["rebalance_count"] == 0);
  CHECK(m["max_not_processed_ms"] == 5006.0);
  CHECK(m["not_processed_ms_by_consumer"] ==
        json{{"A", 10012.0}, {"B", 10012.0}, {"C", 10012.0}, {"D", 10012.0}});
  CHECK(m["not_processed_partition_ms"] == 8 * 5006.0);
  CHECK(m["group_stopped_ms"] == 0.0);  // the other pods go on
  // The ownership view starts when close() has revoked (after its 2 ms commit).
  CHECK(m["max_unavailable_ms"] == 5004.0);
}

namespace {

json scale_out_doc(std::int64_t c_at_ms, bool network_event_first = false) {
  json doc = json::parse(R"({"name":"scale-out","duration_ms":20000,"protocols":["classic-eager"],
    "cluster":{"config":{"group.initial.rebalance.delay.ms":0}},
    "network":{"latency_ms":1},
    "topics":[{"name":"t","partitions":6}],
    "consumers":[{"name":"A","group":"g","topics":["t"]},{"name":"B","group":"g","topics":["t"]},
                 {"name":"C","group":"g","topics":["t"]}],
    "events":[{"at_ms":0,"do":"start","consumer":"A"},{"at_ms":100,"do":"start","consumer":"B"}]})");
  if (network_event_first)
    doc["events"].push_back(json{
        {"at_ms", 200}, {"do", "network"}, {"between", {"A", "coordinator"}}, {"latency_ms", 1}});
  doc["events"].push_back(json{{"at_ms", c_at_ms}, {"do", "start"}, {"consumer", "C"}});
  return doc;
}

}  // namespace

// Issue 35: a lesson whose rebalance is a later start (eager-stop-the-world: C joins at 10 s)
// got a verdict of "0 rebalances after start-up". Start-up is the script's leading starts, each
// within 3,000 ms (Kafka's default group.initial.rebalance.delay.ms) of the one before.
TEST_CASE(
    "steady window: a start more than 3 s after the previous one is a scale-out, not start-up") {
  using names = std::vector<std::string>;
  CHECK(rsim::start_up_consumers(testing::ideal_machine(scale_out_doc(3100))) ==
        names{"A", "B", "C"});  // 3,000 ms after B: still start-up
  CHECK(rsim::start_up_consumers(testing::ideal_machine(scale_out_doc(3101))) == names{"A", "B"});
  CHECK(rsim::start_up_consumers(testing::ideal_machine(scale_out_doc(300, true))) ==
        names{"A", "B"});  // after an event of another kind, as before

  const auto spec = testing::ideal_machine(scale_out_doc(10000));
  const auto lines = rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines;
  reports::SummaryInputs in;
  in.steady_consumers = rsim::start_up_consumers(spec);
  const json s = json::parse(reports::summarize(lines, in).dump());
  // The whole run: A's join (0 ms), B's (100 ms), C's (10 s).
  CHECK(s["metrics"]["rebalance_count"] == 3);
  // Start-up ends when A and B are stable. B's join (at the coordinator at 105 ms) waits for A's
  // next Heartbeat (3,006 ms), answered REBALANCE_IN_PROGRESS (3,008 ms); A revokes and rejoins,
  // the group completes, and A and B each own three partitions from 3,014 ms.
  CHECK(s["steady"]["from_us"] == 3014000);
  const json& m = s["steady"]["metrics"];
  // C's join is the steady window's one rebalance. C finds the coordinator (2 ms), its JoinGroup
  // is answered MEMBER_ID_REQUIRED (2 ms) and the second reaches the coordinator at 10,005 ms:
  // PreparingRebalance. A and B, stable together since 3,014 ms, heartbeat together at 12,014 ms;
  // the answer (12,016 ms) makes both revoke all three partitions (eager) and rejoin: JoinGroup
  // 1 ms, its responses 1 ms, the leader's SyncGroup 1 ms, its responses 1 ms: 12,020 ms.
  CHECK(m["rebalance_count"] == 1);
  CHECK(m["max_rebalance_ms"] == 12020.0 - 10005.0);
  CHECK(m["revocations"] == 6);
  CHECK(m["stop_the_world_ms"] == 4.0);  // 12,016 to 12,020 ms: nobody owns anything
  CHECK(m["not_processed_partition_ms"] == 6 * 4.0);
  CHECK(s["verdict"] ==
        "After start-up (from 3.0 s): 1 rebalance; the whole group stopped 1 time (4 ms at most); "
        "6 of 6 partitions were not processed for 24 ms in all (4 ms at most).");
}
