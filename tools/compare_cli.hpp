// The `compare` subcommand: `rebalance-sim compare SCENARIO --real DIR [--real DIR2 ...]`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tools/compare.hpp"

namespace CLI {
class App;
}

namespace rsim::cli {

struct CompareArgs {
  std::string scenario;
  std::vector<std::string> real;       // DIRs holding <variant>/trace.jsonl
  std::vector<std::string> protocols;  // default: every variant of the scenario recorded in DIR
  compare::Tolerances tolerances;
  std::string json_out;
};

CLI::App* add_compare_subcommand(CLI::App& app, CompareArgs& args);
int cmd_compare(const CompareArgs& args);

}  // namespace rsim::cli
