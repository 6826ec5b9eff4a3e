// Share-group (KIP-932) runs end to end: the membership table of the share-group article
// reproduced step by step, acquisition locks of a crashed consumer ending exactly 30000 ms
// (group.share.record.lock.duration.ms) after acquisition with the delivery count then 2, the
// delivery limit and REJECT archiving records, and eight consumers on four partitions.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>

#include "reports/share_summary.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

struct Run {
  std::vector<json> trace;
  nlohmann::ordered_json summary;
};

Run run(const std::string& path) {
  const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + path);
  const auto result = rsim::run_scenario(spec, "share", spec.seed);
  Run r;
  r.trace = testing::parse_trace(result.trace_lines);
  reports::SummaryInputs in;
  in.scenario = spec.name;
  in.protocol = "share";
  r.summary = reports::summarize(result.trace_lines, in);
  reports::add_share_metrics(result.trace_lines, r.summary);
  return r;
}

const Run& table_run() {
  static const Run r = run("scenarios/share/membership-table.json");
  return r;
}

/// consumer -> partitions it owns at `at_ms` (its last `assignment` event before then).
std::map<std::string, std::vector<std::string>> owned_at(const std::vector<json>& trace, double at_ms) {
  std::map<std::string, std::vector<std::string>> owned;
  std::set<std::string> gone;
  for (const auto& e : trace) {
    if (e["t_us"].get<double>() / 1000.0 > at_ms) break;
    if (e["type"] == "assignment") owned[e["consumer"]] = e["owned"].get<std::vector<std::string>>();
    if (e["type"] == "consumer.closed" || e["type"] == "consumer.crash") owned.erase(e["consumer"].get<std::string>());
  }
  return owned;
}

std::int64_t us(const json& e) { return e["t_us"].get<std::int64_t>(); }

}  // namespace

TEST_CASE("share: the article's membership table, step by step, through the simulation") {
  // Each step of the vector file is checked where the run has settled after that step's event
  // (joins at 1, 10, 30, 40, 50 s; T1 grows to 4 partitions at 20 s; all but M2 stop at 65 s).
  std::ifstream in(std::string(RSIM_SHARED_DIR) + "/conformance/articles/share.SimpleAssignor.membership-table.json");
  REQUIRE(in);
  const json vectors = json::parse(in);
  const auto& steps = vectors["cases"][0]["steps"];
  REQUIRE(steps.size() == 7);
  const std::vector<double> settled_ms{9500, 19500, 29500, 39500, 49500, 64500, 89500};
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto owned = owned_at(table_run().trace, settled_ms[k]);
    INFO("step " << k << ": " << steps[k]["notes"].get<std::string>() << " at " << settled_ms[k] << " ms");
    std::set<std::string> members;
    for (const auto& m : steps[k]["members"]) members.insert(m["id"].get<std::string>());
    std::set<std::string> present;
    for (const auto& [c, ps] : owned) present.insert(c);
    CHECK(present == members);
    for (const auto& check : steps[k]["checks"]) {
      if (check["check"] == "partition_member_counts") {
        const auto counts = check["equals"]["T1"].get<std::vector<int>>();
        for (std::size_t p = 0; p < counts.size(); ++p) {
          int holders = 0;
          for (const auto& [c, ps] : owned)
            holders += static_cast<int>(std::count(ps.begin(), ps.end(), std::string("T1-").append(std::to_string(p))));
          CHECK_MESSAGE(holders == counts[p], "T1-" << p);
        }
      } else if (check["check"] == "each_member_size_between") {
        for (const auto& [c, ps] : owned) {
          CHECK_MESSAGE(ps.size() >= check["min"].get<std::size_t>(), c);
          CHECK_MESSAGE(ps.size() <= check["max"].get<std::size_t>(), c);
        }
      }
    }
  }
}

TEST_CASE("share: a new group's first member gets its partitions one heartbeat after joining") {
  // M1 joins at 1000 ms: an empty assignment (nothing initialized yet), then T1-0 at its next
  // heartbeat, 5000 ms (group.share.heartbeat.interval.ms) after the join's response.
  const auto& t = table_run().trace;
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> m1;
  for (const auto& e : t)
    if (e["type"] == "assignment" && e["consumer"] == "M1")
      m1.emplace_back(us(e), e["owned"].get<std::vector<std::string>>());
  REQUIRE(!m1.empty());
  CHECK(m1[0].second == std::vector<std::string>{"T1-0"});
  // Join at 1000 ms, response 2 ms later (1 ms each way), next heartbeat 5000 ms after that.
  CHECK(m1[0].first == 1000 * 1000 + 2000 + 5000 * 1000 + 2000);
  std::vector<double> epochs;
  for (const auto& e : testing::events(t, "record"))
    if (e["record"] == "ShareGroupMetadata") epochs.push_back(e["epoch"].get<double>());
  REQUIRE(epochs.size() >= 2);
  CHECK(epochs[0] == 2);  // the group starts at epoch 1 in memory
  CHECK(epochs[1] == 3);
}

TEST_CASE("share: a crashed consumer's records are available again exactly when their locks end") {
  const Run r = run("scenarios/share/lock-expiry-crash.json");
  const std::int64_t crash_us = 20000 * 1000;
  // What A acquired and never acknowledged before it crashed.
  std::map<std::int64_t, std::int64_t> acquired_at;  // offset -> acquisition time
  for (const auto& e : testing::events(r.trace, "share.records")) {
    if (us(e) > crash_us) break;
    for (std::int64_t o = e["first_offset"]; o <= e["last_offset"].get<std::int64_t>(); ++o) {
      if (e["cause"] == "fetch" && e["consumer"] == "A") acquired_at[o] = us(e);
      if (e["from"] == "ACQUIRED" && e["to"] != "ACQUIRED") acquired_at.erase(o);
    }
  }
  REQUIRE(!acquired_at.empty());
  std::size_t timed_out = 0;
  for (const auto& e : testing::events(r.trace, "share.records")) {
    if (e["cause"] != "lock_timeout") continue;
    CHECK(e["consumer"] == "A");
    CHECK(e["to"] == "AVAILABLE");
    CHECK(e["delivery_count"] == 1);
    for (std::int64_t o = e["first_offset"]; o <= e["last_offset"].get<std::int64_t>(); ++o) {
      REQUIRE(acquired_at.count(o) == 1);
      CHECK(us(e) == acquired_at[o] + 30000 * 1000);
      ++timed_out;
    }
  }
  CHECK(timed_out == acquired_at.size());
  // B gets each of them next, with delivery count 2, no earlier than the lock's end.
  for (const auto& [offset, at] : acquired_at) {
    bool found = false;
    for (const auto& e : testing::events(r.trace, "share.records")) {
      if (e["cause"] != "fetch" || us(e) <= crash_us || offset < e["first_offset"].get<std::int64_t>() ||
          offset > e["last_offset"].get<std::int64_t>())
        continue;
      CHECK(e["consumer"] == "B");
      CHECK(e["delivery_count"] == 2);
      CHECK(us(e) >= at + 30000 * 1000);
      found = true;
      break;
    }
    CHECK_MESSAGE(found, "offset " << offset);
  }
  const auto& m = r.summary["metrics"];
  CHECK(m["lock_timeouts"] == static_cast<std::int64_t>(acquired_at.size()));
  CHECK(m["acknowledged_twice"] == 0);
  CHECK(m["archived"] == 0);
  CHECK(m["lost"] == 0);
  // A's membership ends with the session timeout, 45000 ms after its last heartbeat.
  const auto leaves = testing::events(r.trace, "member.leave");
  REQUIRE(leaves.size() == 1);
  CHECK(leaves[0]["consumer"] == "A");
  CHECK(leaves[0]["reason"] == "session timeout");
}

TEST_CASE("share: REJECT archives at once; a record delivered delivery.count.limit times is archived") {
  const Run r = run("scenarios/share/reject-and-release.json");
  std::map<std::string, std::map<std::int64_t, int>> deliveries;
  std::map<std::string, std::set<std::int64_t>> archived;
  for (const auto& e : testing::events(r.trace, "share.records")) {
    const std::string p = e["partition"];
    for (std::int64_t o = e["first_offset"]; o <= e["last_offset"].get<std::int64_t>(); ++o) {
      if (e["cause"] == "fetch") {
        ++deliveries[p][o];
        CHECK(archived[p].count(o) == 0);  // an archived record is never delivered again
        CHECK(deliveries[p][o] <= 2);       // group.share.delivery.count.limit = 2
      }
      if (e["to"] == "ARCHIVED") {
        archived[p].insert(o);
        if (e["cause"] == "RELEASE") CHECK(e["delivery_count"] == 2);
        if (e["cause"] == "REJECT") CHECK(e["from"] == "ACQUIRED");
      }
    }
  }
  const auto& m = r.summary["metrics"];
  CHECK(m["archived_rejected"].get<std::int64_t>() > 0);
  CHECK(m["archived_delivery_limit"].get<std::int64_t>() > 0);
  CHECK(m["archived"] == m["archived_rejected"].get<std::int64_t>() + m["archived_delivery_limit"].get<std::int64_t>());
  CHECK(m["acknowledged_twice"] == 0);
}

TEST_CASE("share: eight consumers on four partitions all make progress, one crashing") {
  const Run r = run("scenarios/share/eight-consumers-one-crash.json");
  const auto& m = r.summary["metrics"];
  for (int i = 1; i <= 8; ++i) {
    const std::string c = std::string("C").append(std::to_string(i));
    INFO(c);
    CHECK(m["records_processed_by_consumer"][c].get<std::int64_t>() > 0);
  }
  // Every partition is held by two members while all eight are in the group.
  const auto owned = owned_at(r.trace, 29000);
  REQUIRE(owned.size() == 8);
  std::map<std::string, int> holders;
  for (const auto& [c, ps] : owned) {
    CHECK(ps.size() == 1);
    for (const auto& p : ps) ++holders[p];
  }
  CHECK(holders == std::map<std::string, int>{{"jobs-0", 2}, {"jobs-1", 2}, {"jobs-2", 2}, {"jobs-3", 2}});
  CHECK(m["acknowledged_twice"] == 0);
  CHECK(m["archived"] == 0);
  CHECK(m["lost"] == 0);
  CHECK(m["redelivered"].get<std::int64_t>() > 0);
  CHECK(m["redelivered"] == m["lock_timeouts"]);  // only C3's locked records come back
  // After the crash the survivors keep up: what is left at the end is only what is in flight.
  CHECK(m["unacknowledged_at_end"].get<std::int64_t>() < 4 * 500);
}
