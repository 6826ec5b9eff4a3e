// compare: the simulator against a recorded real run, as pure functions of two traces
// (reports/analyses/compare.hpp), and the exit codes of `rebalance-sim compare`.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/analyses/compare.hpp"
#include "reports/compare_report.hpp"
#include "reports/timeline.hpp"
#include "tools/commands/compare.hpp"

namespace {

using nlohmann::json;
using rsim::compare::compare_variant;
using rsim::compare::facts_of;
using rsim::compare::parse_jsonl;

std::vector<json> trace(const std::string& text) {
  return parse_jsonl(text, "test");
}

// A's assignment at 3048 ms, revocation at 6050 ms; B joins at 6054 ms; two group generations.
const char* kSim = R"({"t_us":0,"type":"consumer.start","consumer":"A"}
{"t_us":3047000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":1,"members":[{"consumer":"A","assignment":["t-1","t-0"]}]}
{"t_us":3048000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]}
{"t_us":3048000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"}
{"t_us":3100000,"type":"records.fetched","consumer":"A","ranges":[{"partition":"t-0","first_offset":0,"last_offset":9}]}
{"t_us":5000000,"type":"consumer.start","consumer":"B"}
{"t_us":6050000,"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":["t-0","t-1"],"phase":"start"}
{"t_us":6051000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":2,"members":[{"consumer":"A","assignment":["t-0"]},{"consumer":"B","assignment":["t-1"]}]}
{"t_us":6052000,"type":"record","record":"OffsetCommit","group":"g","topic":"t","partition_index":0,"committed_offset":10}
{"t_us":6053000,"type":"assignment","consumer":"A","owned":["t-0"]}
{"t_us":6054000,"type":"assignment","consumer":"B","owned":["t-1"]}
{"t_us":6054000,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-1"],"phase":"start"}
)";

}  // namespace

TEST_CASE(
    "compare: facts of a trace: callbacks, group records without OffsetCommit, final assignment, "
    "generations") {
  const auto f = facts_of(trace(kSim));
  REQUIRE(f.callbacks.size() == 3);
  CHECK(f.callbacks[0].t_us == 3048000);
  CHECK(f.callbacks[1].kind == "onPartitionsRevoked");
  REQUIRE(f.records.size() == 2);  // the OffsetCommit record is left aside
  CHECK(f.records[0].str() == "GroupMetadata epoch 1 [A:t-0,A:t-1]");
  CHECK(f.final_assignment == nlohmann::ordered_json({{"A", {"t-0"}}, {"B", {"t-1"}}}));
  CHECK(f.rebalances == 2);
  CHECK(f.duplicates == 0);
}

TEST_CASE("compare: a real run 149 ms late agrees under classic (±150 ms); 151 ms late does not") {
  const auto sim = facts_of(trace(kSim));
  auto shifted = [&](std::int64_t us) {
    auto t = trace(kSim);
    for (auto& e : t) e["t_us"] = e["t_us"].get<std::int64_t>() + us;
    return facts_of(t);
  };
  const auto ok = compare_variant("classic-eager", sim, {shifted(149000)}, {"real"}, {});
  CHECK(ok.passed());
  CHECK(ok.worst_deviation_us == 149000);
  const auto late = compare_variant("classic-eager", sim, {shifted(151000)}, {"real"}, {});
  CHECK_FALSE(late.passed());
  CHECK(late.failures().at(0) == "callback A onPartitionsAssigned [t-0,t-1] beyond ±150 ms");
  // the consumer protocol's default tolerance is ±400 ms
  CHECK(compare_variant("consumer", sim, {shifted(399000)}, {"real"}, {}).passed());
  CHECK_FALSE(compare_variant("consumer", sim, {shifted(401000)}, {"real"}, {}).passed());
  // two real runs: their spread is reported
  const auto two =
      compare_variant("classic-eager", sim, {shifted(10000), shifted(40000)}, {"r1", "r2"}, {});
  CHECK(two.passed());
  CHECK(two.spread_us == 30000);
}

TEST_CASE(
    "compare: a callback of other partitions, a missing record and redelivered offsets are "
    "differences") {
  const auto sim = facts_of(trace(kSim));
  std::string other = kSim;
  other.replace(other.find(R"("partitions":["t-1"],"phase")"), 28,
                R"("partitions":["t-0"],"phase")");
  other +=
      R"({"t_us":7000000,"type":"records.fetched","consumer":"B","ranges":[{"partition":"t-0","first_offset":5,"last_offset":12}]}
)";
  const auto c = compare_variant("classic-eager", sim, {facts_of(trace(other))}, {"real"}, {});
  CHECK_FALSE(c.passed());
  CHECK(c.callbacks_unmatched == 2);  // B's [t-1] only in sim, B's [t-0] only in real
  CHECK(c.duplicates_real == 5);      // offsets 5..9 of t-0 delivered twice
  const auto f = c.failures();
  CHECK(std::find(f.begin(), f.end(), "duplicates: sim 0 real 5 (beyond ±0)") != f.end());

  // Produced at 20 records/s in all, the ±150 ms of classic allow 3 duplicates either way (the
  // records produced in the tolerance); at 40/s, 6: then 0 against 5 agrees.
  auto produced = sim;
  produced.produced_per_sec = 20;
  const auto at20 =
      compare_variant("classic-eager", produced, {facts_of(trace(other))}, {"real"}, {});
  CHECK(at20.duplicates_tolerance == 3);
  CHECK_FALSE(at20.duplicates_equal);
  produced.produced_per_sec = 40;
  const auto at40 =
      compare_variant("classic-eager", produced, {facts_of(trace(other))}, {"real"}, {});
  CHECK(at40.duplicates_tolerance == 6);
  CHECK(at40.duplicates_equal);
  // Two runs 5 apart at ±3 (20/s): the simulator's 0 is run 2's outcome, a race.
  produced.produced_per_sec = 20;
  const auto race =
      compare_variant("classic-eager", produced, {facts_of(trace(other)), sim}, {"r1", "r2"}, {});
  CHECK(race.duplicates_equal);
  CHECK(std::find(race.races.begin(), race.races.end(), "duplicates: race: matches run 2") !=
        race.races.end());

  std::string fewer = kSim;
  const auto at = fewer.find(R"({"t_us":6051000)");
  fewer.erase(at, fewer.find('\n', at) + 1 - at);
  const auto r = compare_variant("classic-eager", sim, {facts_of(trace(fewer))}, {"real"}, {});
  CHECK_FALSE(r.records_equal);
  CHECK(r.first_record_difference ==
        "at record 2: sim GroupMetadata epoch 2 [A:t-0 B:t-1], real (none)");
}

TEST_CASE(
    "compare: records that differ from every run say where they depart from each (run 1 at "
    "record 2, where run 2 has the simulator's record; every run at record 3)") {
  // Three generations, one a second; run 1 gave generation 2 to B, run 2 generation 3.
  const auto records = [](const char* second, const char* third) {
    return fmt::format(
        R"({{"t_us":1000000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":1,"members":[{{"consumer":"A","assignment":["t-0"]}}]}}
{{"t_us":2000000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":2,"members":[{{"consumer":"{}","assignment":["t-0"]}}]}}
{{"t_us":3000000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":3,"members":[{{"consumer":"{}","assignment":["t-0"]}}]}}
)",
        second, third);
  };
  const auto sim = facts_of(trace(records("A", "A")));
  const auto run1 = facts_of(trace(records("B", "A")));
  const auto run2 = facts_of(trace(records("A", "B")));
  const auto c = compare_variant("classic-eager", sim, {run1, run2}, {"r1", "r2"}, {});
  CHECK_FALSE(c.records_equal);
  REQUIRE(c.record_departures.size() == 2);
  CHECK(c.record_departures[0].at == 2);
  CHECK(c.record_departures[1].at == 3);
  CHECK(rsim::compare::departures_line(c.record_departures) ==
        "records against each run: first differs from run 1 at record 2, run 2 at record 3; at "
        "record 2 run 2 has the simulator's record and run 1 does not (the runs decide it "
        "differently); it departs from every run at record 3: at record 3: sim GroupMetadata "
        "epoch 3 [A:t-0], run 2 GroupMetadata epoch 3 [B:t-0]");
  const auto lines = rsim::compare::summary_lines(c);
  CHECK(std::count(lines.begin(), lines.end(),
                   rsim::compare::departures_line(c.record_departures)) == 1);
  const auto j = rsim::compare::to_json("s", c);
  CHECK(j["records"]["departures"][1]["at_record"] == 3);
  // The verdict is the same as without the line: run 1's first difference.
  CHECK(c.first_record_difference ==
        "at record 2: sim GroupMetadata epoch 2 [A:t-0], run 1 GroupMetadata epoch 2 [B:t-0]");

  // Both runs part from the simulator at the same record: no run has its record there.
  const auto same = compare_variant("classic-eager", sim, {run1, run1}, {"r1", "r2"}, {});
  CHECK(rsim::compare::departures_line(same.record_departures) ==
        "records against each run: every run first differs at record 2");
  // Equal to one run (a race the simulator matches): no departures.
  const auto race = compare_variant("classic-eager", sim, {run1, sim}, {"r1", "r2"}, {});
  CHECK(race.records_equal);
  CHECK(race.record_departures.empty());
  // One run: nothing to say beyond the records line.
  const auto one = compare_variant("classic-eager", sim, {run1}, {"r1"}, {});
  CHECK(one.record_departures.empty());
}

TEST_CASE("compare: the command refuses a directory without a recorded variant (exit 2)") {
  const auto r = testing::run_cli(
      "compare scenarios/examples/two-consumers.json --real /nonexistent-dir", "compare-none");
  CHECK(r.code == 2);
  CHECK(r.err.find("no recorded variant") != std::string::npos);
}

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// kSim with the line starting `prefix` changed by `edit` (erased when it returns "").
std::string edited(std::string text, const std::string& prefix,
                   const std::function<std::string(std::string)>& edit) {
  const auto at = text.find(prefix);
  REQUIRE(at != std::string::npos);
  const auto end = text.find('\n', at) + 1;
  const std::string line = edit(text.substr(at, end - at));
  text.replace(at, end - at, line);
  return text;
}

std::string shifted_all(const std::string& text, std::int64_t us) {
  std::string out;
  for (auto& e : trace(text)) {
    e["t_us"] = e["t_us"].get<std::int64_t>() + us;
    out += e.dump() + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE(
    "compare --out: the side-by-side page links each matched callback and marks what is beyond or "
    "one-sided") {
  // real run 1: A's first onPartitionsAssigned 151 ms late (beyond ±150 ms), A owned a-0 before
  // (a partition the simulator never saw: it sorts first, yet t-0 keeps its colour), and an
  // onPartitionsLost the simulator does not have. Real run 2: everything 10 ms late, and B's
  // onPartitionsAssigned missing.
  std::string real1 = edited(kSim, R"({"t_us":3048000,"type":"callback")", [](std::string l) {
    return l.replace(l.find("3048000"), 7, "3199000");
  });
  real1 =
      R"({"t_us":1000000,"type":"assignment","consumer":"A","owned":["a-0"]})"
      "\n" +
      real1 +
      R"({"t_us":9000000,"type":"callback","consumer":"A","callback":"onPartitionsLost","partitions":["t-0"],"phase":"start"})"
      "\n";
  const std::string real2 = shifted_all(edited(kSim, R"({"t_us":6054000,"type":"callback")",
                                               [](const std::string&) { return std::string(); }),
                                        10000);
  const auto c =
      compare_variant("classic-eager", facts_of(trace(kSim)),
                      {facts_of(trace(real1)), facts_of(trace(real2))}, {"r1", "r2"}, {});
  CHECK(c.deviations == 5);         // A assigned, A revoked in both runs; B assigned in run 1
  CHECK(c.deviations_beyond == 1);  // A assigned in run 1: +151 ms
  const auto summary = nlohmann::ordered_json{{"protocol", "classic-eager"}};
  auto page = [&] {
    std::vector<reports::Timeline> real{reports::build_timeline(real1, summary),
                                        reports::build_timeline(real2, summary)};
    auto v = rsim::cli::side_by_side(c, reports::build_timeline(kSim, summary), std::move(real));
    v.table_text = rsim::compare::render_table("t", c);
    return reports::render_side_by_side("t", {v});
  };
  const std::string html = page();
  CHECK(html == page());                            // the same bytes for the same inputs
  CHECK(count_of(html, "<g class=\"lane\"") == 6);  // A and B, each: sim, real 1, real 2
  for (const char* label :
       {">A · sim<", ">A · real 1<", ">A · real 2<", ">B · sim<", ">B · real 1<", ">B · real 2<"})
    CHECK_MESSAGE(count_of(html, label) == 1, label);
  CHECK(count_of(html, "data-deviation=\"out\" data-run=") == c.deviations_beyond);
  CHECK(count_of(html, "data-deviation=\"in\" data-run=") == c.deviations - c.deviations_beyond);
  CHECK(count_of(html, "data-only=\"sim\" data-run=\"2\"") == 1);   // B's callback, not in run 2
  CHECK(count_of(html, "data-only=\"real\" data-run=\"1\"") == 1);  // A's onPartitionsLost
  CHECK(count_of(html, ">+151 ms</text>") == 1);  // the deviation beyond, labelled
  CHECK(html.find("deviation +151 ms (beyond ±150 ms)") != std::string::npos);
  CHECK(html.find("deviation +10 ms (within ±150 ms)") != std::string::npos);
  // the link of the late callback runs from the simulator's x (3048 ms of 9000 ms) to the real
  // one's
  const auto x = [](double t_us) { return 1100.0 * t_us / 9000000.0; };
  CHECK(html.find(fmt::format("data-deviation=\"out\" data-run=\"1\" data-dev-us=\"151000\" "
                              "x1=\"{:.2f}\" x2=\"{:.2f}\"",
                              x(3048000), x(3199000))) != std::string::npos);
  // the compare table is in the page, its beyond cell highlighted, its verdict last
  CHECK(html.find("<td class=\"out\">+151</td>") != std::string::npos);
  // A's onPartitionsLost is only in run 1, and B's assignment only in run 1 and the simulator:
  // events the two real runs decide differently, each shown as the race the simulator takes
  CHECK(html.find("<td>race: matches run 2</td>") != std::string::npos);
  CHECK(html.find("<td>race: matches run 1</td>") != std::string::npos);
  CHECK(html.find("1 of 5 deviations beyond ±150 ms") != std::string::npos);
  CHECK(html.find("<li class=\"verdict differs\">=&gt; DIFFERS: ") != std::string::npos);
  // one partition, one colour, in every lane
  for (const char* p : {"t-0", "t-1"}) {
    std::set<std::string> fills;
    const std::regex re(std::string("fill=\"(hsl\\([^\"]*\\))\" class=\"own\"><title>") + p + ":");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
         ++it)
      fills.insert((*it)[1]);
    CHECK_MESSAGE(fills.size() == 1, p);
  }
}

TEST_CASE(
    "compare --out writes report.html and compare.json, the same bytes twice, as many red links as "
    "compare counts") {
  namespace fs = std::filesystem;
  const fs::path base =
      fs::temp_directory_path() / ("rebalance-sim-compare-out-" + std::to_string(getpid()));
  fs::remove_all(base);
  testing::remove_at_exit(base);
  const std::string args =
      "compare scenarios/examples/two-consumers.json --real fidelity/real/two-consumers "
      "--real fidelity/real/two-consumers/run-2 --out ";
  const auto a = testing::run_cli(args + (base / "a").string(), "compare-out-a");
  const auto b = testing::run_cli(args + (base / "b").string(), "compare-out-b");
  REQUIRE(a.code <= 1);  // 0 agrees, 1 differs: both write the page
  CHECK(a.code == b.code);
  const std::string html = testing::read_file(base / "a" / "report.html");
  CHECK(html == testing::read_file(base / "b" / "report.html"));
  CHECK(testing::read_file(base / "a" / "compare.json") ==
        testing::read_file(base / "b" / "compare.json"));
  const auto report = nlohmann::json::parse(testing::read_file(base / "a" / "compare.json"));
  REQUIRE(report.size() == 1);
  CHECK(count_of(html, "data-deviation=\"out\" data-run=") ==
        report[0]["deviations_beyond_tolerance"].get<std::size_t>());
  CHECK(count_of(html, "data-deviation=\"in\" data-run=") ==
        report[0]["deviations"].get<std::size_t>() -
            report[0]["deviations_beyond_tolerance"].get<std::size_t>());
  CHECK(count_of(html, "<g class=\"lane\"") == 2 * 3);
  CHECK(a.out.find("wrote " + (base / "a" / "report.html").string()) != std::string::npos);
  fs::remove_all(base);
}

TEST_CASE(
    "compare --out refuses a file for OUT, and a malformed real trace is bad input (exit 2)") {
  namespace fs = std::filesystem;
  const fs::path base =
      fs::temp_directory_path() / ("rebalance-sim-compare-bad-" + std::to_string(getpid()));
  fs::remove_all(base);
  testing::remove_at_exit(base);
  fs::create_directories(base / "real" / "classic-eager");
  std::ofstream(base / "file") << "x";
  const auto r = testing::run_cli(
      "compare scenarios/examples/two-consumers.json --real fidelity/real/two-consumers --out " +
          (base / "file").string(),
      "compare-out-file");
  CHECK(r.code == 2);
  CHECK(r.err.find("--out must name a directory") != std::string::npos);
  std::ofstream(base / "real" / "classic-eager" / "trace.jsonl")
      << "{\"t_us\":1,\"type\":\"run.start\"}\n{bad\n";
  const auto m = testing::run_cli(
      "compare scenarios/examples/two-consumers.json --real " + (base / "real").string(),
      "compare-bad-trace");
  CHECK(m.code == 2);
  CHECK(m.err.find("line 2: not valid json") != std::string::npos);
  fs::remove_all(base);
}

namespace {

/// kSim with everything `us` later, and B's onPartitionsAssigned (6054 ms in kSim) at `b_us`.
std::string with_b_at(std::int64_t us, std::int64_t b_us) {
  return shifted_all(edited(kSim, R"({"t_us":6054000,"type":"callback")",
                            [&](std::string l) {
                              return l.replace(l.find("6054000"), 7, std::to_string(b_us - us));
                            }),
                     us);
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE(
    "compare: a race: the real runs differ beyond the tolerance on a callback and the simulator "
    "has one outcome") {
  const auto sim = facts_of(trace(kSim));
  // run 1: everything +10 ms; run 2: everything +20 ms and B's assignment a heartbeat interval
  // later (11054 ms, +5000 ms): the runs are 4990 ms apart on it, the simulator is run 1
  const auto run1 = facts_of(trace(shifted_all(kSim, 10000)));
  const auto run2 = facts_of(trace(with_b_at(20000, 11054000)));
  const auto c = compare_variant("classic-eager", sim, {run1, run2}, {"r1", "r2"}, {});
  CHECK(c.passed());
  REQUIRE(c.races.size() == 1);
  CHECK(c.races[0] == "callback B onPartitionsAssigned [t-1]: race: matches run 1");
  const auto b = std::find_if(c.callbacks.begin(), c.callbacks.end(),
                              [](const auto& r) { return r.callback.consumer == "B"; });
  REQUIRE(b != c.callbacks.end());
  CHECK(b->within);
  CHECK(b->race == "race: matches run 1");
  CHECK(c.deviations == 6);
  CHECK(c.deviations_beyond == 1);  // run 2's +5000 ms is drawn red ...
  CHECK(c.worst_deviation_us ==
        20000);  // ... but is the race's other outcome, not the simulator's deviation
  CHECK(c.spread_us == 11054000 - 6064000);  // 4990 ms
  CHECK(rsim::compare::render_table("t", c).find("  race: matches run 1\n") != std::string::npos);
  CHECK(rsim::compare::to_json("t", c)["races"].size() == 1);

  // the simulator has neither outcome (run 1 +200 ms, run 2 +5000 ms): a difference; the other
  // callbacks and records (run 1 +200 ms, run 2 +20 ms: 180 ms apart) are races it takes as run 2
  const auto late = compare_variant(
      "classic-eager", sim, {facts_of(trace(shifted_all(kSim, 200000))), run2}, {"r1", "r2"}, {});
  CHECK_FALSE(late.passed());
  CHECK(late.failures() ==
        std::vector<std::string>{"callback B onPartitionsAssigned [t-1] beyond ±150 ms"});
  CHECK(late.races.size() == 2 + 1);  // A's two callbacks, and the records
  CHECK(has(late.races, "callback A onPartitionsRevoked [t-0,t-1]: race: matches run 2"));

  // runs 100 ms apart (within the tolerance) are no race: +200 ms in run 2 is a plain difference
  const auto near = compare_variant(
      "classic-eager", sim,
      {facts_of(trace(shifted_all(kSim, 100000))), facts_of(trace(shifted_all(kSim, 200000)))},
      {"r1", "r2"}, {});
  CHECK(near.races.empty());
  CHECK(near.failures().size() == 3 + 1);  // three callbacks and the records, beyond in run 2
  CHECK(near.failures().back() ==
        "__consumer_offsets records differ: at record 1: GroupMetadata epoch 1 [A:t-0,A:t-1]: sim "
        "at 3047 ms, run 2 at 3247 ms "
        "(+200 ms), beyond ±150 ms");
}

TEST_CASE(
    "compare: a callback only some real runs have is a race; one all of them have and the "
    "simulator not, a difference") {
  const auto sim = facts_of(trace(kSim));
  const std::string lost =
      R"({"t_us":9000000,"type":"callback","consumer":"A","callback":"onPartitionsLost","partitions":["t-0"],"phase":"start"})"
      "\n";
  const auto one = compare_variant(
      "classic-eager", sim, {facts_of(trace(std::string(kSim) + lost)), sim}, {"r1", "r2"}, {});
  CHECK(one.passed());
  CHECK(one.races ==
        std::vector<std::string>{"callback A onPartitionsLost [t-0]: race: matches run 2"});
  CHECK(one.callbacks.size() == 4);
  // both runs have it, 100 ms apart: one row (not two), a difference
  const auto both =
      compare_variant("classic-eager", sim,
                      {facts_of(trace(std::string(kSim) + lost)),
                       facts_of(trace(std::string(kSim) + shifted_all(lost, 100000)))},
                      {"r1", "r2"}, {});
  CHECK(both.callbacks.size() == 4);
  CHECK(both.races.empty());
  CHECK(both.failures() ==
        std::vector<std::string>{"callback A onPartitionsLost [t-0] only in the real run"});
  // with one real run there is no race
  CHECK_FALSE(
      compare_variant("classic-eager", sim, {facts_of(trace(std::string(kSim) + lost))}, {"r1"}, {})
          .passed());
}

TEST_CASE(
    "compare: records are matched by time too: a record 151 ms late differs under classic (±150 "
    "ms), 149 ms agrees") {
  const auto sim = facts_of(trace(kSim));
  const auto record_late = [](std::int64_t us) {
    return facts_of(trace(edited(kSim, R"({"t_us":6051000)", [us](std::string l) {
      return l.replace(l.find("6051000"), 7, std::to_string(6051000 + us));
    })));
  };
  CHECK(compare_variant("classic-eager", sim, {record_late(149000)}, {"r"}, {}).passed());
  const auto c = compare_variant("classic-eager", sim, {record_late(151000)}, {"r"}, {});
  CHECK(c.records_matched == 2);
  CHECK(c.records_beyond == 1);
  CHECK_FALSE(c.records_equal);
  CHECK(c.failures() ==
        std::vector<std::string>{"__consumer_offsets records differ: at record 2: GroupMetadata "
                                 "epoch 2 [A:t-0 B:t-1]: sim at 6051 ms, "
                                 "real at 6202 ms (+151 ms), beyond ±150 ms"});
  // the consumer protocol's ±400 ms: a KIP-848 leave record 1.8 s late (issue 40's poll-timeout
  // leave) differs
  CHECK(compare_variant("consumer", sim, {record_late(399000)}, {"r"}, {}).passed());
  CHECK_FALSE(compare_variant("consumer", sim, {record_late(1800000)}, {"r"}, {}).passed());
}

TEST_CASE(
    "compare: records, final assignment, rebalances and duplicates: the simulator equal to run 2 "
    "where run 1 differs is a race") {
  const auto sim = facts_of(trace(kSim));
  // run 1: no generation-2 record (one rebalance fewer), B ends up owning both partitions, and
  // t-0's offsets 5..9 are delivered twice
  std::string other =
      edited(kSim, R"({"t_us":6051000)", [](const std::string&) { return std::string(); });
  other += R"({"t_us":7000000,"type":"assignment","consumer":"B","owned":["t-0","t-1"]}
{"t_us":7000000,"type":"assignment","consumer":"A","owned":[]}
{"t_us":7100000,"type":"records.fetched","consumer":"B","ranges":[{"partition":"t-0","first_offset":5,"last_offset":9}]}
)";
  const auto run1 = facts_of(trace(other));
  const auto alone = compare_variant("classic-eager", sim, {run1}, {"r1"}, {});
  CHECK(alone.failures().size() == 4);  // records, final assignment, rebalances 2/1, duplicates 0/5
  const auto c = compare_variant("classic-eager", sim, {run1, sim}, {"r1", "r2"}, {});
  CHECK(c.passed());
  CHECK(c.races == std::vector<std::string>{
                       "__consumer_offsets records: race: matches run 2 (otherwise at record 2: "
                       "sim GroupMetadata epoch 2 [A:t-0 B:t-1], run 1 (none))",
                       "final assignment: race: matches run 2", "rebalances: race: matches run 2",
                       "duplicates: race: matches run 2"});
  CHECK(c.rebalances_real == 1);  // run 1's, printed as they are
  CHECK(c.duplicates_real == 5);
}

namespace {

// A share group (KIP-932), as both the simulator and the oracle's ShareConsumerApp write it.
// jobs-0 30..32 acquired at 6200 ms; 30 RELEASEd (AVAILABLE), 31 ACCEPTed, 32 REJECTed
// (ARCHIVED); 30 acquired again with delivery count 2 and RELEASEd at the limit of 2 (ARCHIVED);
// 33's lock times out (a broker transition, no acknowledgement: not counted) and 33 comes back
// with delivery count 2 and is ACCEPTed.
const char* kShare =
    R"({"t_us":6200000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"AVAILABLE","to":"ACQUIRED","first_offset":30,"last_offset":32,"records":3,"delivery_count":1,"cause":"fetch"}
{"t_us":6205000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"ACQUIRED","to":"AVAILABLE","first_offset":30,"last_offset":30,"records":1,"delivery_count":1,"cause":"RELEASE"}
{"t_us":6205000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"ACQUIRED","to":"ACKNOWLEDGED","first_offset":31,"last_offset":31,"records":1,"delivery_count":1,"cause":"ACCEPT"}
{"t_us":6205000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"ACQUIRED","to":"ARCHIVED","first_offset":32,"last_offset":32,"records":1,"delivery_count":1,"cause":"REJECT"}
{"t_us":6210000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"AVAILABLE","to":"ACQUIRED","first_offset":30,"last_offset":30,"records":1,"delivery_count":2,"cause":"fetch"}
{"t_us":6215000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"ACQUIRED","to":"ARCHIVED","first_offset":30,"last_offset":30,"records":1,"delivery_count":2,"cause":"RELEASE"}
{"t_us":6400000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"AVAILABLE","to":"ACQUIRED","first_offset":33,"last_offset":33,"records":1,"delivery_count":1,"cause":"fetch"}
{"t_us":36400000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"W","from":"ACQUIRED","to":"AVAILABLE","first_offset":33,"last_offset":33,"records":1,"delivery_count":1,"cause":"lock_timeout"}
{"t_us":36500000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"V","from":"AVAILABLE","to":"ACQUIRED","first_offset":33,"last_offset":33,"records":1,"delivery_count":2,"cause":"fetch"}
{"t_us":36600000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"V","from":"ACQUIRED","to":"ACKNOWLEDGED","first_offset":33,"last_offset":33,"records":1,"delivery_count":2,"cause":"ACCEPT"}
)";

}  // namespace

TEST_CASE(
    "compare: share facts: acquisitions, redeliveries, acknowledgements by type, archived records "
    "in order") {
  const auto s = facts_of(trace(kShare)).share;
  CHECK(s.present);
  CHECK(s.acquired == 6);     // 3 + 1 + 1 + 1
  CHECK(s.redelivered == 2);  // 30 and 33 at delivery count 2
  CHECK(s.accepted == 2);     // 31, 33
  CHECK(s.released == 2);     // 30 twice; the lock timeout is no acknowledgement
  CHECK(s.rejected == 1);     // 32
  CHECK(s.archived == 2);     // 32 (REJECT), 30 (RELEASE at the limit of 2)
  CHECK(s.max_delivery_count == 2);
  std::vector<std::string> events;
  for (const auto& e : s.events) events.push_back(fmt::format("{} {}", e.t_us / 1000, e.str()));
  CHECK(events == std::vector<std::string>{"6205 archived jobs-0@32 (delivery count 1)",
                                           "6210 redelivered jobs-0@30 (delivery count 2)",
                                           "6215 archived jobs-0@30 (delivery count 2)",
                                           "36500 redelivered jobs-0@33 (delivery count 2)"});
  CHECK_FALSE(facts_of(trace(kSim)).share.present);
}

TEST_CASE(
    "compare: share facts: what a closing session releases was never returned by poll(): its "
    "acquisitions are taken back") {
  // V closes at 36,700 ms: the ShareFetch its close waited for (ShareConsumeRequestManager sends
  // the closing ShareAcknowledge only when no request to the node is in flight) acquired 34..35
  // (delivery count 1), 36 (count 2) and 37 (count 3), and the close's ShareAcknowledge (epoch
  // -1) released them. No poll() returned them, so the oracle's ShareConsumerApp, which writes
  // what poll() returned, never shows them: the simulator's trace, written by the broker, does.
  std::string closing = kShare;
  const auto line = [](std::int64_t t_ms, const char* from, const char* to, std::int64_t first,
                       std::int64_t last, std::int64_t dc, const char* cause) {
    return fmt::format(
        R"({{"t_us":{},"type":"share.records","group":"q","partition":"jobs-0","consumer":"V","from":"{}","to":"{}","first_offset":{},"last_offset":{},"records":{},"delivery_count":{},"cause":"{}"}})"
        "\n",
        t_ms * 1000, from, to, first, last, last - first + 1, dc, cause);
  };
  closing += line(36700, "AVAILABLE", "ACQUIRED", 34, 35, 1, "fetch");
  closing += line(36700, "AVAILABLE", "ACQUIRED", 36, 36, 2, "fetch");
  closing += line(36700, "AVAILABLE", "ACQUIRED", 37, 37, 3, "fetch");
  const auto before = facts_of(trace(closing)).share;  // the acquisitions alone count
  CHECK(before.acquired == 10);
  CHECK(before.redelivered == 4);
  CHECK(before.max_delivery_count == 3);
  closing += line(36703, "ACQUIRED", "AVAILABLE", 34, 35, 1, "session_close");
  closing += line(36703, "ACQUIRED", "AVAILABLE", 36, 36, 2, "session_close");
  closing += line(36703, "ACQUIRED", "AVAILABLE", 37, 37, 3, "session_close");
  const auto s = facts_of(trace(closing)).share;
  const auto plain = facts_of(trace(kShare)).share;
  CHECK(s.acquired == 6);
  CHECK(s.redelivered == 2);
  CHECK(s.max_delivery_count == 2);
  CHECK(s.released == plain.released);  // a session's close is no acknowledgement
  CHECK(s.events == plain.events);      // 36 at count 2 is no redelivery the application saw
}

TEST_CASE(
    "compare: share redeliveries and archivals matched by order and time: 400 ms late agrees (±400 "
    "ms), 401 ms not") {
  const auto sim = facts_of(trace(kShare));
  const auto in =
      compare_variant("share", sim, {facts_of(trace(shifted_all(kShare, 400000)))}, {"real"}, {});
  CHECK(in.share);
  CHECK(in.tolerance_ms == 400);  // a share run's records too: members heartbeat as KIP-848 ones
  CHECK(in.share_events_matched == 4);
  CHECK(in.share_events_beyond == 0);
  CHECK(in.passed());
  const auto out =
      compare_variant("share", sim, {facts_of(trace(shifted_all(kShare, 401000)))}, {"real"}, {});
  CHECK(out.share_events_matched == 4);
  CHECK(out.share_events_beyond == 4);
  CHECK(out.failures() ==
        std::vector<std::string>{"share redeliveries/archivals: 4 beyond ±400 ms: archived "
                                 "jobs-0@32 (delivery count 1): sim at 6205 ms, "
                                 "real at 6606 ms (+401 ms)"});
  // 10.001 s apart is beyond the match window: another redelivery, unmatched (shown, not failed)
  const auto far =
      compare_variant("share", sim, {facts_of(trace(shifted_all(kShare, 10001000)))}, {"real"}, {});
  CHECK(far.share_events_matched == 0);
  CHECK(far.passed());
}

TEST_CASE(
    "compare: share counts agree within max(2, 10 %) of the real run's (an acknowledgement count "
    "within its binomial spread); an unmatched redelivery alone is no difference") {
  const auto sim = facts_of(trace(kShare));
  // the real run has no lock timeout on 33: one acquisition and one redelivery fewer (within ±2)
  const std::string no_timeout =
      std::string(kShare).substr(0, std::string(kShare).find(R"({"t_us":36400000)"));
  const auto fewer = compare_variant("share", sim, {facts_of(trace(no_timeout))}, {"real"}, {});
  CHECK(fewer.share_real.acquired == 5);
  CHECK(fewer.share_events_matched == 3);
  CHECK(fewer.first_share_difference ==
        "first unmatched: sim redelivered jobs-0@33 (delivery count 2), real (none)");
  CHECK(fewer.share_count_differences.empty());
  CHECK(fewer.passed());
  // More RELEASEs in the real run. Released is an outcome drawn per acknowledgement: 2 of 5
  // against 5 of 8 is within 3 standard deviations of two binomial draws, floor(3 sqrt(2 (1 -
  // 2/5) + 5 (1 - 5/8))) = 5 (beyond max(2, 10 %) = 2 before finding 25); 2 of 5 against 32 of 35
  // is beyond floor(3 sqrt(1.2 + 32 (1 - 32/35))) = 5.
  const auto released = [&](int n) {
    return compare_variant(
        "share", sim,
        {facts_of(trace(
            std::string(kShare) +
            fmt::format(
                R"({{"t_us":37000000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"V","from":"ACQUIRED","to":"AVAILABLE","first_offset":40,"last_offset":{},"records":{},"delivery_count":1,"cause":"RELEASE"}})",
                39 + n, n) +
            "\n"))},
        {"real"}, {});
  };
  CHECK(released(3).passed());
  CHECK(released(30).failures() ==
        std::vector<std::string>{"share released: sim 2 real 32 (beyond ±5)"});
  // a highest delivery count of 3 against 2 is a difference whatever the counts
  std::string third =
      std::string(kShare) +
      R"({"t_us":36700000,"type":"share.records","group":"q","partition":"jobs-0","consumer":"V","from":"AVAILABLE","to":"ACQUIRED","first_offset":33,"last_offset":33,"records":1,"delivery_count":3,"cause":"fetch"})"
      "\n";
  const auto deeper = compare_variant("share", sim, {facts_of(trace(third))}, {"real"}, {});
  CHECK(deeper.failures() ==
        std::vector<std::string>{"share highest delivery count: sim 2 real 3"});
}

TEST_CASE(
    "compare: a share run's final assignment is not compared (a KafkaShareConsumer has no "
    "assignment())") {
  const std::string owned = R"({"t_us":6000000,"type":"consumer.start","consumer":"W"}
{"t_us":6009000,"type":"assignment","consumer":"W","owned":["jobs-0"]}
)";
  const auto sim = facts_of(trace(owned + kShare));
  const auto real = facts_of(trace(
      std::string(R"({"t_us":6000000,"type":"consumer.start","consumer":"W"})") + "\n" + kShare));
  CHECK(sim.final_assignment.dump() == R"({"W":["jobs-0"]})");
  CHECK(real.final_assignment.dump() == "{}");
  const auto share = compare_variant("share", sim, {real}, {"real"}, {});
  CHECK_FALSE(share.final_observed);
  CHECK(share.passed());
  // the same facts under a consumer group protocol: a difference
  CHECK(compare_variant("consumer", sim, {real}, {"real"}, {}).failures() ==
        std::vector<std::string>{"final assignment differs"});
}

TEST_CASE(
    "compare: members started at the same instant with the same spec are compared in the order "
    "they reached the coordinator (docs/fidelity.md, finding 17)") {
  using rsim::compare::simultaneous_starts;
  using rsim::compare::StartedMember;
  // W1..W3 start at 1000 ms alike; X at 1000 ms with another spec; Y alike W1 but at 2000 ms.
  const auto groups = simultaneous_starts({{"W1", 1000000, "{\"group\":\"q\"}"},
                                           {"X", 1000000, "{\"group\":\"other\"}"},
                                           {"W2", 1000000, "{\"group\":\"q\"}"},
                                           {"Y", 2000000, "{\"group\":\"q\"}"},
                                           {"W3", 1000000, "{\"group\":\"q\"}"},
                                           {"Z", -1, "{\"group\":\"q\"}"}});
  REQUIRE(groups.size() == 1);
  CHECK(groups[0] == std::vector<std::string>{"W1", "W2", "W3"});

  // The simulator's members join in script order; the real run's W3 first, then W1, then W2.
  const auto member = [](std::int64_t t_us, const char* consumer, int epoch) {
    return fmt::format(
        R"({{"t_us":{},"type":"record","record":"ShareGroupMemberMetadata","tombstone":false,"group":"q","consumer":"{}","member_epoch":{}}})",
        t_us, consumer, epoch);
  };
  const auto facts = [&](const std::vector<const char*>& order, std::int64_t at_us) {
    std::string text;
    for (std::size_t k = 0; k < order.size(); ++k)
      text += member(at_us + static_cast<std::int64_t>(k) * 1000, order[k], 0) + "\n";
    return facts_of(trace(text));
  };
  auto sim = facts({"W1", "W2", "W3"}, 1001000);
  const auto real = facts({"W3", "W1", "W2"}, 1050000);
  // Without the groups the first record differs (W1 against W3).
  const auto before = compare_variant("share", sim, {real}, {"real"}, {});
  CHECK_FALSE(before.records_equal);
  CHECK(before.first_record_difference.find("at record 1:") != std::string::npos);
  // With them the real run's k-th to arrive is compared as the simulator's k-th: all 3 match,
  // 49 ms apart (within the share tolerance of 400 ms), and the run's own order is shown.
  sim.simultaneous = groups;
  const auto after = compare_variant("share", sim, {real}, {"real"}, {});
  CHECK(after.records_equal);
  CHECK(after.records_matched == 3);
  REQUIRE(after.races.size() == 1);
  CHECK(after.races[0] ==
        "real: simultaneous starts of W1, W2, W3: reached the coordinator as W3, W1, W2");
  // A run in the simulator's own order needs no renaming and shows nothing.
  const auto same =
      compare_variant("share", sim, {facts({"W1", "W2", "W3"}, 1050000)}, {"real"}, {});
  CHECK(same.records_equal);
  CHECK(same.races.empty());
}

TEST_CASE(
    "compare: an acknowledgement count is a binomial draw of the application's generator: "
    "share-reject-and-release's rejected 69 against 80 agrees (docs/fidelity.md, finding 25)") {
  using rsim::compare::ShareFacts;
  const auto facts = [](std::int64_t acquired, std::int64_t accepted, std::int64_t released,
                        std::int64_t rejected, std::int64_t archived) {
    ShareFacts f;
    f.present = true;
    f.acquired = acquired;
    f.accepted = accepted;
    f.released = released;
    f.rejected = rejected;
    f.archived = archived;
    f.max_delivery_count = 2;
    return f;
  };
  // Run 1 of share-reject-and-release: 6461 acknowledgements, every one the draw of the oracle's
  // java.util.Random (REJECT below 0.01, RELEASE below 0.21).
  const ShareFacts real = facts(6461, 5063, 1318, 80, 316);
  // The simulator's 6464 acknowledgements: rejected 69 (±36 = floor(3 sqrt(69 (1 - 69/6464) +
  // 80 (1 - 80/6461)))), archived 275 (±71), where max(2, 10 %) allowed ±8 and ±31.
  rsim::compare::VariantComparison agrees;
  rsim::compare::compare_share(agrees, facts(6464, 5081, 1314, 69, 275), real, {});
  CHECK(agrees.share_count_differences.empty());
  // The percentage where it is wider: accepted 4558 within ±506 (10 % of 5063, the binomial
  // spread ±148); released 1837 beyond ±145 (the binomial spread; 10 % is ±131).
  rsim::compare::VariantComparison accepted;
  rsim::compare::compare_share(accepted, facts(6464, 4558, 1837, 69, 275), real, {});
  CHECK(accepted.share_count_differences ==
        std::vector<std::string>{"released: sim 1837 real 1318 (beyond ±145)"});
  // 30 rejected of 6425 is beyond floor(3 sqrt(30 (1 - 30/6425) + 79.0)) = 31.
  rsim::compare::VariantComparison fewer;
  rsim::compare::compare_share(fewer, facts(6425, 5081, 1314, 30, 275), real, {});
  CHECK(fewer.share_count_differences ==
        std::vector<std::string>{"rejected: sim 30 real 80 (beyond ±31)"});
  // A count no acknowledgement draws keeps max(2, 10 %): acquired 5800 against 6461 (±646).
  rsim::compare::VariantComparison acquired;
  rsim::compare::compare_share(acquired, facts(5800, 5063, 1318, 80, 316), real, {});
  CHECK(acquired.share_count_differences ==
        std::vector<std::string>{"acquired: sim 5800 real 6461 (beyond ±646)"});
}

TEST_CASE(
    "compare: a run of ShareGroupCurrentMemberAssignment records is compared as a set, each "
    "record's time still within the tolerance (docs/fidelity.md, finding 25)") {
  const auto line = [](std::int64_t t_ms, const char* record, const char* consumer) {
    return fmt::format(
        R"({{"t_us":{},"type":"record","record":"{}","tombstone":false,"group":"q","consumer":"{}"}})",
        t_ms * 1000, record, consumer);
  };
  const auto records = [&](const std::vector<std::pair<std::int64_t, const char*>>& current) {
    std::string text = line(6100, "ShareGroupTargetAssignmentMetadata", "") + "\n";
    for (const auto& [t, consumer] : current)
      text += line(t, "ShareGroupCurrentMemberAssignment", consumer) + "\n";
    return facts_of(trace(text));
  };
  // share-reject-and-release, run 1: the three heartbeats after the target at 6132, 6145 and
  // 6148 ms; the simulator's in another order 5 ms apart.
  const auto sim = records({{6105, "W1"}, {6110, "W2"}, {6115, "W3"}});
  const auto real = compare_variant(
      "share", sim, {records({{6132, "W1"}, {6145, "W3"}, {6148, "W2"}})}, {"real"}, {});
  CHECK(real.records_equal);
  CHECK(real.records_matched == 4);
  // W3 and W2 about 800 ms later than the simulator's are beyond ±400 ms (W2 at 6920 against
  // 6110, W3 at 6916 against 6115).
  const auto late = compare_variant(
      "share", sim, {records({{6132, "W1"}, {6916, "W3"}, {6920, "W2"}})}, {"real"}, {});
  CHECK_FALSE(late.records_equal);
  CHECK(late.records_beyond == 2);
  // A group record between them keeps the order: W2's heartbeat after the epoch bump is not W3's.
  const auto split = [&](const char* a, const char* b) {
    return facts_of(trace(line(6100, "ShareGroupCurrentMemberAssignment", a) + "\n" +
                          line(6101, "ShareGroupMetadata", "") + "\n" +
                          line(6102, "ShareGroupCurrentMemberAssignment", b) + "\n"));
  };
  const auto bumped =
      compare_variant("share", split("W2", "W3"), {split("W3", "W2")}, {"real"}, {});
  CHECK_FALSE(bumped.records_equal);
  CHECK(bumped.records_matched == 1);  // the ShareGroupMetadata only
}

TEST_CASE(
    "compare: two members' consumer-group writes within 2 ms are taken in the simulator's order "
    "(docs/fidelity.md, finding 27)") {
  // rolling-upgrade-to-consumer: B and C, classic members of the consumer group, rejoin after
  // REBALANCE_IN_PROGRESS; each JoinGroup writes the member's ConsumerGroupMemberMetadata and
  // ConsumerGroupCurrentMemberAssignment (revoking one partition). Run 1 wrote C's at 19,055 and
  // B's at 19,056 ms, the simulator B's at 19,053 and C's at 19,062.
  const auto write = [](std::int64_t t_ms, const char* consumer, const char* assigned,
                        const char* pending) {
    return fmt::format(
               R"({{"t_us":{},"type":"record","record":"ConsumerGroupMemberMetadata","tombstone":false,"group":"g","consumer":"{}"}})",
               t_ms * 1000, consumer) +
           "\n" +
           fmt::format(
               R"({{"t_us":{},"type":"record","record":"ConsumerGroupCurrentMemberAssignment","tombstone":false,"group":"g","consumer":"{}","member_epoch":2,"assigned":[{}],"pending_revocation":[{}]}})",
               t_ms * 1000, consumer, assigned, pending) +
           "\n";
  };
  const auto b = [&](std::int64_t t) { return write(t, "B", R"("t-2","t-3")", R"("t-5")"); };
  const auto c = [&](std::int64_t t) { return write(t, "C", R"("t-0","t-1")", R"("t-4")"); };
  const auto sim = facts_of(trace(b(19053) + c(19062)));
  // 1 ms apart in the other order: a race of the two JoinGroups (read 0.12 ms apart), agrees.
  const auto near = compare_variant("classic-cooperative", sim,
                                    {facts_of(trace(c(19055) + b(19056)))}, {"real"}, {});
  CHECK(near.records_equal);
  CHECK(near.records_matched == 4);
  CHECK(near.races == std::vector<std::string>{
                          "real: member writes of C, B within 1 ms at 19055 ms, taken in the "
                          "simulator's order"});
  // 2 ms apart still; 3 ms apart is beyond the bound: the run's order stands and differs.
  CHECK(compare_variant("classic-cooperative", sim, {facts_of(trace(c(19055) + b(19057)))},
                        {"real"}, {})
            .records_equal);
  const auto apart = compare_variant("classic-cooperative", sim,
                                     {facts_of(trace(c(19055) + b(19058)))}, {"real"}, {});
  CHECK_FALSE(apart.records_equal);
  CHECK(apart.records_matched == 2);
  // A group record between them keeps the order.
  const auto bump =
      R"({"t_us":19055000,"type":"record","record":"ConsumerGroupMetadata","tombstone":false,"group":"g","epoch":3})"
      "\n";
  const auto split =
      compare_variant("classic-cooperative", facts_of(trace(b(19053) + bump + c(19062))),
                      {facts_of(trace(c(19055) + bump + b(19056)))}, {"real"}, {});
  CHECK_FALSE(split.records_equal);
  // What a write says is compared as before: B revoking t-4 instead of t-5 differs in any order.
  const auto other = compare_variant(
      "classic-cooperative", sim,
      {facts_of(trace(c(19055) + write(19056, "B", R"("t-2","t-3")", R"("t-4")")))}, {"real"}, {});
  CHECK_FALSE(other.records_equal);
}

namespace {
// kShare and n more records of jobs-1 redelivered (acquired with delivery count 2) at 40 s.
std::string share_with_redeliveries(int n) {
  return std::string(kShare) +
         fmt::format(
             R"({{"t_us":40000000,"type":"share.records","group":"q","partition":"jobs-1","consumer":"W","from":"AVAILABLE","to":"ACQUIRED","first_offset":0,"last_offset":{},"records":{},"delivery_count":2,"cause":"fetch"}})",
             n - 1, n) +
         "\n";
}
}  // namespace

TEST_CASE(
    "compare: a share count the real runs decide differently is a race: the simulator within "
    "either run's tolerance or between the runs agrees") {
  // The records a crashed member held acquired, redelivered: 2 + 15 = 17 in run 1, 2 + 38 = 40
  // in run 2 (beyond run 1's max(2, 10 % of 17) = 2 of each other). Acquired: 6 + 15 = 21 and
  // 6 + 38 = 44.
  const auto run1 = facts_of(trace(share_with_redeliveries(15)));
  const auto run2 = facts_of(trace(share_with_redeliveries(38)));
  const std::vector<std::string> dirs{"run-1", "run-2"};
  // 31 redelivered (35 acquired): between the runs.
  const auto between = compare_variant("share", facts_of(trace(share_with_redeliveries(29))),
                                       {run1, run2}, dirs, {});
  CHECK(between.share_count_differences.empty());
  CHECK(between.races ==
        std::vector<std::string>{"share acquired: sim 35 between the runs' 21 and 44",
                                 "share redelivered: sim 31 between the runs' 17 and 40"});
  CHECK(between.passed());
  // 41 redelivered (45 acquired): within run 2's ±4 of 40 and ±4 of 44.
  const auto near2 = compare_variant("share", facts_of(trace(share_with_redeliveries(39))),
                                     {run1, run2}, dirs, {});
  CHECK(near2.races == std::vector<std::string>{"share acquired: sim 45: race: matches run 2",
                                                "share redelivered: sim 41: race: matches run 2"});
  CHECK(near2.passed());
  // 50 redelivered: beyond both runs and outside their span, a difference against run 1.
  const auto beyond = compare_variant("share", facts_of(trace(share_with_redeliveries(48))),
                                      {run1, run2}, dirs, {});
  CHECK(beyond.share_count_differences ==
        std::vector<std::string>{"acquired: sim 54 real 21 (beyond ±2)",
                                 "redelivered: sim 50 real 17 (beyond ±2)"});
  CHECK_FALSE(beyond.passed());
  // With one real run there is no race: 31 against 17 differs.
  const auto alone =
      compare_variant("share", facts_of(trace(share_with_redeliveries(29))), {run1}, {"real"}, {});
  CHECK(alone.share_count_differences.size() == 2);
}

TEST_CASE(
    "compare: a share group's target record names no member (the member ids' order decides who "
    "gets one), its tombstone does") {
  const auto records = [](const char* a, const char* b, const char* gone) {
    return fmt::format(
        R"({{"t_us":6000000,"type":"record","record":"ShareGroupTargetAssignmentMember","tombstone":false,"group":"q","consumer":"{}","partitions":["jobs-0"]}}
{{"t_us":6000000,"type":"record","record":"ShareGroupTargetAssignmentMember","tombstone":false,"group":"q","consumer":"{}","partitions":["jobs-1"]}}
{{"t_us":9000000,"type":"record","record":"ShareGroupTargetAssignmentMember","tombstone":true,"group":"q","consumer":"{}"}}
)",
        a, b, gone);
  };
  const auto sim = facts_of(trace(records("C3", "C6", "C3")));
  const auto other_members =
      compare_variant("share", sim, {facts_of(trace(records("C2", "C7", "C3")))}, {"real"}, {});
  CHECK(other_members.records_matched == 3);
  CHECK(other_members.passed());
  const auto other_tombstone =
      compare_variant("share", sim, {facts_of(trace(records("C3", "C6", "C2")))}, {"real"}, {});
  CHECK(other_tombstone.records_matched == 2);
  CHECK_FALSE(other_tombstone.passed());
}

TEST_CASE(
    "compare: a recording's member ids, per consumer in the order they first appear (member.id "
    "lines, member records), replayed into the scenario") {
  // A: the empty id before its first join is none; its classic id twice (generations 1 and 2),
  // then a new one after a fresh join. B: a KIP-848 / share id known from its member records
  // only (and from the tombstone that repeats it). A classic GroupMetadata names its members only
  // inside `members`: no id is taken from it.
  const auto f = facts_of(trace(
      R"({"t_us":1000,"type":"member.id","consumer":"A","member_id":"","generation":-1}
{"t_us":2000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":1,"members":[{"member_id":"x-0","consumer":"C","assignment":[]}]}
{"t_us":3000,"type":"member.id","consumer":"A","member_id":"consumer-g-1-1f4b","generation":1}
{"t_us":4000,"type":"record","record":"ShareGroupMemberMetadata","tombstone":false,"group":"q","member_id":"D0Z4efKZ","consumer":"B"}
{"t_us":5000,"type":"member.id","consumer":"A","member_id":"consumer-g-1-1f4b","generation":2}
{"t_us":6000,"type":"member.id","consumer":"A","member_id":"consumer-g-1-0aa0","generation":4}
{"t_us":7000,"type":"record","record":"ShareGroupMemberMetadata","tombstone":true,"group":"q","member_id":"D0Z4efKZ","consumer":"B"}
{"t_us":8000,"type":"run.end"}
)"));
  CHECK(f.member_ids.size() == 2);
  CHECK(f.member_ids.at("A") == std::vector<std::string>{"consumer-g-1-1f4b", "consumer-g-1-0aa0"});
  CHECK(f.member_ids.at("B") == std::vector<std::string>{"D0Z4efKZ"});
  CHECK(f.member_ids.count("C") == 0);

  rsim::ScenarioSpec spec;
  spec.consumers.resize(3);
  spec.consumers[0].name = "A";
  spec.consumers[1].name = "B";
  spec.consumers[2].name = "C";
  spec.consumers[2].member_ids = {"stale"};
  const auto replayed = rsim::cli::with_recorded_member_ids(spec, f);
  CHECK(replayed.consumers[0].member_ids == f.member_ids.at("A"));
  CHECK(replayed.consumers[1].member_ids == std::vector<std::string>{"D0Z4efKZ"});
  CHECK(replayed.consumers[2].member_ids.empty());  // none recorded: the seeded draws
}

TEST_CASE(
    "compare: members of a share group stopped at one instant leave in the order their parked "
    "ShareFetches are answered: a race, each trace's close window in a canonical order "
    "(docs/fidelity.md, finding 32)") {
  using rsim::compare::Record;
  using rsim::compare::TraceFacts;
  const auto rec = [](std::int64_t t_ms, const char* record, const char* consumer, bool tomb) {
    Record r;
    r.t_us = t_ms * 1000;
    r.record = record;
    r.consumer = consumer;
    r.tombstone = tomb;
    return r;
  };
  // A member's leave: its three tombstones, then the group epoch's bump (GroupMetadataManager).
  const auto leave = [&](std::vector<Record>& out, std::int64_t t_ms, const char* m) {
    out.push_back(rec(t_ms, "ShareGroupCurrentMemberAssignment", m, true));
    out.push_back(rec(t_ms, "ShareGroupTargetAssignmentMember", m, true));
    out.push_back(rec(t_ms, "ShareGroupMemberMetadata", m, true));
    out.push_back(rec(t_ms, "ShareGroupMetadata", "", false));
  };
  // A target computed by a heartbeat: a member record (no member named, finding 18), its metadata.
  const auto target = [&](std::vector<Record>& out, std::int64_t t_ms) {
    out.push_back(rec(t_ms, "ShareGroupTargetAssignmentMember", "(a member)", false));
    out.push_back(rec(t_ms, "ShareGroupTargetAssignmentMetadata", "", false));
  };
  const auto current = [&](std::vector<Record>& out, std::int64_t t_ms, const char* m) {
    out.push_back(rec(t_ms, "ShareGroupCurrentMemberAssignment", m, false));
  };
  // share-membership-table's close, in small: A, B and C stop at 10,000 ms, D stays. The
  // simulator: A's parked ShareFetch is answered first (A leaves at 10,012), a heartbeat computes
  // a target, B's heartbeat moves it there while it waits (10,052), D moves (10,117), then B and
  // C leave with their partitions' next records (10,212, 10,239). A run (as run 1 of the
  // recording: the leaves 55-268 ms after the stop): C first, then the target, A's heartbeat
  // while closing, A's leave, D, B.
  TraceFacts sim, run;
  current(sim.records, 5000, "D");
  leave(sim.records, 10012, "A");
  target(sim.records, 10046);
  current(sim.records, 10052, "B");
  current(sim.records, 10117, "D");
  leave(sim.records, 10212, "B");
  leave(sim.records, 10239, "C");
  target(sim.records, 15000);
  current(sim.records, 15000, "D");
  current(run.records, 5040, "D");
  leave(run.records, 10055, "C");
  target(run.records, 10063);
  current(run.records, 10063, "A");
  leave(run.records, 10071, "A");
  current(run.records, 10255, "D");
  leave(run.records, 10268, "B");
  target(run.records, 15130);
  current(run.records, 15130, "D");
  // Without the stops the records part at the first leave.
  const auto plain = compare_variant("share", sim, {run}, {"real"}, {});
  CHECK_FALSE(plain.records_equal);
  // fetch.max.wait.ms 500 plus the share tolerance 400: the leaves come within 900 ms.
  sim.simultaneous_stops = {{.at_us = 10000000, .members = {"A", "B", "C"}, .bound_us = 900000}};
  const auto c = compare_variant("share", sim, {run}, {"real"}, {});
  CHECK(c.records_equal);
  CHECK(c.records_sim == 18);  // B's heartbeat and the window's target member record left out
  CHECK(c.records_real == 18);
  CHECK(c.records_matched == 18);
  REQUIRE(c.races.size() == 1);
  CHECK(c.races[0] == "real: simultaneous stops of A, B, C: left as C, A, B");
  // A leave later than the bound is no part of the close's race: B's at 10,901 ms stays where it
  // is, after the window, and the records differ.
  TraceFacts late = run;
  for (auto& r : late.records)
    if (r.consumer == "B" || (r.record == "ShareGroupMetadata" && r.t_us == 10268000))
      r.t_us = 10901000;
  CHECK_FALSE(compare_variant("share", sim, {late}, {"real"}, {}).records_equal);
}

TEST_CASE(
    "compare: a recording's first poll() per process start (consumer.subscribed, else "
    "consumer.start) replayed as the start latency from the script's instant (docs/fidelity.md, "
    "finding 34)") {
  // rolling-upgrade-to-consumer's run 1, classic-cooperative: A starts at 1,000 ms and restarts
  // at 15,000 ms with after_ms 2,000 (its new process at 17,000 ms, incarnation 1); B's
  // subscribed line is missing (its consumer.start stands in); C was never started.
  const std::string recording =
      R"({"t_us":1002125,"type":"consumer.start","consumer":"A"}
{"t_us":1014730,"type":"consumer.subscribed","consumer":"A"}
{"t_us":1100935,"type":"consumer.start","consumer":"B"}
{"t_us":15000518,"type":"consumer.stop","consumer":"A"}
{"t_us":15022982,"type":"consumer.closed","consumer":"A"}
{"t_us":17000994,"type":"consumer.start","consumer":"A","incarnation":1}
{"t_us":17020546,"type":"consumer.subscribed","consumer":"A","incarnation":1}
{"t_us":40000000,"type":"run.end"}
)";
  std::istringstream in(recording);
  const auto starts = rsim::cli::recorded_starts(in);
  CHECK(starts.subscribed);
  CHECK(starts.first_poll_us.at("A") ==
        std::map<std::int64_t, std::int64_t>{{0, 1014730}, {1, 17020546}});
  CHECK(starts.first_poll_us.at("B") == std::map<std::int64_t, std::int64_t>{{0, 1100935}});
  const auto spec = rsim::parse_scenario(json::parse(R"({
    "name": "replay", "seed": 1, "duration_ms": 40000, "protocols": ["classic-cooperative"],
    "topics": [{"name": "t", "partitions": 2}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]},
                  {"name": "B", "group": "g", "topics": ["t"], "start_latency_ms": 50},
                  {"name": "C", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"},
               {"at_ms": 1100, "do": "start", "consumer": "B"},
               {"at_ms": 15000, "do": "restart", "consumer": "A", "after_ms": 2000,
                "config": {"group.protocol": "consumer"}}]})"),
                                         "replay.json");
  const auto replayed = rsim::cli::with_recorded_starts(spec, starts);
  using us = std::chrono::microseconds;
  // From the script's instant, not from consumer.start: the harness's lateness in reading the
  // command (2.125 ms for A) is part of the time to the first poll(), as in the simulator's
  // start_latency_ms.
  CHECK(replayed.consumers[0].start_latencies == std::vector<us>{us(14730), us(20546)});
  CHECK(replayed.consumers[1].start_latencies == std::vector<us>{us(935)});
  CHECK(replayed.consumers[2].start_latencies.empty());
  // A recording made before consumer.subscribed existed replays nothing: compared as before.
  std::istringstream old(
      R"({"t_us":1002125,"type":"consumer.start","consumer":"A"}
{"t_us":1100935,"type":"consumer.start","consumer":"B"}
)");
  const auto before = rsim::cli::recorded_starts(old);
  CHECK_FALSE(before.subscribed);
  const auto unchanged = rsim::cli::with_recorded_starts(spec, before);
  CHECK(unchanged.consumers[0].start_latencies.empty());
  CHECK(unchanged.consumers[1].start_latencies.empty());
}
