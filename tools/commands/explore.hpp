// `rebalance-sim explore SCENARIO --seeds A..B [--jobs N]`: swarm testing. Each seed derives its
// own fault knobs (latency distribution, drop rate, crashes, restarts, stalls, pauses, cuts,
// coordinator failovers, their times), prints them, runs every variant of the scenario with them,
// and checks the safety and liveness properties of reports/invariants.hpp on the trace. A failure
// prints the seed, the knobs, the property with its trace window, the one `run` command that
// reproduces it, and writes the scenario with the seed's faults for `shrink`.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/model_options.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/invariants.hpp"
#include "sim/kernel.hpp"

namespace rsim::cli {

/// The scenario file `base` (as JSON) with the fault knobs of `seed` added: network defaults and
/// events in the first part of the run, leaving a quiet tail for liveness. `knobs` gets one
/// line per knob, for printing. The scenario's own events stay.
nlohmann::json with_fault_knobs(const nlohmann::json& base, std::uint64_t seed,
                                std::vector<std::string>& knobs);

/// What the invariant checkers need to know of the scenario under `variant`.
reports::InvariantContext invariant_context(const ScenarioSpec& spec, const std::string& variant);

/// Runs `variant` of `spec` and checks the invariants as it goes (reports::InvariantSink on the
/// bus: the trace is not held; a violation keeps the lines of its window).
std::vector<reports::Violation> run_and_check(const ScenarioSpec& spec, const std::string& variant,
                                              std::uint64_t seed, const sim::WatchdogLimits& limits,
                                              const ModelOptions& model = {});

/// One violation as the lines a user reads (property, time, detail, the trace window).
std::string describe_violation(const reports::Violation& v);

struct ExploreArgs {
  std::string scenario;
  std::string seeds;  // "A..B" (inclusive) or one number
  unsigned jobs = 1;
  std::vector<std::string> protocols;
  std::string out_dir;  // where failing scenarios go (default out/explore/<name>)
  sim::WatchdogLimits limits;
  bool quiet = false;  // only failures and the total
  bool force = false;  // --force: write into a non-empty folder rebalance-sim does not own
  ModelOptions model;  // test-only injected bugs, developer checks
};

/// Parses "A..B" or "A"; throws ScenarioError("--seeds", ...) on anything else.
std::pair<std::uint64_t, std::uint64_t> parse_seed_range(const std::string& text);

/// " --inject-bug NAME" when a test-only bug is switched on (for the commands printed), else "".
std::string injected_bug_flag(const ModelOptions& model);

/// Exit code: 0 no violation, 1 some property failed.
int cmd_explore(const ExploreArgs& args);

}  // namespace rsim::cli
