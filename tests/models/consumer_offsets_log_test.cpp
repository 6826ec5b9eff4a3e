// The simulated __consumer_offsets-18 of the two-consumers example against the real Kafka 4.5
// run (kafka-classic-protocol.md §3.14, §7.6): the five GroupMetadata records, each with the
// generation, protocol, leader and members Kafka wrote, and the OffsetCommit records between
// them, in log order, with their offsets.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {

struct Expected {
  std::int64_t offset;
  std::string record;    // GroupMetadata | OffsetCommit
  std::int64_t a = -1;   // generation | partition_index
  std::string protocol;  // GroupMetadata: protocol ("" = null)
  std::string leader;    // GroupMetadata: leader ("" = null)
  std::size_t members = 0;
};

}  // namespace

TEST_CASE(
    "two-consumers: __consumer_offsets-18 holds Kafka's five GroupMetadata records and the "
    "commits") {
  const auto trace = testing::run_trace("scenarios/examples/two-consumers.json", "classic-eager");
  std::vector<Expected> expected;
  auto gm = [&](std::int64_t offset, std::int64_t generation, std::string protocol,
                std::string leader, std::size_t members) {
    expected.push_back(
        {offset, "GroupMetadata", generation, std::move(protocol), std::move(leader), members});
  };
  auto commits = [&](std::int64_t first_offset, std::vector<std::int64_t> partitions) {
    for (std::size_t i = 0; i < partitions.size(); ++i)
      expected.push_back(
          {first_offset + static_cast<std::int64_t>(i), "OffsetCommit", partitions[i]});
  };
  gm(0, 0, "", "", 0);              // the empty group, written at A's first JoinGroup
  gm(1, 1, "range", "A", 1);        // A's leader SyncGroup, generation 1
  commits(2, {0, 1, 2, 3, 4, 5});   // A's commit before revoking 0..5 (B joined)
  gm(8, 2, "range", "A", 2);        // generation 2: A 0..2, B 3..5
  commits(9, {3, 4, 5, 0, 1, 2});   // auto-commits at 11.05 s: B's, then A's
  commits(15, {3, 4, 5, 0, 1, 2});  // 16.05 s
  // 21.05 s: both due at the same instant, 2 ms after both heartbeats; each application thread
  // woke in poll() at its heartbeat's due time (timeToNextPoll) and re-armed its auto-commit
  // timer there, A's first, so A's goes first. A tie on real Kafka too: run 1 wrote B's first
  // (21.160 s, A's 21.164 s), run 2 A's (21.169 s, B's 21.214 s).
  commits(21, {0, 1, 2, 3, 4, 5});
  commits(27, {3, 4, 5});      // B's commitSync in close()
  commits(30, {0, 1, 2});      // A's auto-commit at 26.05 s
  commits(33, {0, 1, 2});      // A's commit before revoking 0..2 (B left)
  gm(36, 3, "range", "A", 1);  // generation 3: A alone
  // A's close() commits the positions it has of all six partitions (OffsetFetch answered 2 ms
  // after its assignment). In the real run A's closing commit wrote nothing (§5.4: no valid
  // position 127 ms after the assignment, unexplained), so generation 4 sat at offset 37 there.
  // Offset validation does not account for it: nothing is fetched in this run, so the committed
  // offsets carry no leader epoch (-1, checked below) and OffsetFetch makes them valid at once.
  commits(37, {0, 1, 2, 3, 4, 5});
  gm(43, 4, "", "", 0);  // A's LeaveGroup: no protocol, no members
  std::vector<Expected> actual;
  for (const auto& e : trace) {
    if (e["type"] != "record") continue;
    CHECK(e["partition"] == 18);  // abs("g-classic".hashCode()) % 50
    CHECK(e["group"] == "g-classic");
    CHECK(e["tombstone"] == false);
    Expected x{e["offset"].get<std::int64_t>(), e["record"].get<std::string>()};
    if (x.record == "GroupMetadata") {
      x.a = e["generation"].get<std::int64_t>();
      x.protocol = e["protocol"].is_null() ? "" : e["protocol"].get<std::string>();
      x.leader = e["leader"].is_null() ? "" : e["leader"].get<std::string>();
      x.members = e["members"].size();
      // Record 0 has protocol type "" (a group created by a JoinGroup); later ones "consumer".
      CHECK(e["protocol_type"] == (x.a == 0 ? "" : "consumer"));
    } else {
      x.a = e["partition_index"].get<std::int64_t>();
      CHECK(e["topic"] == "orders");
      CHECK(e["committed_offset"] == 0);  // nothing is produced in this example
      CHECK(e["leader_epoch"] == -1);     // positions from ListOffsets carry no epoch
    }
    actual.push_back(x);
  }
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(actual[i].offset == expected[i].offset);
    CHECK(actual[i].record == expected[i].record);
    CHECK(actual[i].a == expected[i].a);
    CHECK(actual[i].protocol == expected[i].protocol);
    CHECK(actual[i].leader == expected[i].leader);
    CHECK(actual[i].members == expected[i].members);
  }
  // The real run's "+ 33 OffsetCommit records" up to generation 3 (§7.6).
  std::size_t before_gen3 = 0;
  for (const auto& x : actual)
    if (x.record == "OffsetCommit" && x.offset < 36) ++before_gen3;
  CHECK(before_gen3 == 33);
}
