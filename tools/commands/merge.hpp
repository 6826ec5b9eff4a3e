// `rebalance-sim merge RESULTS… --out DIR`: the shard results of `sweep --shard I/N` (any N, in
// any order, each shard once) combined into exactly the files the unsharded command writes.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rsim::cli {

struct MergeArgs {
  std::vector<std::string> results;
  std::string out_dir;
  bool quiet = false;
  bool force = false;  // --force: write into a non-empty folder rebalance-sim does not own
};

CLI::App* add_merge_subcommand(CLI::App& app, MergeArgs& args);
int cmd_merge(const MergeArgs& args);

}  // namespace rsim::cli
