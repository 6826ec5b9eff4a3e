// The quiet passes of the KIP-848 client and of the classic one (QuietReturns::quiet_poll_return,
// with AsyncConsumer's and ClassicConsumer's own note_quiet_pass): a return of poll() at its
// timeout that finds nothing to do only re-arms the pass's timers. Checked against the full pass it
// stands for: in check mode every quiet pass also runs the full pass and compares the timers, the
// client's state and the kernel sequence numbers both take (an InvariantViolation otherwise), and
// with quiet passes on or checked the traces are the same bytes.
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
// with one crash and restart (`crash`) and one graceful restart.
rsim::ScenarioSpec steady_group(bool crash = true) {
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
  if (crash)
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

TEST_CASE(
    "quiet passes: the classic client's returns of poll() in a steady group, each equal to "
    "the full pass") {
  // Without the crash: a classic group waits for the crashed member's session to time out
  // (45 s) in a rebalance, with nothing owned, from the restarted member's join to the end.
  const rsim::ScenarioSpec spec = steady_group(false);
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto fast = rsim::run_scenario(spec, variant, spec.seed);
    const std::uint64_t taken = fast.counters.quiet_passes;
    // The group's first generation completes at 6.1 s (group.initial.rebalance.delay.ms, then
    // the join round): 20 consumers then return from poll() about 10 times a second for about
    // 24 s, 4,800 returns, most of them quiet (a return after a records batch, a Fetch answer, a
    // heartbeat (every 3 s, which the pass notifies), an auto-commit (every 5 s) or the
    // rebalance of the graceful restart is a full one).
    CHECK(taken > 4800 / 2);
    CHECK(taken < 4800);
    rsim::RunResult checked_run;
    REQUIRE_NOTHROW(checked_run = rsim::run_scenario(
                        spec, variant, spec.seed, sim::WatchdogLimits{}, checked_quiet_passes()));
    CHECK(checked_run.counters.quiet_passes == taken);
    const std::vector<std::string>& checked = checked_run.trace_lines;
    REQUIRE(checked.size() == fast.trace_lines.size());
    for (std::size_t i = 0; i + 1 < checked.size(); ++i) REQUIRE(checked[i] == fast.trace_lines[i]);
  }
}

namespace {

// Runs every scenario of scenarios/ that lists `variant` with the check on; returns how many ran
// and the quiet passes they checked.
std::pair<int, std::uint64_t> check_every_scenario(const std::string& variant) {
  int ran = 0;
  std::uint64_t checked = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(RSIM_SOURCE_DIR) + "/scenarios")) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json" ||
        path.find("/scenarios/assign/") != std::string::npos)
      continue;
    const rsim::ScenarioSpec spec = rsim::load_scenario_file(path);
    if (std::find(spec.protocols.begin(), spec.protocols.end(), variant) == spec.protocols.end())
      continue;
    CAPTURE(path);
    rsim::RunResult r;
    REQUIRE_NOTHROW(r = rsim::run_scenario(spec, variant, spec.seed, sim::WatchdogLimits{},
                                           checked_quiet_passes()));
    checked += r.counters.quiet_passes;
    ++ran;
  }
  return {ran, checked};
}

}  // namespace

TEST_CASE("quiet passes: every consumer-protocol scenario passes the check") {
  const auto [ran, checked] = check_every_scenario("consumer");
  CHECK(ran >= 20);
  CHECK(checked > 0);
}

TEST_CASE("quiet passes: every classic-eager scenario passes the check") {
  const auto [ran, checked] = check_every_scenario("classic-eager");
  CHECK(ran >= 60);
  CHECK(checked > 0);
}

TEST_CASE("quiet passes: every classic-cooperative scenario passes the check") {
  const auto [ran, checked] = check_every_scenario("classic-cooperative");
  CHECK(ran >= 45);
  CHECK(checked > 0);
}

namespace {

// A steady group whose quiet chains (AsyncConsumer::quiet_pass) are closed by each kind of
// interruption: entries into the client (answers, the script), heartbeats and records due, the
// poll timer's own entry (max.poll.interval.ms 8 s), fetch wake-ups, production starting at 15 s
// (no entry into any client; until then a record every 100 s: chains run long) and a change of the
// network's latency from 10 to 12 s (the reach epoch), a pause at 18 s and a broker's crash at 30
// s.
rsim::ScenarioSpec interrupted_chains() {
  nlohmann::json doc = {
      {"name", "quiet-chains"},
      {"seed", 5},
      {"duration_ms", 40000},
      {"protocols", {"consumer"}},
      {"cluster", {{"brokers", 3}}},
      {"topics", {{{"name", "t"}, {"partitions", 60}, {"produce", {{"records_per_sec", 0.01}}}}}}};
  nlohmann::json consumers = nlohmann::json::array(), events = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) {
    const std::string name = fmt::format("c{}", i);
    consumers.push_back({{"name", name},
                         {"group", "g"},
                         {"topics", {"t"}},
                         {"config", {{"max.poll.interval.ms", 8000}}}});
    events.push_back({{"at_ms", 100 + i * 10}, {"do", "start"}, {"consumer", name}});
  }
  events.push_back({{"at_ms", 15000}, {"do", "produce"}, {"topic", "t"}, {"records_per_sec", 2}});
  events.push_back({{"at_ms", 18000}, {"do", "pause"}, {"consumer", "c2"}, {"for_ms", 2000}});
  events.push_back({{"at_ms", 10000},
                    {"do", "network"},
                    {"between", {"*", "*"}},
                    {"latency_ms", 2},
                    {"for_ms", 2000}});
  events.push_back({{"at_ms", 30000}, {"do", "crash-broker"}, {"broker", 2}});
  doc["consumers"] = consumers;
  doc["events"] = events;
  return rsim::parse_scenario(nlohmann::json::parse(doc.dump()), "quiet-chains.json");
}

}  // namespace

namespace {

void check_chains(const std::string& variant) {
  const rsim::ScenarioSpec spec = interrupted_chains();
  rsim::ModelOptions one_by_one;
  one_by_one.quiet_chains = false;
  const auto full = rsim::run_scenario(spec, variant, spec.seed, sim::WatchdogLimits{}, one_by_one);
  const auto chained = rsim::run_scenario(spec, variant, spec.seed);
  // The same trace to the byte, the run's end line (the kernel's event count) included, and the
  // same events fired: every event at its instant, in its order, counted alike.
  REQUIRE(chained.trace_lines.size() == full.trace_lines.size());
  for (std::size_t i = 0; i < chained.trace_lines.size(); ++i)
    REQUIRE(chained.trace_lines[i] == full.trace_lines[i]);
  CHECK(chained.events_fired == full.events_fired);
  CHECK(chained.counters.quiet_passes == full.counters.quiet_passes);
  CHECK(full.counters.chain_returns == 0);
  // Most quiet returns were the chains'.
  CHECK(chained.counters.chain_returns * 2 > chained.counters.quiet_passes);
  using rsim::ChainEnd;
  const auto ended = [&](ChainEnd e) {
    return chained.counters.chain_ends[static_cast<std::size_t>(e)];
  };
  CAPTURE(ended(ChainEnd::Entry));
  CAPTURE(ended(ChainEnd::Until));
  CAPTURE(ended(ChainEnd::PollTimer));
  CAPTURE(ended(ChainEnd::FetchWake));
  CAPTURE(ended(ChainEnd::NotRunnable));
  CAPTURE(ended(ChainEnd::Production));
  CAPTURE(ended(ChainEnd::ReachEpoch));
  CHECK(ended(ChainEnd::Entry) > 0);
  CHECK(ended(ChainEnd::Until) > 0);
  CHECK(ended(ChainEnd::PollTimer) > 0);
  CHECK(ended(ChainEnd::FetchWake) > 0);
  CHECK(ended(ChainEnd::Production) > 0);
  CHECK(ended(ChainEnd::ReachEpoch) > 0);
}

}  // namespace

TEST_CASE("quiet chains: the chained returns leave what the returns one by one leave") {
  check_chains("consumer");
}

// The classic client's chains: their passes also re-arm the auto-commit timer, whose queued entry
// (PollTimer) ends them, and its heartbeats (3 s) and auto-commits (5 s) bound them (Until).
TEST_CASE(
    "quiet chains: the classic-eager client's chained returns leave what the returns one by "
    "one leave") {
  check_chains("classic-eager");
}

TEST_CASE(
    "quiet chains: the classic-cooperative client's chained returns leave what the returns "
    "one by one leave") {
  check_chains("classic-cooperative");
}
