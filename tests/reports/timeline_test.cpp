// The timeline model and the narrative, on the hand-written eager trace: which spans, instants,
// ownership and lag totals it derives, at which microseconds.
#include <doctest/doctest.h>

#include "report_fixture.hpp"
#include "reports/narrative.hpp"
#include "reports/timeline.hpp"

using reports::Span;

namespace {

const reports::Lane& lane(const reports::Timeline& t, const std::string& name) {
  for (const auto& l : t.lanes)
    if (l.consumer == name) return l;
  FAIL("no lane " << name);
  return t.lanes.front();
}

std::vector<Span> spans(const reports::Lane& l, const std::string& kind) {
  std::vector<Span> out;
  for (const auto& s : l.spans)
    if (s.kind == kind) out.push_back(s);
  return out;
}

}  // namespace

TEST_CASE("timeline: lanes, ownership, revoking and waiting spans of an eager rebalance") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  CHECK(t.duration_us == 10'000'000);
  REQUIRE(t.lanes.size() == 2);
  CHECK(t.lanes[0].consumer == "A");
  CHECK(t.lanes[1].consumer == "B");
  CHECK(t.partitions == std::vector<std::string>{"orders-0", "orders-1", "orders-2"});
  const auto& a = lane(t, "A");
  REQUIRE(a.owned.size() == 2);
  CHECK(a.owned[0].start_us == 1'005'000);
  CHECK(a.owned[0].end_us == 6'050'000);  // eager: everything goes at the revocation
  CHECK(a.owned[0].partitions == std::vector<int>{0, 1, 2});
  CHECK(a.owned[1].start_us == 6'054'000);
  CHECK(a.owned[1].end_us == 10'000'000);
  // A revokes from its pre-revocation commit (6.048 s, the heartbeat's news) to the empty
  // assignment.
  const auto revoking = spans(a, "revoking");
  REQUIRE(revoking.size() == 1);
  CHECK(revoking[0].start_us == 6'048'000);
  CHECK(revoking[0].end_us == 6'050'000);
  CHECK(revoking[0].label == "revoking orders-0..2");
  // A waits from its start to its first assignment, then from its revocation to SyncGroup's answer.
  const auto a_wait = spans(a, "waiting");
  REQUIRE(a_wait.size() == 2);
  CHECK(a_wait[0].start_us == 1'000'000);
  CHECK(a_wait[0].end_us == 1'005'000);
  CHECK(a_wait[1].start_us == 6'050'000);
  CHECK(a_wait[1].end_us == 6'054'000);
  // B waits 2.933 s: from its start until the rebalance hands it orders-2.
  const auto& b = lane(t, "B");
  const auto b_wait = spans(b, "waiting");
  REQUIRE(b_wait.size() == 1);
  CHECK(b_wait[0].start_us == 3'121'000);
  CHECK(b_wait[0].end_us == 6'054'000);
  const auto crashed = spans(b, "crashed");
  REQUIRE(crashed.size() == 1);
  CHECK(crashed[0].start_us == 8'000'000);
  CHECK(crashed[0].end_us == 10'000'000);
  REQUIRE(b.owned.size() == 1);
  CHECK(b.owned[0].end_us == 8'000'000);  // a crashed process owns nothing
  const auto callbacks = spans(a, "callback");
  REQUIRE(callbacks.size() == 1);
  CHECK(callbacks[0].label == "onPartitionsRevoked(orders-0..2)");
  int heartbeats = 0;
  for (const auto& i : a.instants)
    if (i.kind == "heartbeat") {
      ++heartbeats;
      CHECK(i.t_us == 6'048'000);
      CHECK(i.label == "Heartbeat response (REBALANCE_IN_PROGRESS)");
    }
  CHECK(heartbeats == 1);
}

TEST_CASE("timeline: group band, messages and lag totals") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  REQUIRE(t.groups.size() == 1);
  const auto& band = t.groups[0];
  // PreparingRebalance of the first join lasts 0 µs and draws nothing.
  REQUIRE(band.segments.size() == 5);
  CHECK(band.segments[0].state == "CompletingRebalance");
  CHECK(band.segments[0].label == "CompletingRebalance · generation 1 (all members joined)");
  CHECK(band.segments[2].state == "PreparingRebalance");
  CHECK(band.segments[2].start_us == 3'126'000);
  CHECK(band.segments[2].end_us == 6'051'000);
  CHECK(band.segments.back().state == "Stable");
  CHECK(band.segments.back().start_us == 6'053'000);
  CHECK(band.segments.back().end_us == 10'000'000);
  CHECK(band.epochs.size() == 2);
  // Every request is paired with its response: B's JoinGroup waits 2.929 s in purgatory.
  bool found = false;
  for (const auto& m : t.messages)
    if (m.client == "B" && m.api == "JoinGroup") {
      found = true;
      CHECK(m.send_us == 3'123'000);
      CHECK(m.recv_us == 6'052'000);
      CHECK(m.error == "NONE");
    }
  CHECK(found);
  REQUIRE(t.total_lag.size() == 2);
  CHECK(t.total_lag[0].t_us == 2'000'000);
  CHECK(t.total_lag[0].lag == 10);
  CHECK(t.total_lag[1].lag == 1 + 6 + 2);  // orders-1 keeps its last sample (6)
  CHECK(t.lag[2].size() == 1);
  REQUIRE(t.rebalances.size() == 2);
  CHECK(t.rebalances[1].epoch_label == "generation 2");
  const auto [from, to] = reports::rebalance_window(t, t.rebalances[1]);
  CHECK(from == 3'123'000);  // B's JoinGroup, which opened the rebalance
  CHECK(to == 6'054'000);
}

TEST_CASE("narrative: the eager rebalance in plain words") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  const auto story = reports::narrate(t);
  REQUIRE(story.size() == 2);
  const std::string& s = story[1];
  INFO(s);
  CHECK(s.find("Rebalance 2 of group g (generation 2): from 3.126 s to 6.054 s (2928 ms), trigger "
               "\"member B joined\".") == 0);
  CHECK(s.find("B started at 3.121 s") != std::string::npos);
  CHECK(s.find("A learned of it from its Heartbeat response (REBALANCE_IN_PROGRESS) at 6.048 s") !=
        std::string::npos);
  CHECK(s.find("ran onPartitionsRevoked(orders-0..2) from 6.050 s to 6.050 s") !=
        std::string::npos);
  CHECK(s.find("went from orders-0..2 to orders-0..1 (last change at 6.054 s)") !=
        std::string::npos);
  CHECK(s.find("B sent JoinGroup at 3.123 s and went from none to orders-2") != std::string::npos);
  const std::string text = reports::explain_text(t);
  CHECK(text.rfind("tiny [classic-eager]: 2 rebalances\n", 0) == 0);
}

TEST_CASE("compress_partitions and seconds") {
  CHECK(reports::compress_partitions({"orders-2", "orders-10", "orders-0", "orders-1", "pay-3"}) ==
        "orders-0..2, orders-10, pay-3");
  CHECK(reports::compress_partitions({}) == "none");
  CHECK(reports::seconds(3'121'000) == "3.121 s");
  CHECK(reports::seconds(2'800'660) == "2.800660 s");
}

TEST_CASE("the timeline names the line of a malformed entry") {
  const auto none = nlohmann::ordered_json::object();
  CHECK_THROWS_WITH(reports::build_timeline("{\"t_us\":0,\"type\":\"a\"}\n{oops\n", none),
                    doctest::Contains("trace.jsonl line 2: not valid json"));
  CHECK_THROWS_WITH(reports::build_timeline("{\"type\":\"a\"}\n", none),
                    doctest::Contains("line 1: needs an integer t_us"));
  // A field of the wrong type in any kind the timeline reads (a lag sample included).
  CHECK_THROWS_WITH(
      reports::build_timeline("{\"t_us\":0,\"type\":\"lag\",\"partition\":\"t-0\",\"lag\":\"x\"}\n",
                              none),
      doctest::Contains("trace.jsonl line 1: a field of an unexpected type"));
}

TEST_CASE(
    "timeline: a KIP-848 epoch bump without a state change labels its segment with its own "
    "trigger") {
  const char* trace =
      R"({"t_us":0,"type":"run.start","scenario":"k","protocol":"consumer","seed":1,"duration_ms":10}
{"t_us":1000,"type":"group.epoch","group":"g","epoch":2,"members":["A","B"],"reason":"member B joined"}
{"t_us":1000,"type":"group.state","group":"g","state":"reconciling","epoch":2,"reason":"member B joined"}
{"t_us":2000,"type":"group.epoch","group":"g","epoch":3,"members":["A","B","C"],"reason":"member C joined"}
{"t_us":5000,"type":"group.state","group":"g","state":"stable","epoch":3}
)";
  const auto t = reports::build_timeline(
      trace, nlohmann::ordered_json::parse(
                 R"({"scenario":"k","protocol":"consumer","rebalances":[],"metrics":{}})"));
  REQUIRE(t.groups.size() == 1);
  const auto& segs = t.groups[0].segments;
  REQUIRE(segs.size() >= 2);
  CHECK(segs[0].start_us == 1000);
  CHECK(segs[0].label == "reconciling · epoch 2 (member B joined)");
  CHECK(segs[1].start_us == 2000);
  CHECK(segs[1].label == "reconciling · epoch 3 (member C joined)");  // was "(member B joined)"
}

TEST_CASE("narrative: a callback inside two rebalances' windows is told under one of them") {
  // Two rebalances of g whose windows overlap: R1 [0.5, 2] ms, R2 [0.9, 3] ms; A's revocation at
  // 1 ms belongs to R2, the latest that had started (it used to be told under both).
  reports::Timeline t;
  t.scenario = "s";
  t.protocol = "consumer";
  t.duration_us = 10'000;
  t.partitions = {"t-0"};
  reports::Lane a;
  a.consumer = "A";
  a.group = "g";
  a.spans.push_back(Span{1000, 1000, "callback", "onPartitionsRevoked(t-0)"});
  t.lanes.push_back(a);
  reports::Rebalance r1;
  r1.index = 1;
  r1.group = "g";
  r1.start_us = 500;
  r1.end_us = 2000;
  r1.trigger = "member B joined";
  reports::Rebalance r2 = r1;
  r2.index = 2;
  r2.start_us = 900;
  r2.end_us = 3000;
  r2.trigger = "member C joined";
  t.rebalances = {r1, r2};
  const auto story = reports::narrate(t);
  REQUIRE(story.size() == 2);
  CHECK(story[0].find("onPartitionsRevoked") == std::string::npos);
  CHECK(story[1].find("A ran onPartitionsRevoked(t-0) from 0.001 s to 0.001 s") !=
        std::string::npos);
}
