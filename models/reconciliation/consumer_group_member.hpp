// The coordinator's view of one KIP-848 consumer-group member, as the reconciliation state
// machine reads and rewrites it: state, epochs, subscription and the partitions it holds with
// their KIP-1251 assignment epochs. Plain data; the transitions live in
// current_assignment_builder.hpp. Not the client's view (that is the consumer's MemberState).
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim::reconciliation {

/// Kafka's MemberState (persisted as an int8: 0, 1, 2, 127).
enum class MemberState { Stable, UnrevokedPartitions, UnreleasedPartitions, Unknown };

/// "STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS", "UNKNOWN".
std::string_view to_string(MemberState state);
/// The inverse of to_string(); nullopt for anything else.
std::optional<MemberState> member_state_from_string(std::string_view text);

/// A partition a member holds and the epoch at which it was assigned to it (KIP-1251).
struct PartitionEpoch {
  std::int32_t partition = 0;
  std::int32_t assignment_epoch = 0;
  auto operator<=>(const PartitionEpoch&) const = default;
};

/// topic id -> partitions held, sorted by partition, never empty. Kafka's
/// Map<Uuid, Map<Integer, Integer>>.
using PartitionsWithEpochs = std::map<std::string, std::vector<PartitionEpoch>>;

/// Member epochs a heartbeat request sends with a meaning of their own (KIP-848).
inline constexpr std::int32_t kJoinGroupMemberEpoch = 0;
inline constexpr std::int32_t kLeaveGroupMemberEpoch = -1;
inline constexpr std::int32_t kLeaveGroupStaticMemberEpoch = -2;

struct ConsumerGroupMember {
  std::string member_id;
  MemberState state = MemberState::Stable;
  std::int32_t member_epoch = 0;
  std::int32_t previous_member_epoch = 0;
  std::vector<std::string> subscribed_topic_names;  // a set: order is irrelevant
  std::optional<std::string> subscribed_topic_regex;
  PartitionsWithEpochs assigned_partitions;
  /// Partitions the member must still revoke; the client is not told about them (it compares
  /// what it owns with `assigned_partitions`), but they stay owned until it stops reporting them.
  PartitionsWithEpochs partitions_pending_revocation;

  bool operator==(const ConsumerGroupMember&) const = default;
};

}  // namespace rsim::reconciliation
