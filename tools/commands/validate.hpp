// `rebalance-sim validate SCENARIO`: the scenario checked as `run` would check it, without running.
#pragma once

#include <string>

namespace rsim::cli {

/// kOk and one line on stdout for a valid scenario (and one naming its settings variants, each
/// validated too); a ScenarioError (exit 2) listing every problem.
int cmd_validate(const std::string& file);

}  // namespace rsim::cli
