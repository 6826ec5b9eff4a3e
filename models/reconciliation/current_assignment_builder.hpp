// The KIP-848 reconciliation state machine of the group coordinator (Kafka's
// CurrentAssignmentBuilder) as one pure function: given a member, the group's target assignment
// for it and what its heartbeat reported, the member's next state. It does not compute target
// assignments (server_assignor.hpp) nor keep the partition-epoch map (the caller owns both).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/reconciliation/consumer_group_member.hpp"

namespace rsim::reconciliation {

/// topic id -> partitions (any order). A member's target assignment.
using TopicIdPartitions = std::map<std::string, std::vector<std::int32_t>>;

/// One entry of ConsumerGroupHeartbeatRequest.TopicPartitions: what the member owns.
struct OwnedTopicPartitions {
  std::string topic_id;
  std::vector<std::int32_t> partitions;
};

/// The member epoch of a partition's current owner, -1 when nobody owns it
/// (ConsumerGroup.currentPartitionEpoch).
using PartitionEpochLookup =
    std::function<std::int32_t(const std::string& topic_id, std::int32_t partition)>;

/// Everything besides the member that the next state depends on. References: build it in the
/// call, e.g. `next_member_state(m, {.target_assignment_epoch = 5, ...})`.
struct ReconciliationInput {
  std::int32_t target_assignment_epoch = 0;
  const TopicIdPartitions& target_assignment;
  const PartitionEpochLookup& current_partition_epoch;
  /// The heartbeat's owned partitions: nullopt when the field was not sent (Kafka's null, which
  /// counts as "still owns everything"), an empty vector when it was sent empty.
  const std::optional<std::vector<OwnedTopicPartitions>>& owned_topic_partitions;
  /// The member changed its subscription in this heartbeat.
  bool has_subscription_changed = false;
  /// Metadata image: topic name -> topic id. Subscribed names missing here match nothing.
  const std::map<std::string, std::string>& topic_ids_by_name;
  /// regex -> the topic names it resolved to; a regex missing here matches nothing.
  const std::map<std::string, std::vector<std::string>>& resolved_regular_expressions;
};

enum class ReconciliationError { None, FencedMemberEpoch };

struct ReconciliationResult {
  ReconciliationError error = ReconciliationError::None;
  /// The member's next state; nullopt when it stays exactly as it was (Kafka returns the same
  /// object, and the coordinator then writes no record) or on error.
  std::optional<ConsumerGroupMember> next;

  const ConsumerGroupMember& member_or(const ConsumerGroupMember& current) const {
    return next ? *next : current;
  }
};

/// Kafka's CurrentAssignmentBuilder.build(). A member in state UNKNOWN that does not report an
/// empty owned set is fenced (FENCED_MEMBER_EPOCH); nothing else fails.
ReconciliationResult next_member_state(const ConsumerGroupMember& member,
                                       const ReconciliationInput& input);

}  // namespace rsim::reconciliation
