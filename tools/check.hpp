// `rebalance-sim check PATH...`: runs every scenario found under the paths for each of its
// variants, checks its `expect` list (and its golden summary, when one is stored next to it), and
// writes the results as JUnit XML, Markdown (a CI step summary) and JSON. An invalid scenario is
// one failed test case, never an abort. Results do not depend on --jobs.
#pragma once
#include <string>
#include <vector>

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
};

CLI::App* add_check_subcommand(CLI::App& app, CheckArgs& args);
/// Exit code: 0 all passed, 1 an assertion or golden comparison failed, 2 a scenario was invalid
/// or a report cannot be written, 3 an internal error.
int cmd_check(const CheckArgs& args);

/// The scenario files under `args` (directories recursively, sorted; scenarios/assign/, schema.json,
/// *.golden.json and output folders (a .rebalance-sim-manifest.json) left out), each with the folder it gets under --out: its path relative to the
/// argument (a file given alone: its name) without `.json`, each component made safe
/// (safe_component), and unique: a name another file already has, or that a folder of another
/// name uses, gets -2, -3, ... (in file order). Never "..", never absolute, never nested in another.
std::vector<std::pair<std::string, std::string>> scenario_files(const std::vector<std::string>& args);

}  // namespace rsim::cli
