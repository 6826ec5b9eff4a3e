// `rebalance-sim sweep SCENARIO --vary PATH=VALUES … --seeds A..B`: a grid of settings over seeds.
// PATH is a JSON pointer into the scenario in which `*` stands for every element of an array
// (`/consumers/*/config/session.timeout.ms`); VALUES is `v1,v2,…` (each a JSON literal, else a
// string) or `a..b:step`. Every cell of the grid runs every seed, each seed every settings variant
// and protocol of the scenario. The outputs (DIR/runs.csv, runs.json, cells.csv, cells.json,
// phase.html and the worst seeds' runs under DIR/worst/) are a pure function of the runs' headline
// metrics, so `--shard I/N` (a deterministic share of the runs, written as a shard result) and
// `merge` of the N shard results give exactly the bytes of the unsharded sweep.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/kernel.hpp"

namespace CLI {
class App;
}

namespace rsim::cli {

class StagedOutput;

/// One --vary: the path's tokens ("*" = every element) and its values, in order.
struct VaryAxis {
  std::string path;
  std::vector<std::string> tokens;
  std::vector<nlohmann::json> values;
};

/// Parses "PATH=VALUES"; throws ScenarioError("--vary", ...) on a bad one.
VaryAxis parse_vary(const std::string& text);

/// `doc` with `value` written at every place the axis's path names; problems (a missing array
/// element, a path through a non-container) are appended as "--vary PATH: what".
nlohmann::json apply_vary(const nlohmann::json& doc, const VaryAxis& axis,
                          const nlohmann::json& value, std::vector<std::string>& problems);

/// "I/N" with 1 <= I <= N; throws ScenarioError("--shard", ...) otherwise.
std::pair<std::uint32_t, std::uint32_t> parse_shard(const std::string& text);
/// The shard results given to `merge`, checked as one set before they are combined: each is of
/// the same command (`shard[command]` equal: `differs` says what then differs), of the same shard
/// count, given once, and none missing. Every problem in one ScenarioError("merge"). Returns N.
std::uint32_t check_shard_set(const std::vector<nlohmann::json>& shards, const char* command,
                              const char* differs);

/// Whether unit `index` of a command's work belongs to shard I of N (round robin).
inline bool in_shard(std::size_t index, std::pair<std::uint32_t, std::uint32_t> shard) {
  return index % shard.second == shard.first - 1;
}

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> vary;
  std::string seeds;
  std::string out_dir;
  unsigned jobs = 1;
  std::string shard;  // "I/N": write DIR/shard-I-of-N.json only
  std::string metric =
      "unavailable_partition_ms";      // colours the phase diagram, picks the worst seed
  std::vector<std::string> variants;   // settings variants (default: all)
  std::vector<std::string> protocols;  // default: the scenario's
  bool quiet = false;
  bool force = false;  // --force: write into a non-empty folder rebalance-sim does not own
  sim::WatchdogLimits limits;
};

CLI::App* add_sweep_subcommand(CLI::App& app, SweepArgs& args);
/// Exit code: 0 (the sweep ran; its metrics are data, not assertions).
int cmd_sweep(const SweepArgs& args);

/// The outputs of a whole sweep from its shard results (any order, each shard once), written to
/// `out`. Used by `sweep` itself (one shard 1/1 held in memory) and by `merge`. The folder is an
/// owned StagedOutput (tools/staged_output.hpp; `force` as --force), `prepared` when the caller
/// claimed it before running (then `out` and `force` are its), else made here. The worst seeds'
/// runs and reports are rendered on `jobs` threads (the bytes do not depend on it).
void finish_sweep(const std::vector<nlohmann::json>& shards, const std::string& out, bool quiet,
                  bool force = false, StagedOutput* prepared = nullptr, unsigned jobs = 1);

}  // namespace rsim::cli
