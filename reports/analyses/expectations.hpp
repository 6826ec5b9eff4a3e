// The `expect` assertions of a scenario, checked against a run: metric paths into summary.json
// (with consumer/partition selectors and from_ms/to_ms windows), the ops (==, !=, <, <=, >, >=,
// within, between) and orderings of trace events. Knows summary.json's shape, no model class.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "reports/summary.hpp"

namespace rsim::cli {

struct ExpectResult {
  std::size_t index = 0;
  std::string protocol;
  std::string what;    // the assertion as written: "rebalances/-1/duration_ms within 5000 ± 100"
  std::string metric;  // the path evaluated (selectors applied), or "order"
  std::string op;
  nlohmann::json expected;
  nlohmann::json actual;   // null when the metric is missing
  std::string detail;      // why it failed, beyond expected vs actual
  std::string message;     // the scenario's own `message`
  std::int64_t at_us = 0;  // the virtual instant the assertion is about (end of its window)
  bool passed = false;
  /// One line: "expect[3] consumer <what>: expected <x>, actual <y> (<detail>) — <message>"
  /// (without the variant when `with_protocol` is false).
  std::string describe(bool with_protocol = true) const;
};

/// Problems of the expect entries that need summary.json's shape to see (an unknown metric name,
/// a path that cannot exist, a partition the scenario does not have), each "JSON path: what", with
/// a suggestion where one helps.
std::vector<std::string> expectation_problems(const ScenarioSpec& spec);

/// load_scenario_file() plus expectation_problems(): throws ScenarioError listing them all.
ScenarioSpec load_checked_scenario(const std::string& path);

/// What the expect entries of one variant need while it runs: a summary per from_ms/to_ms
/// window, and the order checks followed event by event. Attach sinks() to the run, then
/// results() with the whole-run summary.
class ExpectationSinks {
 public:
  ExpectationSinks(const ScenarioSpec& spec, const std::string& protocol,
                   const reports::SummaryInputs& inputs);
  ~ExpectationSinks();
  ExpectationSinks(const ExpectationSinks&) = delete;
  ExpectationSinks& operator=(const ExpectationSinks&) = delete;
  std::vector<TraceSink*> sinks();
  std::vector<ExpectResult> results(const nlohmann::ordered_json& summary);

 private:
  class OrderSink;
  const ScenarioSpec& spec_;
  std::string protocol_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::unique_ptr<reports::SummarySink>> windows_;
  std::vector<struct OrderState> orders_;
  std::unique_ptr<OrderSink> order_sink_;
};

/// Evaluates the expect entries that apply to `protocol`. `summary` is the whole-run summary;
/// windows are recomputed from `trace_lines`.
std::vector<ExpectResult> check_expectations(const ScenarioSpec& spec, const std::string& protocol,
                                             const nlohmann::ordered_json& summary,
                                             const std::vector<std::string>& trace_lines);

/// Resolves a /-path ("unavailable_ms_by_partition/orders-3", "rebalances/-1/duration_ms",
/// "metrics/max_lag") in a summary: the first segment is a metric name or a top-level key;
/// negative array indices count from the end. Null when it does not exist.
nlohmann::json resolve_path(const nlohmann::ordered_json& summary, const std::string& path);

}  // namespace rsim::cli
