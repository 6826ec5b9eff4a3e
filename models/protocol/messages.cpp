#include "models/protocol/messages.hpp"

#include <type_traits>

#include "models/spec/overloaded.hpp"

namespace rsim {

const char* api_name(const Message& m) {
  return std::visit(
      Overloaded{
          [](const FindCoordinatorRequest&) { return "FindCoordinator"; },
          [](const FindCoordinatorResponse&) { return "FindCoordinator"; },
          [](const JoinGroupRequest&) { return "JoinGroup"; },
          [](const JoinGroupResponse&) { return "JoinGroup"; },
          [](const SyncGroupRequest&) { return "SyncGroup"; },
          [](const SyncGroupResponse&) { return "SyncGroup"; },
          [](const HeartbeatRequest&) { return "Heartbeat"; },
          [](const HeartbeatResponse&) { return "Heartbeat"; },
          [](const LeaveGroupRequest&) { return "LeaveGroup"; },
          [](const LeaveGroupResponse&) { return "LeaveGroup"; },
          [](const OffsetCommitRequest&) { return "OffsetCommit"; },
          [](const OffsetCommitResponse&) { return "OffsetCommit"; },
          [](const OffsetFetchRequest&) { return "OffsetFetch"; },
          [](const OffsetFetchResponse&) { return "OffsetFetch"; },
          [](const ListOffsetsRequest&) { return "ListOffsets"; },
          [](const ListOffsetsResponse&) { return "ListOffsets"; },
          [](const ConsumerGroupHeartbeatRequest&) { return "ConsumerGroupHeartbeat"; },
          [](const ConsumerGroupHeartbeatResponse&) { return "ConsumerGroupHeartbeat"; },
          [](const OffsetsForLeaderEpochRequest&) { return "OffsetForLeaderEpoch"; },
          [](const OffsetsForLeaderEpochResponse&) { return "OffsetForLeaderEpoch"; },
          [](const ShareGroupHeartbeatRequest&) { return "ShareGroupHeartbeat"; },
          [](const ShareGroupHeartbeatResponse&) { return "ShareGroupHeartbeat"; },
          [](const ShareFetchRequest&) { return "ShareFetch"; },
          [](const ShareFetchResponse&) { return "ShareFetch"; },
          [](const ShareAcknowledgeRequest&) { return "ShareAcknowledge"; },
          [](const ShareAcknowledgeResponse&) { return "ShareAcknowledge"; },
          [](const ShareConnectionClosed&) { return "connection.close"; },
      },
      m);
}

bool is_response(const Message& m) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        return std::is_same_v<T, FindCoordinatorResponse> || std::is_same_v<T, JoinGroupResponse> ||
               std::is_same_v<T, SyncGroupResponse> || std::is_same_v<T, HeartbeatResponse> ||
               std::is_same_v<T, LeaveGroupResponse> || std::is_same_v<T, OffsetCommitResponse> ||
               std::is_same_v<T, OffsetFetchResponse> || std::is_same_v<T, ListOffsetsResponse> ||
               std::is_same_v<T, ConsumerGroupHeartbeatResponse> ||
               std::is_same_v<T, OffsetsForLeaderEpochResponse> ||
               std::is_same_v<T, ShareGroupHeartbeatResponse> ||
               std::is_same_v<T, ShareFetchResponse> || std::is_same_v<T, ShareAcknowledgeResponse>;
      },
      m);
}

ErrorCode error_of(const Message& m) {
  return std::visit(
      [](const auto& v) -> ErrorCode {
        if constexpr (requires { v.error; })
          return v.error;
        else
          return ErrorCode::NONE;
      },
      m);
}

}  // namespace rsim
