#include "tools/commands/merge.hpp"

#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "tools/commands/check_shard.hpp"
#include "tools/commands/explore_shard.hpp"
#include "tools/commands/sweep.hpp"
#include "tools/exit_codes.hpp"

namespace rsim::cli {

CLI::App* add_merge_subcommand(CLI::App& app, MergeArgs& args) {
  auto* c =
      app.add_subcommand("merge",
                         "combine the shard results of `sweep`, `explore` or `check --shard I/N` "
                         "into exactly what the unsharded command writes (and prints)");
  c->add_option("results", args.results, "shard result files (shard-I-of-N.json), in any order")
      ->required();
  c->add_option("--out", args.out_dir, "output folder (as the unsharded command's --out)")
      ->required();
  c->add_flag("--quiet", args.quiet, "print nothing but errors");
  c->add_flag("--force", args.force,
              "write into a non-empty folder that is not an output folder of rebalance-sim "
              "(no .rebalance-sim-manifest.json): what it holds is kept, except entries named "
              "as the outputs");
  c->footer(
      "Example: rebalance-sim merge out/shards/shard-*-of-4.json --out "
      "out/sweep/poll-interval-storm");
  return c;
}

int cmd_merge(const MergeArgs& args) {
  std::vector<nlohmann::json> shards;
  std::vector<std::string> problems;
  std::string kind;
  for (const auto& f : args.results) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      problems.push_back(fmt::format("{}: cannot read the file", f));
      continue;
    }
    auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("kind") ||
        !doc["kind"].is_string() || !doc.contains("shard") || !doc.contains("units")) {
      problems.push_back(fmt::format(
          "{}: not a shard result (written by `sweep`, `explore` or `check --shard I/N`)", f));
      continue;
    }
    const std::string k = doc["kind"].get<std::string>();
    if (k != "rebalance-sim sweep shard" && k != "rebalance-sim explore shard" &&
        k != "rebalance-sim check shard") {
      problems.push_back(fmt::format("{}: unknown shard kind \"{}\"", f, one_line(k)));
      continue;
    }
    if (!kind.empty() && k != kind)
      problems.push_back(fmt::format("{}: a {} among {}s", f, k, kind));
    kind = k;
    shards.push_back(std::move(doc));
  }
  if (!problems.empty()) throw ScenarioError("merge", problems);
  try {
    if (kind == "rebalance-sim explore shard")
      return finish_explore(shards, args.out_dir, args.force);
    if (kind == "rebalance-sim check shard") return finish_check(shards, args.out_dir, args.force);
    finish_sweep(shards, args.out_dir, args.quiet, args.force);
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioError("merge", {fmt::format("a shard result is malformed: {}", e.what())});
  }
  return kOk;
}

}  // namespace rsim::cli
