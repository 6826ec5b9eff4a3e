// `explore --shard I/N`: the seeds k = 0, 1, … of A..B going to shard k mod N + 1, each run as
// `explore` runs it, written to DIR/shard-I-of-N.json; `merge` prints what the unsharded explore
// prints and writes its failing scenarios into --out, whatever N and the order of the shards.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/commands/explore.hpp"

namespace rsim::cli {

/// Runs the shard `shard` ("I/N") of `args`' seeds and writes its shard result. Exit code 0.
int cmd_explore_shard(const ExploreArgs& args, const std::string& shard);

/// The unsharded explore's output from its shard results: stdout, and DIR/seed-N.json for each
/// failing seed, in an owned folder committed whole (tools/staged_output.hpp; `force` as --force).
/// Exit code as explore's (1 if a property failed).
int finish_explore(const std::vector<nlohmann::json>& shards, const std::string& out,
                   bool force = false);

}  // namespace rsim::cli
