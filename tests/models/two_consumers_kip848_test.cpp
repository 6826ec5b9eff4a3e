// The two-consumers-kip848 example against the measured Kafka 4.5 run with
// group.protocol=consumer: every callback instant within 400 ms of the real one, each exactly
// where the heartbeat/assignment-interval/poll-pass rules put it, and the group's records in
// __consumer_offsets equal to the real log (kafka-consumer-protocol.md §13 and §18).
#include <doctest/doctest.h>

#include <tuple>

#include "models/consumer_group_coordinator.hpp"
#include "trace_helpers.hpp"

using testing::callback_partitions;
using testing::callback_starts;

namespace {
const auto& trace() {
  static const auto t =
      testing::run_trace("scenarios/examples/two-consumers-kip848.json", "consumer");
  return t;
}
std::vector<std::string> parts(std::initializer_list<int> ps) {
  std::vector<std::string> out;
  for (int p : ps) out.push_back("orders-" + std::to_string(p));
  return out;
}
double first_of(const std::vector<nlohmann::json>& t, const std::string& type,
                const std::string& consumer) {
  for (const auto& e : t)
    if (e["type"] == type && e.value("consumer", "") == consumer)
      return e["t_us"].get<double>() / 1000.0;
  return -1;
}
}  // namespace

TEST_CASE("consumer protocol: callbacks fall within 400 ms of the real Kafka 4.5 run") {
  const auto a_assigned = callback_starts(trace(), "A", "onPartitionsAssigned");
  const auto a_revoked = callback_starts(trace(), "A", "onPartitionsRevoked");
  const auto b_assigned = callback_starts(trace(), "B", "onPartitionsAssigned");
  const auto b_revoked = callback_starts(trace(), "B", "onPartitionsRevoked");
  REQUIRE(a_assigned.size() == 3);
  REQUIRE(a_revoked.size() == 2);  // the second is A's close() at the end of the run
  REQUIRE(b_assigned.size() == 2);
  REQUIRE(b_revoked.size() == 1);
  CHECK(std::abs(a_assigned[0] - 2741) <= 400);
  CHECK(std::abs(b_assigned[0] - 3037) <= 400);
  CHECK(std::abs(a_revoked[0] - 7957) <= 400);
  CHECK(std::abs(a_assigned[1] - 8040) <= 400);
  CHECK(std::abs(b_assigned[1] - 13102) <= 400);
  CHECK(std::abs(b_revoked[0] - 31536) <= 400);
  CHECK(std::abs(a_assigned[2] - 33084) <= 400);
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 0) == parts({0, 1, 2, 3, 4, 5}));
  CHECK(callback_partitions(trace(), "B", "onPartitionsAssigned", 0).empty());
  CHECK(callback_partitions(trace(), "A", "onPartitionsRevoked", 0) == parts({3, 4, 5}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 1).empty());
  CHECK(callback_partitions(trace(), "B", "onPartitionsAssigned", 1) == parts({3, 4, 5}));
  CHECK(callback_partitions(trace(), "B", "onPartitionsRevoked", 0) == parts({3, 4, 5}));
  CHECK(callback_partitions(trace(), "A", "onPartitionsAssigned", 2) == parts({3, 4, 5}));
}

TEST_CASE(
    "consumer protocol: each instant where the heartbeat, throttle and poll-pass rules put it") {
  // Links are 1 ms each way; write latency 0. A starts at 2700: FindCoordinator (2 ms), join
  // heartbeat answered at 2704; its poll() passes are 100 ms apart from 2700, so the pass at 2800
  // starts the reconciliation (empty commit) and runs onPartitionsAssigned.
  const auto a_assigned = callback_starts(trace(), "A", "onPartitionsAssigned");
  const auto a_revoked = callback_starts(trace(), "A", "onPartitionsRevoked");
  const auto b_assigned = callback_starts(trace(), "B", "onPartitionsAssigned");
  CHECK(a_assigned[0] == 2800);
  // B joins at 2787 (< 2703 + 1000: throttled), passes from 2784: callback [] at 2884.
  CHECK(b_assigned[0] == 2884);
  // A's ack at 2800 sets its heartbeat phase: 7800 is the first heartbeat after the interval;
  // the target is computed at 7801; the pass at 7900 commits, 8000 revokes, 8100 assigns.
  CHECK(a_revoked[0] == 7800 + 200);
  CHECK(a_assigned[1] == 7800 + 300);
  // B's heartbeat at 7884 comes before A's ack (8100): UNRELEASED, then a full interval.
  CHECK(b_assigned[1] == 12884 + 100);
  // B's stop at 31443 reaches its thread when poll() returns (31484); commitSync takes 2 ms.
  CHECK(callback_starts(trace(), "B", "onPartitionsRevoked")[0] == 31484 + 2);
  // B's leave (31487) only bumps the epoch; A gets [3,4,5] at its next heartbeat (8100 + 5000k
  // = 33100), then a pass (33200) commits and the next (33300) runs the callback.
  CHECK(a_assigned[2] == 33300);
  CHECK(first_of(trace(), "consumer.closed", "B") == 31488);
}

TEST_CASE("consumer protocol: the group's records are the real __consumer_offsets sequence") {
  using Row = std::tuple<std::string, std::string, bool, int, int, int, std::vector<std::string>,
                         std::vector<std::string>>;
  // (record, consumer, tombstone, epoch / member_epoch / assignment_epoch, previous, state,
  // partitions or assigned, pending_revocation)
  std::vector<Row> got;
  for (const auto& e : trace()) {
    if (e["type"] != "record" || e["record"] == "OffsetCommit") continue;
    const std::string type = e["record"];
    const bool tomb = e["tombstone"];
    Row r{type, e.value("consumer", ""), tomb, -9, -9, -9, {}, {}};
    if (!tomb) {
      if (type == "ConsumerGroupMetadata") std::get<3>(r) = e["epoch"];
      if (type == "ConsumerGroupTargetAssignmentMetadata") std::get<3>(r) = e["assignment_epoch"];
      if (type == "ConsumerGroupTargetAssignmentMember")
        std::get<6>(r) = e["partitions"].get<std::vector<std::string>>();
      if (type == "ConsumerGroupCurrentMemberAssignment") {
        std::get<3>(r) = e["member_epoch"];
        std::get<4>(r) = e["previous_member_epoch"];
        std::get<5>(r) = e["state"];
        std::get<6>(r) = e["assigned"].get<std::vector<std::string>>();
        std::get<7>(r) = e["pending_revocation"].get<std::vector<std::string>>();
      }
    }
    got.push_back(r);
  }
  const std::string MM = "ConsumerGroupMemberMetadata", GM = "ConsumerGroupMetadata",
                    TM = "ConsumerGroupTargetAssignmentMember",
                    TMD = "ConsumerGroupTargetAssignmentMetadata",
                    CA = "ConsumerGroupCurrentMemberAssignment";
  const std::vector<std::string> none;
  const std::vector<Row> expected{
      // A joins a new group: epoch 1 -> 2, assigned at once.
      {MM, "A", false, -9, -9, -9, none, none},
      {GM, "", false, 2, -9, -9, none, none},
      {TM, "A", false, -9, -9, -9, parts({0, 1, 2, 3, 4, 5}), none},
      {TMD, "", false, 2, -9, -9, none, none},
      {CA, "A", false, 2, 0, 0, parts({0, 1, 2, 3, 4, 5}), none},
      // B joins within the interval: epoch 3, target not recomputed, B reconciled to epoch 2.
      {MM, "B", false, -9, -9, -9, none, none},
      {GM, "", false, 3, -9, -9, none, none},
      {CA, "B", false, 2, 0, 0, none, none},
      // A's heartbeat computes epoch 3; A must revoke [3,4,5].
      {TM, "A", false, -9, -9, -9, parts({0, 1, 2}), none},
      {TM, "B", false, -9, -9, -9, parts({3, 4, 5}), none},
      {TMD, "", false, 3, -9, -9, none, none},
      {CA, "A", false, 2, 2, 1, parts({0, 1, 2}), parts({3, 4, 5})},
      // B before A's ack: unreleased; A's ack; B's next heartbeat.
      {CA, "B", false, 3, 2, 2, none, none},
      {CA, "A", false, 3, 2, 0, parts({0, 1, 2}), none},
      {CA, "B", false, 3, 3, 0, parts({3, 4, 5}), none},
      // B leaves: tombstones and an epoch bump; A's next heartbeat computes epoch 4.
      {CA, "B", true, -9, -9, -9, none, none},
      {TM, "B", true, -9, -9, -9, none, none},
      {MM, "B", true, -9, -9, -9, none, none},
      {GM, "", false, 4, -9, -9, none, none},
      {TM, "A", false, -9, -9, -9, parts({0, 1, 2, 3, 4, 5}), none},
      {TMD, "", false, 4, -9, -9, none, none},
      {CA, "A", false, 4, 3, 0, parts({0, 1, 2, 3, 4, 5}), none},
      // A, the last member, leaves: the group is empty at epoch 5 (assignment 5, timestamp 0).
      {CA, "A", true, -9, -9, -9, none, none},
      {TM, "A", true, -9, -9, -9, none, none},
      {MM, "A", true, -9, -9, -9, none, none},
      {GM, "", false, 5, -9, -9, none, none},
      {TMD, "", false, 5, -9, -9, none, none},
  };
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("record #" << i << " " << std::get<0>(expected[i]) << " " << std::get<1>(expected[i]));
    CHECK(got[i] == expected[i]);
  }
  // On partition 32 (abs("g-consumer".hashCode()) % 50), and the first block at offsets 0-11
  // and B's leave at offset 51 as in the real log.
  for (const auto& e : trace()) {
    if (e["type"] != "record") continue;
    CHECK(e["partition"] == 32);
  }
}

TEST_CASE("consumer protocol: per-partition assignment epochs (KIP-1251) after B leaves") {
  // A keeps 0,1,2 from epoch 2 and gets 3,4,5 at epoch 4.
  std::vector<int> epochs;
  for (const auto& e : trace())
    if (e["type"] == "record" && e["record"] == "ConsumerGroupCurrentMemberAssignment" &&
        !e["tombstone"] && e["consumer"] == "A" && e["member_epoch"] == 4)
      epochs = e["assigned_epochs"].get<std::vector<int>>();
  CHECK(epochs == std::vector<int>{2, 2, 2, 4, 4, 4});
}

TEST_CASE("consumer protocol: group states and the rebalances of the summary") {
  std::vector<std::string> states;
  for (const auto& e : trace())
    if (e["type"] == "group.state") states.push_back(e["state"]);
  CHECK(states == std::vector<std::string>{"stable", "assigning", "reconciling", "stable",
                                           "assigning", "stable", "empty"});
}

TEST_CASE("consumer protocol: which heartbeat fields are sent when (AsyncKafkaConsumer §15.4)") {
  // A's heartbeats: (time, epoch, fields) for the first five.
  std::vector<std::tuple<double, int, std::vector<std::string>>> a;
  for (const auto& e : trace()) {
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "A" &&
        e["api"] == "ConsumerGroupHeartbeat")
      a.emplace_back(e["t_us"].get<double>() / 1000.0, e["member_epoch"].get<int>(),
                     e["fields"].get<std::vector<std::string>>());
  }
  REQUIRE(a.size() >= 5);
  using F = std::vector<std::string>;
  // The join sends everything it has (no rack, no remote assignor configured), owned = [].
  CHECK(a[0] == std::make_tuple(
                    2702.0, 0, F{"RebalanceTimeoutMs", "SubscribedTopicNames", "TopicPartitions"}));
  // The acknowledgement right after the reconciliation: only the owned partitions.
  CHECK(a[1] == std::make_tuple(2800.0, 2, F{"TopicPartitions"}));
  // Regular heartbeats 5 s after the last send carry nothing optional (owned = null, "unchanged").
  CHECK(a[2] == std::make_tuple(7800.0, 2, F{}));
  CHECK(a[3] == std::make_tuple(8100.0, 2, F{"TopicPartitions"}));  // the ack of the revocation
  CHECK(a[4] == std::make_tuple(13100.0, 3, F{}));
  // The leave at close() carries epoch -1 and no optional field.
  bool leave = false;
  for (const auto& e : trace())
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "B" &&
        e["api"] == "ConsumerGroupHeartbeat" && e["member_epoch"] == -1)
      leave = e["fields"].empty();
  CHECK(leave);
}
