// What a coordinator holds of a group when it unloads or loads it (failover), and the
// data-partition leadership moves the controller decides, typed: the coordinators and the broker
// model return them, the `coordinator.loaded` / `coordinator.unloaded` and `partition.leaders`
// trace events carry them, and only the trace writer (models/trace/) turns them into JSON, with
// the members and order docs/scenario-format.md lists. No JSON here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/protocol/topic_partition.hpp"

namespace rsim {

/// A group's committed offsets, in partition order ("orders-0": offset).
using SnapshotOffsets = std::vector<std::pair<TopicPartition, std::int64_t>>;

/// A member of a classic group: the GroupMetadata member fields and its assignment.
struct ClassicMemberSnapshot {
  std::string member_id, consumer;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::int32_t rebalance_timeout = 0, session_timeout = 0;
  std::vector<std::string> subscription;  // the selected protocol's topics
  TopicPartitions assignment;
  bool operator==(const ClassicMemberSnapshot&) const = default;
};

/// A classic group (generation, protocol, leader, members, offsets).
struct ClassicGroupSnapshot {
  std::string group;
  std::string state;  // Kafka's ClassicGroupState name ("Stable")
  std::int32_t generation = 0;
  std::string protocol_type;
  std::optional<std::string> protocol, leader;
  std::vector<ClassicMemberSnapshot> members;
  SnapshotOffsets offsets;
  bool operator==(const ClassicGroupSnapshot&) const = default;
};

/// A member of a consumer (KIP-848) group: its epoch, reconciliation state and partitions.
struct ConsumerMemberSnapshot {
  std::string member_id, consumer;
  std::int32_t member_epoch = 0;
  std::string state;  // MemberState, as Kafka spells it ("STABLE")
  TopicPartitions assigned;
  bool operator==(const ConsumerMemberSnapshot&) const = default;
};

/// A consumer (KIP-848) group: its epochs, members and offsets ("protocol": "consumer").
struct ConsumerGroupSnapshot {
  std::string group;
  std::string state;  // "empty", "assigning", "reconciling" or "stable"
  std::int32_t epoch = 0, assignment_epoch = 0;
  std::vector<ConsumerMemberSnapshot> members;
  SnapshotOffsets offsets;
  bool operator==(const ConsumerGroupSnapshot&) const = default;
};

using GroupSnapshot = std::variant<ClassicGroupSnapshot, ConsumerGroupSnapshot>;
using GroupSnapshots = std::vector<GroupSnapshot>;

/// A data partition's new leader (nullopt: none eligible).
struct LeaderMove {
  TopicPartition partition;
  std::optional<std::int32_t> leader;
  bool operator==(const LeaderMove&) const = default;
};
/// Leadership moves, each partition once, in the order they were decided.
using LeaderMoves = std::vector<LeaderMove>;

}  // namespace rsim
