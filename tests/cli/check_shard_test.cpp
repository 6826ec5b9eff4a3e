// `check --shard I/N` + `merge`: the shards of a check, merged in any order, print and write
// exactly what the unsharded check does (issue 36).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_file;
using testing::run_cli;

namespace {

fs::path scratch(const std::string& tag) {
  return testing::scratch_dir("check-shard", tag);
}
using testing::write_file;

}  // namespace

TEST_CASE(
    "check --shard: merge of N = 1, 3, 7 shards in shuffled order equals the unsharded check byte "
    "for byte") {
  const fs::path dir = scratch("merge");
  // Passing, failing and invalid scenarios: two-consumers has 4 eager rebalances (its own
  // expect), so == 5 fails; a scenario with an unknown op does not load.
  const fs::path extra = dir / "extra";
  fs::create_directories(extra);
  json failing =
      json::parse(read_file(fs::path(RSIM_SOURCE_DIR) / "scenarios/examples/two-consumers.json"));
  failing["name"] = "two-consumers-failing";
  failing["expect"] = json::array(
      {{{"protocol", "classic-eager"}, {"metric", "rebalance_count"}, {"op", "=="}, {"value", 5}}});
  write_file(extra / "failing.json", failing.dump(2));
  json invalid = failing;
  invalid["name"] = "invalid";
  invalid["expect"][0]["op"] = "=~";
  write_file(extra / "invalid.json", invalid.dump(2));
  const std::string base =
      "check scenarios/examples scenarios/library/rolling-restart-static.json "
      "scenarios/library/crash.json " +
      extra.string() + " --junit-time virtual";
  const fs::path whole = dir / "whole";
  fs::create_directories(whole);
  const auto w =
      run_cli(base + " --jobs 2 --junit " + (whole / "r.xml").string() + " --json " +
                  (whole / "r.json").string() + " --markdown " + (whole / "r.md").string(),
              "check-shard-whole");
  REQUIRE(w.code == 2);  // an invalid scenario is bad input
  CHECK(w.out.find("FAIL two-consumers-failing [classic-eager] expect[0] rebalance_count == 5: "
                   "expected == 5, actual 4") != std::string::npos);
  CHECK(w.out.find("(8 scenarios, 1 invalid)") != std::string::npos);
  std::mt19937 rng(36);
  for (const int n : {1, 3, 7}) {
    CAPTURE(n);
    const fs::path shards = dir / ("shards-" + std::to_string(n));
    std::vector<std::string> files;
    for (int i = 1; i <= n; ++i) {
      const auto r =
          run_cli(base + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " +
                      shards.string() + " --junit somewhere/r.xml --json r.json --markdown r.md",
                  "check-shard-one");
      REQUIRE_MESSAGE(r.code == 0, r.err);
      files.push_back(
          (shards / ("shard-" + std::to_string(i) + "-of-" + std::to_string(n) + ".json"))
              .string());
    }
    // Scenario k goes to shard k mod N + 1: with N = 7 each shard holds exactly one of the 7.
    if (n == 7) CHECK(json::parse(read_file(files[6])).at("units").size() == 1);
    std::shuffle(files.begin(), files.end(), rng);
    std::string args;
    for (const auto& f : files) args += " " + f;
    const fs::path out = dir / ("merged-" + std::to_string(n));
    const auto m = run_cli("merge" + args + " --out " + out.string(), "check-shard-merge");
    CHECK(m.code == w.code);
    CHECK(m.out == w.out);
    for (const char* f : {"r.xml", "r.json", "r.md"}) {
      CAPTURE(f);
      CHECK(read_file(out / f) == read_file(whole / f));
    }
    if (n == 3) {
      const auto partial =
          run_cli("merge " + files[0] + " " + files[2] + " --out " + (dir / "partial").string(),
                  "check-shard-partial");
      CHECK(partial.code == 2);
      CHECK(partial.err.find("missing shard result") != std::string::npos);
      CHECK_FALSE(fs::exists(dir / "partial"));
    }
  }
}

TEST_CASE("check --shard: options that need every scenario in one process are refused") {
  const auto r =
      run_cli("check scenarios/examples --shard 1/2 --update-golden", "check-shard-golden");
  CHECK(r.code == 2);
  CHECK(r.err.find("--shard cannot be combined with --update-golden") != std::string::npos);
  const auto bad = run_cli("check scenarios/examples --shard 3/2", "check-shard-bad");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--shard: must be I/N with 1 <= I <= N") != std::string::npos);
  const auto same = run_cli("check scenarios/examples --shard 1/2 --junit a/r.txt --json b/r.txt",
                            "check-shard-names");
  CHECK(same.code == 2);
  CHECK(same.err.find("need distinct file names (r.txt twice)") != std::string::npos);
}

TEST_CASE(
    "merge of check shards writes into an owned output folder: a manifest, a foreign folder "
    "refused and left intact") {
  const fs::path dir = scratch("owned");
  const auto r = run_cli(
      "check scenarios/examples/two-consumers.json --junit-time virtual --shard 1/1 --out " +
          (dir / "shards").string() + " --junit r.xml --json r.json",
      "check-shard-owned-shard");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string shard = (dir / "shards" / "shard-1-of-1.json").string();
  const fs::path out = dir / "merged";
  const auto m = run_cli("merge " + shard + " --out " + out.string(), "check-shard-owned-merge");
  REQUIRE_MESSAGE(m.code == 0, m.err);
  const json manifest = json::parse(read_file(out / ".rebalance-sim-manifest.json"));
  CHECK(manifest.at("written_by") == "rebalance-sim");
  CHECK(manifest.at("files") == json::array({"r.json", "r.xml"}));
  // Its own folder again: replaced, a user's note beside the reports kept.
  write_file(out / "notes.txt", "mine");
  const auto again =
      run_cli("merge " + shard + " --out " + out.string(), "check-shard-owned-again");
  CHECK_MESSAGE(again.code == 0, again.err);
  CHECK(read_file(out / "notes.txt") == "mine");
  CHECK(fs::exists(out / "r.xml"));
  // A folder with foreign content and no manifest: exit 2, nothing written, its file intact.
  const fs::path foreign = dir / "foreign";
  fs::create_directories(foreign);
  write_file(foreign / "r.xml", "not ours");
  const auto refused =
      run_cli("merge " + shard + " --out " + foreign.string(), "check-shard-owned-refused");
  CHECK(refused.code == 2);
  CHECK(refused.err.find("not empty") != std::string::npos);
  CHECK(read_file(foreign / "r.xml") == "not ours");
  CHECK_FALSE(fs::exists(foreign / "r.json"));
  CHECK_FALSE(fs::exists(foreign / ".rebalance-sim-manifest.json"));
}
