// The `compare` subcommand: `rebalance-sim compare SCENARIO --real DIR [--real DIR2 ...]`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/spec/scenario_spec.hpp"
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
  /// --seeded-member-ids: the simulator draws its own member ids instead of replaying run 1's
  /// (docs/fidelity.md, finding 21).
  bool seeded_member_ids = false;
};

CLI::App* add_compare_subcommand(CLI::App& app, CompareArgs& args);
/// One variant of the side-by-side page: compare's rows and lines with the simulator's and the
/// real runs' timelines (built from the same traces).
reports::SideBySideVariant side_by_side(const compare::VariantComparison& c, reports::Timeline sim,
                                        std::vector<reports::Timeline> real);
/// `spec` with each consumer's member ids replayed from a real run's (`run.member_ids`): the
/// ids it was given there, in their order (ConsumerSpec::member_ids); a consumer the run gave no
/// id keeps the seeded draws.
ScenarioSpec with_recorded_member_ids(const ScenarioSpec& spec, const compare::TraceFacts& run);
int cmd_compare(const CompareArgs& args);

}  // namespace rsim::cli
