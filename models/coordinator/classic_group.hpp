// The broker's view of one classic consumer group (Kafka's ClassicGroup / ClassicGroupMember):
// state machine, members, generation, parked JoinGroup/SyncGroup answers. Handlers that change
// it live in GroupCoordinator; this file holds the data and the transition rule only.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/protocol/messages.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

enum class ClassicGroupState { Empty, PreparingRebalance, CompletingRebalance, Stable, Dead };

constexpr const char* state_name(ClassicGroupState s) {
  switch (s) {
    case ClassicGroupState::Empty:
      return "Empty";
    case ClassicGroupState::PreparingRebalance:
      return "PreparingRebalance";
    case ClassicGroupState::CompletingRebalance:
      return "CompletingRebalance";
    case ClassicGroupState::Stable:
      return "Stable";
    case ClassicGroupState::Dead:
      return "Dead";
  }
  return "?";
}

/// Kafka's ClassicGroupState valid previous states: may `to` be entered from `from`?
bool classic_transition_allowed(ClassicGroupState from, ClassicGroupState to);

/// Where to send a parked response: the client's node and the request's correlation id.
struct PendingReply {
  sim::NodeId node = 0;
  std::int32_t correlation_id = 0;
};

struct ClassicGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string consumer;  // the scenario's name of the client (its network node)
  std::int32_t rebalance_timeout_ms = 0;
  std::int32_t session_timeout_ms = 0;
  std::string protocol_type;
  std::vector<JoinGroupProtocol> protocols;  // in the member's preference order
  TopicPartitions assignment;
  std::optional<PendingReply> awaiting_join;
  std::optional<PendingReply> awaiting_sync;
  bool is_new = false;
  std::unique_ptr<sim::Timer> heartbeat_timer;

  /// Kafka's hasSatisfiedHeartbeat: a new member never; otherwise iff it has a parked request.
  bool has_satisfied_heartbeat() const {
    return !is_new && (awaiting_join.has_value() || awaiting_sync.has_value());
  }
  const Subscription* metadata_for(const std::string& protocol) const {
    for (const auto& p : protocols)
      if (p.name == protocol) return &p.metadata;
    return nullptr;
  }
};

struct ClassicGroup {
  std::string group_id;
  ClassicGroupState state = ClassicGroupState::Empty;
  ClassicGroupState previous_state = ClassicGroupState::Dead;
  std::int32_t generation_id = 0;
  std::string protocol_type;  // "" until the first member joins
  std::optional<std::string> protocol_name;
  std::optional<std::string> leader_id;
  /// Ordered by member id: where Kafka iterates a HashMap (leader re-election, first parked
  /// member), we take the lowest member id. Documented in docs/model.md.
  std::map<std::string, ClassicGroupMember> members;
  /// `members` by id, hashed (each key a view of its node's id): every heartbeat, OffsetCommit
  /// and SyncGroup finds its member, and at 10,000 members the ordered map compared up to
  /// fourteen long ids, node after node. Kept by add_member(), remove_member() and take_member().
  std::unordered_map<std::string_view, ClassicGroupMember*> member_index;
  /// The member of `id`, or nullptr.
  ClassicGroupMember* find_member(std::string_view id) {
    const auto it = member_index.find(id);
    return it == member_index.end() ? nullptr : it->second;
  }
  const ClassicGroupMember* find_member(std::string_view id) const {
    const auto it = member_index.find(id);
    return it == member_index.end() ? nullptr : it->second;
  }
  /// The member of `id`, which must be one (as members.at(id)).
  ClassicGroupMember& member(std::string_view id);
  std::map<std::string, std::string> static_members;  // instance id -> member id
  std::map<std::string, std::unique_ptr<sim::Timer>> pending_join_members;  // id -> expiry timer
  std::set<std::string> pending_sync_members;
  /// Committed offsets (applied when their OffsetCommit records commit).
  std::map<TopicPartition, std::int64_t> offsets;
  /// Their committed leader epochs (-1: none), returned by OffsetFetch with the offsets.
  std::map<TopicPartition, std::int32_t> offset_epochs;
  sim::SimTime state_timestamp{0};  // when the group last changed state (currentStateTimestamp)
  bool new_member_added = false;
  std::unique_ptr<sim::Timer> join_timer;
  std::unique_ptr<sim::Timer> sync_timer;
  // Initial-rebalance bookkeeping of the running join timer (Kafka passes these to the timer).
  std::int64_t initial_delay_ms = 0;
  std::int64_t initial_remaining_ms = 0;
  bool join_timer_is_initial = false;

  /// How many members support each protocol name (Kafka's ClassicGroup.supportedProtocols): every
  /// JoinGroup asks which protocols all members support, so it is kept as members come, go or
  /// change theirs, through the three calls below (never by touching `members` directly).
  std::map<std::string, std::int32_t> supported_protocols;
  ClassicGroupMember& add_member(ClassicGroupMember m);
  void remove_member(std::map<std::string, ClassicGroupMember>::iterator it);
  /// Takes a member out (to put it back under another id with add_member()).
  ClassicGroupMember take_member(const std::string& member_id);
  void set_protocols(ClassicGroupMember& m, std::vector<JoinGroupProtocol> protocols);

  bool has_all_members_joined() const;
  std::int32_t rebalance_timeout_ms() const;
  bool can_rebalance() const {
    return state == ClassicGroupState::Stable || state == ClassicGroupState::CompletingRebalance ||
           state == ClassicGroupState::Empty;
  }
  /// Protocol names every member supports (all names when the group has no member).
  std::set<std::string> candidate_protocols() const;
  bool supports_protocols(const std::string& type, const std::vector<JoinGroupProtocol>& ps) const;
  /// Each member votes for its first candidate; most votes wins; ties go to the smaller name.
  std::string select_protocol() const;
};

}  // namespace rsim
