// Online migration between the group protocols (Kafka 4.x GroupMetadataManager, policy
// bidirectional): a rolling restart of a three-member classic group with
// "config": {"group.protocol": "consumer"} (upgrade), then back with "classic" (downgrade), under
// both classic variants. Defaults: 1 ms one-way latency, heartbeat.interval.ms 3000 (classic),
// group.consumer.heartbeat.interval.ms 5000, group.initial.rebalance.delay.ms 3000.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;
using testing::times;

constexpr const char* kScenario = "scenarios/migration/online-upgrade-and-downgrade.json";

/// The `record` events appended at `at_ms`, without OffsetCommit: "Type" or "Type(consumer)",
/// "~" for a tombstone.
std::vector<std::string> group_records_at(const std::vector<json>& trace, double at_ms) {
  std::vector<std::string> out;
  for (const auto& e : trace) {
    if (e["type"] != "record" || e["t_us"].get<double>() != at_ms * 1000 ||
        e["record"] == "OffsetCommit")
      continue;
    std::string s = e["tombstone"].get<bool>() ? "~" : "";
    s += e["record"].get<std::string>();
    if (e.contains("consumer")) {  // appended piecewise: "(" + str + ")" trips GCC 12's -Wrestrict
      s += '(';
      s += e["consumer"].get<std::string>();
      s += ')';
    }
    out.push_back(s);
  }
  return out;
}

const json& first_record(const std::vector<json>& trace, const std::string& record, double at_ms,
                         const std::string& consumer = "") {
  for (const auto& e : trace)
    if (e["type"] == "record" && e["record"] == record && e["t_us"].get<double>() == at_ms * 1000 &&
        (consumer.empty() || e.value("consumer", "") == consumer))
      return e;
  static const json none;
  return none;
}
}  // namespace

TEST_CASE(
    "online upgrade: the first consumer-protocol member converts the classic group, with its "
    "records") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace(kScenario, variant);
    const auto migrations = testing::events(trace, "group.migration");
    REQUIRE(migrations.size() == 2);
    // A's restart at 20 s: close() (commit, LeaveGroup at 20003, closed at 20004), the new
    // incarnation 2000 ms after the restart began (22000), FindCoordinator round trip, its first
    // ConsumerGroupHeartbeat arrives at 22003 and converts the group at generation 1.
    CHECK(migrations[0]["t_us"] == 22003000);
    CHECK(migrations[0]["from"] == "classic");
    CHECK(migrations[0]["to"] == "consumer");
    CHECK(migrations[0]["generation"] == 1);
    // ConsumerGroup.createConsumerGroupRecords after the classic group's tombstone, then A's own.
    CHECK(group_records_at(trace, 22003) ==
          std::vector<std::string>{
              "~GroupMetadata", "ConsumerGroupMemberMetadata(B)", "ConsumerGroupMemberMetadata(C)",
              "ConsumerGroupMetadata", "ConsumerGroupTargetAssignmentMember(B)",
              "ConsumerGroupTargetAssignmentMember(C)", "ConsumerGroupTargetAssignmentMetadata",
              "ConsumerGroupCurrentMemberAssignment(B)", "ConsumerGroupCurrentMemberAssignment(C)",
              "ConsumerGroupMemberMetadata(A)", "ConsumerGroupMetadata",
              "ConsumerGroupTargetAssignmentMember(A)", "ConsumerGroupTargetAssignmentMetadata",
              "ConsumerGroupCurrentMemberAssignment(A)"});
    const json& b = first_record(trace, "ConsumerGroupMemberMetadata", 22003, "B");
    CHECK(b["classic_member_metadata"]["session_timeout_ms"] == 45000);
    CHECK(b["rebalance_timeout_ms"] == 300000);  // max.poll.interval.ms
    const json& b_now = first_record(trace, "ConsumerGroupCurrentMemberAssignment", 22003, "B");
    CHECK(b_now["member_epoch"] == 1);  // the classic generation
    CHECK(b_now["state"] == 0);         // STABLE
    CHECK(first_record(trace, "ConsumerGroupTargetAssignmentMetadata",
                       22003)["assignment_timestamp"] == 0);
    // A (uniform, the broker's default assignor) gets the two partitions it left, free: STABLE at
    // epoch 2 at once. B and C are behind the target epoch: their next Heartbeat (3000 ms after
    // the one of 19007) is answered REBALANCE_IN_PROGRESS at 22008 and they rejoin.
    CHECK(times(trace, "member.epoch", "consumer", "A") ==
          std::vector<double>{22003, 42101, 62101, 92005, 113011});
    CHECK(testing::responses(trace, "B", "Heartbeat", "REBALANCE_IN_PROGRESS").front() == 22008);
    CHECK(testing::responses(trace, "C", "Heartbeat", "REBALANCE_IN_PROGRESS").front() == 22008);
    // Their JoinGroup (MEMBER id known: no MEMBER_ID_REQUIRED) arrives 22011 and reconciles them
    // to epoch 2; SyncGroup's round trip hands the assignment out at 22014.
    const auto b_assigned = testing::callback_starts(trace, "B", "onPartitionsAssigned");
    CHECK(std::count(b_assigned.begin(), b_assigned.end(), 22014.0) == 1);
    const auto b_revoked = testing::callback_starts(trace, "B", "onPartitionsRevoked");
    if (std::string(variant) == "classic-eager") {
      // Eager: onJoinPrepare commits (2 ms round trip) and revokes everything, then rejoins.
      CHECK(std::count(b_revoked.begin(), b_revoked.end(), 22010.0) == 1);
    } else {
      // Cooperative: nothing to give up, nothing revoked; the assignment adds nothing.
      CHECK(std::count(b_revoked.begin(), b_revoked.end(), 22010.0) == 0);
      CHECK(testing::callback_partitions(trace, "B", "onPartitionsAssigned", 1).empty());
    }
  }
}

TEST_CASE("online downgrade: the last consumer-protocol member's leave converts the group back") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const bool eager = std::string(variant) == "classic-eager";
    const auto trace = testing::run_trace(kScenario, variant);
    const auto migrations = testing::events(trace, "group.migration");
    REQUIRE(migrations.size() == 2);
    // C (the last consumer-protocol member) restarts at 130 s: its leave heartbeat arrives at
    // 130003 while A and B are classic members: ConsumerGroup tombstones, then the classic group.
    CHECK(migrations[1]["t_us"] == 130003000);
    CHECK(migrations[1]["from"] == "consumer");
    CHECK(migrations[1]["to"] == "classic");
    CHECK(migrations[1]["generation"] == 10);  // the group epoch: 2 per restart after the first
    CHECK(group_records_at(trace, 130003) ==
          std::vector<std::string>{
              "~ConsumerGroupCurrentMemberAssignment(C)",
              "~ConsumerGroupCurrentMemberAssignment(A)",
              "~ConsumerGroupCurrentMemberAssignment(B)", "~ConsumerGroupTargetAssignmentMember(C)",
              "~ConsumerGroupTargetAssignmentMember(A)", "~ConsumerGroupTargetAssignmentMember(B)",
              "~ConsumerGroupTargetAssignmentMetadata", "~ConsumerGroupMemberMetadata(C)",
              "~ConsumerGroupMemberMetadata(A)", "~ConsumerGroupMemberMetadata(B)",
              "~ConsumerGroupMetadata", "GroupMetadata"});
    const json& gm = first_record(trace, "GroupMetadata", 130003);
    CHECK(gm["generation"] == 10);
    CHECK(gm["protocol"] == (eager ? "range" : "cooperative-sticky"));
    REQUIRE(gm["members"].size() == 2);
    CHECK(gm["members"][0]["consumer"] == "A");
    CHECK(gm["members"][1]["consumer"] == "B");
    // Stable at the group epoch, then a rebalance at once (prepareRebalance).
    CHECK(times(trace, "group.state", "state", "Stable").at(1) == 130003);
    const auto preparing = times(trace, "group.state", "state", "PreparingRebalance");
    CHECK(std::count(preparing.begin(), preparing.end(), 130003.0) == 1);
    // B heartbeats first (130007 -> REBALANCE_IN_PROGRESS at 130008), A 1 s later (131014): the
    // join completes when both are in (131017, all members joined), generation 11.
    CHECK(testing::responses(trace, "B", "Heartbeat", "REBALANCE_IN_PROGRESS").back() <= 134020);
    const auto completing = times(trace, "group.state", "state", "CompletingRebalance");
    CHECK(std::count(completing.begin(), completing.end(), 131017.0) == 1);
    // C's classic incarnation (132000) joins the classic group: generation 12 at 134023, after
    // A's and B's next heartbeats (134019 + 1 ms).
    CHECK(std::count(completing.begin(), completing.end(), 134023.0) == 1);
  }
}

TEST_CASE("the migration timeline: who rebalanced when, and the summary's view of it") {
  // Eager: every rejoin of a classic member revokes everything; cooperative: two rebalances for
  // C's last join (KIP-429), and classic members rejoining a consumer group revoke nothing.
  const auto eager = testing::summary_of(kScenario, "classic-eager");
  const auto coop = testing::summary_of(kScenario, "classic-cooperative");
  CHECK(eager["metrics"]["rebalance_count"] == 13);
  CHECK(coop["metrics"]["rebalance_count"] == 14);
  // The classic rebalance A's leave opened (20003) ends with the conversion at 22003.
  CHECK(eager["rebalances"][1]["duration_ms"] == 2000.0);
  CHECK(eager["metrics"]["duplicates"] == 0);
  CHECK(eager["metrics"]["lost"] == 0);
  CHECK(coop["metrics"]["duplicates"] == 0);
  CHECK(coop["metrics"]["lost"] == 0);
  CHECK(eager["metrics"]["final_assignment"] == json{{"A", {"orders-0", "orders-1"}},
                                                     {"B", {"orders-2", "orders-3"}},
                                                     {"C", {"orders-4", "orders-5"}}});
}

TEST_CASE(
    "group.consumer.migration.policy: disabled refuses the upgrade (GROUP_ID_NOT_FOUND, fatal)") {
  auto doc =
      json::parse(R"({"name": "no-upgrade", "duration_ms": 30000, "protocols": ["classic-eager"],
    "cluster": {"brokers": 1, "config": {"group.consumer.migration.policy": "downgrade"}},
    "topics": [{"name": "t", "partitions": 2}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]}, {"name": "B", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 0, "do": "start", "consumer": "B"},
               {"at_ms": 10000, "do": "restart", "consumer": "B", "after_ms": 1000,
                "config": {"group.protocol": "consumer"}}]})");
  const auto spec = testing::ideal_machine(doc, "no-upgrade.json");
  const auto trace = testing::parse_trace(rsim::run_scenario(spec, "classic-eager", 1).trace_lines);
  const auto migrations = testing::events(trace, "group.migration");
  REQUIRE(migrations.size() == 1);
  CHECK(migrations[0]["refused"] ==
        "online upgrade is disabled (group.consumer.migration.policy=downgrade)");
  // B's new incarnation starts at 11000; its heartbeat arrives at 11003 and fails.
  CHECK(testing::responses(trace, "B", "ConsumerGroupHeartbeat", "GROUP_ID_NOT_FOUND") ==
        std::vector<double>{11004});
  CHECK(times(trace, "consumer.error", "consumer", "B").size() == 1);
}
