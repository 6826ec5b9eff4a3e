// The critical paths' happens-before graph stays bounded by the group, not by the run
// (CriticalPaths::prune, driven by the summary sink): a restart loop of hundreds of rebalances
// keeps at most a few vertices per member plus the open rebalance's events, and every path it
// finds is the one the whole graph gives.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "reports/critical_path.hpp"
#include "reports/summary.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// Feeds a run to the summary (which prunes its graph) and to a graph that is never pruned.
struct Watch final : rsim::TraceSink {
  reports::SummarySink sink{reports::SummaryInputs{}};
  reports::CriticalPaths whole;
  std::size_t most = 0;  // the most vertices the summary's graph held at once
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override {
    sink.on_event(t, e);
    whole.on_event(t.count(), e);
    most = std::max(most, sink.retained_path_vertices());
  }
};

/// `members` consumers of group g; A restarts (gracefully, back 5 s later) every 20 s from 20 s
/// on, `restarts` times; with `b_after_ms`, B restarts the same way that long after each of A's.
json restart_loop(const std::string& protocol, int members, int restarts, int b_after_ms = -1) {
  json consumers = json::array();
  json events = json::array();
  for (int i = 0; i < members; ++i) {
    const std::string name(1, static_cast<char>('A' + i));
    consumers.push_back(
        {{"name", name}, {"group", "g"}, {"topics", {"t"}}, {"config", {{"client.id", name}}}});
    events.push_back({{"at_ms", 0}, {"do", "start"}, {"consumer", name}});
  }
  for (int k = 1; k <= restarts; ++k)
    events.push_back(
        {{"at_ms", 20000 * k}, {"do", "restart"}, {"consumer", "A"}, {"after_ms", 5000}});
  if (b_after_ms >= 0)
    for (int k = 1; k <= restarts; ++k)
      events.push_back({{"at_ms", 20000 * k + b_after_ms},
                        {"do", "restart"},
                        {"consumer", "B"},
                        {"after_ms", 5000}});
  return {{"name", "critical-path-memory"},
          {"seed", 1},
          {"duration_ms", 20000 * (restarts + 1)},
          {"protocols", {protocol}},
          {"network", {{"latency_ms", 1}}},
          {"topics", {{{"name", "t"}, {"partitions", 8}}}},
          {"consumers", consumers},
          {"events", events}};
}

struct Result {
  std::size_t most = 0, whole = 0, rebalances = 0;
  std::size_t overlapping = 0;  // rebalances that started while an earlier one was still open
};

Result run_loop(const std::string& protocol, int members, int restarts, int b_after_ms = -1) {
  const auto spec = testing::ideal_machine(
      json::parse(restart_loop(protocol, members, restarts, b_after_ms).dump()));
  const auto lines = rsim::run_scenario(spec, protocol, spec.seed).trace_lines;
  Watch w;
  rsim::trace::read_jsonl(lines, w);
  const auto summary = w.sink.finish();
  // The pruned graph finds every rebalance's path as the whole graph does.
  for (const auto& r : summary["rebalances"]) {
    const auto whole =
        w.whole.to_json(r["group"].get<std::string>(), r["start_us"].get<std::int64_t>(),
                        r["end_us"].get<std::int64_t>());
    CHECK(r["critical_path"] == whole);
  }
  std::size_t overlapping = 0;
  std::int64_t open_until = -1;
  for (const auto& r : summary["rebalances"]) {
    if (r["start_us"].get<std::int64_t>() < open_until) ++overlapping;
    open_until = std::max(open_until, r["end_us"].get<std::int64_t>());
  }
  return {w.most, w.whole.vertices(), summary["rebalances"].size(), overlapping};
}

}  // namespace

TEST_CASE("critical paths: a restart loop's graph stays bounded by the group (classic, eager)") {
  // 4 members; each of A's 150 graceful restarts is two rebalances (its LeaveGroup, then its
  // JoinGroup as a new member 5 s later), after the first one of the four joining: 301.
  const int members = 4;
  const Result r = run_loop("classic-eager", members, 150);
  CHECK(r.rebalances == 301);
  // What a prune keeps: per member its last events and requests in flight (a few dozen at
  // most), and an open rebalance's events; the next prune comes at twice that plus the slack.
  const std::size_t bound = reports::CriticalPaths::kPruneSlack + 2 * 64 * members;
  MESSAGE("most retained ", r.most, ", whole graph ", r.whole, ", bound ", bound);
  CHECK(r.most <= bound);
  // Without pruning the graph grows with the rebalances, far past that.
  CHECK(r.whole > 10 * bound);
}

TEST_CASE("critical paths: a restart loop's graph stays bounded by the group (consumer)") {
  // KIP-848: A's leave bumps the group epoch (a rebalance) and so does its return (another);
  // the start takes two (the bumps of C's join and of D's): 2 + 2 x 150.
  const int members = 4;
  const Result r = run_loop("consumer", members, 150);
  CHECK(r.rebalances == 302);
  const std::size_t bound = reports::CriticalPaths::kPruneSlack + 2 * 64 * members;
  MESSAGE("most retained ", r.most, ", whole graph ", r.whole, ", bound ", bound);
  CHECK(r.most <= bound);
  CHECK(r.whole > 10 * bound);
}

TEST_CASE(
    "critical paths: rebalances open at once, pruned by one walk, find the whole graph's paths") {
  // KIP-848: B's restarts come 1.5 s after A's, while the rebalance of A's leave still waits
  // for members that learn of it at their next heartbeat (heartbeat.interval 5 s): a prune
  // then keeps the walks back to both rebalances' starts (CriticalPaths::prune walks once, from
  // the earliest), and every path found after it is the whole graph's (run_loop checks each).
  const int members = 4;
  const Result r = run_loop("consumer", members, 100, 1500);
  MESSAGE("rebalances ", r.rebalances, ", overlapping ", r.overlapping, ", most retained ", r.most,
          ", whole graph ", r.whole);
  CHECK(r.overlapping > 0);
  const std::size_t bound = reports::CriticalPaths::kPruneSlack + 2 * 64 * members;
  CHECK(r.most <= bound);
  CHECK(r.whole > 10 * bound);
}
