// `check --shard I/N`: scenario number k (k = 0, 1, … in check's file order) goes to shard
// k mod N + 1; each shard runs its scenarios (all their variants) as `check` runs them and writes
// DIR/shard-I-of-N.json. `merge` prints what the unsharded check prints, writes its --junit,
// --markdown and --json files into --out (under their file names) byte for byte, and exits as it
// does, whatever N and the order of the shards.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/commands/check.hpp"

namespace rsim::cli {

/// Why `args` cannot be sharded ("" if it can): --update-golden and --baseline need every
/// scenario in one process.
std::string shard_conflicts(const CheckArgs& args);

/// Writes the shard result: check's definition (files, report names, --junit-time, --strict) and
/// `units` (scenario index, check_report_units' unit). Exit code 0.
int write_check_shard(const CheckArgs& args, std::pair<std::uint32_t, std::uint32_t> shard,
                      const std::vector<std::pair<std::string, std::string>>& files,
                      const std::vector<std::pair<std::size_t, nlohmann::json>>& units);

/// The unsharded check's output from its shard results; its exit code. The report files go into
/// `out` as an owned output folder (tools/staged_output.hpp: a manifest, committed whole, a
/// non-empty folder that is not rebalance-sim's refused unless `force`), as every --out command.
int finish_check(const std::vector<nlohmann::json>& shards, const std::string& out,
                 bool force = false);

}  // namespace rsim::cli
