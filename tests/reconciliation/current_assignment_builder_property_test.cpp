// Property test of next_member_state() driving a whole group: seeded random target
// assignments, members heartbeating in random order and acknowledging revocations. Proves the
// KIP-848 safety rule (no partition held by two members at once) and that members converge to
// the target, STABLE at the target epoch, once it stops moving.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/reconciliation/current_assignment_builder.hpp"
#include "sim/rng.hpp"

namespace {

using rsim::reconciliation::ConsumerGroupMember;
using rsim::reconciliation::MemberState;
using rsim::reconciliation::OwnedTopicPartitions;
using rsim::reconciliation::PartitionEpochLookup;
using rsim::reconciliation::TopicIdPartitions;

const std::map<std::string, std::string> kTopics = {{"topic", "tid"}};
const std::map<std::string, std::vector<std::string>> kNoRegex;

/// Partition -> member epoch of its holder (assigned or pending revocation), as the coordinator
/// derives it; also checks that nobody shares a partition.
std::map<std::int32_t, std::int32_t> partition_epochs(
    const std::vector<ConsumerGroupMember>& members) {
  std::map<std::int32_t, std::int32_t> epochs;
  for (const auto& m : members) {
    for (const auto* held : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
      const auto it = held->find("tid");
      if (it == held->end()) continue;
      for (const auto& pe : it->second) {
        CHECK_MESSAGE(epochs.count(pe.partition) == 0,
                      "partition " << pe.partition << " held twice");
        epochs[pe.partition] = m.member_epoch;
      }
    }
  }
  return epochs;
}

/// What the client owns after its last response: the assigned partitions (it revokes the rest).
std::vector<OwnedTopicPartitions> owned_of(const ConsumerGroupMember& m) {
  std::vector<OwnedTopicPartitions> owned;
  if (const auto it = m.assigned_partitions.find("tid"); it != m.assigned_partitions.end()) {
    OwnedTopicPartitions tp{"tid", {}};
    for (const auto& pe : it->second) tp.partitions.push_back(pe.partition);
    owned.push_back(tp);
  }
  return owned;
}

}  // namespace

TEST_CASE("a group reconciling random targets never shares a partition and converges") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    sim::Rng rng(seed, "reconciliation-property");
    const int member_count = static_cast<int>(rng.uniform(1, 6));
    const int partitions = static_cast<int>(rng.uniform(1, 16));
    std::vector<ConsumerGroupMember> members(static_cast<std::size_t>(member_count));
    for (int i = 0; i < member_count; ++i) {
      members[static_cast<std::size_t>(i)].member_id = std::string("m").append(std::to_string(i));
      members[static_cast<std::size_t>(i)].subscribed_topic_names = {"topic"};
    }
    std::vector<TopicIdPartitions> targets(static_cast<std::size_t>(member_count));
    std::int32_t epoch = 0;
    const int rounds = static_cast<int>(rng.uniform(1, 5));
    for (int round = 0; round <= rounds; ++round) {
      // A new target epoch: every partition to a random member.
      ++epoch;
      for (auto& t : targets) t.clear();
      for (int p = 0; p < partitions; ++p) {
        targets[static_cast<std::size_t>(rng.uniform(0, member_count - 1))]["tid"].push_back(p);
      }
      // Heartbeats in random order; the last round runs long enough to converge.
      const int heartbeats =
          round == rounds ? 8 * member_count : static_cast<int>(rng.uniform(0, 3 * member_count));
      for (int h = 0; h < heartbeats; ++h) {
        const auto i = static_cast<std::size_t>(h < heartbeats - 2 * member_count
                                                    ? rng.uniform(0, member_count - 1)
                                                    : h % member_count);
        const auto epochs = partition_epochs(members);
        const PartitionEpochLookup lookup = [&epochs](const std::string&, std::int32_t p) {
          const auto it = epochs.find(p);
          return it == epochs.end() ? -1 : it->second;
        };
        const std::optional<std::vector<OwnedTopicPartitions>> owned = owned_of(members[i]);
        const auto r = rsim::reconciliation::next_member_state(
            members[i], {.target_assignment_epoch = epoch,
                         .target_assignment = targets[i],
                         .current_partition_epoch = lookup,
                         .owned_topic_partitions = owned,
                         .has_subscription_changed = false,
                         .topic_ids_by_name = kTopics,
                         .resolved_regular_expressions = kNoRegex});
        REQUIRE(r.error == rsim::reconciliation::ReconciliationError::None);
        if (r.next) {
          CHECK(r.next->member_epoch <= epoch);
          members[i] = *r.next;
        }
        partition_epochs(members);  // checks the safety rule after every step
      }
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      CAPTURE(i);
      CHECK(members[i].state == MemberState::Stable);
      CHECK(members[i].member_epoch == epoch);
      CHECK(members[i].partitions_pending_revocation.empty());
      std::vector<std::int32_t> held;
      if (const auto it = members[i].assigned_partitions.find("tid");
          it != members[i].assigned_partitions.end()) {
        for (const auto& pe : it->second) {
          held.push_back(pe.partition);
          CHECK(pe.assignment_epoch <= epoch);
        }
      }
      const auto it = targets[i].find("tid");
      CHECK(held == (it == targets[i].end() ? std::vector<std::int32_t>{} : it->second));
    }
  }
}
