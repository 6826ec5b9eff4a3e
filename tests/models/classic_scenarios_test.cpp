// The classic-protocol scenarios of scenarios/classic/, checked at the instants Kafka's defaults
// give (heartbeat.interval.ms 3000, session.timeout.ms 45000, request.timeout.ms 30000,
// metadata.max.age.ms 300000, group.initial.rebalance.delay.ms 3000, 1 ms one-way latency).
#include <doctest/doctest.h>

#include "reports/summary.hpp"
#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;
using testing::summary_of;
using testing::times;

std::vector<double> group_states(const std::vector<json>& trace, const std::string& state) {
  return times(trace, "group.state", "state", state);
}

void fenced_ping_pong(const std::string& variant) {
  const auto trace = testing::run_trace("scenarios/classic/static-fenced-instance.json", variant);
  // B2's JoinGroup (start + FindCoordinator round trip + 1 ms) replaces B's member id; no
  // rebalance: B2 gets B's partitions after the JoinGroup answer and SyncGroup round trip.
  CHECK(group_states(trace, "PreparingRebalance").size() == 1);
  CHECK(testing::callback_partitions(trace, "B2", "onPartitionsAssigned", 0) ==
        testing::callback_partitions(trace, "B", "onPartitionsAssigned", 0));
  // A heartbeat answered FENCED_INSTANCE_ID is not fatal (AbstractCoordinator's
  // HeartbeatResponseHandler): the generation and member id are reset, poll() throws once, and
  // the next poll() runs onPartitionsLost at once and sends a JoinGroup with instance id b,
  // which replaces the other instance's member id (+1 ms); the JoinGroup answer (+2 ms) starts
  // the heartbeat phase anew and the SyncGroup round trip ends at +4 ms. Each instance's next
  // heartbeat goes out 3000 ms after its JoinGroup answer and is answered 2 ms later: every
  // takeover is 3004 ms after that instance's previous one, B's first at its phase from the
  // initial JoinGroup answer at 7004: 22004 + 2.
  const std::vector<double> b_fenced{22006, 25010, 28014, 31018, 34022, 37026};
  const std::vector<double> b2_fenced{23006, 26010, 29014, 32018, 35022, 38026};
  CHECK(testing::responses(trace, "B", "Heartbeat", "FENCED_INSTANCE_ID") == b_fenced);
  CHECK(testing::responses(trace, "B2", "Heartbeat", "FENCED_INSTANCE_ID") == b2_fenced);
  CHECK(testing::callback_starts(trace, "B", "onPartitionsLost") == b_fenced);
  CHECK(testing::callback_starts(trace, "B2", "onPartitionsLost") == b2_fenced);
  std::vector<double> replaced{20003};
  for (std::size_t i = 0; i < b_fenced.size(); ++i) {
    replaced.push_back(b_fenced[i] + 1);
    replaced.push_back(b2_fenced[i] + 1);
  }
  CHECK(times(trace, "member.replaced", "group", "g") == replaced);
  std::vector<double> b_assigned{7006}, b2_assigned{20006};
  for (const double t : b_fenced) b_assigned.push_back(t + 4);
  for (const double t : b2_fenced) b2_assigned.push_back(t + 4);
  CHECK(testing::callback_starts(trace, "B", "onPartitionsAssigned") == b_assigned);
  CHECK(testing::callback_starts(trace, "B2", "onPartitionsAssigned") == b2_assigned);
  CHECK(times(trace, "consumer.error", "consumer", "B").empty());
  CHECK(times(trace, "consumer.error", "consumer", "B2").empty());
  // One GroupMetadata record per takeover: the group's creation, generation 1, then 13.
  CHECK(times(trace, "record", "record", "GroupMetadata").size() == 2 + 13);
  // Both believe they own t-3..t-5 from the newcomer's assignment to the other's loss: 2000 ms
  // (B2 to B's fence), then 996 ms (B back to B2's fence), and so on; at the end (40000) B2 has
  // held them since 38030 and B since 37030.
  const auto s = summary_of("scenarios/classic/static-fenced-instance.json", variant);
  CHECK(s["metrics"]["fatal_errors"] == 0);
  CHECK(s["metrics"]["revocations"] == 0);
  CHECK(s["metrics"]["overlap_partition_ms"] == 3 * (6 * 2000.0 + 6 * 996.0 + (40000 - 38030)));
  REQUIRE(s["overlaps"].size() == 3 * 13);
  CHECK(s["overlaps"][0]["start_us"] == 20006000);
  CHECK(s["overlaps"][0]["end_us"] == 22006000);
}

}  // namespace

TEST_CASE("static members restarted within session.timeout.ms rejoin without a rebalance") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace("scenarios/classic/rolling-restart-static.json", variant);
    // One rebalance only: the initial one, whose 3 s delay was extended once (B and C joined in
    // the first window): A's JoinGroup at 1003 + 3000 + 3000.
    CHECK(group_states(trace, "PreparingRebalance") == std::vector<double>{1003});
    CHECK(group_states(trace, "CompletingRebalance") == std::vector<double>{7003});
    // No LeaveGroup on close; each restart (at 30, 50, 70 s) replaces the member id at
    // start + FindCoordinator round trip (2 ms) + JoinGroup arrival (1 ms) ...
    CHECK(times(trace, "rpc", "api", "LeaveGroup").empty());
    CHECK(times(trace, "member.replaced", "group", "g") ==
          std::vector<double>{30003, 50003, 70003});
    // ... and the member gets its old partitions back after the GroupMetadata write, JoinGroup
    // answer (2 ms) and SyncGroup round trip: start + 6 ms.
    for (const auto& row : {std::pair{"A", 30006.0}, {"B", 50006.0}, {"C", 70006.0}}) {
      const auto& name = std::get<0>(row);
      const auto& at = std::get<1>(row);
      CAPTURE(name);
      const auto assigned = testing::callback_starts(trace, name, "onPartitionsAssigned");
      REQUIRE(assigned.size() == 2);
      CHECK(assigned[1] == at);
      CHECK(testing::callback_partitions(trace, name, "onPartitionsAssigned", 1) ==
            testing::callback_partitions(trace, name, "onPartitionsAssigned", 0));
    }
  }
}

TEST_CASE("the same rolling restart with dynamic members costs two rebalances per restart") {
  const auto s = summary_of("scenarios/classic/rolling-restart-dynamic.json", "classic-eager");
  CHECK(s["metrics"]["rebalance_count"] == 1 + 2 * 3);
  const auto trace =
      testing::run_trace("scenarios/classic/rolling-restart-dynamic.json", "classic-eager");
  // Each close sends a LeaveGroup; the coordinator starts a rebalance when it arrives.
  int leaves = 0;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["api"] == "LeaveGroup") ++leaves;
  CHECK(leaves == 3);
  const auto preparing = group_states(trace, "PreparingRebalance");
  REQUIRE(preparing.size() == 7);
  // A's leave: close at 20000 commits (2 ms), revokes, then LeaveGroup arrives at 20003.
  CHECK(preparing[1] == 20003);
}

TEST_CASE("a static member back after session.timeout.ms: removed at expiry, joins as new") {
  const auto trace = testing::run_trace(
      "scenarios/classic/static-restart-after-session-timeout.json", "classic-eager");
  // B's close at 20000 commits synchronously (arrives 20001) and sends no LeaveGroup; the
  // coordinator removes B 45 s after that last request.
  CHECK(times(trace, "rpc", "api", "LeaveGroup").empty());
  CHECK(times(trace, "member.leave", "consumer", "B") == std::vector<double>{20001 + 45000});
  const auto preparing = group_states(trace, "PreparingRebalance");
  REQUIRE(preparing.size() == 3);
  CHECK(preparing[1] == 65001);
  CHECK(preparing[2] == 80003);  // B's restart at 80000: a static member joins directly
  CHECK(times(trace, "member.replaced", "group", "g").empty());
}

TEST_CASE("two instances of one group.instance.id take it from each other at every heartbeat") {
  // Both variants alike: the fenced member's partitions are lost, never revoked.
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    fenced_ping_pong(variant);
  }
}

TEST_CASE("cooperative rebalancing leaves the partitions that do not move untouched") {
  const auto eager =
      summary_of("scenarios/classic/scale-out-eager-vs-cooperative.json", "classic-eager");
  const auto coop =
      summary_of("scenarios/classic/scale-out-eager-vs-cooperative.json", "classic-cooperative");
  // Both start the same way: A alone at 1000, assigned everything at 1008.
  // Eager: every member revokes everything in each of the two scale-out rebalances.
  CHECK(eager["metrics"]["revocations"] == 6 + 6);
  // Cooperative: only what moves is revoked (3 to B, then 1 from A and 1 from B to C).
  CHECK(coop["metrics"]["revocations"] == 3 + 2);
  // A keeps t-0 and t-1 throughout: under cooperative they are unavailable only before the
  // first assignment (8 ms); under eager each rebalance stops them too.
  const auto& ce = coop["metrics"]["unavailable_ms_by_partition"];
  const auto& ee = eager["metrics"]["unavailable_ms_by_partition"];
  CHECK(ce["t-0"] == 8.0);
  CHECK(ce["t-1"] == 8.0);
  CHECK(ee["t-0"].get<double>() > 8.0);
  CHECK(ee["t-1"].get<double>() > 8.0);
  // Cooperative takes two rebalances per scale-out (revoke, then assign) and the second waits
  // for the other members' next heartbeat: the moving partitions wait about 3 s.
  CHECK(coop["metrics"]["rebalance_count"] == 1 + 2 + 2);
  CHECK(eager["metrics"]["rebalance_count"] == 1 + 1 + 1);
  CHECK(ce["t-3"] == 8.0 + 3004.0);
}

TEST_CASE("protocol selection: the highest protocol every configured assignor supports") {
  // [cooperative-sticky, range]: range is EAGER only, so the member rebalances eagerly even
  // though the group selects cooperative-sticky.
  const auto trace =
      testing::run_trace("scenarios/classic/protocol-selection.json", "classic-eager");
  for (const auto& e : trace) {
    if (e["type"] == "consumer.start") CHECK(e["protocol"] == "classic-eager");
    if (e["type"] == "group.epoch" && e.contains("protocol"))
      CHECK(e["protocol"] == "cooperative-sticky");
  }
  // Eager: A revokes all six when B joins, before rejoining.
  CHECK(testing::callback_partitions(trace, "A", "onPartitionsRevoked", 0).size() == 6);
  // The variants' defaults: classic-eager = [range, cooperative-sticky] (eager),
  // classic-cooperative = [cooperative-sticky] (cooperative).
  const auto two =
      testing::run_trace("scenarios/examples/two-consumers.json", "classic-cooperative");
  for (const auto& e : two)
    if (e["type"] == "consumer.start") CHECK(e["protocol"] == "classic-cooperative");
}

TEST_CASE("a member slow in onPartitionsRevoked holds up the whole group") {
  const auto trace =
      testing::run_trace("scenarios/classic/slow-revoke-delays-group.json", "classic-eager");
  // C joins at 20005; A and B learn at their next heartbeat (22014 + 2) and revoke; B spends
  // 10 s in onPartitionsRevoked, and the join phase completes only when B's JoinGroup arrives.
  const auto b_revoke = testing::callback_starts(trace, "B", "onPartitionsRevoked");
  REQUIRE(b_revoke.size() == 1);
  CHECK(b_revoke[0] == 22016);
  CHECK(group_states(trace, "CompletingRebalance").back() == 22016 + 10000 + 1);
  // A revoked at once but waits with nothing for those 10 s.
  const auto a_assigned = testing::callback_starts(trace, "A", "onPartitionsAssigned");
  CHECK(a_assigned.back() == 32020);
}

TEST_CASE("a member that does not rejoin within the rebalance timeout is removed") {
  const auto trace =
      testing::run_trace("scenarios/classic/slow-revoke-rebalance-timeout.json", "classic-eager");
  // The rebalance starts when C joins (20005); the join timer is the largest rebalance timeout
  // (max.poll.interval.ms = 30000).
  CHECK(times(trace, "member.leave", "consumer", "B") == std::vector<double>{20005 + 30000});
  // B's heartbeat thread keeps running during the callback and is told UNKNOWN_MEMBER_ID.
  CHECK(testing::responses(trace, "B", "Heartbeat", "UNKNOWN_MEMBER_ID").size() == 1);
  // After its 40 s callback B joins as a new member.
  CHECK(testing::responses(trace, "B", "JoinGroup", "MEMBER_ID_REQUIRED").size() == 2);
  const auto s =
      summary_of("scenarios/classic/slow-revoke-rebalance-timeout.json", "classic-eager");
  // C owns t-3..t-5 from 50008 while B, inside onPartitionsRevoked until 62016, still does.
  CHECK(s["metrics"]["overlap_partition_ms"] == 3 * (62016.0 - 50008.0));
}

TEST_CASE("a subscription change makes the member rejoin at its next poll") {
  const auto trace =
      testing::run_trace("scenarios/classic/subscription-change.json", "classic-eager");
  // subscribe() at 20000; the next poll() revokes (eager) after the async commit and rejoins.
  CHECK(group_states(trace, "PreparingRebalance").back() == 20003);
  CHECK(testing::callback_partitions(trace, "B", "onPartitionsAssigned", 1) ==
        std::vector<std::string>{"t1-2", "t1-3", "t2-0", "t2-1", "t2-2", "t2-3"});
}

TEST_CASE("new partitions are assigned when the leader's metadata refresh sees them") {
  const auto trace = testing::run_trace("scenarios/classic/add-partitions.json", "classic-eager");
  // The leader A fetched metadata when it started (1000); the next refresh is due
  // metadata.max.age.ms later, at 301000. Its Metadata request waits behind A's Fetch in flight
  // (A fetches every 502 ms from 1012: the one of 1012 + 597 x 502 = 300706 is answered at 301208;
  // docs/fidelity.md, finding 12), so A learns the new partitions at 301208 and its poll(), woken
  // by that Fetch answer, rejoins: the auto-commit before the join (301208-301210), then the
  // JoinGroup, read by the coordinator at 301211.
  CHECK(times(trace, "consumer.rejoin", "consumer", "A") == std::vector<double>{301208});
  CHECK(group_states(trace, "PreparingRebalance").back() == 301211);
  CHECK(testing::callback_partitions(trace, "B", "onPartitionsAssigned", 1) ==
        std::vector<std::string>{"t-4", "t-5", "t-6", "t-7"});
  // B is not the leader: its own refresh (due at 301100) triggers nothing.
  CHECK(times(trace, "consumer.rejoin", "consumer", "B").empty());
}

TEST_CASE("lost responses: request timeout, disconnect and coordinator rediscovery") {
  const auto trace = testing::run_trace("scenarios/classic/lost-responses.json", "classic-eager");
  // B's first heartbeat without an answer was sent at 22012: it times out 30 s later.
  CHECK(times(trace, "net.disconnect", "consumer", "B").front() == 22012 + 30000);
  CHECK(times(trace, "consumer.coordinator_unknown", "consumer", "B") ==
        std::vector<double>{52012});
  // The FindCoordinator sent then is answered into the void too; it times out at 82012 and the
  // retry (after retry.backoff.ms-based backoff) finds the coordinator.
  CHECK(testing::responses(trace, "B", "FindCoordinator", "NETWORK_EXCEPTION") ==
        std::vector<double>{82012});
  CHECK(testing::responses(trace, "B", "FindCoordinator", "NONE").back() > 82012);
  // B's requests kept arriving, so its session never expired: no rebalance after the start.
  CHECK(times(trace, "member.leave", "consumer", "B").empty());
  CHECK(group_states(trace, "PreparingRebalance").size() == 2);
}

TEST_CASE("a paused member's zombie commit is not written and its ownership overlap is measured") {
  const auto trace =
      testing::run_trace("scenarios/classic/pause-session-timeout.json", "classic-eager");
  const double removed = times(trace, "member.leave", "consumer", "B").front();
  const auto b_lost = testing::callback_starts(trace, "B", "onPartitionsLost");
  REQUIRE(b_lost.size() == 1);
  // Between its removal and the moment it learns (and gives its partitions up as lost), the
  // zombie's one commit dies with the connection B's heartbeat thread drops on waking up (60000).
  // The coordinator found at 60002 is unavailable (its connection in the reconnect backoff,
  // finding 19), found again one retry backoff step (80-120 ms, drawn) later; the commit's retry
  // then goes out first and is answered UNKNOWN_MEMBER_ID: the zombie commits nothing.
  std::vector<std::string> commit_errors;
  for (const auto& e : trace) {
    const double t = e["t_us"].get<double>() / 1000.0;
    if (t <= removed || t > b_lost[0]) continue;
    if (e["type"] == "rpc" && e["dir"] == "recv" && e["to"] == "B" && e["api"] == "OffsetCommit")
      commit_errors.push_back(e["error"].get<std::string>());
  }
  CHECK(commit_errors == std::vector<std::string>{"NETWORK_EXCEPTION", "UNKNOWN_MEMBER_ID"});
  // 60002 + the step + FindCoordinator's and OffsetCommit's round trips (2 ms each).
  CHECK(b_lost[0] - 60002 - 4 >= 80);
  CHECK(b_lost[0] - 60002 - 4 < 120);
  const auto s = summary_of("scenarios/classic/pause-session-timeout.json", "classic-eager");
  const auto a_assigned = testing::callback_starts(trace, "A", "onPartitionsAssigned");
  // A owns t-2 and t-3 from its assignment after B's removal until B, awake, declares them lost.
  CHECK(s["metrics"]["overlap_partition_ms"] == 2 * (b_lost[0] - a_assigned[2]));
}
