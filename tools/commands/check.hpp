// `rebalance-sim check PATH...`: runs every scenario found under the paths for each of its
// variants, checks its `expect` list (and its golden summary, when one is stored next to it), and
// writes the results as JUnit XML, Markdown (a CI step summary) and JSON. An invalid scenario is
// one failed test case, never an abort. Results do not depend on --jobs.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/model_options.hpp"

namespace CLI {
class App;
}

namespace rsim::cli {

struct CheckArgs {
  std::vector<std::string> paths;
  std::string junit, markdown, json, out_dir;
  unsigned jobs = 1;
  bool update_golden = false;
  ModelOptions model;  // developer checks (RSIM_CHECK_QUIET_PASSES)
  bool force = false;  // --force: write into per-scenario folders rebalance-sim does not own
  // CI (docs/ci.md): a baseline and tolerances with a direction, JUnit time, strict mode.
  std::string baseline;                      // --baseline RESULTS.json (a `check --json` file)
  std::vector<std::string> max_regressions;  // --max-regression METRIC=+N% (repeatable)
  std::string regression_file;               // --regression-file FILE: {"METRIC": "+N%"}
  std::string junit_time = "wall";           // --junit-time wall|virtual|zero
  bool strict = false;                       // --strict: a variant with nothing to check fails
  std::string shard;                         // --shard I/N (tools/commands/check_shard.hpp)
};

CLI::App* add_check_subcommand(CLI::App& app, CheckArgs& args);
/// Exit code: 0 all passed, 1 an assertion or golden comparison failed, 2 a scenario was invalid
/// or a report cannot be written, 3 an internal error.
int cmd_check(const CheckArgs& args);

/// The scenario files under `args` (directories recursively, sorted; scenarios/assign/,
/// schema.json,
/// *.golden.json and output folders (a .rebalance-sim-manifest.json) left out), each with the
/// folder it gets under --out: its path relative to the argument (a file given alone: its name)
/// without `.json`, each component made safe (safe_component), and unique: a name another file
/// already has, or that a folder of another name uses, gets -2, -3, ... (in file order). Never
/// "..", never absolute, never nested in another.
std::vector<std::pair<std::string, std::string>> scenario_files(
    const std::vector<std::string>& args);

/// Where the merge of `check --shard` shards writes: check's console output to stdout, its
/// --junit/--markdown/--json files at these paths ("" = none).
struct CheckReportTargets {
  std::string junit, markdown, json, junit_time = "wall";
};

/// `units`: every scenario's result as `check --shard` records it (check_shard.cpp), in file
/// order. Prints and writes what the unsharded `check` prints and writes; its exit code.
int check_report_units(const std::vector<const nlohmann::json*>& units, std::size_t scenario_count,
                       const CheckReportTargets& targets);

}  // namespace rsim::cli
