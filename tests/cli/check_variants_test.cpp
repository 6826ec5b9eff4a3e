// `check` and `explore` on a scenario with settings variants run every variant x protocol
// (issue 36), not only the base scenario.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_file;
using testing::run_cli;

namespace {

fs::path scratch(const std::string& tag) {
  return testing::scratch_dir("check-variants", tag);
}

}  // namespace

TEST_CASE("check: a scenario with settings variants is one suite per variant and protocol") {
  const fs::path dir = scratch("check");
  const auto r = run_cli(
      "check scenarios/library/rolling-restart-static-vs-dynamic.json --junit-time virtual "
      "--json " +
          (dir / "r.json").string() + " --junit " + (dir / "r.xml").string() + " --out " +
          (dir / "out").string(),
      "check-variants");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  // dynamic: the base `expect` (4 for every protocol + 1 `duplicates` per protocol) = 5 each;
  // static: its own `expect`, 4 entries. 3 x 5 + 3 x 4 = 27.
  CHECK(testing::contains(r.out, "27 passed, 0 failed, 0 warnings (1 scenarios, 0 invalid)"));
  for (const char* v : {"dynamic", "static"})
    for (const char* p : {"classic-eager", "classic-cooperative", "consumer"}) {
      const std::string name = std::string(v) + "/" + p;
      CAPTURE(name);
      CHECK(testing::contains(r.out,
                              "PASS library-rolling-restart-static-vs-dynamic [" + name + "] "));
      CHECK(testing::contains(read_file(dir / "r.xml"),
                              "<testsuite name=\"library-rolling-restart-static-vs-dynamic [" +
                                  name + "]\" tests=\"" +
                                  (std::string(v) == "dynamic" ? "5" : "4") + "\""));
      CHECK(fs::exists(dir / "out" / "rolling-restart-static-vs-dynamic" / v / p / "summary.json"));
    }
  CHECK(testing::contains(
      r.out,
      "PASS library-rolling-restart-static-vs-dynamic [static/consumer] a static restart within "
      "the session "
      "timeout does not rebalance: rebalance_count == 0 over [25000, end) ms (actual 0)"));
  // The metrics of each run, for --baseline: dynamic eager rebalances at start-up and for each
  // of the 4 restarts' leave and join (9), as `run` says for the same variant.
  const json j = json::parse(read_file(dir / "r.json"));
  REQUIRE(j.at("runs").size() == 6);
  CHECK(j.at("runs").at(0).at("variant") == "dynamic/classic-eager");
  CHECK(j.at("runs").at(0).at("metrics").at("rebalance_count") == 9);
  CHECK(j.at("runs").at(5).at("variant") == "static/consumer");
  CHECK(fs::exists(dir / "out" / "rolling-restart-static-vs-dynamic" / "report.html"));
}

TEST_CASE(
    "explore: a scenario with settings variants runs each variant under each protocol, sharded or "
    "not") {
  const fs::path dir = scratch("explore");
  const std::string base =
      "explore scenarios/library/rolling-restart-static-vs-dynamic.json --seeds 1..3";
  const auto whole = run_cli(base + " --out " + (dir / "whole").string(), "explore-variants");
  REQUIRE_MESSAGE(whole.code == 0, whole.out);
  CHECK(testing::contains(whole.out,
                          "seeds 1..3 (3 seeds) x 6 variants = 18 runs, 0 violations in 0 seeds"));
  CHECK(testing::contains(whole.out, "  dynamic/classic-eager: ok\n"));
  CHECK(testing::contains(whole.out, "  static/consumer: ok\n"));
  const auto picked = run_cli(base + " --protocol consumer --out " + (dir / "picked").string(),
                              "explore-variants-picked");
  REQUIRE(picked.code == 0);
  CHECK(testing::contains(picked.out, "x 2 variants = 6 runs"));
  for (int i = 1; i <= 2; ++i) {
    const auto s =
        run_cli(base + " --shard " + std::to_string(i) + "/2 --out " + (dir / "shards").string(),
                "explore-variants-shard");
    REQUIRE_MESSAGE(s.code == 0, s.err);
  }
  const auto merged = run_cli("merge " + (dir / "shards" / "shard-2-of-2.json").string() + " " +
                                  (dir / "shards" / "shard-1-of-2.json").string() + " --out " +
                                  (dir / "whole").string(),
                              "explore-variants-merge");
  CHECK(merged.code == 0);
  CHECK(merged.out == whole.out);
}
