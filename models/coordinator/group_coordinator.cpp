#include "models/coordinator/group_coordinator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/assignors/client_java_order.hpp"
#include "models/spec/overloaded.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {
// Kafka's fixed timeout for a new member that has not completed its first join
// (CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS).
constexpr std::int64_t kNewMemberJoinTimeoutMs = 300000;
}  // namespace

std::int32_t java_string_hash(const std::string& s) {
  return assignors::java::string_hash(s);  // over UTF-16 code units, as Java does
}

std::int32_t coordinator_partition(const std::string& group_id, std::int32_t num_partitions) {
  const std::int32_t h = java_string_hash(group_id);
  const std::int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h);  // Kafka's Utils.abs
  return abs % num_partitions;
}

GroupCoordinator::GroupCoordinator(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng,
                                   BrokerConfig config, OffsetsLog& log, Sender sender,
                                   NodeNamer namer)
    : kernel_(kernel),
      tracer_(tracer),
      rng_(std::move(rng)),
      config_(std::move(config)),
      log_(log),
      sender_(std::move(sender)),
      namer_(std::move(namer)) {}

const ClassicGroup* GroupCoordinator::group(const std::string& group_id) const {
  const auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

void GroupCoordinator::on_request(sim::NodeId from, const Envelope& request) {
  const Reply to{from, request.correlation_id};
  std::visit(Overloaded{
                 [&](const JoinGroupRequest& r) { on_join_group(to, r); },
                 [&](const SyncGroupRequest& r) { on_sync_group(to, r); },
                 [&](const HeartbeatRequest& r) { on_heartbeat(to, r); },
                 [&](const LeaveGroupRequest& r) { on_leave_group(to, r); },
                 [&](const OffsetCommitRequest& r) { on_offset_commit(to, r); },
                 [&](const OffsetFetchRequest& r) { on_offset_fetch(to, r); },
                 [&](const FindCoordinatorRequest&) { SIM_ASSERT(false); },
                 [&](const FindCoordinatorResponse&) { SIM_ASSERT(false); },
                 [&](const JoinGroupResponse&) { SIM_ASSERT(false); },
                 [&](const SyncGroupResponse&) { SIM_ASSERT(false); },
                 [&](const HeartbeatResponse&) { SIM_ASSERT(false); },
                 [&](const LeaveGroupResponse&) { SIM_ASSERT(false); },
                 [&](const OffsetCommitResponse&) { SIM_ASSERT(false); },
                 [&](const OffsetFetchResponse&) { SIM_ASSERT(false); },
                 [&](const ListOffsetsRequest&) { SIM_ASSERT(false); },
                 [&](const ListOffsetsResponse&) { SIM_ASSERT(false); },
                 [&](const ConsumerGroupHeartbeatRequest&) {
                   SIM_ASSERT(false);
                 },  // the consumer-group coordinator's
                 [&](const ConsumerGroupHeartbeatResponse&) { SIM_ASSERT(false); },
                 [&](const OffsetsForLeaderEpochRequest&) { SIM_ASSERT(false); },  // the leader's
                 [&](const OffsetsForLeaderEpochResponse&) { SIM_ASSERT(false); },
                 [&](const ShareGroupMessage auto&) { SIM_ASSERT(false); },  // the share brokers'
             },
             request.message);
}

void GroupCoordinator::reply(const Reply& to, Message response) {
  sender_(to.node, Envelope{to.correlation_id, std::move(response)});
}

void GroupCoordinator::reply_after_pending_writes(const Reply& to, Message response) {
  log_.after_pending_writes(
      [this, to, m = std::move(response)]() mutable { reply(to, std::move(m)); });
}

void GroupCoordinator::transition(ClassicGroup& g, ClassicGroupState to,
                                  const std::string& reason) {
  SIM_ASSERT_MSG(classic_transition_allowed(g.state, to),
                 fmt::format("group {}: {} -> {} is not a transition Kafka allows", g.group_id,
                             state_name(g.state), state_name(to)));
  g.previous_state = g.state;
  g.state = to;
  g.state_timestamp = kernel_.now();
  trace::GroupStateChange f{
      .group = g.group_id, .state = state_name(to), .generation = g.generation_id};
  if (!reason.empty()) f.reason = reason;
  tracer_.publish(f);
}

ErrorCode GroupCoordinator::validate_member(const ClassicGroup& g, const std::string& member_id,
                                            const std::optional<std::string>& instance_id) const {
  if (instance_id) {
    const auto it = g.static_members.find(*instance_id);
    if (it == g.static_members.end()) return ErrorCode::UNKNOWN_MEMBER_ID;
    if (it->second != member_id) return ErrorCode::FENCED_INSTANCE_ID;
  }
  if (g.find_member(member_id) == nullptr) return ErrorCode::UNKNOWN_MEMBER_ID;
  return ErrorCode::NONE;
}

std::string GroupCoordinator::generate_member_id(const std::string& client_id,
                                                 const std::optional<std::string>& instance_id,
                                                 const std::string& consumer) {
  // java.util.UUID.randomUUID(): version 4, variant 2, printed 8-4-4-4-12.
  const std::uint64_t hi = (rng_.next() & ~0xf000ULL) | 0x4000ULL;
  const std::uint64_t lo = (rng_.next() & ~(0x3ULL << 62)) | (0x2ULL << 62);
  const std::string uuid =
      fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff,
                  lo >> 48, lo & 0xffffffffffffULL);
  return MemberIdReplay::replayed_or(member_ids_, consumer,
                                     (instance_id ? *instance_id : client_id) + "-" + uuid);
}

// ---------------------------------------------------------------------------------------------
// JoinGroup

void GroupCoordinator::on_join_group(const Reply& from, const JoinGroupRequest& r) {
  if (r.group_id.empty()) {
    reply(from, JoinGroupResponse{.error = ErrorCode::INVALID_GROUP_ID});
    return;
  }
  if (r.session_timeout_ms < config_.group_min_session_timeout_ms ||
      r.session_timeout_ms > config_.group_max_session_timeout_ms) {
    reply(from,
          JoinGroupResponse{.error = ErrorCode::INVALID_SESSION_TIMEOUT, .member_id = r.member_id});
    return;
  }
  auto it = groups_.find(r.group_id);
  bool created = false;
  if (it == groups_.end()) {
    if (!r.member_id.empty()) {
      reply(from,
            JoinGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID, .member_id = r.member_id});
      return;
    }
    auto g = std::make_unique<ClassicGroup>();
    g->group_id = r.group_id;
    g->state_timestamp = kernel_.now();
    it = groups_.emplace(r.group_id, std::move(g)).first;
    created = true;
    tracer_.publish(trace::GroupStateChange{.group = r.group_id,
                                            .state = "Empty",
                                            .generation = 0,
                                            .reason = "group created by the first JoinGroup"});
  }
  ClassicGroup& g = *it->second;
  const std::int64_t log_end_before = log_.log_end_offset(r.group_id);
  if (!accept_joining_member(g, r.member_id)) {
    // Beyond group.max.size: Kafka removes the member if it is one (ClassicGroup.remove, no
    // rebalance of its own) and answers with no member id; the client fails fatally.
    remove_member(g, r.member_id, "group.max.size reached");
    reply(from, JoinGroupResponse{.error = ErrorCode::GROUP_MAX_SIZE_REACHED});
  } else if (r.member_id.empty()) {
    join_new_member(g, from, r);
  } else {
    join_existing_member(g, from, r);
  }
  const std::int64_t log_end_after = log_.log_end_offset(r.group_id);
  if (created && log_end_after == log_end_before) {
    // A new group is tied to a log offset by an "empty group" record (GMM:7089-7109).
    append({group_metadata_record(g)}, nullptr);
  }
}

bool GroupCoordinator::accept_joining_member(const ClassicGroup& g,
                                             const std::string& member_id) const {
  const ClassicGroupMember* member = g.find_member(member_id);
  const bool known = member != nullptr;
  switch (g.state) {
    case ClassicGroupState::Empty:
    case ClassicGroupState::Dead:
      return true;
    case ClassicGroupState::PreparingRebalance: {
      // A member already awaiting its join answer stays; new ones up to the size, counted by the
      // members awaiting an answer (the group may be above the size until the join completes).
      if (known && member->awaiting_join) return true;
      // Fewer members than the size (group.max.size is unbounded by default): fewer awaiting
      // too, so no count per JoinGroup.
      if (static_cast<std::int64_t>(g.members.size()) < config_.group_max_size) return true;
      std::int64_t awaiting = 0;
      for (const auto& [id, m] : g.members) awaiting += m.awaiting_join ? 1 : 0;
      return awaiting < config_.group_max_size;
    }
    case ClassicGroupState::CompletingRebalance:
    case ClassicGroupState::Stable:
      return known || static_cast<std::int64_t>(g.members.size()) < config_.group_max_size;
  }
  return true;
}

void GroupCoordinator::join_new_member(ClassicGroup& g, const Reply& from,
                                       const JoinGroupRequest& r) {
  if (g.state == ClassicGroupState::Dead) {
    reply(from, JoinGroupResponse{.error = ErrorCode::COORDINATOR_NOT_AVAILABLE});
    return;
  }
  if (!g.supports_protocols(r.protocol_type, r.protocols)) {
    reply(from, JoinGroupResponse{.error = ErrorCode::INCONSISTENT_GROUP_PROTOCOL});
    return;
  }
  const std::string member_id =
      generate_member_id(r.client_id, r.group_instance_id, namer_(from.node));
  if (r.group_instance_id) {
    // A static member joins directly, without the MEMBER_ID_REQUIRED round trip (KIP-345).
    if (const auto known = g.static_members.find(*r.group_instance_id);
        known != g.static_members.end() && g.members.count(known->second) > 0) {
      const std::string old_id = known->second;  // the map entry is overwritten by the replacement
      update_static_member_then_rebalance_or_complete_join(g, from, r, old_id, member_id);
      return;
    }
    g.static_members[*r.group_instance_id] = member_id;
    add_member_then_rebalance_or_complete_join(g, from, r, member_id);
    return;
  }
  // KIP-394: a dynamic member must come back with the id it is given.
  auto timer = std::make_unique<sim::Timer>(
      kernel_, [this, gid = g.group_id, member_id] { on_pending_member_expired(gid, member_id); });
  timer->arm(sim::ms(r.session_timeout_ms));
  g.pending_join_members[member_id] = std::move(timer);
  reply(from, JoinGroupResponse{.error = ErrorCode::MEMBER_ID_REQUIRED, .member_id = member_id});
}

void GroupCoordinator::join_existing_member(ClassicGroup& g, const Reply& from,
                                            const JoinGroupRequest& r) {
  if (g.state == ClassicGroupState::Dead) {
    reply(from, JoinGroupResponse{.error = ErrorCode::COORDINATOR_NOT_AVAILABLE,
                                  .member_id = r.member_id});
    return;
  }
  if (!g.supports_protocols(r.protocol_type, r.protocols)) {
    reply(from, JoinGroupResponse{.error = ErrorCode::INCONSISTENT_GROUP_PROTOCOL,
                                  .member_id = r.member_id});
    return;
  }
  if (auto pending = g.pending_join_members.find(r.member_id);
      pending != g.pending_join_members.end()) {
    pending->second->cancel();
    retired_timers_.retire(std::move(pending->second));
    g.pending_join_members.erase(pending);
    add_member_then_rebalance_or_complete_join(g, from, r, r.member_id);
    return;
  }
  const ErrorCode invalid = validate_member(g, r.member_id, r.group_instance_id);
  if (invalid != ErrorCode::NONE) {
    reply(from, JoinGroupResponse{.error = invalid, .member_id = r.member_id});
    return;
  }
  ClassicGroupMember& m = g.member(r.member_id);
  switch (g.state) {
    case ClassicGroupState::PreparingRebalance:
      update_member_then_rebalance_or_complete_join(g, m, from, r, "member rejoined");
      return;
    case ClassicGroupState::CompletingRebalance:
      if (m.protocols == r.protocols) {
        // An idempotent retry of a lost JoinGroup response: answer with the current generation.
        m.awaiting_join = PendingReply{from.node, from.correlation_id};
        answer_join(g, m);
      } else {
        update_member_then_rebalance_or_complete_join(
            g, m, from, r, fmt::format("member {} updated its metadata", m.consumer));
      }
      return;
    case ClassicGroupState::Stable:
      if (g.leader_id == r.member_id || m.protocols != r.protocols) {
        update_member_then_rebalance_or_complete_join(
            g, m, from, r,
            g.leader_id == r.member_id
                ? fmt::format("leader {} rejoined", m.consumer)
                : fmt::format("member {} rejoined with new metadata", m.consumer));
      } else {
        m.awaiting_join = PendingReply{from.node, from.correlation_id};
        answer_join(g, m);
      }
      return;
    case ClassicGroupState::Empty:
    case ClassicGroupState::Dead:
      reply(from,
            JoinGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID, .member_id = r.member_id});
      return;
  }
}

void GroupCoordinator::add_member_then_rebalance_or_complete_join(ClassicGroup& g,
                                                                  const Reply& from,
                                                                  const JoinGroupRequest& r,
                                                                  const std::string& member_id) {
  ClassicGroupMember m;
  m.member_id = member_id;
  m.group_instance_id = r.group_instance_id;
  m.client_id = r.client_id;
  m.consumer = namer_(from.node);
  m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  m.session_timeout_ms = r.session_timeout_ms;
  m.protocol_type = r.protocol_type;
  m.protocols = r.protocols;
  m.awaiting_join = PendingReply{from.node, from.correlation_id};
  m.is_new = true;
  m.heartbeat_timer = std::make_unique<sim::Timer>(kernel_, [this, gid = g.group_id, member_id] {
    on_member_heartbeat_expired(gid, member_id);
  });
  if (g.state == ClassicGroupState::PreparingRebalance &&
      g.previous_state == ClassicGroupState::Empty) {
    g.new_member_added = true;
  }
  if (g.members.empty()) g.protocol_type = r.protocol_type;
  if (!g.leader_id) g.leader_id = member_id;  // the first member of a leaderless group leads
  auto& added = g.add_member(std::move(m));
  // The coordinator's membership as DescribeGroups reports it, between GroupMetadata records.
  trace::MemberJoin joined{.group = g.group_id,
                           .consumer = added.consumer,
                           .member_id = member_id,
                           .client_id = added.client_id};
  if (added.group_instance_id) joined.group_instance_id = *added.group_instance_id;
  tracer_.publish(joined);
  rearm_heartbeat(g, added, kNewMemberJoinTimeoutMs);
  maybe_prepare_rebalance_or_complete_join(g, fmt::format("member {} joined", added.consumer));
}

ClassicGroupMember& GroupCoordinator::replace_static_member(ClassicGroup& g,
                                                            const std::string& old_id,
                                                            const std::string& new_id,
                                                            const std::string& consumer) {
  SIM_ASSERT_MSG(g.members.count(old_id) > 0, "replacing a static member that is not in the group");
  ClassicGroupMember old = g.take_member(old_id);
  // Whoever still waits under the old id is fenced at once.
  if (old.awaiting_join) {
    reply({old.awaiting_join->node, old.awaiting_join->correlation_id},
          JoinGroupResponse{.error = ErrorCode::FENCED_INSTANCE_ID, .member_id = old_id});
    old.awaiting_join.reset();
  }
  if (old.awaiting_sync) {
    reply({old.awaiting_sync->node, old.awaiting_sync->correlation_id},
          SyncGroupResponse{.error = ErrorCode::FENCED_INSTANCE_ID});
    old.awaiting_sync.reset();
  }
  // The old id's session timer can no longer find its member: retire it.
  old.heartbeat_timer->cancel();
  retired_timers_.retire(std::move(old.heartbeat_timer));
  ClassicGroupMember m;
  m.member_id = new_id;
  m.group_instance_id = old.group_instance_id;
  m.client_id = old.client_id;
  m.consumer = consumer;
  m.rebalance_timeout_ms = old.rebalance_timeout_ms;
  m.session_timeout_ms = old.session_timeout_ms;
  m.protocol_type = old.protocol_type;
  m.protocols = old.protocols;
  m.assignment = old.assignment;
  m.heartbeat_timer = std::make_unique<sim::Timer>(
      kernel_, [this, gid = g.group_id, new_id] { on_member_heartbeat_expired(gid, new_id); });
  if (g.leader_id == old_id) g.leader_id = new_id;
  g.static_members[*m.group_instance_id] = new_id;
  if (g.pending_sync_members.erase(old_id) > 0) g.pending_sync_members.insert(new_id);
  return g.add_member(std::move(m));
}

void GroupCoordinator::update_static_member_then_rebalance_or_complete_join(
    ClassicGroup& g, const Reply& from, const JoinGroupRequest& r, const std::string& old_id,
    const std::string& new_id) {
  ClassicGroupMember& m = replace_static_member(g, old_id, new_id, namer_(from.node));
  rearm_heartbeat(g, m, m.session_timeout_ms);
  g.set_protocols(m, r.protocols);
  m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  m.session_timeout_ms = r.session_timeout_ms;
  m.awaiting_join = PendingReply{from.node, from.correlation_id};
  const std::string reason =
      fmt::format("static member {} ({}) rejoined", m.consumer, *r.group_instance_id);
  tracer_.publish(trace::MemberReplaced{.group = g.group_id,
                                        .consumer = m.consumer,
                                        .group_instance_id = *r.group_instance_id,
                                        .old_member_id = old_id,
                                        .member_id = new_id,
                                        .state = state_name(g.state)});
  switch (g.state) {
    case ClassicGroupState::Stable:
      if (g.protocol_name.value_or("") == g.select_protocol()) {
        // Same protocol: persist the new member id, then answer with the current generation;
        // a leader gets skipAssignment and keeps the existing assignment.
        append({group_metadata_record(g)}, [this, gid = g.group_id, new_id] {
          auto git = groups_.find(gid);
          if (git == groups_.end()) return;
          ClassicGroup& gg = *git->second;
          auto mit = gg.members.find(new_id);
          if (mit == gg.members.end() || !mit->second.awaiting_join) return;
          answer_join(gg, mit->second, /*skip_assignment=*/gg.leader_id == new_id);
        });
      } else {
        maybe_prepare_rebalance_or_complete_join(g, reason + " with a change of protocol");
      }
      return;
    case ClassicGroupState::CompletingRebalance:
      // The leader may be assigning under the old id: start over.
      prepare_rebalance(g, reason + " while the group was completing a rebalance");
      return;
    case ClassicGroupState::PreparingRebalance:
      maybe_complete_join_phase(g);
      return;
    case ClassicGroupState::Empty:
    case ClassicGroupState::Dead:
      SIM_ASSERT_MSG(false, "a known static member rejoined a group in state " +
                                std::string(state_name(g.state)));
  }
}

void GroupCoordinator::update_member_then_rebalance_or_complete_join(ClassicGroup& g,
                                                                     ClassicGroupMember& m,
                                                                     const Reply& from,
                                                                     const JoinGroupRequest& r,
                                                                     const std::string& reason) {
  g.set_protocols(m, r.protocols);
  m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  m.session_timeout_ms = r.session_timeout_ms;
  m.awaiting_join = PendingReply{from.node, from.correlation_id};
  maybe_prepare_rebalance_or_complete_join(g, reason);
}

void GroupCoordinator::maybe_prepare_rebalance_or_complete_join(ClassicGroup& g,
                                                                const std::string& reason) {
  if (g.can_rebalance())
    prepare_rebalance(g, reason);
  else
    maybe_complete_join_phase(g);
}

void GroupCoordinator::prepare_rebalance(ClassicGroup& g, const std::string& reason) {
  if (g.state == ClassicGroupState::CompletingRebalance) {
    // Assignments of the aborted generation are void; parked SyncGroups learn it at once.
    for (auto& [id, m] : g.members) {
      m.assignment.clear();
      if (m.awaiting_sync) {
        reply({m.awaiting_sync->node, m.awaiting_sync->correlation_id},
              SyncGroupResponse{.error = ErrorCode::REBALANCE_IN_PROGRESS});
        m.awaiting_sync.reset();
      }
    }
  }
  g.pending_sync_members.clear();
  if (g.sync_timer) g.sync_timer->cancel();
  if (!g.join_timer) {
    g.join_timer =
        std::make_unique<sim::Timer>(kernel_, [this, gid = g.group_id] { on_join_timer(gid); });
  }
  const bool initial = g.state == ClassicGroupState::Empty;
  if (initial) {
    g.initial_delay_ms = config_.group_initial_rebalance_delay_ms;
    g.initial_remaining_ms = std::max<std::int64_t>(
        g.rebalance_timeout_ms() - config_.group_initial_rebalance_delay_ms, 0);
    g.join_timer_is_initial = true;
    g.join_timer->arm(sim::ms(g.initial_delay_ms));
  }
  transition(g, ClassicGroupState::PreparingRebalance, reason);
  if (!initial) {
    if (g.has_all_members_joined()) {
      complete_join(g);
    } else {
      g.join_timer_is_initial = false;
      g.join_timer->arm(sim::ms(g.rebalance_timeout_ms()));
    }
  }
}

void GroupCoordinator::maybe_complete_join_phase(ClassicGroup& g) {
  if (g.state == ClassicGroupState::PreparingRebalance &&
      g.previous_state != ClassicGroupState::Empty && g.has_all_members_joined()) {
    complete_join(g);
  }
}

void GroupCoordinator::on_join_timer(const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  ClassicGroup& g = *it->second;
  if (g.state != ClassicGroupState::PreparingRebalance) return;
  if (g.join_timer_is_initial && g.new_member_added && g.initial_remaining_ms != 0) {
    // Each window of group.initial.rebalance.delay.ms that added a member buys another one.
    g.new_member_added = false;
    const std::int64_t next_delay =
        std::min<std::int64_t>(config_.group_initial_rebalance_delay_ms, g.initial_remaining_ms);
    g.initial_remaining_ms = std::max<std::int64_t>(g.initial_remaining_ms - g.initial_delay_ms, 0);
    g.initial_delay_ms = next_delay;
    g.join_timer->arm(sim::ms(next_delay));
    return;
  }
  complete_join(g);
}

void GroupCoordinator::complete_join(ClassicGroup& g) {
  SIM_ASSERT(g.state == ClassicGroupState::PreparingRebalance);
  if (g.join_timer) g.join_timer->cancel();
  // Dynamic members that did not rejoin are dropped; static ones stay (KIP-345).
  std::vector<std::string> gone;
  for (const auto& [id, m] : g.members)
    if (!m.awaiting_join && !m.group_instance_id) gone.push_back(id);
  for (const auto& id : gone) remove_member(g, id, "did not rejoin before the join phase ended");

  if (!g.members.empty()) {
    const bool leader_parked = g.leader_id && g.members.count(*g.leader_id) > 0 &&
                               g.members.at(*g.leader_id).awaiting_join.has_value();
    if (!leader_parked) {
      g.leader_id.reset();
      for (const auto& [id, m] : g.members) {
        if (m.awaiting_join) {
          g.leader_id = id;
          break;
        }
      }
    }
    if (!g.leader_id) {
      // Nobody can lead: wait for session expiries to clear the group (GMM:7509-7515).
      g.join_timer_is_initial = false;
      g.join_timer->arm(sim::ms(g.rebalance_timeout_ms()));
      return;
    }
  }

  ++g.generation_id;
  if (g.members.empty()) {
    g.protocol_name.reset();
    g.leader_id.reset();
    transition(g, ClassicGroupState::Empty, "no members left");
    tracer_.publish(trace::GroupEpoch{.group = g.group_id, .generation = g.generation_id});
    append({group_metadata_record(g)}, nullptr);
    return;
  }
  g.protocol_name = g.select_protocol();
  transition(g, ClassicGroupState::CompletingRebalance, "all members joined");
  std::vector<std::string> names;
  for (const auto& [id, m] : g.members) names.push_back(m.consumer);
  tracer_.publish(trace::GroupEpoch{.group = g.group_id,
                                    .generation = g.generation_id,
                                    .protocol = *g.protocol_name,
                                    .leader = g.members.at(*g.leader_id).consumer,
                                    .members = names});
  for (auto& [id, m] : g.members) {
    answer_join(g, m);
    rearm_heartbeat(g, m, m.session_timeout_ms);
    m.is_new = false;
    g.pending_sync_members.insert(id);
  }
  if (!g.sync_timer) {
    g.sync_timer = std::make_unique<sim::Timer>(kernel_, [this, gid = g.group_id] {
      auto it = groups_.find(gid);
      if (it != groups_.end()) on_sync_timer(gid, it->second->generation_id);
    });
  }
  g.sync_timer->arm(sim::ms(g.rebalance_timeout_ms()));
}

void GroupCoordinator::answer_join(ClassicGroup& g, ClassicGroupMember& m, bool skip_assignment) {
  if (!m.awaiting_join) return;
  JoinGroupResponse resp;
  resp.skip_assignment = skip_assignment;
  resp.error = ErrorCode::NONE;
  resp.generation_id = g.generation_id;
  resp.protocol_name = g.protocol_name.value_or("");
  resp.leader = g.leader_id.value_or("");
  resp.member_id = m.member_id;
  if (g.leader_id == m.member_id) {
    for (const auto& [id, other] : g.members) {
      const Subscription* meta = other.metadata_for(resp.protocol_name);
      resp.members.push_back({id, other.group_instance_id, meta ? *meta : Subscription{}});
    }
  }
  const PendingReply to = *m.awaiting_join;
  m.awaiting_join.reset();
  reply({to.node, to.correlation_id}, std::move(resp));
}

// ---------------------------------------------------------------------------------------------
// SyncGroup

void GroupCoordinator::on_sync_group(const Reply& from, const SyncGroupRequest& r) {
  auto it = groups_.find(r.group_id);
  if (it == groups_.end() || it->second->state == ClassicGroupState::Empty) {
    reply(from, SyncGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID});
    return;
  }
  ClassicGroup& g = *it->second;
  if (g.state == ClassicGroupState::Dead) {
    reply(from, SyncGroupResponse{.error = ErrorCode::COORDINATOR_NOT_AVAILABLE});
    return;
  }
  if (const ErrorCode e = validate_member(g, r.member_id, r.group_instance_id);
      e != ErrorCode::NONE) {
    reply(from, SyncGroupResponse{.error = e});
    return;
  }
  if (r.generation_id != g.generation_id) {
    reply(from, SyncGroupResponse{.error = ErrorCode::ILLEGAL_GENERATION});
    return;
  }
  if (r.protocol_type != g.protocol_type ||
      (!r.protocol_name.empty() && r.protocol_name != g.protocol_name.value_or(""))) {
    reply(from, SyncGroupResponse{.error = ErrorCode::INCONSISTENT_GROUP_PROTOCOL});
    return;
  }
  ClassicGroupMember& m = g.member(r.member_id);
  switch (g.state) {
    case ClassicGroupState::PreparingRebalance:
      reply(from, SyncGroupResponse{.error = ErrorCode::REBALANCE_IN_PROGRESS});
      return;
    case ClassicGroupState::CompletingRebalance: {
      m.awaiting_sync = PendingReply{from.node, from.correlation_id};
      g.pending_sync_members.erase(r.member_id);
      if (g.pending_sync_members.empty() && g.sync_timer) g.sync_timer->cancel();
      if (g.leader_id != r.member_id) return;  // followers wait for the leader's assignment
      std::map<std::string, TopicPartitions> assignment;
      for (const auto& [id, mm] : g.members) assignment[id] = {};
      for (const auto& a : r.assignments)
        if (assignment.count(a.member_id) > 0) assignment[a.member_id] = a.assignment;
      // The assignment is persisted first; the group is released when the record commits.
      for (auto& [id, mm] : g.members) mm.assignment = assignment[id];
      const std::int32_t generation = g.generation_id;
      append({group_metadata_record(g)}, [this, gid = g.group_id, generation] {
        auto git = groups_.find(gid);
        if (git == groups_.end()) return;
        ClassicGroup& gg = *git->second;
        if (gg.state != ClassicGroupState::CompletingRebalance || gg.generation_id != generation)
          return;
        for (auto& [id, mm] : gg.members) {
          if (!mm.awaiting_sync) continue;
          const PendingReply to = *mm.awaiting_sync;
          mm.awaiting_sync.reset();
          reply({to.node, to.correlation_id},
                SyncGroupResponse{.error = ErrorCode::NONE,
                                  .protocol_name = gg.protocol_name.value_or(""),
                                  .assignment = mm.assignment});
          rearm_heartbeat(gg, mm, mm.session_timeout_ms);
        }
        transition(gg, ClassicGroupState::Stable, "leader's assignment persisted");
      });
      return;
    }
    case ClassicGroupState::Stable:
      g.pending_sync_members.erase(r.member_id);
      reply(from, SyncGroupResponse{.error = ErrorCode::NONE,
                                    .protocol_name = g.protocol_name.value_or(""),
                                    .assignment = m.assignment});
      rearm_heartbeat(g, m, m.session_timeout_ms);
      return;
    case ClassicGroupState::Empty:
    case ClassicGroupState::Dead:
      reply(from, SyncGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID});
      return;
  }
}

void GroupCoordinator::on_sync_timer(const std::string& group_id, std::int32_t generation) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  ClassicGroup& g = *it->second;
  if (g.generation_id != generation) return;
  if (g.state != ClassicGroupState::CompletingRebalance && g.state != ClassicGroupState::Stable)
    return;
  if (g.pending_sync_members.empty()) return;
  const std::vector<std::string> missing(g.pending_sync_members.begin(),
                                         g.pending_sync_members.end());
  g.pending_sync_members.clear();
  for (const auto& id : missing) remove_member(g, id, "did not send SyncGroup in time");
  prepare_rebalance(g, "members did not sync in time");
}

// ---------------------------------------------------------------------------------------------
// Heartbeat, session expiry, LeaveGroup

void GroupCoordinator::on_heartbeat(const Reply& from, const HeartbeatRequest& r) {
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) {
    reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::UNKNOWN_MEMBER_ID});
    return;
  }
  ClassicGroup& g = *it->second;
  if (g.state == ClassicGroupState::Dead) {
    reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::COORDINATOR_NOT_AVAILABLE});
    return;
  }
  if (const ErrorCode e = validate_member(g, r.member_id, r.group_instance_id);
      e != ErrorCode::NONE) {
    reply_after_pending_writes(from, HeartbeatResponse{e});
    return;
  }
  if (r.generation_id != g.generation_id) {
    reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::ILLEGAL_GENERATION});
    return;
  }
  ClassicGroupMember& m = g.member(r.member_id);
  switch (g.state) {
    case ClassicGroupState::Empty:
    case ClassicGroupState::Dead:
      reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::UNKNOWN_MEMBER_ID});
      return;
    case ClassicGroupState::PreparingRebalance:
      rearm_heartbeat(g, m, m.session_timeout_ms);
      reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::REBALANCE_IN_PROGRESS});
      return;
    case ClassicGroupState::CompletingRebalance:
    case ClassicGroupState::Stable:
      rearm_heartbeat(g, m, m.session_timeout_ms);
      reply_after_pending_writes(from, HeartbeatResponse{ErrorCode::NONE});
      return;
  }
}

void GroupCoordinator::rearm_heartbeat(ClassicGroup&, ClassicGroupMember& m,
                                       std::int64_t timeout_ms) {
  m.heartbeat_timer->arm(sim::ms(timeout_ms));
}

void GroupCoordinator::on_pending_member_expired(const std::string& group_id,
                                                 const std::string& member_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  ClassicGroup& g = *it->second;
  auto p = g.pending_join_members.find(member_id);
  if (p == g.pending_join_members.end()) return;
  retired_timers_.retire(std::move(p->second));
  g.pending_join_members.erase(p);
  if (g.state == ClassicGroupState::PreparingRebalance && g.has_all_members_joined())
    complete_join(g);
}

void GroupCoordinator::on_member_heartbeat_expired(const std::string& group_id,
                                                   const std::string& member_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  ClassicGroup& g = *it->second;
  if (g.state == ClassicGroupState::Dead) return;
  auto mit = g.members.find(member_id);
  if (mit == g.members.end()) return;
  if (mit->second.has_satisfied_heartbeat()) return;  // re-armed at join completion or sync
  const std::string consumer = mit->second.consumer;
  if (mit->second.awaiting_join) {
    const PendingReply to = *mit->second.awaiting_join;
    mit->second.awaiting_join.reset();
    reply({to.node, to.correlation_id},
          JoinGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID, .member_id = member_id});
  }
  remove_member(g, member_id, "session timeout");
  const std::string reason = fmt::format("member {} session timeout", consumer);
  if (g.state == ClassicGroupState::Stable || g.state == ClassicGroupState::CompletingRebalance) {
    prepare_rebalance(g, reason);
  } else if (g.state == ClassicGroupState::PreparingRebalance && g.has_all_members_joined()) {
    complete_join(g);
  }
}

void GroupCoordinator::remove_member(ClassicGroup& g, const std::string& member_id,
                                     const std::string& reason) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  ClassicGroupMember& m = it->second;
  tracer_.publish(trace::MemberLeave{
      .group = g.group_id, .consumer = m.consumer, .member_id = member_id, .reason = reason});
  m.heartbeat_timer->cancel();
  retired_timers_.retire(std::move(m.heartbeat_timer));
  if (m.group_instance_id) g.static_members.erase(*m.group_instance_id);
  g.pending_sync_members.erase(member_id);
  g.remove_member(it);
  if (g.leader_id == member_id) {
    g.leader_id.reset();
    if (!g.members.empty()) g.leader_id = g.members.begin()->first;
  }
}

void GroupCoordinator::on_leave_group(const Reply& from, const LeaveGroupRequest& r) {
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) {
    LeaveGroupResponse resp;
    resp.member_errors.assign(r.members.size(), ErrorCode::UNKNOWN_MEMBER_ID);
    reply_after_pending_writes(from, std::move(resp));
    return;
  }
  ClassicGroup& g = *it->second;
  if (g.state == ClassicGroupState::Dead) {
    reply_after_pending_writes(from,
                               LeaveGroupResponse{.error = ErrorCode::COORDINATOR_NOT_AVAILABLE});
    return;
  }
  LeaveGroupResponse resp;
  bool removed = false;
  std::string who;
  for (const auto& lm : r.members) {
    std::string id = lm.member_id;
    if (id.empty() && lm.group_instance_id) {
      auto s = g.static_members.find(*lm.group_instance_id);
      if (s == g.static_members.end()) {
        resp.member_errors.push_back(ErrorCode::UNKNOWN_MEMBER_ID);
        continue;
      }
      id = s->second;
    } else if (auto p = g.pending_join_members.find(id); p != g.pending_join_members.end()) {
      p->second->cancel();
      retired_timers_.retire(std::move(p->second));
      g.pending_join_members.erase(p);
      resp.member_errors.push_back(ErrorCode::NONE);
      continue;
    } else if (const ErrorCode e = validate_member(g, id, lm.group_instance_id);
               e != ErrorCode::NONE) {
      resp.member_errors.push_back(e);
      continue;
    }
    ClassicGroupMember& m = g.members.at(id);
    who = m.consumer;
    if (m.awaiting_join) {
      reply({m.awaiting_join->node, m.awaiting_join->correlation_id},
            JoinGroupResponse{.error = ErrorCode::UNKNOWN_MEMBER_ID, .member_id = id});
      m.awaiting_join.reset();
    }
    remove_member(g, id, "LeaveGroup");
    resp.member_errors.push_back(ErrorCode::NONE);
    removed = true;
  }
  reply_after_pending_writes(from, std::move(resp));
  if (!removed) return;
  if (g.state == ClassicGroupState::Stable || g.state == ClassicGroupState::CompletingRebalance) {
    prepare_rebalance(g, fmt::format("member {} left the group", who));
  } else if (g.state == ClassicGroupState::PreparingRebalance) {
    maybe_complete_join_phase(g);
  }
}

// ---------------------------------------------------------------------------------------------
// OffsetCommit

void GroupCoordinator::on_offset_commit(const Reply& from, const OffsetCommitRequest& r) {
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) {
    if (r.generation_id >= 0) {
      reply(from, OffsetCommitResponse{ErrorCode::GROUP_ID_NOT_FOUND});
      return;
    }
    auto g = std::make_unique<ClassicGroup>();  // a "simple" group: Empty, no protocol type
    g->group_id = r.group_id;
    it = groups_.emplace(r.group_id, std::move(g)).first;
  }
  ClassicGroup& g = *it->second;
  if (g.state == ClassicGroupState::Dead) {
    reply(from, OffsetCommitResponse{ErrorCode::COORDINATOR_NOT_AVAILABLE});
    return;
  }
  const bool has_member_info = r.generation_id >= 0 || !r.member_id.empty() || r.group_instance_id;
  if (!(r.generation_id < 0 && g.state == ClassicGroupState::Empty)) {
    if (has_member_info) {
      if (const ErrorCode e = validate_member(g, r.member_id, r.group_instance_id);
          e != ErrorCode::NONE) {
        reply(from, OffsetCommitResponse{e});
        return;
      }
      if (r.generation_id != g.generation_id) {
        reply(from, OffsetCommitResponse{ErrorCode::ILLEGAL_GENERATION});
        return;
      }
    } else {
      reply(from, OffsetCommitResponse{ErrorCode::UNKNOWN_MEMBER_ID});
      return;
    }
    if (g.state == ClassicGroupState::CompletingRebalance) {
      reply(from, OffsetCommitResponse{ErrorCode::REBALANCE_IN_PROGRESS});
      return;
    }
    if (g.state == ClassicGroupState::Stable || g.state == ClassicGroupState::PreparingRebalance) {
      auto& m = g.member(r.member_id);
      rearm_heartbeat(g, m, m.session_timeout_ms);  // a commit counts as a heartbeat
    }
  }
  if (r.offsets.empty()) {
    reply(from, OffsetCommitResponse{ErrorCode::NONE});
    return;
  }
  // The offsets become visible (to OffsetFetch) when the records commit, as does the answer.
  log_.append_offset_commits(g.group_id, r.offsets, sim::to_ms(kernel_.now()), *this, from.node,
                             from.correlation_id);
}

void GroupCoordinator::on_offsets_committed(const std::string& group_id,
                                            std::span<const CommittedOffset> offsets,
                                            sim::NodeId node, std::int32_t correlation_id) {
  if (auto git = groups_.find(group_id); git != groups_.end()) {
    auto& g = *git->second;
    auto offset = g.offsets.begin();
    auto epoch = g.offset_epochs.begin();
    for (const auto& o : offsets) {
      offset = assign_from(g.offsets, offset, o.partition, o.offset);
      epoch = assign_from(g.offset_epochs, epoch, o.partition, o.leader_epoch);
      if (offset_listener_) offset_listener_(group_id, o.partition, o.offset);
    }
  }
  reply({node, correlation_id}, OffsetCommitResponse{ErrorCode::NONE});
}

const std::map<TopicPartition, std::int64_t>* GroupCoordinator::committed_offsets(
    const std::string& group_id) const {
  const auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second->offsets;
}

// ---------------------------------------------------------------------------------------------
// OffsetFetch

void GroupCoordinator::on_offset_fetch(const Reply& from, const OffsetFetchRequest& r) {
  // A classic group's fetch carries no member id or epoch and is not validated; the committed
  // offsets are those whose records have committed (require_stable: no pending transactional
  // offsets exist in the simulator). A partition without a committed offset answers -1.
  OffsetFetchResponse response;
  const auto git = groups_.find(r.group_id);
  for (const auto& tp : r.partitions) {
    PartitionOffset p{tp};
    if (git != groups_.end()) {
      const ClassicGroup& g = *git->second;
      if (const auto it = g.offsets.find(tp); it != g.offsets.end()) p.offset = it->second;
      if (const auto it = g.offset_epochs.find(tp); it != g.offset_epochs.end())
        p.leader_epoch = it->second;
    }
    response.partitions.push_back(p);
  }
  reply(from, std::move(response));
}

// ---------------------------------------------------------------------------------------------
// Online migration

std::string GroupCoordinator::upgrade_refusal(const std::string& group_id) const {
  const auto it = groups_.find(group_id);
  SIM_ASSERT(it != groups_.end());
  const ClassicGroup& g = *it->second;
  if (!config_.upgrade_enabled())
    return fmt::format("online upgrade is disabled (group.consumer.migration.policy={})",
                       config_.group_consumer_migration_policy);
  // ClassicGroup.usesConsumerGroupProtocol: protocol type "consumer" and every member with it.
  bool consumer_protocol = g.protocol_type == "consumer";
  for (const auto& [id, m] : g.members)
    consumer_protocol = consumer_protocol && m.protocol_type == "consumer";
  if (!consumer_protocol) return "the group does not use the consumer embedded protocol";
  if (static_cast<std::int64_t>(g.members.size()) > config_.group_consumer_max_size)
    return fmt::format(
        "the group size ({}) exceeds the consumer group maximum size (group.consumer.max.size={})",
        g.members.size(), config_.group_consumer_max_size);
  return "";
}

ClassicGroupImage GroupCoordinator::release_group(const std::string& group_id,
                                                  const std::string& reason) {
  const auto it = groups_.find(group_id);
  SIM_ASSERT(it != groups_.end());
  ClassicGroup& g = *it->second;
  ClassicGroupImage image;
  image.group_id = g.group_id;
  image.generation_id = g.generation_id;
  image.protocol_type = g.protocol_type.empty() ? "consumer" : g.protocol_type;
  image.protocol_name = g.protocol_name;
  for (auto& [id, m] : g.members) {
    // completeAllJoinFutures / completeAllSyncFutures(REBALANCE_IN_PROGRESS).
    if (m.awaiting_join) {
      reply({m.awaiting_join->node, m.awaiting_join->correlation_id},
            JoinGroupResponse{.error = ErrorCode::REBALANCE_IN_PROGRESS, .member_id = id});
      m.awaiting_join.reset();
    }
    if (m.awaiting_sync) {
      reply({m.awaiting_sync->node, m.awaiting_sync->correlation_id},
            SyncGroupResponse{.error = ErrorCode::REBALANCE_IN_PROGRESS});
      m.awaiting_sync.reset();
    }
    image.members.push_back({id, m.group_instance_id, m.client_id, m.consumer,
                             m.rebalance_timeout_ms, m.session_timeout_ms, m.protocols,
                             m.assignment});
  }
  image.offsets = g.offsets;
  image.offset_epochs = g.offset_epochs;
  retire_timers(g);
  append({records::Tombstone{.type = records::RecordType::GroupMetadata, .group = group_id}},
         nullptr);
  tracer_.publish(trace::GroupStateChange{
      .group = group_id, .state = "Dead", .generation = g.generation_id, .reason = reason});
  groups_.erase(it);
  return image;
}

void GroupCoordinator::adopt_group(const ClassicGroupImage& image, const std::string& reason) {
  SIM_ASSERT(groups_.count(image.group_id) == 0);
  auto owned = std::make_unique<ClassicGroup>();
  ClassicGroup& g = *owned;
  g.group_id = image.group_id;
  g.generation_id = image.generation_id;
  g.protocol_type = image.protocol_type;
  g.state = ClassicGroupState::Stable;  // built Stable, not entered by a transition
  g.state_timestamp = kernel_.now();
  g.offsets = image.offsets;
  g.offset_epochs = image.offset_epochs;
  for (const auto& im : image.members) {
    ClassicGroupMember m;
    m.member_id = im.member_id;
    m.group_instance_id = im.group_instance_id;
    m.client_id = im.client_id;
    m.consumer = im.consumer;
    m.rebalance_timeout_ms = im.rebalance_timeout_ms;
    m.session_timeout_ms = im.session_timeout_ms;
    m.protocol_type = image.protocol_type;
    m.protocols = im.protocols;
    m.assignment = im.assignment;
    m.heartbeat_timer = std::make_unique<sim::Timer>(
        kernel_,
        [this, gid = g.group_id, mid = im.member_id] { on_member_heartbeat_expired(gid, mid); });
    if (m.group_instance_id) g.static_members[*m.group_instance_id] = m.member_id;
    g.add_member(std::move(m));
  }
  g.protocol_name = g.select_protocol();
  groups_.emplace(g.group_id, std::move(owned));
  tracer_.publish(trace::GroupStateChange{.group = g.group_id,
                                          .state = state_name(g.state),
                                          .generation = g.generation_id,
                                          .reason = "converted from a consumer group"});
  append({group_metadata_record(g)}, nullptr);
  for (auto& [id, m] : g.members) rearm_heartbeat(g, m, m.session_timeout_ms);
  prepare_rebalance(g, reason);
}

void GroupCoordinator::adopt_offsets(const std::string& group_id,
                                     std::map<TopicPartition, std::int64_t> offsets,
                                     std::map<TopicPartition, std::int32_t> epochs) {
  if (offsets.empty()) return;
  auto& slot = groups_[group_id];
  if (!slot) {
    slot = std::make_unique<ClassicGroup>();
    slot->group_id = group_id;
    slot->state_timestamp = kernel_.now();
  }
  slot->offsets = std::move(offsets);
  slot->offset_epochs = std::move(epochs);
}

// ---------------------------------------------------------------------------------------------
// __consumer_offsets

records::GroupMetadata GroupCoordinator::group_metadata_record(const ClassicGroup& g) const {
  records::GroupMetadata rec{.group = g.group_id,
                             .protocol_type = g.protocol_type,
                             .generation = g.generation_id,
                             .protocol = g.protocol_name,
                             .leader = std::nullopt,
                             .current_state_timestamp = g.state_timestamp.count() / 1000,
                             .members = {}};
  if (g.leader_id)
    rec.leader = g.members.count(*g.leader_id) ? g.members.at(*g.leader_id).consumer : *g.leader_id;
  for (const auto& [id, m] : g.members) {
    records::GroupMetadataMember mr{
        .member_id = id,
        .consumer = m.consumer,
        .group_instance_id = m.group_instance_id,
        .client_id = m.client_id,
        .client_host = "/" + m.consumer,  // the client's address: "/" + the scenario's name
        .rebalance_timeout = m.rebalance_timeout_ms,
        .session_timeout = m.session_timeout_ms,
        .subscription = {},
        .detail = std::nullopt,
        .assignment = m.assignment};
    // The subscription of the selected protocol (Kafka stores its bytes): its topics, and the
    // rest of the decoded ConsumerProtocolSubscription.
    if (const Subscription* sub = g.protocol_name ? m.metadata_for(*g.protocol_name) : nullptr) {
      mr.subscription = sub->topics;
      mr.detail = records::ClassicSubscriptionDetail{.owned_partitions = sub->owned_partitions,
                                                     .generation_id = sub->generation_id,
                                                     .rack_id = sub->rack};
    }
    rec.members.push_back(std::move(mr));
  }
  return rec;
}

ClassicGroupSnapshot GroupCoordinator::snapshot(const ClassicGroup& g) const {
  ClassicGroupSnapshot snap{.group = g.group_id,
                            .state = state_name(g.state),
                            .generation = g.generation_id,
                            .protocol_type = g.protocol_type,
                            .protocol = g.protocol_name,
                            .leader = g.leader_id,
                            .members = {},
                            .offsets = {g.offsets.begin(), g.offsets.end()}};
  snap.members.reserve(g.members.size());
  for (const auto& [id, m] : g.members) {
    ClassicMemberSnapshot ms{.member_id = id,
                             .consumer = m.consumer,
                             .group_instance_id = m.group_instance_id,
                             .client_id = m.client_id,
                             .rebalance_timeout = m.rebalance_timeout_ms,
                             .session_timeout = m.session_timeout_ms,
                             .subscription = {},
                             .assignment = m.assignment};
    if (const Subscription* sub = g.protocol_name ? m.metadata_for(*g.protocol_name) : nullptr)
      ms.subscription = sub->topics;
    snap.members.push_back(std::move(ms));
  }
  return snap;
}

void GroupCoordinator::retire_timers(ClassicGroup& g) {
  auto retire = [this](std::unique_ptr<sim::Timer>& t) {
    if (!t) return;
    t->cancel();
    retired_timers_.retire(std::move(t));
  };
  retire(g.join_timer);
  retire(g.sync_timer);
  for (auto& [id, t] : g.pending_join_members) retire(t);
  for (auto& [id, m] : g.members) retire(m.heartbeat_timer);
}

GroupSnapshots GroupCoordinator::unload_partition(std::int32_t partition) {
  GroupSnapshots dropped;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (coordinator_partition(it->first, config_.offsets_topic_num_partitions) != partition) {
      ++it;
      continue;
    }
    dropped.push_back(snapshot(*it->second));
    tracer_.publish(trace::GroupStateChange{.group = it->first,
                                            .state = "Dead",
                                            .generation = it->second->generation_id,
                                            .reason = "the coordinator unloaded the group"});
    retire_timers(*it->second);
    it = groups_.erase(it);
  }
  return dropped;
}

GroupSnapshots GroupCoordinator::load_partition(std::int32_t partition,
                                                const std::vector<records::GroupRecord>& records) {
  unload_partition(partition);
  std::map<std::string, const records::GroupMetadata*>
      metadata;  // last GroupMetadata value per group
  std::map<std::string, std::map<TopicPartition, std::int64_t>> offsets;
  std::map<std::string, std::map<TopicPartition, std::int32_t>> epochs;
  for (const auto& rec : records) {
    if (const auto* gm = std::get_if<records::GroupMetadata>(&rec)) {
      metadata[gm->group] = gm;
    } else if (const auto* c = std::get_if<records::OffsetCommit>(&rec)) {
      const TopicPartition tp{c->topic, c->partition_index};
      offsets[c->group][tp] = c->committed_offset;
      epochs[c->group][tp] = c->leader_epoch;
    } else if (const auto* t = std::get_if<records::Tombstone>(&rec)) {
      if (t->type == records::RecordType::GroupMetadata) {
        // The group's metadata goes (it migrated, or was deleted); its offsets have their own
        // records.
        metadata.erase(t->group);
      } else if (t->type == records::RecordType::OffsetCommit && t->topic && t->partition_index) {
        const TopicPartition tp{*t->topic, *t->partition_index};
        offsets[t->group].erase(tp);
        epochs[t->group].erase(tp);
      }
    }
  }
  std::set<std::string> ids;
  for (const auto& [gid, v] : metadata) ids.insert(gid);
  for (const auto& [gid, v] : offsets) ids.insert(gid);
  GroupSnapshots loaded;
  for (const auto& gid : ids) {
    auto g = std::make_unique<ClassicGroup>();
    g->group_id = gid;
    g->state_timestamp = kernel_.now();
    if (const auto mit = metadata.find(gid); mit != metadata.end()) {
      const records::GroupMetadata& v = *mit->second;
      g->protocol_type = v.protocol_type;
      g->generation_id = v.generation;
      g->protocol_name = v.protocol;
      for (const auto& mr : v.members) {
        ClassicGroupMember m;
        m.member_id = mr.member_id;
        m.consumer = mr.consumer;
        m.group_instance_id = mr.group_instance_id;
        m.client_id = mr.client_id;
        m.rebalance_timeout_ms = mr.rebalance_timeout;
        m.session_timeout_ms = mr.session_timeout;
        m.protocol_type = g->protocol_type;
        // Only the selected protocol's subscription is stored (GMM:6903-6959).
        Subscription sub;
        sub.topics = mr.subscription;
        m.protocols = {JoinGroupProtocol{g->protocol_name.value_or(""), sub}};
        m.assignment = mr.assignment;
        if (m.group_instance_id) g->static_members[*m.group_instance_id] = m.member_id;
        g->add_member(std::move(m));
      }
      // The record names the leader by consumer; map it back to the member id.
      if (v.leader) {
        for (const auto& [id, m] : g->members)
          if (m.consumer == *v.leader || id == *v.leader) g->leader_id = id;
      }
      g->state = g->members.empty() ? ClassicGroupState::Empty : ClassicGroupState::Stable;
    }
    if (const auto oit = offsets.find(gid); oit != offsets.end()) g->offsets = oit->second;
    if (const auto eit = epochs.find(gid); eit != epochs.end()) g->offset_epochs = eit->second;
    ClassicGroup& ref = *groups_.emplace(gid, std::move(g)).first->second;
    tracer_.publish(trace::GroupStateChange{.group = gid,
                                            .state = state_name(ref.state),
                                            .generation = ref.generation_id,
                                            .reason = "loaded by the new coordinator"});
    for (auto& [id, m] : ref.members) {
      m.heartbeat_timer = std::make_unique<sim::Timer>(
          kernel_, [this, gid, mid = id] { on_member_heartbeat_expired(gid, mid); });
      rearm_heartbeat(ref, m, m.session_timeout_ms);
    }
    loaded.push_back(snapshot(ref));
  }
  (void)partition;
  return loaded;
}

}  // namespace rsim
