// The `compare` subcommand: `rebalance-sim compare SCENARIO --real DIR [--real DIR2 ...]`.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
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
/// A recording's process starts, per consumer, by incarnation (0 = the first process): when its
/// application's first poll() began, i.e. its `consumer.subscribed` line (µs; written once
/// subscribe() has returned), else its `consumer.start` line's. `subscribed` says whether the
/// recording has any `consumer.subscribed` line (those made after finding 24).
struct RecordedStarts {
  std::map<std::string, std::map<std::int64_t, std::int64_t>> first_poll_us;
  bool subscribed = false;
};
/// The starts of a recorded trace (JSON lines); lines that are not a consumer's start are skipped
/// unparsed.
RecordedStarts recorded_starts(std::istream& trace_jsonl);
/// `spec` with each consumer's start latencies replayed from a recording (docs/fidelity.md,
/// finding 34): its k-th process start (the k-th of its `start` instants and restarts' new
/// processes, `at` + `after`, in script order) is given the recorded first poll() of incarnation k
/// less that scripted instant (at least 0) as its start latency (ConsumerSpec::start_latencies),
/// which is what the simulator's `start_latency_ms` means: from the script's instant to the
/// application's first poll(), after which both sides set up their connections. A recording
/// without `consumer.subscribed` replays nothing (`spec` as it is).
ScenarioSpec with_recorded_starts(const ScenarioSpec& spec, const RecordedStarts& run);
int cmd_compare(const CompareArgs& args);

}  // namespace rsim::cli
