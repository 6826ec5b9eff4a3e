// Unit tests of next_member_state(): Kafka behaviours the shared vectors do not list (the
// UNKNOWN state and fencing, partitions returning while pending revocation, owned partitions
// without the revoked ones), and the API's "unchanged" and epoch contracts.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/reconciliation/current_assignment_builder.hpp"

namespace {

using rsim::reconciliation::ConsumerGroupMember;
using rsim::reconciliation::MemberState;
using rsim::reconciliation::OwnedTopicPartitions;
using rsim::reconciliation::PartitionEpochLookup;
using rsim::reconciliation::PartitionsWithEpochs;
using rsim::reconciliation::ReconciliationError;
using rsim::reconciliation::ReconciliationInput;
using rsim::reconciliation::ReconciliationResult;
using rsim::reconciliation::TopicIdPartitions;
using Owned = std::optional<std::vector<OwnedTopicPartitions>>;

const std::map<std::string, std::string> kTopics = {{"topic1", "t1"}, {"topic2", "t2"}};
const std::map<std::string, std::vector<std::string>> kNoRegex;

/// topic id -> partitions, all at one assignment epoch.
PartitionsWithEpochs at_epoch(const std::map<std::string, std::vector<std::int32_t>>& parts,
                              std::int32_t epoch) {
  PartitionsWithEpochs out;
  for (const auto& [topic, partitions] : parts) {
    for (const auto p : partitions) out[topic].push_back({p, epoch});
  }
  return out;
}

ConsumerGroupMember member(MemberState state, std::int32_t epoch, std::int32_t previous,
                           PartitionsWithEpochs assigned, PartitionsWithEpochs pending = {}) {
  ConsumerGroupMember m;
  m.member_id = "member";
  m.state = state;
  m.member_epoch = epoch;
  m.previous_member_epoch = previous;
  m.subscribed_topic_names = {"topic1", "topic2"};
  m.assigned_partitions = std::move(assigned);
  m.partitions_pending_revocation = std::move(pending);
  return m;
}

ReconciliationResult run(const ConsumerGroupMember& m, std::int32_t target_epoch,
                         const TopicIdPartitions& target, const PartitionEpochLookup& epochs,
                         const Owned& owned, bool subscription_changed = false) {
  return rsim::reconciliation::next_member_state(
      m, ReconciliationInput{.target_assignment_epoch = target_epoch,
                             .target_assignment = target,
                             .current_partition_epoch = epochs,
                             .owned_topic_partitions = owned,
                             .has_subscription_changed = subscription_changed,
                             .topic_ids_by_name = kTopics,
                             .resolved_regular_expressions = kNoRegex});
}

}  // namespace

TEST_CASE("a member in UNKNOWN state is fenced until it reports owning nothing") {
  const auto m = member(MemberState::Unknown, 11, 11, at_epoch({{"t1", {3}}, {"t2", {6}}}, 11),
                        at_epoch({{"t1", {2}}, {"t2", {5}}}, 11));
  const TopicIdPartitions target = {{"t1", {3}}, {"t2", {6}}};
  const PartitionEpochLookup owned_by_10 = [](const std::string&, std::int32_t) { return 10; };
  const auto absent = run(m, 12, target, owned_by_10, std::nullopt);
  CHECK(absent.error == ReconciliationError::FencedMemberEpoch);
  CHECK(!absent.next.has_value());
  const auto some = run(m, 12, target, owned_by_10, Owned{{{"t1", {3}}}});
  CHECK(some.error == ReconciliationError::FencedMemberEpoch);

  const PartitionEpochLookup owned_by_11 = [](const std::string&, std::int32_t) { return 11; };
  const auto rejoined = run(m, 12, target, owned_by_11, Owned{std::vector<OwnedTopicPartitions>{}});
  REQUIRE(rejoined.error == ReconciliationError::None);
  REQUIRE(rejoined.next.has_value());
  // Retained partitions keep their assignment epoch (KIP-1251); pending revocation is dropped.
  CHECK(*rejoined.next ==
        member(MemberState::Stable, 12, 11, at_epoch({{"t1", {3}}, {"t2", {6}}}, 11)));
}

TEST_CASE("a partition back in the target while pending revocation is reassigned at once") {
  const auto m =
      member(MemberState::UnrevokedPartitions, 10, 10,
             at_epoch({{"t1", {2, 3}}, {"t2", {5, 6}}}, 10), at_epoch({{"t1", {4}}}, 10));
  const PartitionEpochLookup epochs = [](const std::string& topic, std::int32_t p) {
    if (topic == "t1" && p >= 2 && p <= 4) return 10;
    if (topic == "t2" && (p == 5 || p == 6)) return 10;
    return -1;
  };
  const auto r = run(m, 12, {{"t1", {2, 3, 4}}, {"t2", {5, 6, 7}}}, epochs,
                     Owned{{{"t1", {2, 3}}, {"t2", {5, 6}}}});
  REQUIRE(r.next.has_value());
  auto want = member(MemberState::Stable, 12, 10, {});
  want.assigned_partitions = {{"t1", {{2, 10}, {3, 10}, {4, 12}}},
                              {"t2", {{5, 10}, {6, 10}, {7, 12}}}};
  CHECK(*r.next == want);
}

TEST_CASE("unrevoked partitions acknowledged while new ones are still owned: unreleased") {
  const auto m = member(MemberState::UnrevokedPartitions, 11, 10,
                        at_epoch({{"t1", {2, 3}}, {"t2", {5, 6}}}, 11));
  const PartitionEpochLookup owned_by_10 = [](const std::string&, std::int32_t) { return 10; };
  const auto r = run(m, 11, {{"t1", {2, 3, 4}}, {"t2", {5, 6, 7}}}, owned_by_10,
                     Owned{{{"t1", {2, 3}}, {"t2", {5, 6}}}});
  REQUIRE(r.next.has_value());
  CHECK(*r.next == member(MemberState::UnreleasedPartitions, 11, 11,
                          at_epoch({{"t1", {2, 3}}, {"t2", {5, 6}}}, 11)));
}

TEST_CASE("a revoked partition the heartbeat no longer reports does not hold the member back") {
  const auto m =
      member(MemberState::Stable, 10, 10, at_epoch({{"t1", {1, 2, 3}}, {"t2", {4, 5, 6}}}, 10));
  const PartitionEpochLookup epochs = [](const std::string& topic, std::int32_t) {
    return topic == "t2" ? 10 : -1;
  };
  const auto r = run(m, 11, {{"t1", {1, 2, 3}}, {"t2", {4, 5, 7}}}, epochs,
                     Owned{std::vector<OwnedTopicPartitions>{}});
  REQUIRE(r.next.has_value());
  CHECK(*r.next == member(MemberState::UnreleasedPartitions, 11, 10,
                          at_epoch({{"t1", {1, 2, 3}}, {"t2", {4, 5}}}, 10)));
}

TEST_CASE("a topic dropped from the subscription is revoked while the member still owns it") {
  for (const auto& row :
       std::vector<std::tuple<int, int, bool>>{{10, 11, false}, {10, 11, true}, {10, 10, true}}) {
    const auto& epoch = std::get<0>(row);
    const auto& target_epoch = std::get<1>(row);
    const auto& changed = std::get<2>(row);
    CAPTURE(epoch);
    CAPTURE(target_epoch);
    CAPTURE(changed);
    auto m = member(MemberState::Stable, epoch, epoch - 1,
                    at_epoch({{"t1", {1, 2, 3}}, {"t2", {4, 5, 6}}}, epoch));
    m.subscribed_topic_names = {"topic2"};
    const PartitionEpochLookup free = [](const std::string&, std::int32_t) { return -1; };
    const auto r = run(m, target_epoch, {{"t1", {1, 2, 3}}, {"t2", {4, 5, 6}}}, free,
                       Owned{{{"t1", {1, 2, 3}}, {"t2", {4, 5, 6}}}}, changed);
    REQUIRE(r.next.has_value());
    auto want = member(MemberState::UnrevokedPartitions, epoch, epoch,
                       at_epoch({{"t2", {4, 5, 6}}}, epoch), at_epoch({{"t1", {1, 2, 3}}}, epoch));
    want.subscribed_topic_names = {"topic2"};
    CHECK(*r.next == want);
  }
}

TEST_CASE("a stable member at the target epoch without a subscription change stays as it is") {
  const auto m = member(MemberState::Stable, 10, 9, at_epoch({{"t1", {1}}}, 10));
  const PartitionEpochLookup free = [](const std::string&, std::int32_t) { return -1; };
  const auto r = run(m, 10, {{"t1", {1, 2}}}, free, std::nullopt);
  CHECK(r.error == ReconciliationError::None);
  CHECK(!r.next.has_value());
  CHECK(&r.member_or(m) == &m);
}

TEST_CASE("member states print as Kafka names them and parse back") {
  for (const auto state : {MemberState::Stable, MemberState::UnrevokedPartitions,
                           MemberState::UnreleasedPartitions, MemberState::Unknown}) {
    CHECK(rsim::reconciliation::member_state_from_string(rsim::reconciliation::to_string(state)) ==
          state);
  }
  CHECK(rsim::reconciliation::to_string(MemberState::UnrevokedPartitions) ==
        "UNREVOKED_PARTITIONS");
  CHECK(!rsim::reconciliation::member_state_from_string("stable").has_value());
}
