// Golden runs: a compact summary per scenario and variant stored next to the scenario
// (`x.json` -> `x.golden.json`), with the tolerances it is compared with, and a readable diff
// (a timing moved by how much, an extra rebalance, a changed final assignment).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rsim::cli {

/// `scenarios/x.json` -> `scenarios/x.golden.json`.
std::string golden_path(const std::string& scenario_path);
/// The compact form of one variant's summary.json.
nlohmann::ordered_json golden_of(const nlohmann::ordered_json& summary);
/// A new golden file's contents: every variant's compact summary and the default tolerances.
nlohmann::ordered_json golden_file(const std::string& scenario_name,
                                   const std::vector<std::pair<std::string, nlohmann::ordered_json>>& variants);
/// The differences of `actual` (a compact summary) from `golden` beyond `tolerances`, one line each.
std::vector<std::string> golden_diff(const nlohmann::ordered_json& golden, const nlohmann::ordered_json& actual,
                                     const nlohmann::ordered_json& tolerances);

}  // namespace rsim::cli
