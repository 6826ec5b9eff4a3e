// Kafka's error codes, by Kafka's names (org.apache.kafka.common.protocol.Errors), as far as
// the simulated group protocols use them.
#pragma once
#include <string_view>

namespace rsim {

enum class ErrorCode {
  NONE,
  UNKNOWN_SERVER_ERROR,
  REQUEST_TIMED_OUT,
  NETWORK_EXCEPTION,  // client-side: disconnected before a response arrived
  COORDINATOR_LOAD_IN_PROGRESS,
  COORDINATOR_NOT_AVAILABLE,
  NOT_COORDINATOR,
  ILLEGAL_GENERATION,
  INCONSISTENT_GROUP_PROTOCOL,
  UNKNOWN_MEMBER_ID,
  INVALID_SESSION_TIMEOUT,
  REBALANCE_IN_PROGRESS,
  MEMBER_ID_REQUIRED,
  FENCED_INSTANCE_ID,
  GROUP_MAX_SIZE_REACHED,
  UNKNOWN_TOPIC_OR_PARTITION,
  GROUP_ID_NOT_FOUND,
  INVALID_GROUP_ID,
  // KIP-848 (consumer protocol).
  FENCED_MEMBER_EPOCH,
  UNRELEASED_INSTANCE_ID,
  STALE_MEMBER_EPOCH,
  UNSUPPORTED_ASSIGNOR,
  INVALID_REQUEST,
  // KIP-932 (share groups).
  INVALID_RECORD_STATE,
  SHARE_SESSION_NOT_FOUND,
  // Data plane: a Fetch to a broker that does not lead the partition.
  NOT_LEADER_OR_FOLLOWER,
};

constexpr std::string_view error_name(ErrorCode e) {
  switch (e) {
    case ErrorCode::NONE:
      return "NONE";
    case ErrorCode::UNKNOWN_SERVER_ERROR:
      return "UNKNOWN_SERVER_ERROR";
    case ErrorCode::REQUEST_TIMED_OUT:
      return "REQUEST_TIMED_OUT";
    case ErrorCode::NETWORK_EXCEPTION:
      return "NETWORK_EXCEPTION";
    case ErrorCode::COORDINATOR_LOAD_IN_PROGRESS:
      return "COORDINATOR_LOAD_IN_PROGRESS";
    case ErrorCode::COORDINATOR_NOT_AVAILABLE:
      return "COORDINATOR_NOT_AVAILABLE";
    case ErrorCode::NOT_COORDINATOR:
      return "NOT_COORDINATOR";
    case ErrorCode::ILLEGAL_GENERATION:
      return "ILLEGAL_GENERATION";
    case ErrorCode::INCONSISTENT_GROUP_PROTOCOL:
      return "INCONSISTENT_GROUP_PROTOCOL";
    case ErrorCode::UNKNOWN_MEMBER_ID:
      return "UNKNOWN_MEMBER_ID";
    case ErrorCode::INVALID_SESSION_TIMEOUT:
      return "INVALID_SESSION_TIMEOUT";
    case ErrorCode::REBALANCE_IN_PROGRESS:
      return "REBALANCE_IN_PROGRESS";
    case ErrorCode::MEMBER_ID_REQUIRED:
      return "MEMBER_ID_REQUIRED";
    case ErrorCode::FENCED_INSTANCE_ID:
      return "FENCED_INSTANCE_ID";
    case ErrorCode::GROUP_MAX_SIZE_REACHED:
      return "GROUP_MAX_SIZE_REACHED";
    case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
      return "UNKNOWN_TOPIC_OR_PARTITION";
    case ErrorCode::GROUP_ID_NOT_FOUND:
      return "GROUP_ID_NOT_FOUND";
    case ErrorCode::INVALID_GROUP_ID:
      return "INVALID_GROUP_ID";
    case ErrorCode::FENCED_MEMBER_EPOCH:
      return "FENCED_MEMBER_EPOCH";
    case ErrorCode::UNRELEASED_INSTANCE_ID:
      return "UNRELEASED_INSTANCE_ID";
    case ErrorCode::STALE_MEMBER_EPOCH:
      return "STALE_MEMBER_EPOCH";
    case ErrorCode::UNSUPPORTED_ASSIGNOR:
      return "UNSUPPORTED_ASSIGNOR";
    case ErrorCode::INVALID_REQUEST:
      return "INVALID_REQUEST";
    case ErrorCode::INVALID_RECORD_STATE:
      return "INVALID_RECORD_STATE";
    case ErrorCode::SHARE_SESSION_NOT_FOUND:
      return "SHARE_SESSION_NOT_FOUND";
    case ErrorCode::NOT_LEADER_OR_FOLLOWER:
      return "NOT_LEADER_OR_FOLLOWER";
  }
  return "UNKNOWN_SERVER_ERROR";
}

}  // namespace rsim
