// `run` of a scenario with settings `variants` prints each run as a plain `run` does (issue 34):
// its verdict, the steady window's headline and the decisive moments as warnings, not the
// whole-run counts that start-up dominates.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

TEST_CASE(
    "run with settings variants: each variant's verdict, steady headline and decisive moments, as "
    "run prints them") {
  using testing::contains;
  const auto dir = testing::scratch_dir("settings-run-line", "run");
  const auto r = testing::run_cli(
      "run scenarios/library/rolling-restart-static-vs-dynamic.json --protocol classic-eager "
      "--out " +
          (dir / "o").string(),
      "settings-run-line", true);
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (const std::string variant : {"dynamic", "static"}) {
    const auto summary = nlohmann::json::parse(
        testing::read_file(dir / "o" / variant / "classic-eager" / "summary.json"));
    CHECK(contains(r.out, "library-rolling-restart-static-vs-dynamic [" + variant +
                              "/classic-eager]: " + summary.at("verdict").get<std::string>() +
                              "\n  steady from 7.0 s: "));
  }
  // The story the scenario tells: after start-up dynamic members rebalance twice per restart
  // (4 restarts: 8, each a stop of the eager group), static members not at all.
  CHECK(contains(r.out,
                 "[dynamic/classic-eager]: After start-up (from 7.0 s): 8 rebalances; the whole "
                 "group stopped 8 times"));
  CHECK(contains(r.out,
                 "[static/classic-eager]: After start-up (from 7.0 s): 0 rebalances; the group "
                 "never stopped as a whole"));
  // Each static restart takes its group.instance.id over: a decisive moment, printed as a warning.
  CHECK(contains(r.out,
                 "\n  warning: at 35017.457 ms: A: group.instance.id a taken over by a new member: "
                 "the old member is fenced\n"));
  CHECK(!contains(r.out, "total "));  // the old whole-run line is gone
  std::filesystem::remove_all(dir);
}
