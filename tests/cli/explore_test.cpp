// explore, shrink and run --check-invariants (issue 11): the same output for any --jobs, and a
// deliberately broken coordinator (one that skips revocation, behind the hidden --inject-bug)
// caught and shrunk to a small scenario.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using testing::run_cli;

namespace {
const char* kBase = "scenarios/explore/two-groups-short.json";

fs::path scratch(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("rsim-explore-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return testing::remove_at_exit(p);
}
}  // namespace

// The 200 seeds per variant of the CI scenario with no violation are a ctest of their own
// (tests/CMakeLists.txt: "explore: ..."), outside the sanitizer run of the unit tests.

TEST_CASE("explore: each seed prints its knobs, and the output does not depend on --jobs") {
  const fs::path dir = scratch("jobs");
  const auto one =
      run_cli(std::string("explore ") + kBase + " --seeds 40..47 --jobs 1 --out " + dir.string(),
              "explore-j1");
  const auto three =
      run_cli(std::string("explore ") + kBase + " --seeds 40..47 --jobs 3 --out " + dir.string(),
              "explore-j3");
  CHECK(one.code == 0);
  CHECK(one.out == three.out);
  CHECK(one.out.find("seed 40: network.latency_ms ") != std::string::npos);
  CHECK(one.out.find("  classic-cooperative: ok\n") != std::string::npos);
  // The knobs are the same as `run --faults-seed` prints.
  const auto run = run_cli(std::string("run ") + kBase +
                               " --faults-seed 40 --protocol consumer --check-invariants --out " +
                               (dir / "run").string(),
                           "explore-run");
  CHECK(run.code == 0);
  const auto first_line = one.out.substr(0, one.out.find('\n'));
  const auto latency =
      first_line.substr(first_line.find("network.latency_ms"),
                        first_line.find(';') - first_line.find("network.latency_ms"));
  CHECK(run.out.find("fault knob (seed 40): " + latency) != std::string::npos);
  CHECK(run.out.find("two-groups-short [consumer]: invariants hold") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "explore: a coordinator that skips revocation is caught, reproduced by one run, and shrunk") {
  const fs::path dir = scratch("bug");
  const auto r = run_cli(
      std::string("explore ") + kBase +
          " --seeds 1..3 --protocol consumer --inject-bug skip-revocation --out " + dir.string(),
      "explore-bug");
  CHECK(r.code == 1);
  CHECK(r.out.find("consumer: FAILED exclusive-ownership at t=") != std::string::npos);
  CHECK(r.out.find("trace window (trace.jsonl lines ") != std::string::npos);
  std::smatch m;
  const std::regex reproduce("reproduce: (rebalance-sim run [^\n]*--inject-bug skip-revocation)\n");
  REQUIRE(std::regex_search(r.out, m, reproduce));
  const std::string command = m[1].str().substr(std::string("rebalance-sim ").size());
  const auto again = run_cli(command + " --out " + (dir / "again").string(), "explore-bug-again");
  CHECK(again.code == 1);
  CHECK(again.out.find("VIOLATED exclusive-ownership") != std::string::npos);

  const std::regex written("scenario with these faults: ([^\n]*)\n");
  REQUIRE(std::regex_search(r.out, m, written));
  const std::string failing = m[1].str();
  REQUIRE(fs::exists(failing));
  const auto shrunk = run_cli(
      "shrink " + failing + " --inject-bug skip-revocation --out " + (dir / "small.json").string(),
      "explore-shrink");
  INFO(shrunk.out);
  INFO(shrunk.err);
  CHECK(shrunk.code == 0);
  CHECK(shrunk.out.find("exclusive-ownership fails under consumer") != std::string::npos);
  const auto small = nlohmann::json::parse(testing::read_file(dir / "small.json"));
  // Two members of one group on one topic are enough to show the bug: nothing else is left.
  CHECK(small["consumers"].size() == 2);
  CHECK(small["topics"].size() == 1);
  CHECK(small["events"].size() == 2);
  const auto small_run =
      run_cli("run " + (dir / "small.json").string() +
                  " --protocol consumer --check-invariants --inject-bug skip-revocation --out " +
                  (dir / "small-out").string(),
              "explore-small");
  CHECK(small_run.code == 1);
  // Without the bug, the small scenario holds.
  const auto fixed =
      run_cli("run " + (dir / "small.json").string() +
                  " --protocol consumer --check-invariants --out " + (dir / "fixed-out").string(),
              "explore-fixed");
  CHECK(fixed.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("explore: --seeds must be A..B") {
  const auto r = run_cli(std::string("explore ") + kBase + " --seeds 9..3", "explore-seeds");
  CHECK(r.code == 2);
  CHECK(r.err.find("--seeds: must be A..B with A <= B (or one seed), got \"9..3\"") !=
        std::string::npos);
}

TEST_CASE(
    "run --check-invariants on a share group: shared partitions are not a violation, and the "
    "watchdog bounds it") {
  // KIP-932: the eight members share four partitions (two members each after the assignment at
  // 6.0 s), which exclusive-ownership would wrongly count; epochs and liveness still apply.
  const fs::path dir = scratch("share");
  const auto r = run_cli(
      "run scenarios/share/eight-consumers-one-crash.json --check-invariants --out " + dir.string(),
      "share-invariants");
  CHECK(r.code == 0);
  CHECK(r.out.find("share-eight-consumers-one-crash [share]: invariants hold") !=
        std::string::npos);
  CHECK(r.out.find("VIOLATED") == std::string::npos);
  const auto w =
      run_cli("run scenarios/share/eight-consumers-one-crash.json --max-events 1000 --out " +
                  (dir / "w").string(),
              "share-watchdog");
  CHECK(w.code == 2);
  CHECK(w.err.find("watchdog: ") != std::string::npos);
  CHECK(!fs::exists(dir / "w" / "share"));
  fs::remove_all(dir);
}
