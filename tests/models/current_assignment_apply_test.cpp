// The consumer-group coordinator applies its own ConsumerGroupCurrentMemberAssignment records
// with apply_current_assignment() instead of building the record and reading it back: the two
// must leave the same group state, partition owners and reconciled count included.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/trace/group_records_json.hpp"
#include "sim/assert.hpp"
#include "sim/rng.hpp"

using namespace rsim;
using reconciliation::ConsumerGroupMember;
using reconciliation::MemberState;
using reconciliation::PartitionEpoch;
using reconciliation::PartitionsWithEpochs;

namespace {

int state_byte(MemberState s) {
  switch (s) {
    case MemberState::Stable:
      return 0;
    case MemberState::UnrevokedPartitions:
      return 1;
    case MemberState::UnreleasedPartitions:
      return 2;
    case MemberState::Unknown:
      return 127;
  }
  return 127;
}

// The record as the coordinator writes it (docs/model.md: ConsumerGroupCurrentMemberAssignment).
rsim::records::GroupRecord record_of(const std::string& group, const ConsumerGroupMember& m) {
  nlohmann::ordered_json assigned = nlohmann::ordered_json::array(), assigned_epochs = assigned,
                         pending = assigned, pending_epochs = assigned;
  for (const auto& [topic, ps] : m.assigned_partitions)
    for (const auto& pe : ps) {
      assigned.push_back(topic + "-" + std::to_string(pe.partition));
      assigned_epochs.push_back(pe.assignment_epoch);
    }
  for (const auto& [topic, ps] : m.partitions_pending_revocation)
    for (const auto& pe : ps) {
      pending.push_back(topic + "-" + std::to_string(pe.partition));
      pending_epochs.push_back(pe.assignment_epoch);
    }
  return rsim::trace::record_from_json(
      nlohmann::ordered_json{{"record", "ConsumerGroupCurrentMemberAssignment"},
                             {"tombstone", false},
                             {"group", group},
                             {"member_id", m.member_id},
                             {"consumer", m.member_id},
                             {"member_epoch", m.member_epoch},
                             {"previous_member_epoch", m.previous_member_epoch},
                             {"state", state_byte(m.state)},
                             {"assigned", assigned},
                             {"assigned_epochs", assigned_epochs},
                             {"pending_revocation", pending},
                             {"pending_revocation_epochs", pending_epochs}});
}

rsim::records::GroupRecord tombstone_of(const std::string& group, const std::string& member_id) {
  return rsim::records::Tombstone{
      .type = rsim::records::RecordType::ConsumerGroupCurrentMemberAssignment,
      .group = group,
      .member_id = member_id,
      .consumer = member_id};
}

}  // namespace

TEST_CASE(
    "apply_current_assignment leaves what replaying the record leaves (4,000 random updates)") {
  sim::Rng rng(31, "apply-current-assignment");
  const auto pick = [&rng](std::uint64_t n) { return rng.next() % n; };
  const std::vector<std::string> topics{"a", "b", "topic-with-dash"};
  const std::vector<std::string> ids{"m0", "m1", "m2", "m3", "m4", "m5"};
  ConsumerGroups replayed, applied;
  for (auto* groups : {&replayed, &applied}) {
    ConsumerGroupState g;
    g.group_id = "g";
    g.assignment_epoch = 3;
    groups->emplace("g", g);
  }
  int conflicts = 0, tombstones = 0, updates = 0;
  for (int step = 0; step < 4000; ++step) {
    const std::string& id = ids[pick(ids.size())];
    if (pick(20) == 0) {
      // A member's assignment goes (fenced or left): both sides replay the tombstone.
      if (replayed.at("g").members.count(id) == 0) continue;
      replay_record(replayed, tombstone_of("g", id));
      replay_record(applied, tombstone_of("g", id));
      ++tombstones;
    } else {
      ConsumerGroupMember m;
      m.member_id = id;
      m.member_epoch = static_cast<std::int32_t>(pick(6)) - 2;  // -2 (static leave) .. 3
      m.previous_member_epoch = static_cast<std::int32_t>(pick(5)) - 1;
      m.state = static_cast<MemberState>(pick(4));
      // Partitions in any order, topics left empty, one partition in both lists at times: the
      // record reads them back sorted and without the empty topics.
      for (auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
        const std::uint64_t n = pick(5);
        for (std::uint64_t k = 0; k < n; ++k) {
          const std::string& topic = topics[pick(topics.size())];
          const auto p = static_cast<std::int32_t>(pick(12));
          auto& ps = (*set)[topic];
          if (std::none_of(ps.begin(), ps.end(),
                           [p](const PartitionEpoch& x) { return x.partition == p; }))
            ps.push_back({p, static_cast<std::int32_t>(pick(4))});
        }
        if (pick(4) == 0) (*set)[topics[pick(topics.size())]];  // an empty topic
      }
      bool replay_threw = false, apply_threw = false;
      ConsumerGroups before = replayed;
      try {
        replay_record(replayed, record_of("g", m));
      } catch (const sim::InvariantViolation&) {
        replay_threw = true;
      }
      try {
        apply_current_assignment(applied.at("g"), m);
      } catch (const sim::InvariantViolation&) {
        apply_threw = true;
      }
      REQUIRE(replay_threw == apply_threw);
      if (replay_threw) {
        // A partition another member still owns: the record is refused; start both again from
        // the state before it.
        ++conflicts;
        replayed = before;
        applied = before;
        continue;
      }
      ++updates;
    }
    CAPTURE(step);
    const ConsumerGroupState& r = replayed.at("g");
    const ConsumerGroupState& a = applied.at("g");
    REQUIRE(a.members == r.members);
    REQUIRE(a.partition_owners == r.partition_owners);
    REQUIRE(a.reconciled_members == r.reconciled_members);
    REQUIRE(a == r);
  }
  // The run went through every path.
  CHECK(updates > 1000);
  CHECK(conflicts > 50);
  CHECK(tombstones > 50);
}

TEST_CASE("apply_current_assignment keeps the partitions a member keeps, with their new epoch") {
  ConsumerGroupState g;
  g.group_id = "g";
  g.assignment_epoch = 4;
  ConsumerGroupMember m;
  m.member_id = "A";
  m.member_epoch = 3;
  m.assigned_partitions["t"] = {{2, 3}, {0, 3}};
  CHECK(apply_current_assignment(g, m));  // A is new: the record creates it
  CHECK(g.members.size() == 1);
  CHECK(g.partition_epoch("t", 0) == 3);
  CHECK(g.members.at("A").member.assigned_partitions.at("t") ==
        std::vector<PartitionEpoch>{{0, 3}, {2, 3}});
  CHECK(g.reconciled_members == 0);  // stable, but at epoch 3 of 4
  m.member_epoch = 4;
  m.assigned_partitions["t"] = {{0, 4}};
  CHECK_FALSE(apply_current_assignment(g, m));  // A exists: updated in place
  CHECK(g.members.size() == 1);
  CHECK(g.partition_epoch("t", 0) == 4);
  CHECK(g.partition_epoch("t", 2) == -1);  // released
  CHECK(g.reconciled_members == 1);
  ConsumerGroupMember b;
  b.member_id = "B";
  b.member_epoch = 4;
  b.assigned_partitions["t"] = {{0, 4}};
  CHECK_THROWS_AS(apply_current_assignment(g, b), sim::InvariantViolation);
}
