// `rebalance-sim check` and the expect assertions, run as a separate process: every operator,
// path, window and selector passing and failing (the failure line shows expected vs actual),
// malformed assertions refused with exit 2, JUnit/Markdown/JSON reports, --jobs giving the same
// bytes, golden runs, and the lists of valid names on a typo.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "reports/analyses/golden.hpp"

namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("rebalance-sim-check-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return testing::remove_at_exit(d);
}

Result run(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "check-" + tag, true);
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// Two classic-eager consumers, four partitions, group.initial.rebalance.delay.ms=0. The run (seed
// 3) has two rebalances: A joins at 108.356 ms (A runs onPartitionsAssigned at 113.546); B joins
// at 208.932, A revokes everything at 3118.982, A gets t-0,t-1 at 3123.858 and B t-2,t-3 at
// 3126.12 (a 2917.188 ms rebalance). t-2 and t-3 go unconsumed 100 -> 113.546 and
// 3118.982 -> 3126.12 ms (20.684 ms), t-0 and t-1 100 -> 113.546 and 3118.982 -> 3123.858
// (18.422 ms): the longest gap is 13.546 ms, and nothing of the group runs in those two
// intervals of A alone: stop-the-world 13.546 + 4.876 = 18.422 ms. The timing texture is off
// (request handling, write latency, heartbeat lateness and connection setup 0): only the network's
// draws take time.
std::string scenario(const std::string& expect) {
  return R"({
  "name": "tiny", "seed": 3, "duration_ms": 20000, "protocols": ["classic-eager"],
  "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}, "request_handling_ms": 0, "write_latency_ms": 0},
  "network": {"latency_ms": {"dist": "uniform", "min": 0.5, "max": 3}},
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [{"name": "A", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0},
                {"name": "B", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0}],
  "events": [{"at_ms": 100, "do": "start", "consumer": "A"}, {"at_ms": 200, "do": "start", "consumer": "B"}],
  "expect": [)" +
         expect + R"(]
})";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

/// A minimal XML well-formedness check: tags nest and close, attributes are quoted.
bool well_formed_xml(const std::string& x) {
  std::vector<std::string> stack;
  std::size_t i = x.find("?>");
  if (x.rfind("<?xml", 0) != 0 || i == std::string::npos) return false;
  for (i += 2; i < x.size(); ++i) {
    if (x[i] != '<') {
      if (x[i] == '>') return false;
      continue;
    }
    const auto end = x.find('>', i);
    if (end == std::string::npos) return false;
    std::string tag = x.substr(i + 1, end - i - 1);
    if (count(tag, "\"") % 2 != 0 || has(tag, "<")) return false;
    if (tag.front() == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) return false;
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find(' ')));
    }
    i = end;
  }
  return stack.empty();
}

}  // namespace

TEST_CASE("each operator passes and fails, the failure line showing expected and actual") {
  const auto d = temp_dir("ops");
  const auto f = write(d, "ops.json", scenario(R"(
    {"metric": "rebalance_count", "op": "==", "value": 2},
    {"metric": "rebalance_count", "op": "==", "value": 3},
    {"metric": "rebalance_count", "op": "!=", "value": 3},
    {"metric": "rebalance_count", "op": "!=", "value": 2},
    {"metric": "max_unavailable_ms", "op": "<", "value": 14},
    {"metric": "max_unavailable_ms", "op": "<", "value": 13.546},
    {"metric": "max_unavailable_ms", "op": "<=", "value": 13.546},
    {"metric": "max_unavailable_ms", "op": ">", "value": 13.546},
    {"metric": "max_unavailable_ms", "op": ">=", "value": 13.546},
    {"metric": "max_unavailable_ms", "op": ">=", "value": 13.547},
    {"metric": "max_rebalance_ms", "op": "within", "value": 2917, "tolerance": 0.2},
    {"metric": "max_rebalance_ms", "op": "within", "value": 2900, "tolerance": 10, "message": "B's join settles in 2.9 s"},
    {"metric": "stop_the_world_ms", "op": "between", "value": [18, 19]},
    {"metric": "stop_the_world_ms", "op": "between", "value": [1, 18]}
  )"));
  const Result r = run("check " + f.string(), "ops");
  CHECK(r.code == 1);
  CHECK(has(r.out, "7 passed, 7 failed, 0 warnings"));
  CHECK(has(r.out, "PASS tiny [classic-eager] expect[0] rebalance_count == 2 (actual "));
  CHECK(has(r.out,
            "FAIL tiny [classic-eager] expect[1] rebalance_count == 3: expected == 3, actual 2 ("));
  CHECK(has(r.out, "expect[3] rebalance_count != 2: expected != 2, actual 2"));
  CHECK(has(r.out, "PASS tiny [classic-eager] expect[4] max_unavailable_ms < 14 (actual "));
  CHECK(has(r.out, "expect[5] max_unavailable_ms < 13.546: expected < 13.546, actual 13.546"));
  CHECK(has(r.out, "PASS tiny [classic-eager] expect[6] max_unavailable_ms <= 13.546 (actual "));
  CHECK(has(r.out, "expect[7] max_unavailable_ms > 13.546: expected > 13.546, actual 13.546"));
  CHECK(has(r.out, "PASS tiny [classic-eager] expect[8] max_unavailable_ms >= 13.546 (actual "));
  CHECK(has(r.out, "expect[9] max_unavailable_ms >= 13.547: expected >= 13.547, actual 13.546"));
  CHECK(has(r.out,
            "PASS tiny [classic-eager] expect[10] max_rebalance_ms within 2917 ± 0.2 (actual "));
  CHECK(has(r.out,
            "expect[11] max_rebalance_ms within 2900 ± 10: expected 2900 ± 10, actual 2917.188 "
            "(off by +17.188) — B's join settles in 2.9 s"));
  CHECK(has(r.out,
            "PASS tiny [classic-eager] expect[12] stop_the_world_ms between [18,19] (actual "));
  CHECK(has(r.out,
            "expect[13] stop_the_world_ms between [1,18]: expected in [1,18], actual 18.422 "
            "(0.422 above the range)"));
}

TEST_CASE("paths, selectors and windows pick the value they name") {
  const auto d = temp_dir("paths");
  const auto f = write(d, "paths.json", scenario(R"(
    {"metric": "unavailable_ms_by_partition/t-2", "op": "==", "value": 20.684},
    {"metric": "rebalances/-1/duration_ms", "op": "within", "value": 2917, "tolerance": 0.5},
    {"metric": "rebalances/0/trigger", "op": "==", "value": "member A joined"},
    {"metric": "rebalances/1/revoked/A", "op": "==", "value": ["t-0", "t-1", "t-2", "t-3"]},
    {"metric": "final_assignment/B", "op": "==", "value": ["t-2", "t-3"]},
    {"metric": "metrics/rebalance_count", "op": "==", "value": 2},
    {"metric": "rebalances/7/duration_ms", "op": "==", "value": 1},
    {"metric": "unavailable_partition_ms", "partition": "t-2", "op": "==", "value": 20.684},
    {"metric": "max_unavailable_ms", "partition": "t-1", "op": "==", "value": 13.546},
    {"metric": "paused_ms_by_consumer", "consumer": "A", "op": "==", "value": 0},
    {"metric": "final_assignment", "consumer": "A", "op": "==", "value": ["t-0", "t-1"]},
    {"metric": "records_processed", "consumer": "B", "op": "==", "value": 0},
    {"metric": "rebalance_count", "from_ms": 150, "op": "==", "value": 1},
    {"metric": "rebalance_count", "to_ms": 150, "op": "==", "value": 1},
    {"metric": "unavailable_partition_ms", "from_ms": 150, "op": "within", "value": 24.028, "tolerance": 0.001},
    {"metric": "max_unavailable_ms", "from_ms": 150, "partition": "t-2", "op": "==", "value": 7.138},
    {"metric": "rebalance_count", "from_ms": 250, "to_ms": 3000, "op": "==", "value": 0}
  )"));
  const Result r = run("check " + f.string(), "paths");
  CHECK(r.code == 1);
  CHECK(has(r.out, "16 passed, 1 failed"));
  CHECK(has(r.out,
            "PASS tiny [classic-eager] expect[14] unavailable_partition_ms within 24.028 ± 0.001 "
            "over [150, end) ms (actual "));
  CHECK(has(r.out,
            "expect[6] rebalances/7/duration_ms == 1: expected == 1, actual (missing from "
            "summary.json)"));
  CHECK(has(
      r.out,
      "PASS tiny [classic-eager] expect[16] rebalance_count == 0 over [250, 3000) ms (actual "));
  CHECK(has(r.out,
            "PASS tiny [classic-eager] expect[9] paused_ms_by_consumer consumer=A == 0 (actual "));
}

TEST_CASE("an ordering of trace events passes when `then` follows `first`, and says why it fails") {
  const auto d = temp_dir("order");
  const auto f = write(d, "order.json", scenario(R"(
    {"expect": "order",
     "first": {"type": "callback", "consumer": "A", "callback": "onPartitionsRevoked", "phase": "end"},
     "then": {"type": "callback", "consumer": "B", "callback": "onPartitionsAssigned", "phase": "start"}},
    {"expect": "order", "message": "B cannot get partitions before A gives them up",
     "first": {"type": "callback", "consumer": "B", "callback": "onPartitionsAssigned"},
     "then": {"type": "callback", "consumer": "A", "callback": "onPartitionsRevoked"}},
    {"expect": "order", "from_ms": 4000,
     "first": {"type": "consumer.start"}, "then": {"type": "assignment"}}
  )"));
  const Result r = run("check " + f.string(), "order");
  CHECK(r.code == 1);
  CHECK(has(r.out, "1 passed, 2 failed"));
  CHECK(has(r.out, "PASS tiny [classic-eager] expect[0] order:"));
  CHECK(has(r.out,
            "actual {\"first_ms\":3126.12,\"then_ms\":null} (`then` happened only before `first` "
            "(at 3118.982 ms)) — "
            "B cannot get partitions before A gives them up"));
  CHECK(has(r.out,
            "expect[2] order: {\"type\":\"consumer.start\"} before {\"type\":\"assignment\"} over "
            "[4000, end) ms: "
            "expected `first` then `then`, actual null (no event matches `first`)"));
}

TEST_CASE(
    "malformed assertions are refused with exit 2, each with its JSON path and a suggestion") {
  const auto d = temp_dir("malformed");
  const auto f = write(d, "bad.json", scenario(R"(
    {"metric": "max_unavailble_ms", "op": "<", "value": 1},
    {"metric": "unavailable_ms_by_partition/t-9", "op": "==", "value": 0},
    {"metric": "rebalances/-1/duraton_ms", "op": "==", "value": 0},
    {"metric": "paused_ms_by_consumer/Z", "op": "==", "value": 0},
    {"metric": "max_lag", "op": "within", "value": 3},
    {"metric": "max_lag", "op": "between", "value": [5, 1]},
    {"metric": "max_lag", "op": "<", "value": 1, "tolerance": 2},
    {"metric": "max_lag", "consumer": "A", "op": "<", "value": 1},
    {"metric": "max_lag", "op": "<", "value": 1, "from_ms": 500, "to_ms": 100},
    {"expect": "order", "first": {"consumer": "A"}, "then": 3}
  )"));
  const Result loader = run("validate " + f.string(), "malformed-loader");
  CHECK(loader.code == 2);
  CHECK(has(loader.out,
            f.string() + ": /expect/4/tolerance: missing (op \"within\" needs a tolerance"));
  CHECK(has(loader.out, "/expect/5/value: lo must be <= hi, got [5,1]"));
  CHECK(has(loader.out, "/expect/6/tolerance: only for op \"within\", not \"<\""));
  CHECK(has(loader.out, "/expect/8/to_ms: must be greater than from_ms (500), got 100"));
  CHECK(has(loader.out, "/expect/9/first/type: missing"));
  CHECK(has(loader.out, "/expect/9/then: must be an object"));
  // Metric names and paths are checked once the file loads.
  const auto g = write(d, "bad-paths.json", scenario(R"(
    {"metric": "max_unavailble_ms", "op": "<", "value": 1},
    {"metric": "unavailable_ms_by_partition/t-9", "op": "==", "value": 0},
    {"metric": "rebalances/-1/duraton_ms", "op": "==", "value": 0},
    {"metric": "paused_ms_by_consumer/Z", "op": "==", "value": 0},
    {"metric": "max_lag", "consumer": "A", "op": "<", "value": 1},
    {"metric": "unavailable_partition_ms", "partition": "orders-1", "op": "<", "value": 1}
  )"));
  for (const std::string cmd : {"validate", "run", "check"}) {
    CAPTURE(cmd);
    const Result r =
        run(cmd + " " + g.string() + (cmd == "run" ? " --out " + (d / "out").string() : ""),
            "malformed-" + cmd);
    CHECK(r.code == 2);
    CHECK(has(r.out,
              "/expect/0/metric: unknown metric \"max_unavailble_ms\"; did you mean "
              "\"max_unavailable_ms\"?"));
    CHECK(has(r.out, "/expect/1/metric: topic \"t\" has 4 partitions (0..3), not 9"));
    CHECK(has(r.out,
              "/expect/2/metric: a rebalance has no field \"duraton_ms\"; did you mean "
              "\"duration_ms\"?"));
    CHECK(has(r.out, "/expect/3/metric: \"Z\" is not a consumer of the scenario"));
    CHECK(has(r.out, "/expect/4/consumer: metric \"max_lag\" is not per consumer"));
    CHECK(has(r.out, "/expect/5/partition: no topic \"orders\" in the scenario"));
  }
  CHECK_FALSE(fs::exists(d / "out"));
}

TEST_CASE(
    "check: an invalid scenario is one error test case; JUnit, Markdown and JSON count every "
    "case") {
  const auto d = temp_dir("reports");
  write(d, "a-good.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2},
                                      {"metric": "rebalance_count", "op": "==", "value": 5})"));
  write(d, "b-invalid.json", scenario(R"({"metric": "rebalance_count", "op": "=~", "value": 2})"));
  std::string none = scenario("");
  none.replace(none.find("\"tiny\""), 6, "\"quiet\"");
  write(d, "c-no-assertions.json", none);
  const std::string reports = " --junit " + (d / "junit.xml").string() + " --markdown " +
                              (d / "summary.md").string() + " --json " +
                              (d / "results.json").string() + " --junit-time virtual";
  const Result r = run("check " + d.string() + reports, "reports");
  CHECK(r.code == 2);  // an invalid scenario is bad input, reported, not an abort
  CHECK(has(r.out, "1 passed, 2 failed, 1 warnings (3 scenarios, 1 invalid)"));
  CHECK(has(r.out, "FAIL " + (d / "b-invalid.json").string() + ": invalid scenario:"));
  CHECK(has(r.out, "/expect/0/op: unknown op \"=~\""));
  CHECK(has(r.out, "WARN quiet [classic-eager]: no assertions for this variant"));
  const std::string junit = testing::read_file(d / "junit.xml");
  CHECK(well_formed_xml(junit));
  CHECK(has(junit,
            "<testsuites name=\"rebalance-sim check\" tests=\"4\" failures=\"1\" errors=\"1\" "
            "time=\"40.000\">"));
  CHECK(count(junit, "<testsuite ") == 3);
  CHECK(has(junit,
            "<testsuite name=\"tiny [classic-eager]\" tests=\"2\" failures=\"1\" errors=\"0\" "
            "skipped=\"0\" time=\"20.000\">"));
  CHECK(has(junit, "<property name=\"seed\" value=\"3\"/>"));
  CHECK(has(junit, "<property name=\"variant\" value=\"classic-eager\"/>"));
  CHECK(has(junit, "<property name=\"commit\" value=\""));
  CHECK(has(junit,
            "<testcase classname=\"tiny.classic-eager\" name=\"expect[0] rebalance_count == 2\" "
            "time=\"20.000\"/>"));
  CHECK(
      has(junit, "<failure message=\"expect[1] rebalance_count == 5: expected == 5, actual 2\">"));
  CHECK(has(junit, "name=\"scenario is valid\" time=\"0.000\"><error message="));
  CHECK(has(junit, "<skipped message=\"no assertions for this variant"));
  const std::string md = testing::read_file(d / "summary.md");
  CHECK(has(md, "**1 passed, 2 failed, 1 warnings**"));
  CHECK(has(md, "| | scenario | variant | assertion | actual |\n|---|---|---|---|---|\n"));
  CHECK(has(
      md, "| :white_check_mark: | tiny | classic-eager | `expect[0] rebalance_count == 2` | 2 |"));
  CHECK(has(md, "| :x: | tiny | classic-eager | `expect[1] rebalance_count == 5` | 2 |"));
  CHECK(has(md, "| :warning: | quiet | classic-eager |"));
  const auto results = nlohmann::json::parse(testing::read_file(d / "results.json"));
  CHECK(results["passed"] == 1);
  CHECK(results["failed"] == 2);
  CHECK(results["warnings"] == 1);
  REQUIRE(results["results"].size() == 4);
  CHECK(results["results"][1]["status"] == "failed");
  CHECK(results["results"][1]["expected"] == 5);
  CHECK(results["results"][1]["actual"] == 2);
  CHECK(results["results"][1]["seed"] == 3);
}

TEST_CASE("check --jobs 2 writes the same bytes as --jobs 1") {
  // Scenarios finish in another order with two workers; the results must not show it.
  const auto d = temp_dir("jobs");
  const auto reports = temp_dir("jobs-reports");
  write(d, "fails.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 5})"));
  write(d, "passes.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2})"));
  auto once = [&](int jobs) {
    const fs::path dir = reports / ("out-" + std::to_string(jobs));
    fs::create_directories(dir);
    const Result r =
        run(fmt::format("check scenarios/examples {} --jobs {} --junit-time zero --junit {} --json "
                        "{} --markdown {} --out {}",
                        d.string(), jobs, (dir / "j.xml").string(), (dir / "r.json").string(),
                        (dir / "s.md").string(), (dir / "runs").string()),
            "jobs" + std::to_string(jobs));
    return std::vector<std::string>{
        r.out,
        std::to_string(r.code),
        testing::read_file(dir / "j.xml"),
        testing::read_file(dir / "r.json"),
        testing::read_file(dir / "s.md"),
        testing::read_file(dir / "runs" / "two-consumers" / "classic-eager" / "summary.json")};
  };
  const auto one = once(1);
  const auto two = once(2);
  CHECK(one[1] == "1");
  CHECK(!one[5].empty());  // --out kept the run's summary
  for (std::size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(one[i] == two[i]);
  }
}

TEST_CASE("check refuses an unwritable report path with exit 2 before running anything") {
  const auto d = temp_dir("unwritable");
  const auto f =
      write(d, "s.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2})"));
  const Result r = run("check " + f.string() + " --junit " + (d / "no-such-dir" / "j.xml").string(),
                       "unwritable");
  CHECK(r.code == 2);
  CHECK(has(r.out, "cannot write " + (d / "no-such-dir" / "j.xml").string() + ": no directory"));
  CHECK_FALSE(has(r.out, "PASS"));
  const Result dir = run("check " + f.string() + " --json " + d.string(), "unwritable-dir");
  CHECK(dir.code == 2);
  CHECK(has(dir.out, "it is a directory"));
}

TEST_CASE("golden runs: --update-golden stores them, check compares and prints what moved") {
  const auto d = temp_dir("golden");
  const auto f =
      write(d, "g.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2})"));
  const Result update = run("check " + f.string() + " --update-golden", "golden-update");
  CHECK(update.code == 0);
  const fs::path golden = d / "g.golden.json";
  REQUIRE(fs::exists(golden));
  CHECK(has(update.out, "wrote " + golden.string()));
  const Result same = run("check " + d.string(), "golden-same");
  CHECK(same.code == 0);
  CHECK(has(same.out, "PASS tiny [classic-eager] matches golden g.golden.json"));
  // Move the second rebalance's end by 100 ms, drop the first one, change B's final assignment.
  auto doc = nlohmann::ordered_json::parse(testing::read_file(golden));
  auto& v = doc["variants"]["classic-eager"];
  v["rebalances"][1]["end_ms"] = v["rebalances"][1]["end_ms"].get<double>() - 100;
  v["metrics"]["final_assignment"]["B"] = {"t-3"};
  std::ofstream(golden) << doc.dump(2);
  const Result moved = run("check " + d.string(), "golden-moved");
  CHECK(moved.code == 1);
  CHECK(has(moved.out, "FAIL tiny [classic-eager] differs from " + golden.string() + ":\n"));
  CHECK(
      has(moved.out, "rebalance 1 (member B joined): end moved +100.000 ms (3026.12 -> 3126.12)"));
  CHECK(has(moved.out, "final_assignment/B: [\"t-3\"] -> [\"t-2\",\"t-3\"]"));
  v["rebalances"].erase(1);
  std::ofstream(golden) << doc.dump(2);
  const Result extra = run("check " + d.string(), "golden-extra");
  CHECK(has(extra.out, "extra rebalance 1 at 208.932 ms: member B joined"));
}

TEST_CASE(
    "a golden file of valid JSON but the wrong shape is exit 2 naming the file and every JSON path "
    "at once") {
  const auto d = temp_dir("golden-shape");
  const auto f =
      write(d, "g.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2})"));
  // Four problems in four places: a tolerance as a string, metrics as an array, a trigger as a
  // number, a rebalance without its end.
  const fs::path golden = write(d, "g.golden.json", R"({"scenario": "tiny",
    "tolerances": {"time_ms": "1", "count": 0},
    "variants": {"classic-eager": {"metrics": [],
      "rebalances": [{"start_ms": 1, "end_ms": 2, "trigger": "x", "causes": []},
                     {"start_ms": 3, "trigger": 7, "causes": []}]}}})");
  const Result r = run("check " + f.string(), "golden-shape");
  CHECK(r.code == 2);
  CHECK(has(r.out, golden.string() + ": not a golden file (rerun with --update-golden, or fix):"));
  CHECK(has(r.out, "/tolerances/time_ms: must be a number, got a string"));
  CHECK(has(r.out, "/variants/classic-eager/metrics: must be an object, got an array"));
  CHECK(has(r.out, "/variants/classic-eager/rebalances/1/trigger: must be a string, got a number"));
  CHECK(has(r.out, "/variants/classic-eager/rebalances/1/end_ms: missing"));
  CHECK_FALSE(has(r.out, "/rebalances/0/"));
  CHECK_FALSE(has(r.out, "internal error"));
  // Not an object at all.
  write(d, "g.golden.json", "[1, 2]");
  const Result top = run("check " + f.string(), "golden-shape-top");
  CHECK(top.code == 2);
  CHECK(has(top.out,
            "/: must be an object with \"variants\" (as `check --update-golden` writes it), got an "
            "array"));
}

TEST_CASE("an unknown subcommand or variant is answered with the valid ones") {
  const Result sub = run("chek scenarios/", "unknown-sub");
  CHECK(sub.code == 2);
  CHECK(has(sub.out,
            "unknown subcommand \"chek\" (did you mean \"check\"?); valid subcommands: run, check, "
            "validate"));
  const auto d = temp_dir("variant");
  const Result variant =
      run("run scenarios/examples/two-consumers.json --protocol clasic-eager --out " +
              (d / "o").string(),
          "unknown-variant");
  CHECK(variant.code == 2);
  CHECK(has(variant.out,
            "unknown variant \"clasic-eager\" (did you mean \"classic-eager\"?); valid variants: "
            "classic-eager, "
            "classic-cooperative, consumer, share"));
  const Result describe =
      run("describe scenarios/examples/two-consumers.json --at 100 --protocol nope",
          "unknown-variant-describe");
  CHECK(describe.code == 2);
  CHECK(has(describe.out, "valid variants: classic-eager, classic-cooperative, consumer, share"));
}

TEST_CASE(
    "golden diffs print a time's change in microseconds, without the binary noise of a "
    "subtraction") {
  // 31118.904 - 1275.345 is 29843.558999999997 in binary; the change is 29843.559 ms.
  const auto metrics = [](double v) {
    return nlohmann::ordered_json{{"rebalances", nlohmann::ordered_json::array()},
                                  {"metrics",
                                   {{"unavailable_partition_ms", v},
                                    {"final_assignment", nlohmann::ordered_json::object()}}}};
  };
  const auto diff =
      rsim::cli::golden_diff(metrics(1275.345), metrics(31118.904), {{"time_ms", 1.0}});
  REQUIRE(diff.size() == 1);
  CHECK(diff[0] == "unavailable_partition_ms: 1275.345 -> 31118.904 (+29843.559 ms, +2340.0%)");
  const auto down =
      rsim::cli::golden_diff(metrics(31118.904), metrics(1275.345), {{"time_ms", 1.0}});
  REQUIRE(down.size() == 1);
  CHECK(down[0] == "unavailable_partition_ms: 31118.904 -> 1275.345 (-29843.559 ms, -95.9%)");
}

TEST_CASE(
    "window steady: an assertion over the steady window, the steady window in summary.json, a typo "
    "refused") {
  const auto d = temp_dir("steady");
  const auto f = write(d, "steady.json", scenario(R"(
    {"metric": "rebalance_count", "op": "==", "value": 2},
    {"metric": "rebalance_count", "op": "==", "value": 0, "window": "steady"},
    {"metric": "not_processed_partition_ms", "op": "==", "value": 0, "window": "steady"},
    {"metric": "rebalance_count", "op": "==", "value": 1, "window": "steady"}
  )"));
  const Result r = run("run " + f.string() + " --out " + (d / "out").string(), "steady-run");
  CHECK(r.code == 1);
  CHECK(has(r.out,
            "FAILED expect[3] classic-eager rebalance_count == 1 over the steady window: expected "
            "== 1, actual 0"));
  CHECK(count(r.out, "FAILED") == 1);
  const auto summary =
      nlohmann::json::parse(testing::read_file(d / "out" / "classic-eager" / "summary.json"));
  // A and B (the script's only starts) hold their assignment once B's onPartitionsAssigned ends
  // at 3126.12 ms; the start-up's two rebalances are before.
  CHECK(summary["steady"]["from_us"] == 3126120);
  CHECK(summary["steady"]["metrics"]["rebalance_count"] == 0);
  CHECK(summary["verdict"] ==
        "After start-up (from 3.1 s): 0 rebalances; the group never stopped as a whole; all 4 "
        "partitions were "
        "processed throughout.");
  // The run line: the verdict, then the steady window's numbers.
  CHECK(has(r.out, "tiny [classic-eager]: After start-up (from 3.1 s): 0 rebalances;"));
  CHECK(has(r.out,
            "  steady from 3.1 s: 0 rebalances, max 0 ms, stop-the-world 0 ms, not processed 0 "
            "partition-ms"));

  const auto g = write(d, "typo.json", scenario(R"(
    {"metric": "max_lag", "op": "<", "value": 1, "window": "stedy"},
    {"metric": "max_lag", "op": "<", "value": 1, "window": "steady", "from_ms": 10},
    {"metric": "rebalances/0/duration_ms", "op": "<", "value": 1, "window": "steady"}
  )"));
  const Result bad = run("validate " + g.string(), "steady-typo");
  CHECK(bad.code == 2);
  CHECK(has(bad.out,
            "/expect/0/window: unknown window \"stedy\" (steady, run); did you mean \"steady\"?"));
  CHECK(has(bad.out, "/expect/1/window: \"steady\" cannot be combined with from_ms/to_ms"));
  CHECK(has(bad.out,
            "/expect/2/window: \"steady\" computes metrics only; \"rebalances\" is not a metric"));
}

TEST_CASE(
    "validation in one pass: the expectations' paths are reported with the loader's own problems") {
  const auto d = temp_dir("one-pass");
  std::string text = scenario(R"({"metric": "max_unavailble_ms", "op": "<", "value": 1},
                                  {"metric": "rebalances/-1/duraton_ms", "op": "==", "value": 0},
                                  {"metric": "paused_ms_by_consumer/Z", "op": "==", "value": 0})");
  text.replace(text.find("\"duration_ms\": 20000"), 20, "\"duration_ms\": -5");
  const auto f = write(d, "both.json", text);
  const Result r = run("validate " + f.string(), "one-pass");
  CHECK(r.code == 2);
  CHECK(has(r.out, f.string() + ": /duration_ms: "));
  CHECK(has(r.out, f.string() + ": /expect/0/metric: unknown metric \"max_unavailble_ms\"; did you "
                                "mean \"max_unavailable_ms\"?"));
  CHECK(has(r.out, f.string() + ": /expect/1/metric: a rebalance has no field \"duraton_ms\"; did "
                                "you mean \"duration_ms\"?"));
  // A consumer an expectation names is looked up only in a file without other problems: a
  // consumer entry with a problem of its own is left out of what parsed.
  CHECK_FALSE(has(r.out, "/expect/2/metric"));
}

TEST_CASE("validate refuses what run refuses: a share scenario with fail-coordinator") {
  const auto d = temp_dir("validate-share");
  const auto f = write(d, "share.json", R"({
  "name": "share-failover", "duration_ms": 20000, "protocols": ["share"],
  "topics": [{"name": "t", "partitions": 2}],
  "consumers": [{"name": "A", "group": "q", "topics": ["t"]}],
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 5000, "do": "fail-coordinator", "group": "q"}]
})");
  const Result v = run("validate " + f.string(), "validate-share");
  const Result r = run("run " + f.string() + " --out " + (d / "out").string(), "run-share");
  CHECK(v.code == 2);
  CHECK(r.code == 2);
  const std::string line =
      f.string() +
      ": /events/1: fail-coordinator is not simulated for share groups by this version yet";
  CHECK(has(v.out, line));
  CHECK(has(r.out, line));
  CHECK_FALSE(has(v.out, ": ok ("));
}
