// Issue 41, `report` linear in the trace, in its corners: a rebalance that never completes over a
// long trace, and the narrative of many members over many rebalances. The work is counted (the
// timeline build's searches over rebalances, the narrative's lanes, instants, spans and
// rebalances looked at), not timed: the counts are exact under ASan and on a shared machine.
// Twice the input must cost at most 2.5 times the steps (2x, and a log factor); the passes
// these tests replace cost four times (rebalances x rebalances, rebalances x members).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/narrative.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/timeline.hpp"

using json = nlohmann::json;

namespace {

struct Work {
  std::uint64_t build = 0;      // Timeline::search_steps
  std::uint64_t narrative = 0;  // narrate's count
  std::size_t lines = 0;        // trace lines
  std::vector<std::string> story;
};

// `members` consumers c0.. of group g start at t=0; rebalance i (1-based, from 1 s + 30 ms
// (i-1)) is member c((i-1) % members)'s alone: its JoinGroup round trip, an
// onPartitionsRevoked callback and an assignment of orders-((i-1) % members). With
// `never_completes`, rebalance 1 (triggered by c0 at 0.5 s) has no end: it stays open to the
// end of the run (completed false), and every later rebalance's window lies inside it.
Work work_of(int members, int rebalances, bool never_completes) {
  std::string trace =
      "{\"t_us\":0,\"type\":\"run.start\",\"scenario\":\"corners\",\"protocol\":\"classic-"
      "cooperative\"}\n";
  std::size_t lines = 1;
  const auto line = [&](const std::string& text) {
    trace += text;
    trace += '\n';
    ++lines;
  };
  for (int m = 0; m < members; ++m)
    line(fmt::format(
        "{{\"t_us\":0,\"type\":\"consumer.start\",\"consumer\":\"c{}\",\"group\":\"g\"}}", m));
  const std::int64_t end_us = 1'000'000 + static_cast<std::int64_t>(rebalances) * 30'000;
  json rs = json::array();
  if (never_completes) {
    line(
        "{\"t_us\":400000,\"type\":\"rpc\",\"dir\":\"send\",\"from\":\"c0\",\"to\":\"broker-0\","
        "\"api\":\"JoinGroup\",\"id\":0}");
    rs.push_back({{"group", "g"},
                  {"start_us", 500000},
                  {"end_us", end_us},
                  {"trigger", "member c0 joined"},
                  {"generation", 1},
                  {"completed", false},
                  {"revoked", json::object()},
                  {"assigned", {{"c0", {"orders-0"}}}}});
  }
  for (int i = never_completes ? 1 : 0; i < rebalances; ++i) {
    const std::int64_t t = 1'000'000 + static_cast<std::int64_t>(i) * 30'000;
    const std::string c = fmt::format("c{}", i % members);
    const std::string p = fmt::format("orders-{}", i % members);
    line(
        fmt::format("{{\"t_us\":{},\"type\":\"rpc\",\"dir\":\"send\",\"from\":\"{}\",\"to\":"
                    "\"broker-0\",\"api\":\"JoinGroup\",\"id\":{}}}",
                    t + 100, c, i + 1));
    line(
        fmt::format("{{\"t_us\":{},\"type\":\"callback\",\"consumer\":\"{}\",\"callback\":"
                    "\"onPartitionsRevoked\",\"phase\":\"start\",\"partitions\":[]}}",
                    t + 1500, c));
    line(
        fmt::format("{{\"t_us\":{},\"type\":\"callback\",\"consumer\":\"{}\",\"callback\":"
                    "\"onPartitionsRevoked\",\"phase\":\"end\",\"partitions\":[]}}",
                    t + 2000, c));
    line(
        fmt::format("{{\"t_us\":{},\"type\":\"rpc\",\"dir\":\"recv\",\"from\":\"broker-0\",\"to\":"
                    "\"{}\",\"api\":\"JoinGroup\",\"id\":{}}}",
                    t + 3000, c, i + 1));
    line(
        fmt::format("{{\"t_us\":{},\"type\":\"assignment\",\"consumer\":\"{}\",\"group\":\"g\","
                    "\"owned\":[\"{}\"]}}",
                    t + 4000, c, p));
    rs.push_back({{"group", "g"},
                  {"start_us", t + 1000},
                  {"end_us", t + 5000},
                  {"trigger", "member " + c + " joined"},
                  {"generation", i + 1},
                  {"completed", true},
                  {"revoked", json::object()},
                  {"assigned", {{c, {p}}}}});
  }
  line(fmt::format("{{\"t_us\":{},\"type\":\"run.end\",\"events\":1}}", end_us));
  const auto summary = reports::parse_ordered(json{
      {"scenario", "corners"},
      {"protocol", "classic-cooperative"},
      {"rebalances", rs}}.dump());
  const auto tl = reports::build_timeline(trace, summary);
  REQUIRE(tl.time_ordered);
  REQUIRE(tl.rebalances.size() == static_cast<std::size_t>(rebalances));
  REQUIRE(tl.lanes.size() == static_cast<std::size_t>(members));
  Work w;
  w.build = tl.search_steps;
  w.lines = lines;
  w.story = reports::narrate(tl, nullptr, &w.narrative);
  return w;
}

}  // namespace

TEST_CASE(
    "report bounds: a rebalance that never completes keeps the build and the narrative linear") {
  const Work one = work_of(2, 2000, true), two = work_of(2, 4000, true);
  REQUIRE(one.story.size() == 2000);
  REQUIRE(two.story.size() == 4000);
  // Rebalance 1 is open over the whole run; rebalance 3 (c0 again, at 1.06 s) is told alone.
  CHECK(one.story[0].find(
            "Rebalance 1 of group g (generation 1): from 0.500 s to 61.000 s (60500 ms), trigger "
            "\"member c0 joined\", not completed by the end of the run.") == 0);
  CHECK(one.story[2] ==
        "Rebalance 3 of group g (generation 3): from 1.061 s to 1.065 s (4 ms), trigger \"member "
        "c0 joined\". "
        "c0 sent JoinGroup at 1.060100 s, ran onPartitionsRevoked(none) from 1.061500 s to 1.062 s "
        "and went from none "
        "to orders-0 (last change at 1.064 s).");
  MESSAGE(fmt::format("{} and {} lines: build {} and {} steps, narrative {} and {} steps",
                      one.lines, two.lines, one.build, two.build, one.narrative, two.narrative));
  CHECK(two.lines < 2 * one.lines + 10);
  // Walking back over every earlier rebalance (each still "open" behind the one that never
  // completes) made both about 4x; a search that visits only the open ones is about 2x (2.2
  // with the max tree's log factor).
  CHECK(two.build <= one.build * 25 / 10);
  CHECK(two.narrative <= one.narrative * 25 / 10);
  CHECK(one.build > 0);
  CHECK(one.narrative > 0);
}

TEST_CASE(
    "report bounds: the narrative of many members over many rebalances looks only at the members "
    "involved") {
  const Work one = work_of(100, 1000, false), two = work_of(200, 2000, false);
  REQUIRE(one.story.size() == 1000);
  CHECK(one.story[150] ==
        "Rebalance 151 of group g (generation 151): from 5.501 s to 5.505 s (4 ms), trigger "
        "\"member c50 joined\". "
        "c50 sent JoinGroup at 5.500100 s, ran onPartitionsRevoked(none) from 5.501500 s to 5.502 "
        "s and kept orders-50.");
  MESSAGE(fmt::format("{} and {} lines: build {} and {} steps, narrative {} and {} steps",
                      one.lines, two.lines, one.build, two.build, one.narrative, two.narrative));
  CHECK(two.lines < 2 * one.lines + 10);
  // Every lane of the group looked at per rebalance (rebalances x members) made it 4x; now 2.15x.
  CHECK(two.narrative <= one.narrative * 25 / 10);
  CHECK(two.build <= one.build * 25 / 10);
}
