// Issue 36: settings variants in one scenario, `sweep` over a grid of settings and seeds, and
// `--shard I/N` + `merge` giving the unsharded bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_file;
using testing::run_cli;

namespace {

fs::path scratch(const std::string& tag) {
  return testing::scratch_dir("sweep", tag);
}

// A summary without what names the file it came from (its name, path, hash, the variant).
json comparable(const fs::path& summary) {
  json j = json::parse(read_file(summary));
  // The expectations are each file's own assertions (the library files assert their claims);
  // the runs themselves must be the same.
  for (const char* k : {"produced_by", "scenario", "variant", "expectations"}) j.erase(k);
  return j;
}

// Every file under `dir` (relative path -> bytes), staging folders excluded.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      files[fs::relative(e.path(), dir).generic_string()] = read_file(e.path());
  return files;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const char* kSmallSweep =
    "sweep scenarios/examples/two-consumers.json --vary "
    "/consumers/*/config/session.timeout.ms=10000,20000 "
    "--vary /cluster/config/group.initial.rebalance.delay.ms=0..3000:3000 --seeds 1..3 --quiet";

}  // namespace

TEST_CASE(
    "variants: a scenario with two settings variants gives the summaries of the two separate "
    "files") {
  const fs::path dir = scratch("variants");
  const auto both =
      run_cli("run scenarios/library/rolling-restart-static-vs-dynamic.json --trace none --out " +
                  (dir / "both").string(),
              "variants-both", true);
  REQUIRE_MESSAGE(both.code == 0, both.out);
  const auto dyn =
      run_cli("run scenarios/library/rolling-restart-dynamic.json --trace none --out " +
                  (dir / "dyn").string(),
              "variants-dyn", true);
  REQUIRE_MESSAGE(dyn.code == 0, dyn.out);
  const auto stat =
      run_cli("run scenarios/library/rolling-restart-static.json --trace none --out " +
                  (dir / "static").string(),
              "variants-static", true);
  REQUIRE_MESSAGE(stat.code == 0, stat.out);
  for (const char* p : {"classic-eager", "classic-cooperative", "consumer"}) {
    CAPTURE(p);
    CHECK(comparable(dir / "both" / "dynamic" / p / "summary.json") ==
          comparable(dir / "dyn" / p / "summary.json"));
    CHECK(comparable(dir / "both" / "static" / p / "summary.json") ==
          comparable(dir / "static" / p / "summary.json"));
    const json s = json::parse(read_file(dir / "both" / "static" / p / "summary.json"));
    CHECK(s.at("variant") == "static");
    CHECK(s.at("protocol") == p);
  }
  // Static members restarted within the session timeout do not rebalance after start-up.
  const json st = json::parse(read_file(dir / "both" / "static" / "consumer" / "summary.json"));
  const json dy =
      json::parse(read_file(dir / "both" / "dynamic" / "classic-eager" / "summary.json"));
  CHECK(dy.at("metrics").at("rebalance_count") == 9);  // start-up + 4 restarts x (leave + join)
  CHECK(st.at("expectations").size() == 4);
  for (const auto& e : st.at("expectations")) CHECK(e.at("passed") == true);
  // --variant picks; the one report shows every variant x protocol on one time axis.
  const auto one = run_cli(
      "run scenarios/library/rolling-restart-static-vs-dynamic.json --variant static --protocol "
      "consumer "
      "--out " +
          (dir / "one").string(),
      "variants-one", true);
  REQUIRE_MESSAGE(one.code == 0, one.out);
  CHECK(fs::exists(dir / "one" / "static" / "consumer" / "trace.jsonl"));
  CHECK_FALSE(fs::exists(dir / "one" / "dynamic"));
  const std::string html = read_file(dir / "one" / "report.html");
  CHECK(html.find("data-variant=\"static/consumer\"") != std::string::npos);
  // `report DIR` reads DIR/<variant>/<protocol>/ and writes the same report.
  const std::string before = html;
  const auto again = run_cli("report " + (dir / "one").string(), "variants-report", true);
  REQUIRE_MESSAGE(again.code == 0, again.out);
  CHECK(read_file(dir / "one" / "report.html") == before);
}

TEST_CASE("variants: problems name the variant and the JSON path, all in one pass") {
  const fs::path dir = scratch("variants-bad");
  json doc =
      json::parse(read_file(fs::path(RSIM_SOURCE_DIR) / "scenarios/examples/two-consumers.json"));
  doc["variants"] = {
      {"short", {{"consumers", {{"A", {{"config", {{"session.timeout.ms", -5}}}}}}}}},
      {"typo", {{"consumers", {{"X", {{"config", {{"client.id", "x"}}}}}}}}},
      {"gone", {{"consumers", {{"B", nullptr}}}}}};
  std::ofstream(dir / "bad.json") << doc.dump(2);
  const auto r = run_cli("validate " + (dir / "bad.json").string(), "variants-bad");
  CHECK(r.code == 2);
  CAPTURE(r.err);
  CHECK(r.err.find("variant \"short\": /consumers/0/config/session.timeout.ms") !=
        std::string::npos);
  CHECK(r.err.find("(set by /variants/short/consumers/A/config/session.timeout.ms)") !=
        std::string::npos);
  CHECK(r.err.find("/variants/typo/consumers/X: the scenario has no consumer \"X\"") !=
        std::string::npos);
  // Removing B leaves events that name it.
  CHECK(r.err.find("variant \"gone\": /events/") != std::string::npos);
  const auto pick =
      run_cli("run " + (dir / "bad.json").string() + " --variant shrot", "variants-pick");
  CHECK(pick.code == 2);
  CHECK(pick.err.find("--variant shrot: no such variant (did you mean \"short\"?)") !=
        std::string::npos);
}

TEST_CASE("sweep: the grid and the seeds give exactly the expected runs") {
  const fs::path dir = scratch("grid");
  const auto r = run_cli(std::string(kSmallSweep) + " --out " + dir.string(), "sweep-grid", true);
  REQUIRE_MESSAGE(r.code == 0, r.out);
  const auto rows = lines(read_file(dir / "runs.csv"));
  REQUIRE(rows.size() == 1 + 2 * 2 * 3);
  CHECK(rows[0].rfind("cell,/consumers/*/config/session.timeout.ms,/cluster/config/"
                      "group.initial.rebalance.delay.ms,"
                      "seed,variant,protocol,rebalance_count,",
                      0) == 0);
  // The first axis varies slowest, seeds fastest; one protocol (classic-eager), no settings
  // variant.
  const std::vector<std::string> expected{
      "c1,10000,0,1,,classic-eager,",    "c1,10000,0,2,,classic-eager,",
      "c1,10000,0,3,,classic-eager,",    "c2,10000,3000,1,,classic-eager,",
      "c2,10000,3000,2,,classic-eager,", "c2,10000,3000,3,,classic-eager,",
      "c3,20000,0,1,,classic-eager,",    "c3,20000,0,2,,classic-eager,",
      "c3,20000,0,3,,classic-eager,",    "c4,20000,3000,1,,classic-eager,",
      "c4,20000,3000,2,,classic-eager,", "c4,20000,3000,3,,classic-eager,"};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i + 1].rfind(expected[i], 0) == 0);
  }
  const json runs = json::parse(read_file(dir / "runs.json"));
  CHECK(runs.at("runs").size() == 12);
  CHECK(runs.at("runs").at(4).at("values") ==
        json{{"/cluster/config/group.initial.rebalance.delay.ms", 3000},
             {"/consumers/*/config/session.timeout.ms", 10000}});
  const json cells = json::parse(read_file(dir / "cells.json"));
  REQUIRE(cells.at("cells").size() == 4);
  for (const auto& c : cells.at("cells")) {
    CHECK(c.at("runs") == 3);
    const auto& m = c.at("metrics").at("rebalance_count");
    CHECK(m.at("median") <= m.at("p95"));
    CHECK(m.at("p95") <= m.at("max"));
    CHECK(fs::exists(dir / c.at("report").get<std::string>()));
  }
  // The scenario's own numbers: at its seed (7) and its settings (default session timeout 45 s,
  // no initial delay) the eager group rebalances 4 times (B joins, B leaves, A leaves: the
  // scenario's expect), as `run` says.
  const fs::path one = dir / "one";
  const auto s7 = run_cli(
      "sweep scenarios/examples/two-consumers.json --vary "
      "/consumers/*/config/session.timeout.ms=45000 "
      "--seeds 7 --quiet --out " +
          one.string(),
      "sweep-seed7", true);
  REQUIRE_MESSAGE(s7.code == 0, s7.out);
  const json c7 = json::parse(read_file(one / "cells.json"));
  CHECK(c7.at("cells").at(0).at("metrics").at("rebalance_count") ==
        json{{"median", 4}, {"p95", 4}, {"max", 4}});
  CHECK(c7.at("cells").at(0).at("worst_seed") == 7);
}

TEST_CASE(
    "sweep: merge of N = 1, 3, 7 shards in shuffled order equals the unsharded output byte for "
    "byte") {
  const fs::path dir = scratch("merge");
  const auto whole =
      run_cli(std::string(kSmallSweep) + " --jobs 2 --out " + (dir / "whole").string(),
              "merge-whole", true);
  REQUIRE_MESSAGE(whole.code == 0, whole.out);
  const auto expected = tree(dir / "whole");
  REQUIRE(expected.count("phase.html") == 1);
  std::mt19937 shuffle_rng(36);
  for (const int n : {1, 3, 7}) {
    CAPTURE(n);
    const fs::path shards = dir / ("shards-" + std::to_string(n));
    std::vector<std::string> files;
    for (int i = 1; i <= n; ++i) {
      const auto r = run_cli(std::string(kSmallSweep) + " --shard " + std::to_string(i) + "/" +
                                 std::to_string(n) + " --out " + shards.string(),
                             "merge-shard", true);
      REQUIRE_MESSAGE(r.code == 0, r.out);
      files.push_back(
          (shards / ("shard-" + std::to_string(i) + "-of-" + std::to_string(n) + ".json"))
              .string());
    }
    std::shuffle(files.begin(), files.end(), shuffle_rng);
    std::string args;
    for (const auto& f : files) args += " " + f;
    const fs::path out = dir / ("merged-" + std::to_string(n));
    const auto m = run_cli("merge" + args + " --quiet --out " + out.string(), "merge-merge", true);
    REQUIRE_MESSAGE(m.code == 0, m.out);
    CHECK(tree(out) == expected);
    if (n == 3) {
      // A missing shard is named; nothing is written.
      const auto partial =
          run_cli("merge " + files[0] + " " + files[1] + " --out " + (dir / "partial").string(),
                  "merge-partial");
      CHECK(partial.code == 2);
      CHECK(partial.err.find("missing shard result") != std::string::npos);
      CHECK_FALSE(fs::exists(dir / "partial" / "runs.csv"));
    }
  }
}

TEST_CASE("sweep: bad --vary, --seeds and --shard are refused with the reason") {
  const auto r = run_cli(
      "sweep scenarios/examples/two-consumers.json --vary "
      "/consumers/5/config/session.timeout.ms=1,2 "
      "--seeds 1..2 --out /tmp/rsim-never",
      "sweep-bad");
  CHECK(r.code == 2);
  CHECK(r.err.find("--vary /consumers/5/config/session.timeout.ms: /consumers has 2 elements") !=
        std::string::npos);
  const auto range =
      run_cli("sweep scenarios/examples/two-consumers.json --vary /seed=5..1:1 --seeds 1..2",
              "sweep-range");
  CHECK(range.code == 2);
  CHECK(range.err.find("a range is a..b:step") != std::string::npos);
  const auto shard =
      run_cli("sweep scenarios/examples/two-consumers.json --vary /seed=1 --seeds 1 --shard 4/3",
              "sweep-shard");
  CHECK(shard.code == 2);
  CHECK(shard.err.find("--shard: must be I/N with 1 <= I <= N") != std::string::npos);
  const auto bad_value = run_cli(
      "sweep scenarios/examples/two-consumers.json --vary "
      "/consumers/*/config/session.timeout.ms=-3 "
      "--seeds 1 --out /tmp/rsim-never",
      "sweep-badvalue");
  CHECK(bad_value.code == 2);
  CHECK(bad_value.err.find("cell /consumers/*/config/session.timeout.ms=-3: "
                           "/consumers/0/config/session.timeout.ms") != std::string::npos);
}

TEST_CASE("explore --shard: merge prints and writes what the unsharded explore does") {
  const fs::path dir = scratch("explore-shard");
  // A deliberately broken coordinator: some seeds fail and write their scenario.
  const std::string base =
      "explore scenarios/explore/two-groups-short.json --seeds 1..5 --protocol consumer "
      "--inject-bug skip-revocation";
  const auto whole = run_cli(base + " --jobs 2 --out " + (dir / "whole").string(), "explore-whole");
  REQUIRE(whole.code == 1);
  std::vector<std::string> files;
  for (int i = 1; i <= 3; ++i) {
    const auto r =
        run_cli(base + " --shard " + std::to_string(i) + "/3 --out " + (dir / "shards").string(),
                "explore-shard");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    files.push_back((dir / "shards" / ("shard-" + std::to_string(i) + "-of-3.json")).string());
  }
  const auto merged = run_cli(
      "merge " + files[2] + " " + files[0] + " " + files[1] + " --out " + (dir / "whole").string(),
      "explore-merge");
  CHECK(merged.code == 1);
  CHECK(merged.out == whole.out);
  CHECK(merged.out.find("seeds 1..5 (5 seeds) x 1 variants = 5 runs") != std::string::npos);
  const auto before = tree(dir / "whole");
  CHECK_FALSE(before.empty());
  // The merge rewrote the same seed files.
  const fs::path again = dir / "again";
  const auto m2 =
      run_cli("merge " + files[1] + " " + files[2] + " " + files[0] + " --out " + again.string(),
              "explore-merge2");
  CHECK(m2.code == 1);
  CHECK(tree(again) == before);
}
