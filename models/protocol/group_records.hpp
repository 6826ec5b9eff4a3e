// The records a group coordinator writes to __consumer_offsets, typed: one struct per Kafka
// record (OffsetCommit, the classic GroupMetadata, the ConsumerGroup* records of KIP-848, the
// ShareGroup* records of KIP-932) and Tombstone, the deletion of one record's key, closed in the
// variant GroupRecord. The coordinators build them, the OffsetsLog stores them, replay and load
// read them; no JSON. They become JSON only where the trace writes a `record` event
// (models/trace/group_records_json.hpp), with the fields and order of docs/scenario-format.md,
// and a `record` line read back from trace.jsonl becomes a GroupRecord again the same way.
// Partition lists keep the order the coordinator wrote them in; names are Kafka's.
#pragma once
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "models/protocol/topic_partition.hpp"

namespace rsim::records {

/// The record types, named as the `record` field spells them.
enum class RecordType : std::uint8_t {
  OffsetCommit,
  GroupMetadata,
  ConsumerGroupMetadata,
  ConsumerGroupMemberMetadata,
  ConsumerGroupTargetAssignmentMetadata,
  ConsumerGroupTargetAssignmentMember,
  ConsumerGroupCurrentMemberAssignment,
  ShareGroupMetadata,
  ShareGroupMemberMetadata,
  ShareGroupTargetAssignmentMetadata,
  ShareGroupTargetAssignmentMember,
  ShareGroupCurrentMemberAssignment,
  ShareGroupStatePartitionMetadata,
};
inline constexpr std::string_view kRecordNames[] = {
    "OffsetCommit",
    "GroupMetadata",
    "ConsumerGroupMetadata",
    "ConsumerGroupMemberMetadata",
    "ConsumerGroupTargetAssignmentMetadata",
    "ConsumerGroupTargetAssignmentMember",
    "ConsumerGroupCurrentMemberAssignment",
    "ShareGroupMetadata",
    "ShareGroupMemberMetadata",
    "ShareGroupTargetAssignmentMetadata",
    "ShareGroupTargetAssignmentMember",
    "ShareGroupCurrentMemberAssignment",
    "ShareGroupStatePartitionMetadata",
};
inline constexpr std::string_view record_name(RecordType t) {
  return kRecordNames[static_cast<int>(t)];
}
/// The type a `record` field names; nullopt for a name that is none of them.
inline std::optional<RecordType> record_type_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kRecordNames); ++i)
    if (kRecordNames[i] == name) return static_cast<RecordType>(i);
  return std::nullopt;
}

/// OffsetCommit (OffsetCommitKey + OffsetCommitValue).
struct OffsetCommit {
  static constexpr RecordType kType = RecordType::OffsetCommit;
  std::string group, topic;
  std::int32_t partition_index = 0;
  std::int64_t committed_offset = 0;
  std::int32_t leader_epoch = -1;
  std::int64_t commit_timestamp = 0;
  bool operator==(const OffsetCommit&) const = default;
};

/// The decoded ConsumerProtocolSubscription of a classic member's selected protocol.
struct ClassicSubscriptionDetail {
  TopicPartitions owned_partitions;
  std::int32_t generation_id = -1;
  std::optional<std::string> rack_id;  // written as null when unset
  bool operator==(const ClassicSubscriptionDetail&) const = default;
};
/// One member of a classic GroupMetadata record.
struct GroupMetadataMember {
  std::string member_id, consumer;
  std::optional<std::string> group_instance_id;  // left out when unset
  std::string client_id, client_host;
  std::int32_t rebalance_timeout = 0, session_timeout = 0;
  std::vector<std::string> subscription;            // the selected protocol's topics
  std::optional<ClassicSubscriptionDetail> detail;  // only with a selected protocol
  TopicPartitions assignment;
  bool operator==(const GroupMetadataMember&) const = default;
};
/// The classic GroupMetadata record.
struct GroupMetadata {
  static constexpr RecordType kType = RecordType::GroupMetadata;
  std::string group, protocol_type;
  std::int32_t generation = 0;
  std::optional<std::string> protocol, leader;  // null when unset; the leader named by consumer
  std::int64_t current_state_timestamp = 0;
  std::vector<GroupMetadataMember> members;
  bool operator==(const GroupMetadata&) const = default;
};

struct ConsumerGroupMetadata {
  static constexpr RecordType kType = RecordType::ConsumerGroupMetadata;
  std::string group;
  std::int32_t epoch = 0;
  std::int64_t metadata_hash = 0;
  bool operator==(const ConsumerGroupMetadata&) const = default;
};
/// One supported protocol of a classic member in a consumer group (ClassicMemberMetadata).
struct ClassicProtocol {
  std::string name;
  std::vector<std::string> topics;
  TopicPartitions owned_partitions;
  std::int32_t generation_id = -1;
  std::optional<std::string> rack_id;  // written as null when unset
  bool operator==(const ClassicProtocol&) const = default;
};
struct ClassicMemberMetadataValue {
  std::int32_t session_timeout_ms = 0;
  std::vector<ClassicProtocol> supported_protocols;
  bool operator==(const ClassicMemberMetadataValue&) const = default;
};
struct ConsumerGroupMemberMetadata {
  static constexpr RecordType kType = RecordType::ConsumerGroupMemberMetadata;
  std::string group, member_id, consumer;
  std::optional<std::string> instance_id, rack_id;  // Kafka's nullable fields: left out when null
  std::string client_id;
  std::vector<std::string> subscribed_topic_names;
  std::int32_t rebalance_timeout_ms = 0;
  std::optional<std::string> server_assignor;  // left out when null
  std::optional<ClassicMemberMetadataValue> classic_member_metadata;
  bool operator==(const ConsumerGroupMemberMetadata&) const = default;
};
struct ConsumerGroupTargetAssignmentMetadata {
  static constexpr RecordType kType = RecordType::ConsumerGroupTargetAssignmentMetadata;
  std::string group;
  std::int32_t assignment_epoch = 0;
  std::int64_t assignment_timestamp = 0;
  bool operator==(const ConsumerGroupTargetAssignmentMetadata&) const = default;
};
struct ConsumerGroupTargetAssignmentMember {
  static constexpr RecordType kType = RecordType::ConsumerGroupTargetAssignmentMember;
  std::string group, member_id, consumer;
  TopicPartitions partitions;
  bool operator==(const ConsumerGroupTargetAssignmentMember&) const = default;
};
/// The member's partitions with the assignment epoch of each (`*_epochs`, parallel lists; a
/// record without them gives every partition the member epoch, at least 0).
struct ConsumerGroupCurrentMemberAssignment {
  static constexpr RecordType kType = RecordType::ConsumerGroupCurrentMemberAssignment;
  std::string group, member_id, consumer;
  std::int32_t member_epoch = 0, previous_member_epoch = -1;
  std::int32_t state = 0;  // MemberState as Kafka's byte: 0 stable, 1 unrevoked, 2 unreleased
  TopicPartitions assigned;
  std::vector<std::int32_t> assigned_epochs;
  TopicPartitions pending_revocation;
  std::vector<std::int32_t> pending_revocation_epochs;
  bool operator==(const ConsumerGroupCurrentMemberAssignment&) const = default;
};

struct ShareGroupMetadata {
  static constexpr RecordType kType = RecordType::ShareGroupMetadata;
  std::string group;
  std::int32_t epoch = 0;
  std::int64_t metadata_hash = 0;
  bool operator==(const ShareGroupMetadata&) const = default;
};
struct ShareGroupMemberMetadata {
  static constexpr RecordType kType = RecordType::ShareGroupMemberMetadata;
  std::string group, member_id, consumer, client_id;
  std::optional<std::string> rack_id;  // left out when null
  std::vector<std::string> subscribed_topic_names;
  bool operator==(const ShareGroupMemberMetadata&) const = default;
};
struct ShareGroupTargetAssignmentMetadata {
  static constexpr RecordType kType = RecordType::ShareGroupTargetAssignmentMetadata;
  std::string group;
  std::int32_t assignment_epoch = 0;
  std::int64_t assignment_timestamp = 0;
  bool operator==(const ShareGroupTargetAssignmentMetadata&) const = default;
};
struct ShareGroupTargetAssignmentMember {
  static constexpr RecordType kType = RecordType::ShareGroupTargetAssignmentMember;
  std::string group, member_id, consumer;
  TopicPartitions partitions;
  bool operator==(const ShareGroupTargetAssignmentMember&) const = default;
};
struct ShareGroupCurrentMemberAssignment {
  static constexpr RecordType kType = RecordType::ShareGroupCurrentMemberAssignment;
  std::string group, member_id, consumer;
  std::int32_t member_epoch = 0, previous_member_epoch = 0;
  std::int32_t state = 0;
  TopicPartitions assigned;
  bool operator==(const ShareGroupCurrentMemberAssignment&) const = default;
};
struct ShareGroupStatePartitionMetadata {
  static constexpr RecordType kType = RecordType::ShareGroupStatePartitionMetadata;
  std::string group;
  TopicPartitions initializing_topics, initialized_topics, deleting_topics;
  bool operator==(const ShareGroupStatePartitionMetadata&) const = default;
};

/// The deletion of a record's key: the record type, its group, and the rest of its key (the
/// member id of member records, written with the member's consumer; the topic and partition of
/// an OffsetCommit).
struct Tombstone {
  RecordType type = RecordType::GroupMetadata;
  std::string group;
  std::optional<std::string> member_id, consumer;
  std::optional<std::string> topic;
  std::optional<std::int32_t> partition_index;
  bool operator==(const Tombstone&) const = default;
};

using GroupRecord =
    std::variant<OffsetCommit, GroupMetadata, ConsumerGroupMetadata, ConsumerGroupMemberMetadata,
                 ConsumerGroupTargetAssignmentMetadata, ConsumerGroupTargetAssignmentMember,
                 ConsumerGroupCurrentMemberAssignment, ShareGroupMetadata, ShareGroupMemberMetadata,
                 ShareGroupTargetAssignmentMetadata, ShareGroupTargetAssignmentMember,
                 ShareGroupCurrentMemberAssignment, ShareGroupStatePartitionMetadata, Tombstone>;

/// The record's type (a tombstone's is the type of the record it deletes).
inline RecordType type_of(const GroupRecord& r) {
  return std::visit(
      [](const auto& x) -> RecordType {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Tombstone>)
          return x.type;
        else
          return std::decay_t<decltype(x)>::kType;
      },
      r);
}
inline const std::string& group_of(const GroupRecord& r) {
  return std::visit([](const auto& x) -> const std::string& { return x.group; }, r);
}
inline bool is_tombstone(const GroupRecord& r) {
  return std::holds_alternative<Tombstone>(r);
}
/// The member id of a member record (or its tombstone); nullptr for the others.
inline const std::string* member_id_of(const GroupRecord& r) {
  return std::visit(
      [](const auto& x) -> const std::string* {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tombstone>)
          return x.member_id ? &*x.member_id : nullptr;
        else if constexpr (requires { x.member_id; })
          return &x.member_id;
        else
          return nullptr;
      },
      r);
}

}  // namespace rsim::records
