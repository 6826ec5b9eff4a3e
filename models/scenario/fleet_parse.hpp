// Reads a scenario's `deployments` and `autoscalers` and checks the fleet events (`rollout`,
// `drain-node`) against them; called by parse_scenario, which has read everything else.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"

namespace rsim {

/// Fills s.deployments and s.autoscalers from `doc`; every problem goes to `problems` as
/// "JSON path: what".
void parse_fleet(const nlohmann::json& doc, ScenarioSpec& s, std::vector<std::string>& problems);

}  // namespace rsim
