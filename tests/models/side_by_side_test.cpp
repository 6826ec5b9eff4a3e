// The same scenario under classic-eager, classic-cooperative and consumer: what people migrate
// to KIP-848 for. When C joins, the consumer protocol (like cooperative) revokes only the
// partitions that move, with no stop-the-world pause for the others, and far fewer than eager.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "reports/summary.hpp"
#include "trace_helpers.hpp"

namespace {

struct JoinCost {
  double rebalance_ms = 0;    // first start to last end of the rebalances of C's join
  double unavailable_ms = 0;  // partition-ms with no owner after C's start
  int revocations = 0;        // partitions revoked after C's start
  int revoked_but_kept = 0;   // ... that the revoking member owns again at the end
  double kept_unavailable_ms =
      0;  // partition-ms of partitions whose owner is the same before and after
  std::map<std::string, std::set<std::string>> final_owned;
};

JoinCost cost_of_join(const std::string& variant, double join_ms) {
  const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) +
                                             "/scenarios/consumer/side-by-side-join.json");
  const auto run = rsim::run_scenario(spec, variant, spec.seed);
  const auto trace = testing::parse_trace(run.trace_lines);
  JoinCost c;
  reports::SummaryInputs in;
  in.protocol = variant;
  const auto summary = reports::summarize(run.trace_lines, in);
  double first = -1, last = -1;
  for (const auto& r : summary["rebalances"]) {
    const double s = r["start_us"].get<double>() / 1000.0, e = r["end_us"].get<double>() / 1000.0;
    if (s < join_ms) continue;
    if (first < 0) first = s;
    last = std::max(last, e);
  }
  c.rebalance_ms = last - first;
  std::map<std::string, std::set<std::string>> owned;
  std::map<std::string, std::set<std::string>> revoked;
  double prev = join_ms;
  std::map<std::string, double> unowned_ms;  // by partition, after the join
  std::map<std::string, std::string> owner_before;
  const auto accumulate = [&](double dt) {
    std::set<std::string> all;
    for (const auto& [k, v] : owned) all.insert(v.begin(), v.end());
    for (int p = 0; p < 12; ++p) {
      const std::string name = "t-" + std::to_string(p);
      if (all.count(name) == 0) unowned_ms[name] += dt;
    }
    c.unavailable_ms += (12 - static_cast<int>(all.size())) * dt;
  };
  for (const auto& e : trace) {
    const double t = e["t_us"].get<double>() / 1000.0;
    if (t >= join_ms) {
      if (owner_before.empty())
        for (const auto& [consumer, parts] : owned)
          for (const auto& p : parts) owner_before[p] = consumer;
      accumulate(t - prev);
      prev = t;
    }
    if (e["type"] == "assignment") {
      owned[e["consumer"]] = e["owned"].get<std::set<std::string>>();
    } else if (e["type"] == "callback" && e["callback"] == "onPartitionsRevoked" &&
               e["phase"] == "start" && t >= join_ms) {
      for (const auto& p : e["partitions"]) revoked[e["consumer"]].insert(p.get<std::string>());
      c.revocations += static_cast<int>(e["partitions"].size());
    }
  }
  accumulate(60000 - prev);
  for (const auto& [consumer, parts] : revoked)
    for (const auto& p : parts) c.revoked_but_kept += owned[consumer].count(p) > 0 ? 1 : 0;
  for (const auto& [p, consumer] : owner_before)
    if (owned[consumer].count(p) > 0) c.kept_unavailable_ms += unowned_ms[p];
  c.final_owned = owned;
  return c;
}

}  // namespace

TEST_CASE("side by side: C joins A and B under classic-eager, classic-cooperative and consumer") {
  const JoinCost eager = cost_of_join("classic-eager", 20000);
  const JoinCost coop = cost_of_join("classic-cooperative", 20000);
  const JoinCost kip848 = cost_of_join("consumer", 20000);
  MESSAGE(
      "C's join: rebalance ms / unavailable partition-ms / revocations / revoked but kept: eager "
      << eager.rebalance_ms << " / " << eager.unavailable_ms << " / " << eager.revocations << " / "
      << eager.revoked_but_kept << " (kept partitions unowned " << eager.kept_unavailable_ms
      << " ms); cooperative " << coop.rebalance_ms << " / " << coop.unavailable_ms << " / "
      << coop.revocations << " / " << coop.revoked_but_kept << "; consumer " << kip848.rebalance_ms
      << " / " << kip848.unavailable_ms << " / " << kip848.revocations << " / "
      << kip848.revoked_but_kept);
  // Eager stops the world: all 12 partitions are revoked, including 6 that their owner gets
  // straight back (range: A keeps t-0..t-3, B keeps t-6, t-7).
  CHECK(eager.revocations == 12);
  CHECK(eager.revoked_but_kept == 6);
  // Cooperative and the consumer protocol revoke exactly what moves to C: 4 of 12.
  CHECK(coop.revocations == 4);
  CHECK(kip848.revocations == 4);
  CHECK(kip848.revoked_but_kept == 0);
  CHECK(coop.revoked_but_kept == 0);
  CHECK(kip848.revocations < eager.revocations);
  // The stop-the-world pause: eager leaves the kept partitions without an owner for a while;
  // the consumer protocol and cooperative never do.
  CHECK(eager.kept_unavailable_ms > 0);
  CHECK(kip848.kept_unavailable_ms == 0);
  CHECK(coop.kept_unavailable_ms == 0);
  // Non-moving partitions are never unowned in the consumer protocol: only the 4 moving ones
  // wait, between their release and C's next heartbeat (at most one interval, 5 s).
  CHECK(kip848.unavailable_ms <= 4 * 5000.0 + 4 * 300.0);
  for (const JoinCost* c : {&eager, &coop, &kip848}) CHECK(c->final_owned.at("C").size() == 4);
}

TEST_CASE(
    "side by side: under the consumer protocol A's and B's kept partitions stay owned throughout") {
  const auto trace = testing::run_trace("scenarios/consumer/side-by-side-join.json", "consumer");
  // From B's settled assignment on, A always owns t-0..t-3 (its kept partitions).
  bool settled = false;
  for (const auto& e : trace) {
    if (e["type"] != "assignment" || e["consumer"] != "A") continue;
    const auto owned = e["owned"].get<std::set<std::string>>();
    if (owned.size() == 6) settled = true;
    if (settled) {
      for (const char* p : {"t-0", "t-1", "t-2", "t-3"}) CHECK(owned.count(p) == 1);
    }
  }
  CHECK(settled);
}
