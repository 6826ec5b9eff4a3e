// Assertions on a rebalance's critical path (`rebalances/N/critical_path/causes/<cause>`,
// `.../steps/<i>/<field>`): valid paths pass validation, a misspelt cause or step field is
// refused with a suggestion (reports/analyses/expectations.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/analyses/expectations.hpp"

namespace {

std::vector<std::string> problems_of(const nlohmann::json& expect) {
  const nlohmann::json doc = {{"name", "cp"},
                              {"duration_ms", 20000},
                              {"protocols", {"classic-eager"}},
                              {"topics", {{{"name", "t"}, {"partitions", 4}}}},
                              {"consumers", {{{"name", "A"}, {"group", "g"}, {"topics", {"t"}}}}},
                              {"events", {{{"at_ms", 0}, {"do", "start"}, {"consumer", "A"}}}},
                              {"expect", expect}};
  return rsim::cli::expectation_problems(
      rsim::parse_scenario(nlohmann::json::parse(doc.dump()), "cp.json"));
}

bool has(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("check: critical_path paths validate; a misspelt cause or step field is refused") {
  CHECK(
      problems_of(
          {{{"metric", "rebalances/-1/critical_path/causes/heartbeat_wait_ms"},
            {"op", "<"},
            {"value", 3000}},
           {{"metric", "rebalances/0/critical_path/causes/initial_delay_ms"},
            {"op", "=="},
            {"value", 0}},
           {{"metric", "rebalances/0/critical_path/steps/-1/actor"}, {"op", "=="}, {"value", "A"}},
           {{"metric", "rebalances/0/critical_path/dominant"},
            {"op", "=="},
            {"value", "heartbeat_wait_ms"}}})
          .empty());
  const auto p = problems_of(
      {{{"metric", "rebalances/-1/critical_path/causes/heartbeat_ms"}, {"op", "<"}, {"value", 1}},
       {{"metric", "rebalances/-1/critical_path/cause/network_ms"}, {"op", "<"}, {"value", 1}},
       {{"metric", "rebalances/-1/critical_path/steps/x"}, {"op", "<"}, {"value", 1}},
       {{"metric", "rebalances/-1/critical_path/steps/0/who"}, {"op", "<"}, {"value", 1}},
       {{"metric", "rebalances/-1/critical_path/dominant/x"}, {"op", "=="}, {"value", 1}}});
  REQUIRE(p.size() == 5);
  CHECK(has(p,
            "/expect/0/metric: \"heartbeat_ms\" is not a cause of a critical path (causes: "
            "heartbeat_wait_ms, "
            "poll_wait_ms, session_timeout_ms, rebalance_timeout_ms, initial_delay_ms, "
            "assignment_interval_ms, "
            "network_ms, broker_ms, callback_ms, other_ms)"));
  CHECK(has(p, "/expect/1/metric: a critical_path has no \"cause\"; did you mean \"causes\"?"));
  CHECK(has(p, "/expect/2/metric: \"x\" is not an index of critical_path/steps"));
  CHECK(has(p, "/expect/3/metric: a critical_path step has no field \"who\""));
  CHECK(has(p, "/expect/4/metric: critical_path/dominant has nothing under it"));
}

namespace {

// Two consumers: A's classic heartbeat.interval.ms is 1000 (config_by_protocol), B restarts at
// 10 s with max.poll.interval.ms 60000 (its first incarnation has Kafka's 300000). B's loop
// spends 20 ms after each poll() (processing.per_poll_ms), so that under consumer its poll()
// waits lead the second rebalance's critical path (277.772 ms), ahead of A's: since A's
// onPartitionsAssigned([]) after its revocation waits for its Fetch's end (docs/fidelity.md,
// finding 33), A's poll waits on that path are 127.7 ms, more than B's 92.7 ms without it.
constexpr const char* kConfigScenario = R"({"name": "cfg", "duration_ms": 20000, "seed": 3,
 "protocols": ["classic-eager", "consumer"],
 "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}},
 "topics": [{"name": "t", "partitions": 4}],
 "consumers": [{"name": "A", "group": "g", "topics": ["t"],
                "config_by_protocol": {"classic": {"heartbeat.interval.ms": 1000}}},
               {"name": "B", "group": "g", "topics": ["t"], "processing": {"per_poll_ms": 20}}],
 "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 3000, "do": "start", "consumer": "B"},
            {"at_ms": 10000, "do": "restart", "consumer": "B", "after_ms": 500,
             "config": {"max.poll.interval.ms": 60000}}]})";

}  // namespace

TEST_CASE(
    "summary.json's config: effective values where members differ, quoted alike by explain DIR, "
    "explain SCENARIO and report.html") {
  using testing::contains;
  const auto dir = testing::scratch_dir("cp-config", "run");
  testing::write_file(dir / "s.json", kConfigScenario);
  const auto run = testing::run_cli(
      "run " + (dir / "s.json").string() + " --quiet --out " + (dir / "o").string(),
      "cp-config-run", true);
  REQUIRE(run.code == 0);
  // Kafka's defaults where the scenario sets nothing: heartbeat.interval.ms 3000,
  // session.timeout.ms 45000, max.poll.interval.ms 300000; the simulator's group.consumer.*
  // defaults (5000, 45000, the assignment interval 1000). Under classic-eager A's heartbeat
  // differs from B's (both listed); under consumer A's classic config does not apply (shared).
  // B's max.poll.interval.ms changes at its restart: null (no one value); A's is listed beside it.
  const auto cluster =
      R"("cluster":{"group.consumer.assignment.interval.ms":1000,"group.consumer.heartbeat.interval.ms":5000,"group.consumer.session.timeout.ms":45000,"group.initial.rebalance.delay.ms":0})";
  const auto eager =
      nlohmann::json::parse(testing::read_file(dir / "o" / "classic-eager" / "summary.json"));
  CHECK(
      eager.at("config").dump() ==
      std::string("{") + cluster +
          R"(,"consumer":{"session.timeout.ms":45000},"consumers":{"A":{"heartbeat.interval.ms":1000,"max.poll.interval.ms":300000},"B":{"heartbeat.interval.ms":3000,"max.poll.interval.ms":null}}})");
  const auto kip848 =
      nlohmann::json::parse(testing::read_file(dir / "o" / "consumer" / "summary.json"));
  CHECK(
      kip848.at("config").dump() ==
      std::string("{") + cluster +
          R"(,"consumer":{"heartbeat.interval.ms":3000,"session.timeout.ms":45000},"consumers":{"A":{"max.poll.interval.ms":300000},"B":{"max.poll.interval.ms":null}}})");
  // The run folder's explain quotes the values as the scenario's does, byte for byte.
  const auto from_dir = testing::run_cli("explain " + (dir / "o").string(), "cp-config-dir");
  const auto from_scenario =
      testing::run_cli("explain " + (dir / "s.json").string(), "cp-config-scn");
  REQUIRE(from_dir.code == 0);
  CHECK(from_dir.out == from_scenario.out);
  INFO(from_dir.out);
  CHECK(contains(from_dir.out, "A waiting for its next heartbeat (heartbeat.interval.ms=1000)"));
  CHECK(contains(from_dir.out, "(group.consumer.heartbeat.interval.ms=5000)"));
  // B has no one value: the key alone; A's own value.
  CHECK(contains(
      from_dir.out,
      "B waiting for its next poll() (processing between polls; max.poll.interval.ms bounds it)"));
  CHECK(contains(from_dir.out,
                 "A waiting for its next poll() (processing between polls; "
                 "max.poll.interval.ms=300000 bounds it)"));
  CHECK(!contains(from_dir.out, "(heartbeat.interval.ms)"));
  const std::string html = testing::read_file(dir / "o" / "report.html");
  CHECK(contains(html, "A waiting for its next heartbeat (heartbeat.interval.ms=1000)"));
  CHECK(!contains(html, "(heartbeat.interval.ms)"));
  // The lesson's "watch for" notes quote them too (the key inside its glossary tooltip).
  CHECK(contains(
      html, "A learns of the rebalance only with its next heartbeat: 562 ms of waiting (<abbr"));
  CHECK(contains(html, ">heartbeat.interval.ms</abbr>=1000).</li>"));
  CHECK(!contains(html, ">heartbeat.interval.ms</abbr>)."));
  CHECK(contains(html, ">max.poll.interval.ms</abbr>=300000 bounds it).</li>"));
  std::filesystem::remove_all(dir);
}

// `check` on a rebalance's critical path, passing and failing, through the binary: B joins at
// 10 s a group where A (heartbeat.interval.ms 3000, joined at 0) consumes; A hears of it at its
// next heartbeat, 2,007.234 ms later (measured: its heartbeats run 3 s apart from its join's
// ~5 ms plus the lateness the timing texture adds), and that wait dominates the rebalance.
TEST_CASE(
    "check: expectations on a critical path's causes, dominant cause and steps pass and fail") {
  using testing::contains;
  const auto dir = testing::scratch_dir("cp-check", "run");
  auto doc = nlohmann::json::parse(testing::read_file(
      std::string(RSIM_SOURCE_DIR) + "/scenarios/classic/join-waits-for-heartbeat.json"));
  doc.erase("$schema");
  doc["expect"] = {
      {{"metric", "rebalances/1/critical_path/causes/heartbeat_wait_ms"},
       {"op", "within"},
       {"value", 2007.234},
       {"tolerance", 0.001}},
      {{"metric", "rebalances/1/critical_path/dominant"},
       {"op", "=="},
       {"value", "heartbeat_wait_ms"}},
      {{"metric", "rebalances/1/critical_path/steps/0/what"},
       {"op", "=="},
       {"value", "Heartbeat request"}},
      {{"metric", "rebalances/1/critical_path/steps/-1/actor"}, {"op", "=="}, {"value", "B"}}};
  testing::write_file(dir / "pass.json", doc.dump());
  const auto pass =
      testing::run_cli("check " + (dir / "pass.json").string(), "cp-check-pass", true);
  INFO(pass.out);
  CHECK(pass.code == 0);
  CHECK(contains(pass.out, "4 passed, 0 failed"));
  CHECK(contains(pass.out,
                 "rebalances/1/critical_path/dominant == \"heartbeat_wait_ms\" (actual "
                 "\"heartbeat_wait_ms\")"));
  // The same claims, wrong: exit 1, each failure with its actual value.
  doc["expect"] = {
      {{"metric", "rebalances/1/critical_path/causes/heartbeat_wait_ms"},
       {"op", "<"},
       {"value", 1000}},
      {{"metric", "rebalances/1/critical_path/dominant"}, {"op", "=="}, {"value", "network_ms"}},
      {{"metric", "rebalances/1/critical_path/steps/-1/actor"}, {"op", "=="}, {"value", "A"}}};
  testing::write_file(dir / "fail.json", doc.dump());
  const auto fail =
      testing::run_cli("check " + (dir / "fail.json").string(), "cp-check-fail", true);
  INFO(fail.out);
  CHECK(fail.code == 1);
  CHECK(contains(fail.out, "0 passed, 3 failed"));
  CHECK(contains(fail.out,
                 "rebalances/1/critical_path/causes/heartbeat_wait_ms < 1000: expected < 1000, "
                 "actual 2007.234"));
  CHECK(contains(fail.out,
                 "rebalances/1/critical_path/dominant == \"network_ms\": expected == "
                 "\"network_ms\", actual \"heartbeat_wait_ms\""));
  CHECK(contains(
      fail.out,
      "rebalances/1/critical_path/steps/-1/actor == \"A\": expected == \"A\", actual \"B\""));
  std::filesystem::remove_all(dir);
}
