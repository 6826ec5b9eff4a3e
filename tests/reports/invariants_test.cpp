// The invariant checker as a typed sink (issue 33): fed the events of a trace.jsonl read back
// through the one trace reader, it finds each property's violation with its time, detail and
// line window (hand-checked below); fed on the trace bus while a run goes, it finds the same
// violations with the same windows as over the trace read back, without holding the trace.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/protocol/model_options.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/invariants.hpp"

namespace {

std::string offset_commit(std::int64_t t_us, std::int64_t record_offset, std::int64_t committed) {
  return fmt::format(
      R"({{"t_us":{},"type":"record","partition":0,"offset":{},"record":"OffsetCommit","tombstone":false,)"
      R"("group":"g","topic":"t","partition_index":0,"committed_offset":{},"leader_epoch":-1,"commit_timestamp":0}})",
      t_us, record_offset, committed);
}

// Two classic members of g on topic t (2 partitions); A commits at least once.
std::vector<std::string> base_trace() {
  return {
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":5})",
      R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":2})",
      R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"],"protocol":"classic"})",
      R"({"t_us":1000,"type":"consumer.start","consumer":"B","group":"g","topics":["t"],"protocol":"classic"})",
      R"({"t_us":2000,"type":"group.epoch","group":"g","generation":1,"members":["A","B"]})",
  };
}

reports::InvariantContext context() {
  reports::InvariantContext c;
  c.at_least_once = {"A"};
  return c;
}

}  // namespace

TEST_CASE(
    "invariants: two live members owning one partition in one instant, with the instant's lines as "
    "the window") {
  auto lines = base_trace();
  lines.push_back(
      R"({"t_us":3000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]})");        // 5
  lines.push_back(R"({"t_us":3000,"type":"assignment","consumer":"B","owned":["t-1"]})");  // 6
  lines.push_back(R"({"t_us":4000,"type":"assignment","consumer":"A","owned":["t-0"]})");  // 7
  lines.push_back(R"({"t_us":5000,"type":"run.end","events":9})");                         // 8
  const auto v = reports::check_invariants(lines, context());
  REQUIRE(v.size() == 1);
  CHECK(v[0].property == "exclusive-ownership");
  CHECK(v[0].t_us == 3000);
  CHECK(v[0].detail ==
        "group g: partition t-1 owned by both A and B, live members of generation 1");
  // The instant at 3 ms is lines 5 and 6 (0-based); the window shows both, as fed.
  CHECK(v[0].first_line == 5);
  CHECK(v[0].last_line == 6);
  CHECK(v[0].window == std::vector<std::string>{lines[5], lines[6]});
}

TEST_CASE(
    "invariants: a commit past records never processed, then an offset going back; liveness at the "
    "end") {
  auto lines = base_trace();
  lines.push_back(
      R"({"t_us":3000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]})");  // 5
  lines.push_back(
      R"({"t_us":3000,"type":"records.fetched","consumer":"A","group":"g","batch":1,"count":5,)"
      R"("ranges":[{"partition":"t-0","first_offset":0,"last_offset":4}]})");  // 6
  lines.push_back(
      R"({"t_us":3100,"type":"records.processed","consumer":"A","group":"g","batch":1,"count":5})");  // 7
  lines.push_back(offset_commit(3200, 0, 5));  // 8: offsets 0..4 processed: fine
  lines.push_back(offset_commit(3300, 1, 8));  // 9: passes 5, 6, 7
  lines.push_back(
      offset_commit(3400, 2, 3));  // 10: back from 8 to 3 (the same consumer: no excuse)
  lines.push_back(R"({"t_us":3500,"type":"consumer.crash","consumer":"B"})");  // 11
  lines.push_back(
      R"({"t_us":3500,"type":"lag","group":"g","partition":"t-1","lag":20000,"log_end_offset":20000,"offset":0,"owner":"A","reason":"owner"})");  // 12
  lines.push_back(R"({"t_us":3600,"type":"assignment","consumer":"A","owned":["t-1"]})");  // 13
  lines.push_back(R"({"t_us":9000,"type":"run.end","events":15})");                        // 14
  reports::InvariantContext c = context();
  c.last_fault_end_us = 3500;
  c.liveness_bound_us = 5000;
  const auto v = reports::check_invariants(lines, c);
  REQUIRE(v.size() == 4);
  CHECK(v[0].property == "no-record-lost");
  CHECK(v[0].t_us == 3300);
  CHECK(
      v[0].detail ==
      "group g: committed offset 8 of t-0 passes record 5, which no member of the group processed");
  CHECK(v[0].first_line == 9);
  CHECK(v[0].last_line == 9);
  CHECK(v[0].window == std::vector<std::string>{lines[9]});
  CHECK(v[1].property == "monotonic-commits");
  CHECK(v[1].t_us == 3400);
  CHECK(v[1].detail == "group g: committed offset of t-0 went from 8 back to 3");
  // From the commit it goes back from to this one.
  CHECK(v[1].first_line == 9);
  CHECK(v[1].last_line == 10);
  CHECK(v[1].window == std::vector<std::string>{lines[9], lines[10]});
  // 9 s is 5.5 s after the last fault, past the 5 s bound: A alone owns t-1, not t-0, and t-1
  // ends with lag 20000 (more than 10000). The window: the last 12 lines before run.end.
  CHECK(v[2].property == "partitions-owned");
  CHECK(v[2].t_us == 9000);
  CHECK(v[2].detail ==
        "group g: partition t-0 has no live owner at the end of the run, 5 ms after the last fault "
        "(bound 5 ms)");
  CHECK(v[2].first_line == 0);
  CHECK(v[2].last_line == 13);
  CHECK(v[2].window == std::vector<std::string>(lines.begin() + 2, lines.begin() + 14));
  CHECK(v[3].property == "lag-drains");
  CHECK(v[3].detail == "group g: partition t-1 ends the run with lag 20000 (more than 10000)");
  CHECK(v[3].last_line == 13);
}

TEST_CASE(
    "invariants: on the trace bus, the sink finds what the checker finds over the trace read back, "
    "windows included") {
  // The coordinator that skips revocation (a test-only injected bug): two members own a
  // partition at once. Online, the sink formats each line into a few reused buffers and keeps
  // only the windows of what it reports.
  // With explore's seed 7 (`run --faults-seed 7`: network latency exponential, mean 4 ms, no
  // faults), o1 revokes orders-2,3 after o2's 11th poll() call (100 + 11 x 100.33 ms) has run
  // onPartitionsAssigned for them. (On the scenario's own 1 ms links o1 revokes them at 1,201 ms,
  // before that call at 1,203.63: no instant where both own them, so no violation to compare;
  // with poll() returning on time the call was at 1,200, docs/fidelity.md, finding 27.)
  auto doc = rsim::load_scenario_json(std::string(RSIM_SOURCE_DIR) +
                                      "/scenarios/explore/two-groups-short.json");
  doc["network"]["latency_ms"] = nlohmann::json{{"dist", "exponential"}, {"mean", 4.0}};
  const auto spec = rsim::parse_scenario(doc, "two-groups-short.json");
  rsim::ModelOptions bug;
  bug.bugs.skip_revocation = true;
  reports::InvariantContext c;
  for (const auto& consumer : spec.consumers) c.at_least_once.insert(consumer.name);
  reports::InvariantSink online(c, std::nullopt);
  rsim::trace::JsonlLinesSink lines;
  rsim::run_scenario(spec, "consumer", spec.seed, {&online, &lines}, rsim::trace::Detail::Full, {},
                     bug);
  const auto found = online.finish();
  const auto offline = reports::check_invariants(lines.lines(), c);
  REQUIRE(found.size() == 2);
  REQUIRE(offline.size() == found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    CHECK(found[i].property == "exclusive-ownership");
    CHECK(found[i].property == offline[i].property);
    CHECK(found[i].t_us == offline[i].t_us);
    CHECK(found[i].detail == offline[i].detail);
    CHECK(found[i].first_line == offline[i].first_line);
    CHECK(found[i].last_line == offline[i].last_line);
    CHECK(found[i].window == offline[i].window);
    CHECK(found[i].window.size() ==
          std::min<std::size_t>(12, found[i].last_line - found[i].first_line + 1));
  }
  // `run --faults-seed 7 --inject-bug skip-revocation --check-invariants --trace full` on this
  // scenario prints the window as lines 290..297 (1-based) of trace.jsonl, o2's call at 1,203.63
  // ms; the second violation is orders-3 at the same instant.
  CHECK(found[0].t_us == 1'203'630);
  CHECK(found[0].last_line + 1 == 297);
  CHECK(found[0].last_line + 2 - found[0].window.size() == 290);
  CHECK(found[1].t_us == 1'203'630);
}
