// `rebalance-sim shrink FAILING.json`: delta debugging (ddmin) of a scenario whose run breaks a
// property of reports/invariants.hpp. It removes events, then consumers (with their events), then
// topics (with their subscriptions and events), then the network knobs, for as long as the same
// property still fails under the same variant, and writes the smallest scenario it found.
#pragma once
#include <string>
#include <vector>

#include "models/protocol/model_options.hpp"
#include "sim/kernel.hpp"

namespace rsim::cli {

struct ShrinkArgs {
  std::string scenario;
  std::string protocol;  // default: the first variant that fails
  std::string property;  // default: the first property that fails
  std::string out;       // default: <scenario without .json>.shrunk.json
  sim::WatchdogLimits limits;
  ModelOptions model;  // test-only injected bugs, developer checks
};

/// Exit code: 0 shrunk and written, 2 the scenario does not fail (or is not valid).
int cmd_shrink(const ShrinkArgs& args);

}  // namespace rsim::cli
