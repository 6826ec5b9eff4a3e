// The Kafka requests and responses the simulated clients and brokers exchange, as one closed
// std::variant for every protocol variant (classic, KIP-848 consumer, KIP-932 share): one payload
// type, one network. Field names follow Kafka's message schemas (clients/src/main/resources/common/
// message/*.json) in snake_case; subscriptions and assignments are kept decoded, not as bytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/protocol/errors.hpp"
#include "models/protocol/share_messages.hpp"
#include "models/protocol/topic_partition.hpp"

namespace rsim {

/// ConsumerProtocolSubscription: what a classic consumer embeds in JoinGroup for each assignor.
struct Subscription {
  std::vector<std::string> topics;
  TopicPartitions owned_partitions;
  std::int32_t generation_id = -1;
  std::optional<std::string> rack;
  bool operator==(const Subscription&) const = default;
};

struct JoinGroupProtocol {
  std::string name;  // the assignor's name, e.g. "range"
  Subscription metadata;
  bool operator==(const JoinGroupProtocol&) const = default;
};

struct FindCoordinatorRequest {
  std::string key;  // the group id (key type GROUP)
};
struct FindCoordinatorResponse {
  ErrorCode error = ErrorCode::NONE;
  std::int32_t node_id = -1;
};

struct JoinGroupRequest {
  std::string group_id;
  std::int32_t session_timeout_ms = 0;
  std::int32_t rebalance_timeout_ms = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string protocol_type = "consumer";
  std::vector<JoinGroupProtocol> protocols;
  std::string client_id;
  std::string reason;
};
struct JoinGroupResponseMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  Subscription metadata;
};
struct JoinGroupResponse {
  ErrorCode error = ErrorCode::NONE;
  std::int32_t generation_id = -1;
  std::string protocol_name;
  std::string leader;
  bool skip_assignment = false;
  std::string member_id;
  std::vector<JoinGroupResponseMember> members;  // only for the leader
};

struct SyncGroupAssignment {
  std::string member_id;
  TopicPartitions assignment;
};
struct SyncGroupRequest {
  std::string group_id;
  std::int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string protocol_type = "consumer";
  std::string protocol_name;
  std::vector<SyncGroupAssignment> assignments;  // only the leader's is non-empty
};
struct SyncGroupResponse {
  ErrorCode error = ErrorCode::NONE;
  std::string protocol_name;
  TopicPartitions assignment;
};

struct HeartbeatRequest {
  std::string group_id;
  std::int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
};
struct HeartbeatResponse {
  ErrorCode error = ErrorCode::NONE;
};

struct LeaveGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string reason;
};
struct LeaveGroupRequest {
  std::string group_id;
  std::vector<LeaveGroupMember> members;
};
struct LeaveGroupResponse {
  ErrorCode error = ErrorCode::NONE;
  std::vector<ErrorCode> member_errors;
};

struct CommittedOffset {
  TopicPartition partition;
  std::int64_t offset = 0;
  std::int32_t leader_epoch = -1;  // committed_leader_epoch: the position's epoch, -1 = none
};
struct OffsetCommitRequest {
  std::string group_id;
  std::int32_t generation_id = -1;  // generation_id_or_member_epoch
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<CommittedOffset> offsets;
};
struct OffsetCommitResponse {
  ErrorCode error = ErrorCode::NONE;  // the same for every partition of the request here
};

/// OffsetFetch (v9+, one group): the committed offsets of `partitions`. The classic consumer
/// sends no member id / epoch; the KIP-848 consumer sends both.
struct OffsetFetchRequest {
  std::string group_id;
  std::string member_id;
  std::int32_t member_epoch = -1;
  bool require_stable = true;
  TopicPartitions partitions;
};
struct PartitionOffset {
  TopicPartition partition;
  std::int64_t offset = -1;        // -1: no committed offset (OffsetFetch) / unknown (ListOffsets)
  std::int32_t leader_epoch = -1;  // OffsetFetch: committed_leader_epoch (-1 = none)
};
struct OffsetFetchResponse {
  ErrorCode error = ErrorCode::NONE;
  std::vector<PartitionOffset> partitions;
};

/// ListOffsets to a partition leader: timestamp -1 = latest (the log end offset), -2 = earliest.
struct ListOffsetsRequest {
  std::int64_t timestamp = -1;
  TopicPartitions partitions;
};
struct ListOffsetsResponse {
  ErrorCode error = ErrorCode::NONE;
  std::vector<PartitionOffset> partitions;
};

/// One entry of ConsumerGroupHeartbeat's TopicPartitions (topic ids are topic names here).
struct ConsumerGroupHeartbeatTopicPartitions {
  std::string topic_id;
  std::vector<std::int32_t> partitions;
  bool operator==(const ConsumerGroupHeartbeatTopicPartitions&) const = default;
};

/// KIP-848 ConsumerGroupHeartbeat (apiKey 68). Optional fields are Kafka's nullable ones:
/// nullopt means "not sent / unchanged since the last request".
struct ConsumerGroupHeartbeatRequest {
  std::string group_id;
  std::string member_id;
  std::int32_t member_epoch = 0;  // 0 join, -1 leave, -2 static member's temporary leave
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::int32_t rebalance_timeout_ms = -1;  // -1: unchanged
  std::optional<std::vector<std::string>> subscribed_topic_names;
  std::optional<std::string> server_assignor;
  std::optional<std::vector<ConsumerGroupHeartbeatTopicPartitions>> topic_partitions;
  std::string client_id;  // from the request header; stored in the member's metadata record
};
struct ConsumerGroupHeartbeatResponse {
  ErrorCode error = ErrorCode::NONE;
  std::string member_id;
  std::int32_t member_epoch = 0;
  std::int32_t heartbeat_interval_ms = 0;
  /// The member's assigned partitions; nullopt means "unchanged".
  std::optional<std::vector<ConsumerGroupHeartbeatTopicPartitions>> assignment;
};

/// The leader epoch of every data partition: leader changes of data partitions are not modelled.
inline constexpr std::int32_t kDataLeaderEpoch = 0;

/// OffsetForLeaderEpoch (apiKey 23) from a consumer (replica_id -1) to a partition's leader:
/// the end offset of `leader_epoch` in its log, to validate a position that carries an epoch.
struct EpochOffsetQuery {
  TopicPartition partition;
  std::int32_t current_leader_epoch = -1;
  std::int32_t leader_epoch = -1;  // the epoch of the position being validated
};
struct OffsetsForLeaderEpochRequest {
  std::vector<EpochOffsetQuery> partitions;
};
struct EpochEndOffset {
  TopicPartition partition;
  ErrorCode error = ErrorCode::NONE;
  std::int32_t leader_epoch = -1;  // the largest epoch <= the one asked for (-1: none)
  std::int64_t end_offset = -1;    // the first offset after that epoch (-1: undefined)
};
struct OffsetsForLeaderEpochResponse {
  ErrorCode error = ErrorCode::NONE;  // a request-level failure (disconnect)
  std::vector<EpochEndOffset> partitions;
};

using Message = std::variant<
    FindCoordinatorRequest, FindCoordinatorResponse, JoinGroupRequest, JoinGroupResponse,
    SyncGroupRequest, SyncGroupResponse, HeartbeatRequest, HeartbeatResponse, LeaveGroupRequest,
    LeaveGroupResponse, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, ListOffsetsRequest, ListOffsetsResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, OffsetsForLeaderEpochRequest, OffsetsForLeaderEpochResponse,
    // KIP-932 (models/protocol/share_messages.hpp)
    ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, ShareFetchRequest, ShareFetchResponse,
    ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareConnectionClosed>;

/// What travels on the simulated network, in every variant: a request or response with its
/// correlation id. Its size is that of the largest alternative (ConsumerGroupHeartbeatRequest);
/// the network keeps it by value (no allocation per message).
struct Envelope {
  std::int32_t correlation_id = 0;
  Message message;
};

/// Kafka's request name ("JoinGroup", "ShareFetch") for a request or response alternative;
/// "connection.close" for ShareConnectionClosed.
const char* api_name(const Message& m);
bool is_response(const Message& m);
/// The error of a response (NONE for requests).
ErrorCode error_of(const Message& m);

}  // namespace rsim
