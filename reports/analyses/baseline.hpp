// `check --baseline RESULTS.json`: the metrics of each scenario and variant compared with what
// `check --json` wrote on the base branch, under per-metric tolerances with a direction ("+10%":
// the metric may rise by at most 10 %; any drop passes). Pure functions of the two result files
// and the tolerances: the regression table (Markdown and console) and one verdict per metric.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"

namespace rsim::cli {

/// A metric and its tolerance, as given ("not_processed_partition_ms", "+10%").
using Tolerances = std::vector<std::pair<std::string, RegressionTolerance>>;

/// The metrics a baseline keeps of a summary.json: every single-number metric of `metrics`, ms
/// values rounded to the µs (no 29843.558999999994).
nlohmann::ordered_json baseline_metrics(const nlohmann::ordered_json& summary);

/// `v` rounded to 3 decimals (a ms value to the µs) and shown the shortest way: 29843.559, 12.
std::string show_number(double v);

/// What `--baseline FILE` holds: (scenario name, variant) -> its metrics. Throws ScenarioError
/// (file, what is wrong) when FILE is not a `check --json` file with `runs`.
std::map<std::pair<std::string, std::string>, nlohmann::ordered_json> read_baseline(
    const std::string& file);

/// `--max-regression METRIC=+N%` (repeatable): the tolerances, or problems (one per bad entry,
/// an unknown metric with a suggestion).
Tolerances parse_max_regressions(const std::vector<std::string>& args,
                                 std::vector<std::string>& problems);
/// A tolerance file: a JSON object of metric -> "+N%" (as a scenario's `regression`).
Tolerances read_tolerance_file(const std::string& file, std::vector<std::string>& problems);
/// Problems of a metric name used with a tolerance ("" when it is a known single-number metric).
std::string tolerance_metric_problem(const std::string& metric);

/// The tolerances that apply to a scenario: its `regression`, overridden metric by metric by
/// the tolerance file, then by --max-regression; in that order of first appearance.
Tolerances merged_tolerances(const ScenarioSpec& spec, const Tolerances& file,
                             const Tolerances& cli);

/// One row of the regression table.
struct RegressionRow {
  std::string scenario, variant, metric;
  std::optional<double> base, now;               // nullopt: not in that run
  std::optional<RegressionTolerance> tolerance;  // none: shown for information
  bool failed = false;
  std::string verdict;  // "ok", "improved", "REGRESSED", "unchanged", "no base", "missing"
  double delta() const { return *now - *base; }
  /// "+12.0%", "-3.5%", "n/a" (base 0 and a change), "0%".
  std::string delta_percent() const;
  /// One line for a failure or a PASS line: "max_rebalance_ms 3300.5 (base 2917.188: +383.312,
  /// +13.1%; tolerance +10%)".
  std::string describe() const;
};

/// Compares `now` with `base` for every tolerance (gated rows, in tolerance order), then every
/// other single-number metric that changed (information rows, metric name order).
std::vector<RegressionRow> compare_with_baseline(const std::string& scenario,
                                                 const std::string& variant,
                                                 const nlohmann::ordered_json* base,
                                                 const nlohmann::ordered_json& now,
                                                 const Tolerances& tolerances);

/// The table, gated rows only: Markdown (| | scenario | variant | metric | base | now | Δ | Δ % |
/// tolerance |) and the console's fixed-width form.
std::string regression_markdown(const std::vector<RegressionRow>& rows);
std::string regression_console(const std::vector<RegressionRow>& rows);

}  // namespace rsim::cli
