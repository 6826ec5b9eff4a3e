// Assertions on a rebalance's critical path (`rebalances/N/critical_path/causes/<cause>`,
// `.../steps/<i>/<field>`): valid paths pass validation, a misspelt cause or step field is
// refused with a suggestion (reports/analyses/expectations.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "reports/analyses/expectations.hpp"

namespace {

std::vector<std::string> problems_of(const nlohmann::json& expect) {
  const nlohmann::json doc = {
      {"name", "cp"},
      {"duration_ms", 20000},
      {"protocols", {"classic-eager"}},
      {"topics", {{{"name", "t"}, {"partitions", 4}}}},
      {"consumers", {{{"name", "A"}, {"group", "g"}, {"topics", {"t"}}}}},
      {"events", {{{"at_ms", 0}, {"do", "start"}, {"consumer", "A"}}}},
      {"expect", expect}};
  return rsim::cli::expectation_problems(rsim::parse_scenario(nlohmann::json::parse(doc.dump()), "cp.json"));
}

bool has(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("check: critical_path paths validate; a misspelt cause or step field is refused") {
  CHECK(problems_of({{{"metric", "rebalances/-1/critical_path/causes/heartbeat_wait_ms"}, {"op", "<"}, {"value", 3000}},
                     {{"metric", "rebalances/0/critical_path/causes/initial_delay_ms"}, {"op", "=="}, {"value", 0}},
                     {{"metric", "rebalances/0/critical_path/steps/-1/actor"}, {"op", "=="}, {"value", "A"}}})
            .empty());
  const auto p = problems_of({{{"metric", "rebalances/-1/critical_path/causes/heartbeat_ms"}, {"op", "<"}, {"value", 1}},
                              {{"metric", "rebalances/-1/critical_path/cause/network_ms"}, {"op", "<"}, {"value", 1}},
                              {{"metric", "rebalances/-1/critical_path/steps/x"}, {"op", "<"}, {"value", 1}},
                              {{"metric", "rebalances/-1/critical_path/steps/0/who"}, {"op", "<"}, {"value", 1}}});
  REQUIRE(p.size() == 4);
  CHECK(has(p, "/expect/0/metric: \"heartbeat_ms\" is not a cause of a critical path (causes: heartbeat_wait_ms, "
               "poll_wait_ms, session_timeout_ms, rebalance_timeout_ms, initial_delay_ms, assignment_interval_ms, "
               "network_ms, broker_ms, callback_ms, other_ms)"));
  CHECK(has(p, "/expect/1/metric: a critical_path has no \"cause\"; did you mean \"causes\"?"));
  CHECK(has(p, "/expect/2/metric: \"x\" is not an index of critical_path/steps"));
  CHECK(has(p, "/expect/3/metric: a critical_path step has no field \"who\""));
}
