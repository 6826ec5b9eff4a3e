// `check` in CI pipelines (issue 37): stable JUnit test names (an assertion's `id`, else its
// message, else its index), `<error>` for a scenario that does not load, --strict, --junit-time,
// PASS lines with the value, the baseline comparison with tolerances that have a direction, golden
// diffs headline first, `check --out` writing report.html and `report` on a folder of runs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "reports/analyses/baseline.hpp"

namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("rebalance-sim-ci-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return testing::remove_at_exit(d);
}

Result run(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "ci-" + tag, true);
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The two-consumer run of check_test.cpp (seed 3): 2 rebalances, the longest 2917.188 ms (B joins
// at 208.932; A rejoins at its next heartbeat, 3 s after its previous one), 0 duplicates.
// `extra` goes in at the top level (e.g. a `regression` object).
std::string scenario(const std::string& expect, const std::string& extra = "",
                     const std::string& name = "tiny", int heartbeat_ms = 3000) {
  return R"({
  "name": ")" +
         name + R"(", "seed": 3, "duration_ms": 20000, "protocols": ["classic-eager"],
  "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}, "request_handling_ms": 0, "write_latency_ms": 0},
  "network": {"latency_ms": {"dist": "uniform", "min": 0.5, "max": 3}},
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [{"name": "A", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0,
                 "config": {"heartbeat.interval.ms": )" +
         std::to_string(heartbeat_ms) + R"(}},
                {"name": "B", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0,
                 "config": {"heartbeat.interval.ms": )" +
         std::to_string(heartbeat_ms) + R"(}}],
  "events": [{"at_ms": 100, "do": "start", "consumer": "A"}, {"at_ms": 200, "do": "start", "consumer": "B"}],)" +
         extra + R"(
  "expect": [)" +
         expect + R"(]
})";
}

/// The testcase names of a JUnit file, in order.
std::vector<std::string> test_names(const std::string& junit) {
  std::vector<std::string> names;
  const std::regex re("<testcase classname=\"[^\"]*\" name=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(junit.begin(), junit.end(), re); it != std::sregex_iterator();
       ++it)
    names.push_back((*it)[1]);
  return names;
}

}  // namespace

TEST_CASE(
    "check: a JUnit test is named by the assertion's id, else its message, else its index, "
    "inserting one keeps the others") {
  const auto d = temp_dir("ids");
  const std::string three =
      R"({"id": "two-rebalances", "metric": "rebalance_count", "op": "==", "value": 2},
    {"metric": "duplicates", "op": "==", "value": 0, "message": "no record twice"},
    {"metric": "lost", "op": "==", "value": 0})";
  write(d, "s.json", scenario(three));
  const Result before = run(
      "check " + (d / "s.json").string() + " --junit-time zero --junit " + (d / "a.xml").string(),
      "ids-a");
  CHECK(before.code == 0);
  CHECK(test_names(testing::read_file(d / "a.xml")) ==
        std::vector<std::string>{"two-rebalances", "no record twice", "expect[2] lost == 0"});
  // One more assertion first: the id and the message name the same tests as before.
  write(
      d, "s.json",
      scenario(R"({"id": "max-rebalance", "metric": "max_rebalance_ms", "op": "<=", "value": 5000},
    )" + three));
  const Result after = run(
      "check " + (d / "s.json").string() + " --junit-time zero --junit " + (d / "b.xml").string(),
      "ids-b");
  CHECK(after.code == 0);
  CHECK(test_names(testing::read_file(d / "b.xml")) ==
        std::vector<std::string>{"max-rebalance", "two-rebalances", "no record twice",
                                 "expect[3] lost == 0"});
  // PASS lines show the value.
  CHECK(has(after.out,
            "PASS tiny [classic-eager] two-rebalances: rebalance_count == 2 (actual 2)\n"));
  CHECK(
      has(after.out,
          "PASS tiny [classic-eager] max-rebalance: max_rebalance_ms <= 5000 (actual 2917.188)\n"));
  CHECK(has(after.out, "PASS tiny [classic-eager] expect[3] lost == 0 (actual 0)\n"));
  // Two assertions with one id: refused, with both places.
  write(d, "dup.json", scenario(R"({"id": "x", "metric": "lost", "op": "==", "value": 0},
    {"id": "x", "metric": "duplicates", "op": "==", "value": 0})"));
  const Result dup = run("validate " + (d / "dup.json").string(), "ids-dup");
  CHECK(dup.code == 2);
  CHECK(has(dup.out, "/expect/1/id: \"x\" is already the id of /expect/0"));
}

TEST_CASE(
    "check: an invalid scenario is a JUnit <error>, --strict fails a variant with nothing to "
    "check") {
  const auto d = temp_dir("strict");
  write(d, "a-bad.json", scenario(R"({"metric": "rebalance_count", "op": "=~", "value": 2})"));
  write(d, "b-empty.json", scenario("", "", "quiet"));
  const fs::path junit = d / "j.xml";
  const Result r =
      run("check " + d.string() + " --junit-time zero --junit " + junit.string(), "error");
  CHECK(r.code == 2);
  std::string x = testing::read_file(junit);
  CHECK(has(x,
            "<testsuites name=\"rebalance-sim check\" tests=\"2\" failures=\"0\" errors=\"1\" "
            "time=\"0.000\">"));
  CHECK(has(x, "<error message=\"" + (d / "a-bad.json").string() + ": /expect/0/op: unknown op"));
  CHECK(has(x, "type=\"invalid scenario\">"));
  CHECK(has(x, "<skipped message=\"no assertions for this variant"));
  // --strict: the empty one fails (exit 1 without the invalid one).
  fs::remove(d / "a-bad.json");
  const Result lax = run("check " + d.string(), "lax");
  CHECK(lax.code == 0);
  const Result strict = run(
      "check " + d.string() + " --strict --junit-time zero --junit " + junit.string(), "strict");
  CHECK(strict.code == 1);
  CHECK(has(strict.out, "FAIL quiet [classic-eager] no assertions for this variant (--strict;"));
  x = testing::read_file(junit);
  CHECK(has(x, "tests=\"1\" failures=\"1\" errors=\"0\""));
  CHECK(has(x, "<failure message=\"no assertions for this variant (--strict;"));
}

TEST_CASE("check --junit-time: wall seconds by default, or the virtual ones, or zero") {
  const auto d = temp_dir("time");
  const auto f =
      write(d, "s.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2},
    {"metric": "lost", "op": "==", "value": 0})"));
  auto junit = [&](const std::string& mode) {
    const fs::path j = d / ("j-" + mode + ".xml");
    const Result r = run("check " + f.string() + (mode.empty() ? "" : " --junit-time " + mode) +
                             " --junit " + j.string(),
                         "time-" + mode);
    CHECK(r.code == 0);
    return testing::read_file(j);
  };
  const std::string virt = junit("virtual");
  // Virtual: the run's 20 simulated seconds, each assertion at its window's end.
  CHECK(has(virt, "tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"20.000\">"));
  CHECK(has(virt, "name=\"expect[0] rebalance_count == 2\" time=\"20.000\"/>"));
  CHECK(has(virt, "<property name=\"virtual_seconds\" value=\"20.000\"/>"));
  const std::string zero = junit("zero");
  CHECK(has(zero, "skipped=\"0\" time=\"0.000\">"));
  CHECK(has(zero, "name=\"expect[0] rebalance_count == 2\" time=\"0.000\"/>"));
  CHECK(zero == junit("zero"));  // byte-identical
  // Wall (the default): the run takes well under the 20 virtual seconds, and the suite's time is
  // shared by its two test cases.
  const std::string wall = junit("");
  std::smatch m;
  REQUIRE(std::regex_search(wall, m, std::regex("skipped=\"0\" time=\"([0-9.]+)\">")));
  const double suite = std::stod(m[1]);
  CHECK(suite < 20.0);
  REQUIRE(std::regex_search(
      wall, m, std::regex("name=\"expect\\[0\\] rebalance_count == 2\" time=\"([0-9.]+)\"")));
  CHECK(std::stod(m[1]) == doctest::Approx(suite / 2).epsilon(0.01).scale(1));
  const Result bad = run("check " + f.string() + " --junit-time cpu", "time-bad");
  CHECK(bad.code == 2);
}

TEST_CASE(
    "check --baseline: tolerances with a direction, a slower PR fails, a faster one passes, values "
    "to the us") {
  // Base: heartbeat.interval.ms 3000, the longest rebalance 2917.188 ms (A rejoins at its next
  // heartbeat). The "PR" raises heartbeat.interval.ms to 3400: A's heartbeats fall at other
  // instants and the rebalance waits longer; a PR lowering it to 2000 shortens it.
  const auto d = temp_dir("baseline");
  const auto base_dir = d / "base", slow_dir = d / "slow", fast_dir = d / "fast";
  for (const auto& p : {base_dir, slow_dir, fast_dir}) fs::create_directories(p);
  const std::string expect = R"({"id": "no-loss", "metric": "lost", "op": "==", "value": 0})";
  write(base_dir, "s.json",
        scenario(expect, R"("regression": {"max_rebalance_ms": "+10%", "duplicates": "+0"},)"));
  write(slow_dir, "s.json",
        scenario(expect, R"("regression": {"max_rebalance_ms": "+10%", "duplicates": "+0"},)",
                 "tiny", 3400));
  write(fast_dir, "s.json",
        scenario(expect, R"("regression": {"max_rebalance_ms": "+10%", "duplicates": "+0"},)",
                 "tiny", 2000));
  const fs::path base_json = d / "base.json";
  REQUIRE(run("check " + base_dir.string() + " --json " + base_json.string(), "base").code == 0);
  const auto base = nlohmann::json::parse(testing::read_file(base_json));
  REQUIRE(base["runs"].size() == 1);
  CHECK(base["runs"][0]["scenario"] == "tiny");
  CHECK(base["runs"][0]["variant"] == "classic-eager");
  CHECK(base["runs"][0]["metrics"]["max_rebalance_ms"] == 2917.188);
  CHECK(base["runs"][0]["metrics"]["rebalance_count"] == 2);

  const fs::path md = d / "slow.md";
  const Result slow = run("check " + slow_dir.string() + " --baseline " + base_json.string() +
                              " --markdown " + md.string(),
                          "slow");
  const Result slow_ok = run("check " + slow_dir.string() + " --baseline " + base_json.string() +
                                 " --max-regression max_rebalance_ms=+25%",
                             "slow-ok");
  const Result fast =
      run("check " + fast_dir.string() + " --baseline " + base_json.string(), "fast");
  CAPTURE(slow.out);
  CAPTURE(fast.out);
  // The slower change: its exact figures are in the table and its failure line.
  std::smatch m;
  REQUIRE(std::regex_search(slow.out, m,
                            std::regex("REGRESSED +tiny +classic-eager +max_rebalance_ms +2917.188 "
                                       "+([0-9.]+) +\\+([0-9.]+) +\\+([0-9.]+)% +\\+10%")));
  const double now = std::stod(m[1]);
  CHECK(now > 2917.188 * 1.10);
  CHECK(std::stod(m[2]) == doctest::Approx(now - 2917.188).epsilon(1e-9));
  CHECK(slow.code == 1);
  CHECK(has(slow.out, "FAIL tiny [classic-eager] regressed: max_rebalance_ms "));
  CHECK(has(slow.out,
            "PASS tiny [classic-eager] regression duplicates: duplicates 0 (base 0: 0, 0%; "
            "tolerance +0)"));
  // The table comes first: before the PASS/FAIL lines.
  CHECK(slow.out.find("regressions against the baseline:") < slow.out.find("PASS "));
  const std::string summary = testing::read_file(md);
  CHECK(summary.find("### Regressions against the baseline") <
        summary.find("<details><summary>All "));
  CHECK(has(summary, "| | scenario | variant | metric | base | now | Δ | Δ % | tolerance |"));
  CHECK(has(summary, "| :x: | tiny | classic-eager | `max_rebalance_ms` | 2917.188 | "));
  // The command line overrides the scenario's tolerance; a tolerance file does too.
  CHECK(slow_ok.code == 0);
  CHECK(has(slow_ok.out, "+25%"));
  const auto tol_file = write(d, "tolerances.json", R"({"max_rebalance_ms": "+30%"})");
  const Result from_file = run("check " + slow_dir.string() + " --baseline " + base_json.string() +
                                   " --regression-file " + tol_file.string(),
                               "tol-file");
  CHECK(from_file.code == 0);
  CHECK(std::regex_search(from_file.out,
                          std::regex("\n  ok +tiny +classic-eager +max_rebalance_ms .* \\+30%\n")));
  write(d, "bad-tolerances.json", R"({"max_rebalance_ms": 30})");
  const Result bad_file = run("check " + slow_dir.string() + " --baseline " + base_json.string() +
                                  " --regression-file " + (d / "bad-tolerances.json").string(),
                              "tol-file-bad");
  CHECK(bad_file.code == 2);
  CHECK(has(bad_file.out,
            "bad-tolerances.json: /max_rebalance_ms: must be \"+N%\", \"+N\", \"-N%\" or \"-N\""));
  // Faster never fails, whatever the tolerance.
  CHECK(fast.code == 0);
  CHECK(std::regex_search(fast.out, std::regex("improved +tiny +classic-eager +max_rebalance_ms "
                                               "+2917.188 +[0-9.]+ +-[0-9.]+ +-[0-9.]+%")));
}

TEST_CASE(
    "check --baseline: bad tolerances, metrics and baseline files are exit 2 before anything "
    "runs") {
  const auto d = temp_dir("baseline-bad");
  const auto f = write(d, "s.json", scenario(R"({"metric": "lost", "op": "==", "value": 0})"));
  write(d, "not-results.json", R"({"passed": 1})");
  const Result no_runs =
      run("check " + f.string() + " --baseline " + (d / "not-results.json").string(), "no-runs");
  CHECK(no_runs.code == 2);
  CHECK(has(no_runs.out,
            "/runs: missing; --baseline wants the file `rebalance-sim check --json FILE` wrote"));
  CHECK_FALSE(has(no_runs.out, "PASS"));
  const fs::path base = d / "base.json";
  REQUIRE(run("check " + f.string() + " --json " + base.string(), "bad-base").code == 0);
  const Result typo = run("check " + f.string() + " --baseline " + base.string() +
                              " --max-regression max_rebalance=+10%",
                          "typo");
  CHECK(typo.code == 2);
  CHECK(has(typo.out,
            "--max-regression max_rebalance=+10%: unknown metric \"max_rebalance\"; did you mean "
            "\"max_rebalance_ms\"?"));
  const Result no_sign = run("check " + f.string() + " --baseline " + base.string() +
                                 " --max-regression max_rebalance_ms=10%",
                             "no-sign");
  CHECK(no_sign.code == 2);
  CHECK(has(no_sign.out, "\"10%\" is not a tolerance with a direction"));
  const Result no_base =
      run("check " + f.string() + " --max-regression max_rebalance_ms=+10%", "no-base");
  CHECK(no_base.code == 2);
  CHECK(has(no_base.out, "need --baseline"));
  // A scenario's `regression`: the loader checks the tolerances, check's validation the metrics.
  write(d, "bad-reg.json",
        scenario(R"({"metric": "lost", "op": "==", "value": 0})",
                 R"("regression": {"lost": "10"},)"));
  const Result reg = run("validate " + (d / "bad-reg.json").string(), "bad-reg");
  CHECK(reg.code == 2);
  CHECK(has(
      reg.out,
      "/regression/lost: must be a tolerance with a direction: \"+N%\", \"+N\", \"-N%\" or \"-N\" "
      "(+: a rise is a regression), got \"10\""));
  write(d, "bad-metric.json",
        scenario(R"({"metric": "lost", "op": "==", "value": 0})",
                 R"("regression": {"final_assignment": "+1", "duplicate": "+0"},)"));
  const Result metric = run("validate " + (d / "bad-metric.json").string(), "bad-metric");
  CHECK(metric.code == 2);
  CHECK(has(metric.out, "/regression/final_assignment: \"final_assignment\" is not one number"));
  CHECK(has(metric.out,
            "/regression/duplicate: unknown metric \"duplicate\"; did you mean \"duplicates\"?"));
}

TEST_CASE("baseline figures: rounded to the us, delta % to a tenth, improvements never fail") {
  using rsim::cli::show_number;
  CHECK(show_number(29843.558999999994) == "29843.559");
  CHECK(show_number(12.0) == "12");
  CHECK(show_number(-0.0001) == "0");
  CHECK(show_number(0.1 + 0.2) == "0.3");
  nlohmann::ordered_json base{
      {"max_rebalance_ms", 1000.0}, {"duplicates", 0}, {"records_processed", 500}};
  nlohmann::ordered_json now{
      {"max_rebalance_ms", 1120.0}, {"duplicates", 0}, {"records_processed", 450}};
  auto tol = [](const char* t) { return *rsim::parse_regression_tolerance(t); };
  auto rows = rsim::cli::compare_with_baseline(
      "s", "v", &base, now,
      {{"max_rebalance_ms", tol("+10%")}, {"records_processed", tol("-10%")}});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].failed);  // +12 % > +10 %
  CHECK(rows[0].delta_percent() == "+12.0%");
  CHECK_FALSE(rows[1].failed);  // -10 % drop is within -10 %
  CHECK(rows[1].verdict == "ok");
  rows = rsim::cli::compare_with_baseline(
      "s", "v", &base, now, {{"max_rebalance_ms", tol("+15%")}, {"records_processed", tol("+0")}});
  CHECK_FALSE(rows[0].failed);
  CHECK(rows[1].verdict == "improved");  // fewer, under "+0": a drop is never a regression
  CHECK_FALSE(rows[1].failed);
  rows =
      rsim::cli::compare_with_baseline("s", "v", &base, now, {{"max_rebalance_ms", tol("+120")}});
  CHECK_FALSE(rows[0].failed);  // +120 ms exactly
  rows = rsim::cli::compare_with_baseline("s", "v", &base, now,
                                          {{"max_rebalance_ms", tol("+119.999")}});
  CHECK(rows[0].failed);
  CHECK_FALSE(rsim::parse_regression_tolerance("10%"));
  CHECK_FALSE(rsim::parse_regression_tolerance("+%"));
  CHECK_FALSE(rsim::parse_regression_tolerance("+1.%"));
  CHECK(rsim::parse_regression_tolerance("-2.5%")->amount == 2.5);
}

TEST_CASE(
    "golden diffs: the headline deltas first, the per-rebalance detail after, tolerances with a "
    "direction") {
  const auto d = temp_dir("golden");
  const auto f =
      write(d, "g.json", scenario(R"({"metric": "rebalance_count", "op": "==", "value": 2})"));
  REQUIRE(run("check " + f.string() + " --update-golden", "golden-update").code == 0);
  const fs::path golden = d / "g.golden.json";
  auto doc = nlohmann::ordered_json::parse(testing::read_file(golden));
  auto& v = doc["variants"]["classic-eager"];
  // The golden says the longest rebalance took 100 ms less than it does (2817.188 ms).
  v["rebalances"][1]["end_ms"] = v["rebalances"][1]["end_ms"].get<double>() - 100;
  v["metrics"]["max_rebalance_ms"] = 2817.188;
  v["metrics"]["total_rebalance_ms"] = v["metrics"]["total_rebalance_ms"].get<double>() - 100;
  std::ofstream(golden) << doc.dump(2);
  const Result moved =
      run("check " + d.string() + " --markdown " + (d / "s.md").string(), "golden-moved");
  CHECK(moved.code == 1);
  const std::string head = "FAIL tiny [classic-eager] differs from " + golden.string() +
                           ":\n    max_rebalance_ms: 2817.188 -> 2917.188 (+100 ms, +3.5%)\n";
  CHECK(has(moved.out, head));
  CHECK(has(moved.out,
            "    per rebalance:\n    rebalance 1 (member B joined): end moved +100.000 ms (3026.12 "
            "-> 3126.12)"));
  const std::string md = testing::read_file(d / "s.md");
  CHECK(has(md, "max_rebalance_ms: 2817.188 -> 2917.188 (+100 ms, +3.5%)"));
  CHECK(has(md,
            "<details><summary>per rebalance (1 lines)</summary>rebalance 1 (member B joined): end "
            "moved +100.000 ms"));
  // With a directional tolerance: +3.5 % within +5 % passes (the moved rebalance is detail only);
  // within "-5%" (a drop is worse) the rise is an improvement.
  doc["tolerances"]["metrics"] = {{"max_rebalance_ms", "+5%"}, {"total_rebalance_ms", "+5%"}};
  std::ofstream(golden) << doc.dump(2);
  const Result within = run("check " + d.string(), "golden-within");
  CHECK(within.code == 0);
  CHECK(has(within.out,
            "PASS tiny [classic-eager] matches golden g.golden.json (within tolerances:"));
  doc["tolerances"]["metrics"] = {{"max_rebalance_ms", "+3%"}, {"total_rebalance_ms", "+5%"}};
  std::ofstream(golden) << doc.dump(2);
  const Result beyond = run("check " + d.string(), "golden-beyond");
  CHECK(beyond.code == 1);
  CHECK(has(beyond.out, "max_rebalance_ms: 2817.188 -> 2917.188 (+100 ms, +3.5%; tolerance +3%)"));
}

TEST_CASE("check --out writes each scenario's report.html, report renders a folder of runs again") {
  const auto d = temp_dir("out");
  write(d, "one.json", scenario(R"({"metric": "lost", "op": "==", "value": 0})"));
  fs::create_directories(d / "more");
  write(d / "more", "two.json",
        scenario(R"({"metric": "lost", "op": "==", "value": 0})", "", "two"));
  const fs::path runs = d / "runs";
  const Result r = run("check " + d.string() + " --out " + runs.string(), "out");
  CHECK(r.code == 0);
  REQUIRE(fs::exists(runs / "one" / "report.html"));
  REQUIRE(fs::exists(runs / "more" / "two" / "report.html"));
  const std::string first = testing::read_file(runs / "more" / "two" / "report.html");
  CHECK(has(first, "<html"));
  fs::remove(runs / "one" / "report.html");
  fs::remove(runs / "more" / "two" / "report.html");
  const Result again = run("report " + runs.string(), "report-folder");
  CHECK(again.code == 0);
  CHECK(has(again.out, "wrote " + (runs / "more" / "two" / "report.html").string()));
  CHECK(has(again.out, "wrote " + (runs / "one" / "report.html").string()));
  // The same bytes as check wrote.
  CHECK(testing::read_file(runs / "more" / "two" / "report.html") == first);
}
