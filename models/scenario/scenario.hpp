// Loading a scenario: parse_scenario() turns a scenario file's JSON into the plain ScenarioSpec
// (models/spec/scenario_spec.hpp), with Kafka's defaults filled in and every time in SimTime. It
// collects every problem with its JSON path so the user can fix them in one pass. It does not
// simulate.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/closest_match.hpp"  // closest_match, for the loader's callers too
#include "models/spec/scenario_spec.hpp"
#include "sim/distribution.hpp"

namespace rsim {

/// Every problem found in one input, each "JSON path: what is wrong" (with a suggestion where
/// one helps). what() is the whole list, one per line, each prefixed by the file name.
class ScenarioError : public std::exception {
 public:
  ScenarioError(std::string file, std::vector<std::string> problems);
  const char* what() const noexcept override { return message_.c_str(); }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::string file_;
  std::vector<std::string> problems_;
  std::string message_;
};

/// `text` with control characters escaped (\n, \t, \x01): one message stays one line.
std::string one_line(const std::string& text);
/// The same for text of several lines: each line escaped, the newlines between them kept.
std::string escaped_lines(const std::string& text);

/// The sha256 of `bytes`, in lowercase hex.
std::string sha256_hex(const std::string& bytes);

/// Checks a caller adds to the loader's own (e.g. the expectations' paths), run on what parsed
/// even when the loader found problems (`clean` false then), so that every problem of a file is
/// reported in one pass.
using ExtraScenarioCheck =
    std::function<std::vector<std::string>(const ScenarioSpec& spec, bool clean)>;
/// Parses and validates a scenario; throws ScenarioError listing every problem.
ScenarioSpec parse_scenario(const nlohmann::json& doc, const std::string& source_path,
                            const ExtraScenarioCheck& extra = {});
/// Reads the file (not JSON → ScenarioError with the parser's line and column), then parses.
ScenarioSpec load_scenario_file(const std::string& path, const ExtraScenarioCheck& extra = {});
/// The file's JSON document, read with the same bounds and checks (for tools that rewrite it).
nlohmann::json load_scenario_json(const std::string& path);

/// A distribution value (a number or a distribution object) at `ptr`; its problems are appended.
std::optional<sim::Distribution> parse_distribution(const nlohmann::json& v, const std::string& ptr,
                                                    std::vector<std::string>& problems);

/// The event kinds (`do`), in the order of the format documentation.
const std::vector<std::string>& event_kinds();
/// The keys parse_scenario accepts at each level, by level name, sorted; scenarios/schema.json must
/// list exactly these (tests/models/scenario_loader_test.cpp checks it). Levels: "scenario",
/// "cluster", "network", "topic", "produce", "consumer", "config_by_protocol", "processing",
/// "callbacks", "expect", "event:<do>" per event kind, "distribution:<dist>" per distribution.
/// Kafka config keys are listed by consumer_config_specs() / broker_config_specs() (config.hpp).
const std::map<std::string, std::vector<std::string>>& scenario_accepted_keys();
/// The subset of scenario_accepted_keys() that must be present, by the same level names.
const std::map<std::string, std::vector<std::string>>& scenario_required_keys();
/// The distribution names: constant, uniform, exponential, normal, lognormal.
const std::vector<std::string>& distribution_kinds();

/// A tolerance with a direction against a baseline (`regression`, check --max-regression):
/// "+N%" / "+N": the metric may rise by at most N % / N (a rise is worse; any drop passes);
/// "-N%" / "-N": it may drop by at most that much (a drop is worse).
struct RegressionTolerance {
  bool rise_is_worse = true;
  bool percent = false;
  double amount = 0;
  std::string text;  // as written
};
/// nullopt unless `text` is [+-]N[.N][%].
std::optional<RegressionTolerance> parse_regression_tolerance(const std::string& text);

}  // namespace rsim
