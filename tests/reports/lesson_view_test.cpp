// The report as a lesson (issue 35) on the hand-written eager trace: the partition view's rows,
// owners and gaps at the microsecond, the "watch for" notes of a critical path, readable times,
// the glossary's tooltips, and what report.html carries of them.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "report_fixture.hpp"
#include "reports/html_report.hpp"
#include "reports/lesson_view.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/sequence.hpp"
#include "reports/summary.hpp"
#include "reports/timeline.hpp"

namespace lesson = reports::lesson;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

// A (lane 0) owns orders-0..2 from 1.005 s; B joins; A commits before revocation at 6.048 s and
// gives all three up at 6.050 s (eager); A gets orders-0..1 and B orders-2 at 6.054 s; B crashes
// at 8 s and nobody takes orders-2 over before the run ends at 10 s.
TEST_CASE("lesson: partition rows of an eager rebalance, with their owners and gaps") {
  const auto t = reports::build_timeline(testing::kEagerTrace, testing::eager_summary());
  const auto rows = lesson::partition_rows(t);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].partition == "orders-0");
  CHECK(rows[2].partition == "orders-2");
  CHECK(rows[0].final_owner == "A");
  CHECK(rows[1].final_owner == "A");
  CHECK(rows[2].final_owner == "");  // summary's final_assignment: {"A": ["orders-0", "orders-1"]}
  struct Want {
    std::int64_t from, to;
    int owner;
    bool processed;
    const char* why;
  };
  // The gaps are the summary's own intervals (not_processed_ms_by_partition: 9.0 ms for
  // orders-0): A goes on processing while it commits before the revocation (6.048 s); the
  // partition stops being processed when onPartitionsRevoked runs and gives it up (6.050 s).
  const std::vector<Want> zero{
      {1000000, 1005000, -1, false, "no owner"},  // A started, not yet assigned
      {1005000, 6050000, 0, true, ""},            // A processes, commits first
      {6050000, 6054000, -1, false, "no owner"},  // the eager stop
      {6054000, 10000000, 0, true, ""}};
  REQUIRE(rows[0].segments.size() == zero.size());
  for (std::size_t i = 0; i < zero.size(); ++i) {
    INFO("segment " << i);
    CHECK(rows[0].segments[i].start_us == zero[i].from);
    CHECK(rows[0].segments[i].end_us == zero[i].to);
    CHECK(rows[0].segments[i].owner == zero[i].owner);
    CHECK(rows[0].segments[i].processed == zero[i].processed);
    CHECK(rows[0].segments[i].why == zero[i].why);
  }
  REQUIRE(rows[2].segments.size() == 5);
  CHECK(rows[2].segments[3].owner == 1);  // B from 6.054 s to its crash
  CHECK(rows[2].segments[3].start_us == 6054000);
  CHECK(rows[2].segments[3].end_us == 8000000);
  CHECK(!rows[2].segments[4].processed);  // A still owns partitions: orders-2 waits to the end
  CHECK(rows[2].segments[4].why == "its owner dead");
  CHECK(rows[2].segments[4].start_us == 8000000);
  CHECK(rows[2].segments[4].end_us == 10000000);

  // Not processed over time: 3 from A's start to its assignment, 3 from the revocation to the
  // new assignment, then orders-2 alone from B's crash on.
  const auto steps = lesson::not_processed_steps(rows);
  const std::vector<std::pair<std::int64_t, int>> want{
      {0, 0}, {1000000, 3}, {1005000, 0}, {6050000, 3}, {6054000, 0}, {8000000, 1}, {10000000, 0}};
  CHECK(steps == want);
}

TEST_CASE("lesson: watch-for notes name the wait of each critical step and its config") {
  const auto rb =
      nlohmann::ordered_json::parse(R"({"duration_ms": 2928.0, "critical_path": {"steps": [
      {"t_us": 3126000, "actor": "coordinator", "event": "group.state", "what": "PreparingRebalance"},
      {"t_us": 6046000, "actor": "A", "event": "rpc", "what": "Heartbeat request", "causes": {"heartbeat_wait_ms": 2920.0}},
      {"t_us": 6048000, "actor": "A", "event": "rpc", "what": "Heartbeat response", "causes": {"network_ms": 2.0}},
      {"t_us": 6050000, "actor": "A", "event": "callback", "what": "onPartitionsRevoked end", "causes": {"callback_ms": 0.0}},
      {"t_us": 6054000, "actor": "B", "event": "rpc", "what": "SyncGroup response",
       "causes": {"poll_wait_ms": 1500.5, "network_ms": 0.5}, "waited_for": {"actor": "B", "what": "SyncGroup request"}}]}})");
  const auto notes = lesson::watch_notes(rb, false);
  REQUIRE(notes.size() == 3);  // the 0 ms callback is no lesson
  CHECK(notes[0].t_us == 6046000);
  CHECK(notes[0].cause == "heartbeat_wait_ms");
  CHECK(notes[0].text ==
        "A learns of the rebalance only with its next heartbeat: 2.92 s of waiting "
        "(heartbeat.interval.ms).");
  CHECK(notes[1].text == "2 ms on the network.");
  CHECK(notes[2].cause == "poll_wait_ms");
  CHECK(notes[2].text ==
        "B acts only in its next poll(), after processing its batch: 1.50 s (max.poll.interval.ms "
        "bounds it).");
  // KIP-848: the coordinator's heartbeat interval.
  CHECK(lesson::watch_notes(rb, true)[0].text.find("(group.consumer.heartbeat.interval.ms)") !=
        std::string::npos);
  CHECK(lesson::watch_notes(nlohmann::ordered_json::object(), false).empty());
}

// The rebalance the step control opens (issue 35): the lesson's, else the longest after start-up.
TEST_CASE(
    "lesson: the step control opens the lesson's rebalance, else the longest that is not a "
    "start-up") {
  reports::Timeline tl;
  const auto rebalance = [](int index, const char* group, std::int64_t start_us,
                            std::int64_t end_us) {
    reports::Rebalance r;
    r.index = index;
    r.group = group;
    r.start_us = start_us;
    r.end_us = end_us;
    return r;
  };
  // g's start-up (6 s, the longest), h's start-up (4 s), g's join (30 ms), h's leave (2 s), g's
  // second join (2 s: a tie with h's leave, the earlier wins).
  tl.rebalances = {rebalance(1, "g", 1'000'000, 7'000'000), rebalance(2, "h", 1'500'000, 5'500'000),
                   rebalance(3, "g", 10'000'000, 10'030'000),
                   rebalance(4, "h", 12'000'000, 14'000'000),
                   rebalance(5, "g", 20'000'000, 22'000'000)};
  CHECK(reports::lesson::opened_rebalance(tl, 40) == 3);  // R4: h's leave
  CHECK(reports::lesson::opened_rebalance(tl, 3) == 2);   // only R1..R3 shown: R3, g's join
  CHECK(reports::lesson::opened_rebalance(tl, 2) == 0);   // only start-ups: the longest, R1
  // A lesson names the first rebalance that starts at or after its lesson_rebalance_from_ms.
  tl.summary["produced_by"]["lesson_rebalance_from_ms"] = 10000;
  CHECK(reports::lesson::opened_rebalance(tl, 40) == 2);  // R3 starts at 10 s
  tl.summary["produced_by"]["lesson_rebalance_from_ms"] = 10001;
  CHECK(reports::lesson::opened_rebalance(tl, 40) == 3);
  CHECK(reports::lesson::opened_rebalance(tl, 3) == 2);  // R4 is not shown: the default
  tl.summary["produced_by"]["lesson_rebalance_from_ms"] = 1000;
  CHECK(reports::lesson::opened_rebalance(tl, 40) == 0);  // the start-up, when the lesson says so
  tl.rebalances.clear();
  CHECK(reports::lesson::opened_rebalance(tl, 40) == 0);
}

TEST_CASE("lesson: readable times and short sentences") {
  CHECK(lesson::readable_times("from 2.706736 s to 13.051320 s (10261.454 ms)") ==
        "from 2.707 s to 13.051 s (10.26 s)");
  CHECK(lesson::readable_times("93.924 ms, 3.5 ms, 0 ms, 1,478.057 ms, 6.048 s, 1 s.") ==
        "94 ms, 3.5 ms, 0 ms, 1.48 s, 6.048 s, 1 s.");
  CHECK(lesson::readable_times("orders-0..5 at epoch 3") == "orders-0..5 at epoch 3");
  const auto s = lesson::short_sentences(
      "Rebalance 2 of group g (generation 2): from 3.126 s to 6.054 s (2928 ms), trigger \"member "
      "B joined\". "
      "B started at 3.121 s; A learned of it from its Heartbeat response at 6.048000 s");
  REQUIRE(s.size() == 3);
  CHECK(s[0] ==
        "Rebalance 2 of group g (generation 2): from 3.126 s to 6.054 s (2.93 s), trigger \"member "
        "B joined\".");
  CHECK(s[1] == "B started at 3.121 s.");
  CHECK(s[2] == "A learned of it from its Heartbeat response at 6.048 s.");
}

TEST_CASE("lesson: glossary tooltips on configs, APIs and errors, escaped") {
  const std::string g =
      lesson::glossed("A <waits> for heartbeat.interval.ms; JoinGroup got MEMBER_ID_REQUIRED.");
  CHECK(g.starts_with(
      "A &lt;waits&gt; for <abbr class=\"g\" title=\"Classic: how often a member heartbeats;"));
  CHECK(count(g, "<abbr class=\"g\"") == 3);
  CHECK(g.ends_with(">MEMBER_ID_REQUIRED</abbr>."));
  // A longer config is one term, not its tail.
  CHECK(count(lesson::glossed("group.consumer.heartbeat.interval.ms"), "<abbr") == 1);
  CHECK(lesson::glossed("xheartbeat.interval.ms") == "xheartbeat.interval.ms");
  for (const auto term : lesson::glossary_terms()) CHECK(!lesson::glossary(term).empty());
  CHECK(lesson::glossary("no such term").empty());
}

TEST_CASE("sequence: JoinGroup MEMBER_ID_REQUIRED is a normal round trip, not an error") {
  std::string trace = testing::kEagerTrace;
  const std::string b_join = "{\"t_us\":3123000,\"type\":\"rpc\",\"dir\":\"send\",\"from\":\"B\"";
  const auto at = trace.find(b_join);
  REQUIRE(at != std::string::npos);
  trace.insert(at,
               "{\"t_us\":3122000,\"type\":\"rpc\",\"dir\":\"send\",\"from\":\"B\",\"to\":\"broker-"
               "0\",\"api\":\"JoinGroup\",\"id\":0}\n"
               "{\"t_us\":3122500,\"type\":\"rpc\",\"dir\":\"recv\",\"from\":\"broker-0\",\"to\":"
               "\"B\",\"api\":\"JoinGroup\",\"id\":0,\"error\":\"MEMBER_ID_REQUIRED\"}\n"
               "{\"t_us\":6048000,\"type\":\"rpc\",\"dir\":\"send\",\"from\":\"A\",\"to\":\"broker-"
               "0\",\"api\":\"Heartbeat\",\"id\":9}\n"
               "{\"t_us\":6049000,\"type\":\"rpc\",\"dir\":\"recv\",\"from\":\"broker-0\",\"to\":"
               "\"A\",\"api\":\"Heartbeat\",\"id\":9,\"error\":\"UNKNOWN_MEMBER_ID\"}\n");
  const auto t = reports::build_timeline(trace, testing::eager_summary());
  const auto seq = reports::sequence_between(t, "g", 3000000, 6100000, 100);
  int normal = 0, errors = 0;
  for (const auto& row : seq.rows) {
    if (row.kind != reports::SequenceRow::Kind::Response) continue;
    if (row.text == "JoinGroup MEMBER_ID_REQUIRED") normal += row.error ? 0 : 1;
    errors += row.error ? 1 : 0;
  }
  CHECK(normal == 1);
  CHECK(errors == 2);  // REBALANCE_IN_PROGRESS and UNKNOWN_MEMBER_ID stay errors
  CHECK(reports::normal_round_trip("JoinGroup", "MEMBER_ID_REQUIRED"));
  CHECK(!reports::normal_round_trip("SyncGroup", "MEMBER_ID_REQUIRED"));
}

TEST_CASE(
    "html: the lesson's description, partition view, step control and glossary, numbers from the "
    "summary") {
  auto summary = testing::eager_summary();
  summary["produced_by"] = {{"simulator", "rebalance-sim"},
                            {"scenario_description", "B joins: watch A stop (eager)."}};
  summary["metrics"]["not_processed_ms_by_partition"] = {
      {"orders-0", 9.0}, {"orders-1", 9.0}, {"orders-2", 2009.0}};
  summary["rebalances"][1]["critical_path"] =
      nlohmann::ordered_json::parse(R"({"causes": {"heartbeat_wait_ms": 2920.0},
      "steps": [{"t_us": 3126000, "actor": "coordinator", "event": "group.state", "what": "PreparingRebalance"},
                {"t_us": 6046000, "actor": "A", "event": "rpc", "what": "Heartbeat request", "causes": {"heartbeat_wait_ms": 2920.0}}]})");
  const auto t = reports::build_timeline(testing::kEagerTrace, summary);
  const std::string html = reports::render_html_report({t});
  CHECK(html == reports::render_html_report({t}));  // the same bytes
  CHECK(count(html, "<p class=\"lesson\" id=\"description\">B joins: watch A stop (eager).</p>") ==
        1);
  CHECK(html.find("id=\"description\"") < html.find("<h2>Verdict</h2>"));
  // One row per partition, its owner at the end and the summary's number, which its gaps add up to.
  CHECK(count(html, "<g class=\"prow\"") == 3);
  CHECK(count(html,
              "data-partition=\"orders-0\" data-final-owner=\"A\" data-gaps-us=\"9000\" "
              "data-not-processed-ms=\"9.0\"") == 1);
  CHECK(count(html,
              "data-partition=\"orders-2\" data-final-owner=\"\" data-gaps-us=\"2009000\" "
              "data-not-processed-ms=\"2009.0\"") == 1);
  CHECK(count(html,
              "class=\"po\" data-owner=\"B\" data-start-us=\"6054000\" data-end-us=\"8000000\"") ==
        1);
  // One cursor per drawing of the variant, a step control, the critical path in the sequence view.
  CHECK(count(html, "<line class=\"cursor\"") == 2);
  CHECK(count(html, "<div class=\"stepper\" data-variant=\"classic-eager\">") == 1);
  // On the critical path: the coordinator's PreparingRebalance note and A's Heartbeat request.
  CHECK(count(html, "<g class=\"row crit\" data-i=") == 2);
  CHECK(count(html, "class=\"msg req crit\"") == 1);
  CHECK(count(html,
              "<li data-t-us=\"6046000\" data-cause=\"heartbeat_wait_ms\"><b>Watch for</b>") == 1);
  // Every metric of the summary table has its tooltip; the states of the legend too.
  for (const char* key : {"rebalance_count", "stop_the_world_ms", "not_processed_partition_ms",
                          "fatal_errors", "final_assignment"})
    CHECK(count(html, std::string("\">") + key + "</abbr></td>") == 1);
  for (const char* state :
       {"PreparingRebalance", "CompletingRebalance", "assigning", "reconciling"})
    CHECK(count(html, std::string("\">") + state + "</abbr></span>") == 1);
  CHECK(count(html, "<h2>Glossary</h2>") == 1);
  // The narrative in short sentences with readable times.
  CHECK(count(html, "<span class=\"s\">B started at 3.121 s.</span>") == 1);
  CHECK(count(html, "https://") == 0);
  CHECK(count(html, "<script src") == 0);
}

namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Adjacent intervals joined (a row's hatched stretches may change owner or reason at an instant).
Intervals joined(const Intervals& in) {
  Intervals out;
  for (const auto& [a, b] : in) {
    if (!out.empty() && out.back().second == a)
      out.back().second = b;
    else
      out.emplace_back(a, b);
  }
  return out;
}

}  // namespace

// Issue 35: the partition view's gaps are exactly the intervals summary.json's not_processed
// metrics add up. Each lesson runs in-process as `run` runs it (standard trace level): the live
// SummarySink keeps its not-processed intervals; the report's timeline is built from the
// standard trace text afterwards, as `report` does. Every row's hatched stretches are those
// intervals, to the microsecond; the rendered rects carry them; their sum is
// not_processed_ms_by_partition.
TEST_CASE(
    "lesson: the partition view's gaps are the summary's not-processed intervals, for every "
    "lesson") {
  std::size_t gaps_seen = 0;
  for (const char* lesson_name :
       {"what-is-a-rebalance", "eager-stop-the-world", "cooperative-two-rebalances",
        "kip848-heartbeats", "static-rolling-deploy", "slow-consumer-max-poll"}) {
    const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) +
                                               "/scenarios/lessons/" + lesson_name + ".json");
    for (const auto& protocol : spec.protocols) {
      INFO(std::string(lesson_name) << " " << protocol);
      reports::SummaryInputs in;
      in.protocol = protocol;
      in.seed = spec.seed;
      in.not_processed_gaps = true;
      in.produced_by = {{"simulator", "rebalance-sim"}, {"version", "test"}, {"commit", "test"}};
      reports::SummarySink live(in);
      rsim::trace::JsonlLinesSink kept;
      kept.set_level(rsim::trace::Detail::Standard);
      rsim::run_scenario(spec, protocol, spec.seed, {&live, &kept}, rsim::trace::Detail::Standard);
      const auto summary = live.finish();
      const auto native = live.not_processed_gaps();
      std::string text;
      for (const auto& line : kept.lines()) text += line + "\n";
      const auto tl = reports::build_timeline(text, reports::parse_ordered(summary.dump(2)));
      REQUIRE(tl.not_processed_exact);
      const auto rows = lesson::partition_rows(tl);
      std::map<std::string, Intervals> want;
      for (const auto& g : native) want[g.partition] = g.intervals;
      const auto& by_partition = summary["metrics"]["not_processed_ms_by_partition"];
      for (const auto& row : rows) {
        INFO("partition " << row.partition);
        Intervals drawn;
        for (const auto& s : row.segments)
          if (!s.processed) drawn.emplace_back(s.start_us, s.end_us);
        CHECK(joined(drawn) == joined(want[row.partition]));
        std::int64_t sum = 0;
        for (const auto& [a, b] : want[row.partition]) sum += b - a;
        const double ms =
            by_partition.contains(row.partition) ? by_partition[row.partition].get<double>() : 0.0;
        CHECK(sum == static_cast<std::int64_t>(std::llround(ms * 1000)));
        gaps_seen += want[row.partition].size();
      }
      CHECK(rows.size() == tl.partitions.size());
      // The playground's path: the run's own intervals handed over, the trace read once.
      const auto given = lesson::partition_rows(
          reports::build_timeline(text, reports::parse_ordered(summary.dump(2)), native));
      REQUIRE(given.size() == rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) {
        REQUIRE(given[r].segments.size() == rows[r].segments.size());
        for (std::size_t k = 0; k < rows[r].segments.size(); ++k) {
          CHECK(given[r].segments[k].start_us == rows[r].segments[k].start_us);
          CHECK(given[r].segments[k].end_us == rows[r].segments[k].end_us);
          CHECK(given[r].segments[k].processed == rows[r].segments[k].processed);
        }
      }
      // report.html's rects: one hatched rect per stretch, at the same microseconds.
      const std::string html = reports::render_html_report({tl});
      std::size_t np_rects = 0;
      for (const auto& row : rows)
        for (const auto& s : row.segments)
          if (!s.processed) {
            ++np_rects;
            CHECK(html.find(fmt::format(
                      "class=\"np\" data-owner=\"{}\" data-start-us=\"{}\" data-end-us=\"{}\"",
                      s.owner >= 0 ? tl.lanes[static_cast<std::size_t>(s.owner)].consumer : "",
                      s.start_us, s.end_us)) != std::string::npos);
          }
      CHECK(count(html, "class=\"np\"") == np_rects);
    }
  }
  CHECK(gaps_seen > 20);  // every lesson has gaps to compare
}
