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
nlohmann::ordered_json golden_file(
    const std::string& scenario_name,
    const std::vector<std::pair<std::string, nlohmann::ordered_json>>& variants);
/// How `actual` differs from `golden`: the headline (main metrics beyond their tolerance) first,
/// then the per-rebalance detail and the final assignment.
struct GoldenDiff {
  std::vector<std::string>
      headline;  // "max_rebalance_ms: 2917.188 -> 3017.188 (+100 ms, +3.4%; tolerance +1 ms)"
  std::vector<std::string>
      detail;  // "rebalance 1 (member B joined): end moved +100.000 ms (3026.12 -> 3126.12)"
  bool failed =
      false;  // with `tolerances.metrics`, timing moves of single rebalances are detail only
};
/// `tolerances`: {"time_ms": 1.0, "count": 0} (either way) and, per metric, a tolerance with a
/// direction {"metrics": {"max_rebalance_ms": "+10%", "duplicates": "+0"}} (improvements pass).
GoldenDiff golden_compare(const nlohmann::ordered_json& golden,
                          const nlohmann::ordered_json& actual,
                          const nlohmann::ordered_json& tolerances);
/// What is wrong with the shape of a golden file (parsed JSON): one line per problem, each naming
/// its JSON path ("/variants/consumer/metrics/duplicates: must be a number, got a string"); empty
/// when golden_compare() can read it. Every problem in one pass.
std::vector<std::string> golden_shape_problems(const nlohmann::ordered_json& golden);
/// golden_compare()'s lines, headline first, one line each.
std::vector<std::string> golden_diff(const nlohmann::ordered_json& golden,
                                     const nlohmann::ordered_json& actual,
                                     const nlohmann::ordered_json& tolerances);

}  // namespace rsim::cli
