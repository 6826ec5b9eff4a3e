// The KIP-848 client's quiet passes (AsyncConsumer::quiet_poll_return): a return of poll() at
// its timeout that finds nothing to do only re-arms the pass's timers. Checked against the full
// pass it stands for: in check mode every quiet pass also runs the full pass and compares the
// timers, the client's state and the kernel sequence numbers both take (an InvariantViolation
// otherwise), and with quiet passes on or checked the traces are the same bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "models/client/async_consumer.hpp"
#include "trace_helpers.hpp"

namespace {

rsim::ModelOptions checked_quiet_passes() {
  rsim::ModelOptions model;
  model.check_quiet_passes = true;
  return model;
}

// One group in the steady state: 20 consumers on 200 partitions, 1 record/s each, for 30 s,
// with one crash and restart and one graceful restart.
rsim::ScenarioSpec steady_group() {
  nlohmann::json doc = {
      {"name", "quiet-passes"},
      {"seed", 3},
      {"duration_ms", 30000},
      {"protocols", {"consumer"}},
      {"cluster", {{"brokers", 3}}},
      {"topics", {{{"name", "t"}, {"partitions", 200}, {"produce", {{"records_per_sec", 1}}}}}}};
  nlohmann::json consumers = nlohmann::json::array(), events = nlohmann::json::array();
  for (int i = 0; i < 20; ++i) {
    const std::string name = fmt::format("c{}", i);
    consumers.push_back({{"name", name}, {"group", "g"}, {"topics", {"t"}}});
    events.push_back({{"at_ms", 100 + i * 10}, {"do", "start"}, {"consumer", name}});
  }
  events.push_back({{"at_ms", 12000},
                    {"do", "restart"},
                    {"consumer", "c3"},
                    {"after_ms", 4000},
                    {"graceful", false}});
  events.push_back({{"at_ms", 20000},
                    {"do", "restart"},
                    {"consumer", "c7"},
                    {"after_ms", 2000},
                    {"graceful", true}});
  doc["consumers"] = consumers;
  doc["events"] = events;
  return rsim::parse_scenario(nlohmann::json::parse(doc.dump()), "quiet-passes.json");
}

}  // namespace

TEST_CASE("quiet passes: most returns of poll() in a steady group, each equal to the full pass") {
  const rsim::ScenarioSpec spec = steady_group();
  const auto fast = rsim::run_scenario(spec, "consumer", spec.seed);
  const std::uint64_t taken = fast.counters.quiet_passes;
  // 20 consumers return from poll() about 10 times a second for about 29 s: 5,800 returns, the
  // quiet ones more than half of them (a return after a records batch, a Fetch answer from a
  // broker that did not settle, a heartbeat or a rebalance is a full one).
  CHECK(taken > 5800 / 2);
  CHECK(taken < 5800);
  rsim::RunResult checked_run;
  REQUIRE_NOTHROW(checked_run = rsim::run_scenario(spec, "consumer", spec.seed,
                                                   sim::WatchdogLimits{}, checked_quiet_passes()));
  CHECK(checked_run.counters.quiet_passes == taken);
  const std::vector<std::string>& checked = checked_run.trace_lines;
  // The check arms the timers twice, which the kernel counts among its elided events: only the
  // run's end line (its event count) may differ.
  REQUIRE(checked.size() == fast.trace_lines.size());
  for (std::size_t i = 0; i + 1 < checked.size(); ++i) REQUIRE(checked[i] == fast.trace_lines[i]);
}

TEST_CASE("quiet passes: every consumer-protocol scenario passes the check") {
  int ran = 0;
  std::uint64_t checked = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(RSIM_SOURCE_DIR) + "/scenarios")) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json" ||
        path.find("/scenarios/assign/") != std::string::npos)
      continue;
    const rsim::ScenarioSpec spec = rsim::load_scenario_file(path);
    if (std::find(spec.protocols.begin(), spec.protocols.end(), "consumer") == spec.protocols.end())
      continue;
    CAPTURE(path);
    rsim::RunResult r;
    REQUIRE_NOTHROW(r = rsim::run_scenario(spec, "consumer", spec.seed, sim::WatchdogLimits{},
                                           checked_quiet_passes()));
    checked += r.counters.quiet_passes;
    ++ran;
  }
  CHECK(ran >= 20);
  CHECK(checked > 0);
}
