// The rebalance-sim command line, run as a separate process: exit codes, output files, errors
// on bad input with no partial output, and byte-identical output for the same seed.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("rebalance-sim-cli-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return testing::remove_at_exit(d);
}

/// Runs the binary; `out` holds stdout and stderr together.
Result run(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "cli-" + tag, /*merge_stderr=*/true);
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

const char* kGood = R"({
  "name": "tiny", "seed": 3, "duration_ms": 20000, "protocols": ["classic-eager"],
  "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}},
  "network": {"latency_ms": {"dist": "uniform", "min": 0.5, "max": 3}},
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [{"name": "A", "group": "g", "topics": ["t"]}, {"name": "B", "group": "g", "topics": ["t"]}],
  "events": [{"at_ms": 100, "do": "start", "consumer": "A"}, {"at_ms": 200, "do": "start", "consumer": "B"}],
  "expect": [{"metric": "rebalance_count", "op": "==", "value": 2}]
})";

}  // namespace

TEST_CASE("run writes trace.jsonl and summary.json per variant and exits 0") {
  const auto d = temp_dir("run");
  const Result r =
      run("run scenarios/examples/two-consumers.json --out " + (d / "out").string(), "run");
  CHECK(r.code == 0);
  CHECK(fs::exists(d / "out" / "classic-eager" / "trace.jsonl"));
  CHECK(fs::exists(d / "out" / "classic-eager" / "summary.json"));
  // The run line leads with the verdict of the steady window (after A's start-up rebalance and B's
  // join: the script starts A and B before anything else), then that window's numbers.
  CHECK(r.out.find("two-consumers [classic-eager]: After start-up (from 6.1 s): 2 rebalances; the "
                   "whole group "
                   "stopped 2 times") != std::string::npos);
  CHECK(r.out.find("\n  steady from 6.1 s: 2 rebalances, max ") != std::string::npos);
  // The whole run's count stays in summary.json's metrics.
  const auto summary =
      nlohmann::json::parse(testing::read_file(d / "out" / "classic-eager" / "summary.json"));
  CHECK(summary["metrics"]["rebalance_count"] == 4);
  CHECK(summary["steady"]["metrics"]["rebalance_count"] == 2);
}

TEST_CASE(
    "the same scenario and seed give byte-identical files - another seed with random latency does "
    "not") {
  const auto d = temp_dir("determinism");
  const auto scenario = write(d, "tiny.json", kGood);
  REQUIRE(run("run " + scenario.string() + " --out " + (d / "a").string(), "det-a").code == 0);
  REQUIRE(run("run " + scenario.string() + " --out " + (d / "b").string(), "det-b").code == 0);
  REQUIRE(run("run " + scenario.string() + " --seed 4 --out " + (d / "c").string(), "det-c").code ==
          0);
  const auto trace = [&](const char* x) {
    return testing::read_file(d / x / "classic-eager" / "trace.jsonl");
  };
  const auto summary = [&](const char* x) {
    return testing::read_file(d / x / "classic-eager" / "summary.json");
  };
  CHECK(!trace("a").empty());
  CHECK(trace("a") == trace("b"));
  CHECK(summary("a") == summary("b"));
  CHECK(trace("a") != trace("c"));
}

TEST_CASE("a failed expectation exits 1 and still writes the summary") {
  const auto d = temp_dir("expect");
  std::string text = kGood;
  text.replace(text.find("\"value\": 2"), 10, "\"value\": 9");
  const auto scenario = write(d, "bad-expect.json", text);
  const Result r = run("run " + scenario.string() + " --out " + (d / "out").string(), "expect");
  CHECK(r.code == 1);
  CHECK(
      r.out.find("FAILED expect[0] classic-eager rebalance_count == 9: expected == 9, actual 2") !=
      std::string::npos);
  CHECK(fs::exists(d / "out" / "classic-eager" / "summary.json"));
}

TEST_CASE("bad input exits 2, names the file and JSON path, and writes nothing") {
  const auto d = temp_dir("bad");
  std::string text = kGood;
  text.replace(text.find("\"at_ms\": 200"), 12, "\"at_ms\": -5");
  const auto scenario = write(d, "bad.json", text);
  const Result r = run("run " + scenario.string() + " --out " + (d / "out").string(), "bad");
  CHECK(r.code == 2);
  CHECK(r.out.find(scenario.string() + ": /events/1/at_ms:") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "out"));
}

TEST_CASE("not JSON exits 2 with the position of the problem") {
  const auto d = temp_dir("notjson");
  const auto scenario = write(d, "broken.json", "{\n  \"name\": \"x\",\n  oops\n}\n");
  const Result r = run("validate " + scenario.string(), "notjson");
  CHECK(r.code == 2);
  CHECK(r.out.find(scenario.string()) != std::string::npos);
  CHECK(r.out.find("3:") != std::string::npos);  // line 3
}

TEST_CASE("a scenario feature a variant cannot simulate is refused with exit 2, not run half-way") {
  const auto d = temp_dir("variant");
  const Result r = run("run scenarios/classic/coordinator-failover.json --protocol share --out " +
                           (d / "out").string(),
                       "variant");
  CHECK(r.code == 2);
  CHECK(r.out.find("fail-coordinator is not simulated for share groups by this version yet") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(d / "out"));
}

TEST_CASE("validate, check, usage errors, --help and --version") {
  const auto d = temp_dir("misc");
  const auto scenario = write(d, "tiny.json", kGood);
  CHECK(run("validate " + scenario.string(), "validate").code == 0);
  const Result check =
      run("check " + scenario.string() + " --junit " + (d / "junit.xml").string(), "check");
  CHECK(check.code == 0);
  CHECK(check.out.find("1 passed, 0 failed") != std::string::npos);
  CHECK(testing::read_file(d / "junit.xml")
            .find("<testsuites name=\"rebalance-sim check\" tests=\"1\" failures=\"0\"") !=
        std::string::npos);
  CHECK(run("frobnicate", "usage").code == 2);
  CHECK(run("run", "usage2").code == 2);
  const Result help = run("--help", "help");
  CHECK(help.code == 0);
  CHECK(help.out.find("Examples:") != std::string::npos);
  const Result version = run("--version", "version");
  CHECK(version.code == 0);
  CHECK(version.out.find("rebalance-sim 0.1.0") != std::string::npos);
#ifdef RSIM_EXPECT_MIMALLOC
  // The release binary's malloc is mimalloc's (a block from malloc() lies in its heap).
  CHECK(version.out.find("malloc: mimalloc 2.") != std::string::npos);
#else
  CHECK(version.out.find("malloc: libc") != std::string::npos);
#endif
  CHECK(run("validate " + (d / "missing.json").string(), "missing").code == 2);
}
