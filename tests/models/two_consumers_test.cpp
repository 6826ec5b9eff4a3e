// The two-consumers example against the measured Kafka 4.5 run: every callback instant within
// 150 ms of the real one, and each instant exactly where Kafka's timing rules put it.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

using testing::callback_partitions;
using testing::callback_starts;
using testing::responses;

namespace {
const auto& trace() {
  static const auto t =
      testing::run_trace("scenarios/examples/two-consumers.json", "classic-eager");
  return t;
}
std::vector<std::string> parts(std::initializer_list<int> ps) {
  std::vector<std::string> out;
  for (int p : ps) out.push_back("orders-" + std::to_string(p));
  return out;
}
}  // namespace

TEST_CASE("classic-eager callbacks fall within 150 ms of the real Kafka 4.5 run") {
  const auto a_assigned = callback_starts(trace(), "A", "onPartitionsAssigned");
  const auto a_revoked = callback_starts(trace(), "A", "onPartitionsRevoked");
  const auto b_assigned = callback_starts(trace(), "B", "onPartitionsAssigned");
  REQUIRE(a_assigned.size() == 3);
  REQUIRE(a_revoked.size() == 3);
  REQUIRE(b_assigned.size() == 1);
  // Real run: A [0..5] 3089; A revoked [0..5] 6116; A [0,1,2] 6147; B [3,4,5] 6148;
  // A revoked [0,1,2] 27154; A [0..5] 27161.
  CHECK(std::abs(a_assigned[0] - 3089) <= 150);
  CHECK(std::abs(a_revoked[0] - 6116) <= 150);
  CHECK(std::abs(a_assigned[1] - 6147) <= 150);
  CHECK(std::abs(b_assigned[0] - 6148) <= 150);
  CHECK(std::abs(a_revoked[1] - 27154) <= 150);
  CHECK(std::abs(a_assigned[2] - 27161) <= 150);
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 0) == parts({0, 1, 2, 3, 4, 5}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsRevoked", 0) == parts({0, 1, 2, 3, 4, 5}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 1) == parts({0, 1, 2}));
  CHECK(callback_partitions(trace(), "B", "onPartitionsAssigned", 0) == parts({3, 4, 5}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsRevoked", 1) == parts({0, 1, 2}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 2) == parts({0, 1, 2, 3, 4, 5}));
}

TEST_CASE(
    "a member learns of a rebalance at its next heartbeat, HB after its last JoinGroup response") {
  // Links are 1 ms each way, so a round trip is 2 ms; the coordinator's write latency is 0.
  const auto a_joins = responses(trace(), "A", "JoinGroup", "NONE");
  REQUIRE(a_joins.size() == 3);
  // A starts at 3040: FindCoordinator, JoinGroup -> MEMBER_ID_REQUIRED, JoinGroup (the initial
  // delay is 0, so the join completes at once): three round trips.
  CHECK(a_joins[0] == 3046.0);
  // B's join parks while A is Stable; A's first heartbeat is heartbeat.interval.ms (3000) after
  // its JoinGroup response; REBALANCE_IN_PROGRESS comes back one round trip later, and the
  // pre-revocation auto-commit costs one more round trip before onPartitionsRevoked.
  const auto a_revoked = callback_starts(trace(), "A", "onPartitionsRevoked");
  CHECK(a_revoked[0] == a_joins[0] + 3000 + 2 + 2);
  // A's JoinGroup completes the join at once (every member parked): JoinGroup and SyncGroup
  // round trips, then both members get their assignment at the same instant.
  CHECK(a_joins[1] == a_revoked[0] + 2);
  CHECK(callback_starts(trace(), "A", "onPartitionsAssigned")[1] == a_joins[1] + 2);
  CHECK(callback_starts(trace(), "B", "onPartitionsAssigned")[0] == a_joins[1] + 2);
  // B's stop (24451) reaches its application thread when its poll(100 ms) returns: B polls on a
  // 100 ms grid from its start at 3121, so at 24521; close() then commits (one round trip).
  const auto b_revoked = callback_starts(trace(), "B", "onPartitionsRevoked");
  REQUIRE(b_revoked.size() == 1);
  CHECK(b_revoked[0] == 24521 + 2);
  // After B's LeaveGroup, A's heartbeats are still on the phase of its generation-2 JoinGroup
  // response: the first one after the leave is at a_joins[1] + 3000 * 7.
  CHECK(a_revoked[1] == a_joins[1] + 3000 * 7 + 2 + 2);
  CHECK(callback_starts(trace(), "A", "onPartitionsAssigned")[2] == a_revoked[1] + 2 + 2);
}

TEST_CASE("the coordinator's generations, leader and group states follow Kafka's state machine") {
  std::vector<std::pair<std::string, int>> states;
  for (const auto& e : trace())
    if (e["type"] == "group.state")
      states.emplace_back(e["state"].get<std::string>(), e["generation"].get<int>());
  const std::vector<std::pair<std::string, int>> expected{
      {"Empty", 0},  // created by A's first JoinGroup
      {"PreparingRebalance", 0},
      {"CompletingRebalance", 1},
      {"Stable", 1},  // A alone
      {"PreparingRebalance", 1},
      {"CompletingRebalance", 2},
      {"Stable", 2},  // B joins
      {"PreparingRebalance", 2},
      {"CompletingRebalance", 3},
      {"Stable", 3},  // B leaves
      {"PreparingRebalance", 3},
      {"Empty", 4}};  // A leaves
  CHECK(states == expected);
}

TEST_CASE("the __consumer_offsets records of g-classic: five GroupMetadata records in order") {
  std::vector<std::pair<int, std::size_t>> group_metadata;  // (generation, members)
  int partition = -1;
  for (const auto& e : trace()) {
    if (e["type"] != "record") continue;
    partition = e["partition"].get<int>();
    if (e["record"] == "GroupMetadata")
      group_metadata.emplace_back(e["generation"].get<int>(), e["members"].size());
  }
  CHECK(partition == 18);  // abs("g-classic".hashCode()) % 50
  const std::vector<std::pair<int, std::size_t>> expected{{0, 0}, {1, 1}, {2, 2}, {3, 1}, {4, 0}};
  CHECK(group_metadata == expected);
}
