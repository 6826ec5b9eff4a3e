// The `compare` subcommand: `rebalance-sim compare SCENARIO --real DIR [--real DIR2 ...]`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/analyses/compare.hpp"
#include "reports/compare_report.hpp"
#include "reports/timeline.hpp"

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
  std::string out_dir;  // --out: OUT/report.html (sim and real side by side) and OUT/compare.json
  bool force = false;   // --force: write into a non-empty folder rebalance-sim does not own
};

CLI::App* add_compare_subcommand(CLI::App& app, CompareArgs& args);
/// One variant of the side-by-side page: compare's rows and lines with the simulator's and the
/// real runs' timelines (built from the same traces).
reports::SideBySideVariant side_by_side(const compare::VariantComparison& c, reports::Timeline sim,
                                        std::vector<reports::Timeline> real);
int cmd_compare(const CompareArgs& args);

}  // namespace rsim::cli
