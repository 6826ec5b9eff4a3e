#include "models/coordinator/consumer_group_coordinator.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "models/assignors/server_assignor.hpp"
#include "models/assignors/server_java_order.hpp"
#include "models/coordinator/group_coordinator.hpp"  // coordinator_partition()
#include "models/protocol/uuid.hpp"
#include "sim/assert.hpp"
#include "sim/rng.hpp"

namespace rsim {

namespace {

using reconciliation::ConsumerGroupMember;
using reconciliation::MemberState;
using reconciliation::PartitionEpoch;
using reconciliation::PartitionsWithEpochs;
using reconciliation::TopicIdPartitions;

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
MemberState state_of_byte(int b) {
  switch (b) {
    case 0:
      return MemberState::Stable;
    case 1:
      return MemberState::UnrevokedPartitions;
    case 2:
      return MemberState::UnreleasedPartitions;
    default:
      return MemberState::Unknown;
  }
}

/// Whether two targets hold the same partitions: each topic's as a set, topics without partitions
/// left out (what comparing both with each topic's partitions sorted and empty topics erased
/// gives), without copying either; `a` and `b` are scratch space.
bool same_partitions(const TopicIdPartitions& x, const TopicIdPartitions& y,
                     std::vector<std::int32_t>& a, std::vector<std::int32_t>& b) {
  auto ix = x.begin();
  auto iy = y.begin();
  for (;;) {
    while (ix != x.end() && ix->second.empty()) ++ix;
    while (iy != y.end() && iy->second.empty()) ++iy;
    if (ix == x.end() || iy == y.end()) return ix == x.end() && iy == y.end();
    if (ix->first != iy->first || ix->second.size() != iy->second.size()) return false;
    a.assign(ix->second.begin(), ix->second.end());
    b.assign(iy->second.begin(), iy->second.end());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return false;
    ++ix;
    ++iy;
  }
}

/// A target's partitions as its record lists them: each topic's in the order given (the
/// iteration order of Kafka's HashSet of them).
TopicPartitions partition_names(const TopicIdPartitions& tps) {
  TopicPartitions list;
  for (const auto& [topic, ps] : tps)
    for (const auto p : ps) list.push_back({topic, p});
  return list;
}

void partitions_with_epochs(const PartitionsWithEpochs& tps, TopicPartitions& names,
                            std::vector<std::int32_t>& epochs) {
  for (const auto& [topic, ps] : tps) {
    for (const auto& pe : ps) {
      names.push_back({topic, pe.partition});
      epochs.push_back(pe.assignment_epoch);
    }
  }
}

/// A record's partitions with their epochs (`epochs` parallel to `names`; a partition past its
/// end gets `default_epoch`).
PartitionsWithEpochs read_partitions_with_epochs(const TopicPartitions& names,
                                                 const std::vector<std::int32_t>& epochs,
                                                 std::int32_t default_epoch) {
  PartitionsWithEpochs out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out[names[i].topic].push_back(
        {names[i].partition, i < epochs.size() ? epochs[i] : default_epoch});
  for (auto& [t, ps] : out) std::sort(ps.begin(), ps.end());
  return out;
}

std::vector<ConsumerGroupHeartbeatTopicPartitions> to_wire(const PartitionsWithEpochs& tps) {
  std::vector<ConsumerGroupHeartbeatTopicPartitions> out;
  for (const auto& [topic, ps] : tps) {
    ConsumerGroupHeartbeatTopicPartitions t{topic, {}};
    for (const auto& pe : ps) t.partitions.push_back(pe.partition);
    out.push_back(std::move(t));
  }
  return out;
}

/// Kafka's isSubset(owned, assigned): a null owned list is not a subset.
bool is_subset(const std::optional<std::vector<ConsumerGroupHeartbeatTopicPartitions>>& owned,
               const PartitionsWithEpochs& assigned) {
  if (!owned) return false;
  for (const auto& t : *owned) {
    const auto it = assigned.find(t.topic_id);
    if (it == assigned.end()) {
      if (t.partitions.empty()) continue;
      return false;
    }
    for (const auto p : t.partitions) {
      if (std::none_of(it->second.begin(), it->second.end(),
                       [p](const PartitionEpoch& pe) { return pe.partition == p; }))
        return false;
    }
  }
  return true;
}

void remove_owned(ConsumerGroupState& g, const ConsumerGroupMember& m) {
  for (const auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
    for (const auto& [topic, ps] : *set) {
      for (const auto& pe : ps) {
        const auto it = g.partition_owners.find({topic, pe.partition});
        // Only where the stored epoch is the member's (ConsumerGroup.removePartitionEpochs).
        if (it != g.partition_owners.end() && it->second.first == m.member_id)
          g.partition_owners.erase(it);
      }
    }
  }
}

void add_owned(ConsumerGroupState& g, const ConsumerGroupMember& m, const InjectedBugs& bugs) {
  for (const auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
    for (const auto& [topic, ps] : *set) {
      for (const auto& pe : ps) {
        auto [it, inserted] =
            g.partition_owners.try_emplace({topic, pe.partition}, m.member_id, m.member_epoch);
        // Invariant of the consumer protocol: never two owners of one partition in a group (the
        // injected bug breaks it on purpose, for the trace's checkers to find).
        SIM_ASSERT_MSG(
            inserted || it->second.first == m.member_id || bugs.skip_revocation,
            fmt::format("group {}: {}-{} given to member {} while member {} still owns it",
                        g.group_id, topic, pe.partition, m.member_id, it->second.first));
        it->second.first = m.member_id;  // in place: no temporary copy of the member id
        it->second.second = m.member_epoch;
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// State and replay

std::int32_t ConsumerGroupState::partition_epoch(const std::string& topic,
                                                 std::int32_t partition) const {
  const auto it = partition_owners.find({topic, partition});
  return it == partition_owners.end() ? -1 : it->second.second;
}

std::string ConsumerGroupState::state() const {
  if (members.empty()) return "empty";
  if (group_epoch > assignment_epoch) return "assigning";
  if (reconciled_members < static_cast<std::int32_t>(members.size())) return "reconciling";
  return "stable";
}

namespace {
bool reconciled(const ConsumerGroupMember& m, std::int32_t assignment_epoch) {
  return m.state == MemberState::Stable && m.member_epoch == assignment_epoch;
}
void count_subscriptions(ConsumerGroupState& g, const ConsumerGroupMemberState& m,
                         std::int32_t delta) {
  for (const auto& t : std::set<std::string>(m.member.subscribed_topic_names.begin(),
                                             m.member.subscribed_topic_names.end())) {
    if ((g.subscribed_topic_counts[t] += delta) == 0) g.subscribed_topic_counts.erase(t);
  }
  if (m.server_assignor && (g.server_assignor_counts[*m.server_assignor] += delta) == 0)
    g.server_assignor_counts.erase(*m.server_assignor);
}
}  // namespace

namespace {

// Replay, one function per record (Kafka's GroupMetadataManager.replay overloads).

void replay_offset(ConsumerGroups& groups, const std::string& group_id, const TopicPartition& tp,
                   const records::OffsetCommit* value) {
  // Offsets of other (classic) groups share the partition: only known consumer groups count.
  const auto git = groups.find(group_id);
  if (git == groups.end()) return;
  if (value == nullptr) {
    git->second.offsets.erase(tp);
    git->second.offset_epochs.erase(tp);
  } else {
    git->second.offsets[tp] = value->committed_offset;
    git->second.offset_epochs[tp] = value->leader_epoch;
  }
}

/// The group a consumer-group record is about (created by any record but a tombstone).
ConsumerGroups::iterator group_of_record(ConsumerGroups& groups, const std::string& group_id,
                                         bool tombstone) {
  auto git = groups.find(group_id);
  if (git == groups.end()) {
    SIM_ASSERT_MSG(!tombstone, "tombstone for unknown consumer group " + group_id);
    git = groups.emplace(group_id, ConsumerGroupState{}).first;
    git->second.group_id = group_id;
  }
  return git;
}

void replay_target_metadata(ConsumerGroupState& g,
                            const records::ConsumerGroupTargetAssignmentMetadata& rec) {
  g.assignment_epoch = rec.assignment_epoch;
  g.assignment_timestamp_ms = rec.assignment_timestamp;
  g.reconciled_members = 0;
  for (const auto& [id, m] : g.members)
    g.reconciled_members += reconciled(m.member, g.assignment_epoch) ? 1 : 0;
}

void replay_target_member(ConsumerGroupState& g,
                          const records::ConsumerGroupTargetAssignmentMember& rec) {
  TopicIdPartitions t;
  for (const auto& tp : rec.partitions) t[tp.topic].push_back(tp.partition);
  g.target[rec.member_id] = std::move(t);
}

void remove_member_metadata(ConsumerGroupState& g, const std::string& member_id) {
  const auto it = g.members.find(member_id);
  SIM_ASSERT_MSG(it != g.members.end(), "metadata tombstone of unknown member " + member_id);
  SIM_ASSERT_MSG(it->second.member.member_epoch == -1 && g.target.count(member_id) == 0,
                 "member " + member_id + " removed before its assignment records");
  if (it->second.instance_id) {
    const auto s = g.static_members.find(*it->second.instance_id);
    if (s != g.static_members.end() && s->second == member_id) g.static_members.erase(s);
  }
  count_subscriptions(g, it->second, -1);
  g.reconciled_members -= reconciled(it->second.member, g.assignment_epoch) ? 1 : 0;
  g.members.erase(it);
  g.member_table.remove(member_id);
}

void replay_member_metadata(ConsumerGroupState& g,
                            const records::ConsumerGroupMemberMetadata& rec) {
  const std::string& member_id = rec.member_id;
  auto [it, created] = g.members.try_emplace(member_id);
  g.member_table.put(member_id);  // ConsumerGroup.updateMember
  ConsumerGroupMemberState& m = it->second;
  if (created) {
    m.member.member_id = member_id;
    m.member.previous_member_epoch = -1;
    g.reconciled_members += reconciled(m.member, g.assignment_epoch) ? 1 : 0;
  } else {
    count_subscriptions(g, m, -1);
  }
  m.consumer = rec.consumer;
  m.instance_id = rec.instance_id;
  m.rack_id = rec.rack_id;
  m.client_id = rec.client_id;
  m.member.subscribed_topic_names = rec.subscribed_topic_names;
  m.rebalance_timeout_ms = rec.rebalance_timeout_ms;
  m.server_assignor = rec.server_assignor;
  m.classic.reset();
  if (rec.classic_member_metadata) {
    ClassicMemberMetadata cm;
    cm.session_timeout_ms = rec.classic_member_metadata->session_timeout_ms;
    for (const auto& p : rec.classic_member_metadata->supported_protocols) {
      JoinGroupProtocol jp;
      jp.name = p.name;
      jp.metadata.topics = p.topics;
      jp.metadata.owned_partitions = p.owned_partitions;
      jp.metadata.generation_id = p.generation_id;
      jp.metadata.rack = p.rack_id;
      cm.supported_protocols.push_back(std::move(jp));
    }
    m.classic = std::move(cm);
  }
  count_subscriptions(g, m, +1);
  if (m.instance_id) g.static_members[*m.instance_id] = member_id;
}

/// A ConsumerGroupCurrentMemberAssignment record of `member_id`, or its tombstone (`rec` null).
void replay_current_assignment(ConsumerGroupState& g, const std::string& member_id,
                               const records::ConsumerGroupCurrentMemberAssignment* rec,
                               const InjectedBugs& bugs) {
  auto [it, created] = g.members.try_emplace(member_id);
  g.member_table.put(member_id);  // ConsumerGroup.updateMember, for the tombstone as well
  ConsumerGroupMember& m = it->second.member;
  if (created) {
    m.member_id = member_id;
  } else {
    g.reconciled_members -= reconciled(m, g.assignment_epoch) ? 1 : 0;
  }
  remove_owned(g, m);
  if (rec == nullptr) {
    m.member_epoch = -1;
    m.previous_member_epoch = -1;
    m.assigned_partitions.clear();
    m.partitions_pending_revocation.clear();
    g.reconciled_members += reconciled(m, g.assignment_epoch) ? 1 : 0;
    return;
  }
  m.member_epoch = rec->member_epoch;
  m.previous_member_epoch = rec->previous_member_epoch;
  m.state = state_of_byte(rec->state);
  const std::int32_t default_epoch = std::max(m.member_epoch, 0);
  m.assigned_partitions =
      read_partitions_with_epochs(rec->assigned, rec->assigned_epochs, default_epoch);
  m.partitions_pending_revocation = read_partitions_with_epochs(
      rec->pending_revocation, rec->pending_revocation_epochs, default_epoch);
  add_owned(g, m, bugs);
  g.reconciled_members += reconciled(m, g.assignment_epoch) ? 1 : 0;
}

void replay_tombstone(ConsumerGroups& groups, const records::Tombstone& t,
                      const InjectedBugs& bugs) {
  using records::RecordType;
  if (t.type == RecordType::OffsetCommit) {
    if (t.topic && t.partition_index)
      replay_offset(groups, t.group, {*t.topic, *t.partition_index}, nullptr);
    return;
  }
  if (t.type != RecordType::ConsumerGroupMetadata &&
      t.type != RecordType::ConsumerGroupMemberMetadata &&
      t.type != RecordType::ConsumerGroupTargetAssignmentMetadata &&
      t.type != RecordType::ConsumerGroupTargetAssignmentMember &&
      t.type != RecordType::ConsumerGroupCurrentMemberAssignment)
    return;
  const auto git = group_of_record(groups, t.group, true);
  ConsumerGroupState& g = git->second;
  const std::string member_id = t.member_id.value_or("");
  switch (t.type) {
    case RecordType::ConsumerGroupMetadata:
      // The group goes (it was converted to a classic group, or deleted): its members went first.
      SIM_ASSERT_MSG(g.members.empty(),
                     "group tombstone of consumer group " + t.group + " with members");
      groups.erase(git);
      return;
    case RecordType::ConsumerGroupTargetAssignmentMetadata:
      return;  // the group tombstone follows
    case RecordType::ConsumerGroupTargetAssignmentMember:
      g.target.erase(member_id);
      return;
    case RecordType::ConsumerGroupMemberMetadata:
      remove_member_metadata(g, member_id);
      return;
    default:
      replay_current_assignment(g, member_id, nullptr, bugs);
      return;
  }
}

}  // namespace

void replay_record(ConsumerGroups& groups, const records::GroupRecord& record,
                   const InjectedBugs& bugs) {
  std::visit(
      [&](const auto& rec) {
        using T = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<T, records::Tombstone>) {
          replay_tombstone(groups, rec, bugs);
        } else if constexpr (std::is_same_v<T, records::OffsetCommit>) {
          replay_offset(groups, rec.group, {rec.topic, rec.partition_index}, &rec);
        } else if constexpr (std::is_same_v<T, records::ConsumerGroupMetadata>) {
          ConsumerGroupState& g = group_of_record(groups, rec.group, false)->second;
          g.group_epoch = rec.epoch;
          g.metadata_hash = rec.metadata_hash;
        } else if constexpr (std::is_same_v<T, records::ConsumerGroupTargetAssignmentMetadata>) {
          replay_target_metadata(group_of_record(groups, rec.group, false)->second, rec);
        } else if constexpr (std::is_same_v<T, records::ConsumerGroupTargetAssignmentMember>) {
          replay_target_member(group_of_record(groups, rec.group, false)->second, rec);
        } else if constexpr (std::is_same_v<T, records::ConsumerGroupMemberMetadata>) {
          replay_member_metadata(group_of_record(groups, rec.group, false)->second, rec);
        } else if constexpr (std::is_same_v<T, records::ConsumerGroupCurrentMemberAssignment>) {
          replay_current_assignment(group_of_record(groups, rec.group, false)->second,
                                    rec.member_id, &rec, bugs);
        } else {
          // Classic and share group records: not a consumer group's.
          static_assert(std::is_same_v<T, records::GroupMetadata> ||
                        std::is_same_v<T, records::ShareGroupMetadata> ||
                        std::is_same_v<T, records::ShareGroupMemberMetadata> ||
                        std::is_same_v<T, records::ShareGroupTargetAssignmentMetadata> ||
                        std::is_same_v<T, records::ShareGroupTargetAssignmentMember> ||
                        std::is_same_v<T, records::ShareGroupCurrentMemberAssignment> ||
                        std::is_same_v<T, records::ShareGroupStatePartitionMetadata>);
        }
      },
      record);
}

namespace {
/// A record's partitions as replay reads them back: each topic's partitions sorted, no empty topic.
PartitionsWithEpochs as_replayed(const PartitionsWithEpochs& tps) {
  PartitionsWithEpochs out;
  for (const auto& [topic, ps] : tps) {
    if (ps.empty()) continue;
    auto& v = out[topic];
    v = ps;
    std::sort(v.begin(), v.end());
  }
  return out;
}
bool holds(const ConsumerGroupMember& m, const std::string& topic, std::int32_t partition) {
  for (const auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
    const auto it = set->find(topic);
    if (it == set->end()) continue;
    const auto& ps = it->second;
    const auto pe =
        std::lower_bound(ps.begin(), ps.end(), partition,
                         [](const PartitionEpoch& x, std::int32_t p) { return x.partition < p; });
    if (pe != ps.end() && pe->partition == partition) return true;
  }
  return false;
}
}  // namespace

bool apply_current_assignment(ConsumerGroupState& g, const ConsumerGroupMember& from,
                              const InjectedBugs& bugs) {
  auto [it, created] = g.members.try_emplace(from.member_id);
  g.member_table.put(from.member_id);  // as replay_current_assignment
  ConsumerGroupMember& m = it->second.member;
  ConsumerGroupMember next;
  next.member_id = from.member_id;
  next.member_epoch = from.member_epoch;
  next.previous_member_epoch = from.previous_member_epoch;
  next.state = state_of_byte(state_byte(from.state));
  next.assigned_partitions = as_replayed(from.assigned_partitions);
  next.partitions_pending_revocation = as_replayed(from.partitions_pending_revocation);
  if (created) {
    m.member_id = from.member_id;
  } else {
    g.reconciled_members -= reconciled(m, g.assignment_epoch) ? 1 : 0;
  }
  // remove_owned(old) then add_owned(next), without taking out and putting back the entries
  // the member keeps: those only get their new epoch.
  for (const auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation})
    for (const auto& [topic, ps] : *set)
      for (const auto& pe : ps) {
        if (holds(next, topic, pe.partition)) continue;
        const auto o = g.partition_owners.find({topic, pe.partition});
        if (o != g.partition_owners.end() && o->second.first == m.member_id)
          g.partition_owners.erase(o);
      }
  for (const auto* set : {&next.assigned_partitions, &next.partitions_pending_revocation})
    for (const auto& [topic, ps] : *set)
      for (const auto& pe : ps) {
        auto [o, inserted] =
            g.partition_owners.try_emplace({topic, pe.partition}, m.member_id, next.member_epoch);
        SIM_ASSERT_MSG(
            inserted || o->second.first == m.member_id || bugs.skip_revocation,
            fmt::format("group {}: {}-{} given to member {} while member {} still owns it",
                        g.group_id, topic, pe.partition, m.member_id, o->second.first));
        if (!inserted) {  // assigned in place: no temporary copy of the member id
          o->second.first = m.member_id;
          o->second.second = next.member_epoch;
        }
      }
  m.member_epoch = next.member_epoch;
  m.previous_member_epoch = next.previous_member_epoch;
  m.state = next.state;
  m.assigned_partitions = std::move(next.assigned_partitions);
  m.partitions_pending_revocation = std::move(next.partitions_pending_revocation);
  g.reconciled_members += reconciled(m, g.assignment_epoch) ? 1 : 0;
  return created;
}

// ---------------------------------------------------------------------------------------------
// Coordinator

ConsumerGroupCoordinator::ConsumerGroupCoordinator(sim::Kernel& kernel, Tracer& tracer,
                                                   BrokerConfig config, OffsetsLog& log,
                                                   const ClusterMetadata& cluster, Sender sender,
                                                   NodeNamer namer)
    : kernel_(kernel),
      tracer_(tracer),
      config_(std::move(config)),
      log_(log),
      cluster_(cluster),
      sender_(std::move(sender)),
      namer_(std::move(namer)) {}

void ConsumerGroupCoordinator::reply(const Reply& to, Message response) {
  sender_(to.node, Envelope{to.correlation_id, std::move(response)});
}

void ConsumerGroupCoordinator::emit(Write& w, records::GroupRecord rec) {
  replay_record(groups_, rec, bugs_);
  // Keep group.epoch's member list in step with the members this record changed.
  const std::string& group_id = records::group_of(rec);
  if (const std::string* id = records::member_id_of(rec))
    sync_member_name(group_id, *id);
  else if (groups_.count(group_id) == 0)
    member_names_.erase(group_id);
  w.records.push_back(std::move(rec));
}

void ConsumerGroupCoordinator::emit_current_assignment(Write& w, const std::string& group_id,
                                                       const std::string& consumer,
                                                       const ConsumerGroupMember& member) {
  records::ConsumerGroupCurrentMemberAssignment rec =
      current_assignment_record(group_id, consumer, member);
  const auto git = groups_.find(group_id);
  if (git == groups_.end()) {
    emit(w, std::move(rec));  // replay creates the group
    return;
  }
  // What replay_record() would read back from `rec`, applied without reading it. The record
  // changes no member's consumer name: group.epoch's names change only if it adds the member.
  if (apply_current_assignment(git->second, member, bugs_))
    sync_member_name(group_id, member.member_id);
  w.records.push_back(std::move(rec));
}

void ConsumerGroupCoordinator::commit(Write& w, const std::optional<Reply>& to, Message response,
                                      const std::string& reason) {
  // Trace what changed, in the order a reader needs: epochs, members, then the group's state.
  // The members whose current assignment the write sets, in member-id order, each once: the
  // records were replayed when emitted, so the members are looked up now (a tombstone's member
  // is gone), and their nodes stay put while the write is appended and traced.
  auto touched = std::move(touched_);  // reused; empty if a commit were ever nested
  touched.clear();
  const bool wrote = !w.records.empty();
  const auto git0 = wrote ? groups_.find(w.group_id) : groups_.end();
  if (git0 != groups_.end()) {
    for (const auto& rec : w.records) {
      if (records::type_of(rec) != records::RecordType::ConsumerGroupCurrentMemberAssignment)
        continue;
      const std::string* id = records::member_id_of(rec);
      if (id == nullptr) continue;
      const auto it = git0->second.members.find(*id);
      if (it != git0->second.members.end()) touched.push_back(&*it);
    }
    std::sort(touched.begin(), touched.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  }
  // The response goes out once the records (or, without records, every earlier write) commit;
  // a heartbeat that writes nothing while nothing is pending is answered at once, as
  // after_pending_writes() would, without wrapping the response in a closure.
  if (w.records.empty() && to && !log_.writes_pending()) {
    reply(*to, std::move(response));
  } else {
    std::function<void()> send;
    if (to) send = [this, t = *to, m = std::move(response)]() mutable { reply(t, std::move(m)); };
    if (!w.records.empty()) {
      log_.append(std::move(w.records), std::move(send));
    } else if (send) {
      log_.after_pending_writes(std::move(send));
    }
  }
  const auto git = groups_.find(w.group_id);
  if (git == groups_.end()) {
    touched_ = std::move(touched);
    return;
  }
  SIM_ASSERT(!wrote || git == git0);
  const ConsumerGroupState& g = git->second;
  Traced& tr = traced_[w.group_id];
  if (g.group_epoch != tr.epoch || g.assignment_epoch != tr.assignment_epoch) {
    trace::GroupEpoch f{.group = g.group_id, .epoch = g.group_epoch};
    if (g.assignment_epoch != tr.assignment_epoch) f.assignment_epoch = g.assignment_epoch;
    f.members = member_names(g);
    if (!reason.empty()) f.reason = reason;
    tracer_.publish(f);
    tr.epoch = g.group_epoch;
    tr.assignment_epoch = g.assignment_epoch;
  }
  for (const auto* entry : touched) {
    const auto& [id, m] = *entry;
    tracer_.publish(trace::MemberEpoch{.group = g.group_id,
                                       .consumer = m.consumer,
                                       .member_id = id,
                                       .epoch = m.member.member_epoch,
                                       .state = reconciliation::to_string(m.member.state)});
  }
  touched_ = std::move(touched);
  const std::string state = g.state();
  if (state != tr.state) {
    trace::GroupStateChange f{.group = g.group_id, .state = state, .epoch = g.group_epoch};
    if (!reason.empty()) f.reason = reason;
    tracer_.publish(f);
    tr.state = state;
  }
}

records::ConsumerGroupMemberMetadata ConsumerGroupCoordinator::member_metadata_record(
    const std::string& group_id, const ConsumerGroupMemberState& m) const {
  std::vector<std::string> sorted = m.member.subscribed_topic_names;
  std::sort(sorted.begin(), sorted.end());
  // Kafka's nullable InstanceId, RackId and ServerAssignor are left out when null.
  records::ConsumerGroupMemberMetadata rec{.group = group_id,
                                           .member_id = m.member.member_id,
                                           .consumer = m.consumer,
                                           .instance_id = m.instance_id,
                                           .rack_id = m.rack_id,
                                           .client_id = m.client_id,
                                           .subscribed_topic_names = std::move(sorted),
                                           .rebalance_timeout_ms = m.rebalance_timeout_ms,
                                           .server_assignor = m.server_assignor,
                                           .classic_member_metadata = std::nullopt};
  if (m.classic) {
    records::ClassicMemberMetadataValue cm{.session_timeout_ms = m.classic->session_timeout_ms,
                                           .supported_protocols = {}};
    for (const auto& p : m.classic->supported_protocols)
      cm.supported_protocols.push_back(
          records::ClassicProtocol{.name = p.name,
                                   .topics = p.metadata.topics,
                                   .owned_partitions = p.metadata.owned_partitions,
                                   .generation_id = p.metadata.generation_id,
                                   .rack_id = p.metadata.rack});
    rec.classic_member_metadata = std::move(cm);
  }
  return rec;
}

records::ConsumerGroupCurrentMemberAssignment ConsumerGroupCoordinator::current_assignment_record(
    const std::string& group_id, const std::string& consumer,
    const ConsumerGroupMember& member) const {
  records::ConsumerGroupCurrentMemberAssignment rec{
      .group = group_id,
      .member_id = member.member_id,
      .consumer = consumer,
      .member_epoch = member.member_epoch,
      .previous_member_epoch = member.previous_member_epoch,
      .state = state_byte(member.state)};
  partitions_with_epochs(member.assigned_partitions, rec.assigned, rec.assigned_epochs);
  partitions_with_epochs(member.partitions_pending_revocation, rec.pending_revocation,
                         rec.pending_revocation_epochs);
  return rec;
}

std::int64_t ConsumerGroupCoordinator::metadata_hash(const ConsumerGroupState& g) const {
  // Kafka hashes (XXH3) topic id, name, partition count and racks of every subscribed topic
  // that exists, in name order; any stable hash of the same inputs changes when Kafka's does.
  std::uint64_t h = 1469598103934665603ULL;
  bool any = false;
  for (const auto& [t, count] : g.subscribed_topic_counts) {
    const std::int32_t n = cluster_.partitions(t);
    if (n <= 0) continue;
    any = true;
    // "topic:partitions;", hashed piece by piece (no string built per heartbeat).
    const auto mix = [&h](std::string_view s) {
      for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ULL;
      }
    };
    char digits[16];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    mix(t);
    mix(":");
    mix(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    mix(";");
  }
  return any ? static_cast<std::int64_t>(h >> 1) : 0;
}

std::string ConsumerGroupCoordinator::preferred_assignor(const ConsumerGroupState& g) const {
  // The most requested server assignor among members, else the broker's first (uniform).
  std::string best;
  int best_count = 0;
  for (const auto& [name, n] : g.server_assignor_counts) {
    if (n > best_count) {
      best = name;
      best_count = n;
    }
  }
  if (best_count > 0) return best;
  return config_.group_consumer_assignors.empty() ? "uniform"
                                                  : config_.group_consumer_assignors.front();
}

const std::vector<std::string>& ConsumerGroupCoordinator::member_names(
    const ConsumerGroupState& g) {
  auto [it, fresh] = member_names_.try_emplace(g.group_id);
  if (fresh) {
    it->second.ids.reserve(g.members.size());
    it->second.names.reserve(g.members.size());
    for (const auto& [id, m] : g.members) {
      it->second.ids.push_back(id);
      it->second.names.push_back(m.consumer);
    }
  }
  return it->second.names;
}

void ConsumerGroupCoordinator::sync_member_name(const std::string& group_id,
                                                const std::string& member_id) {
  const auto c = member_names_.find(group_id);
  if (c == member_names_.end()) return;  // built when next asked for
  const auto git = groups_.find(group_id);
  if (git == groups_.end()) {
    member_names_.erase(c);
    return;
  }
  MemberNames& mn = c->second;
  const auto mit = git->second.members.find(member_id);
  const auto pos = std::lower_bound(mn.ids.begin(), mn.ids.end(), member_id);
  const bool have = pos != mn.ids.end() && *pos == member_id;
  const auto i = pos - mn.ids.begin();
  if (mit == git->second.members.end()) {
    if (have) {
      mn.ids.erase(pos);
      mn.names.erase(mn.names.begin() + i);
    }
  } else if (have) {
    mn.names[static_cast<std::size_t>(i)] = mit->second.consumer;
  } else {
    mn.ids.insert(pos, member_id);
    mn.names.insert(mn.names.begin() + i, mit->second.consumer);
  }
}

ConsumerGroupCoordinator::MemberTimers& ConsumerGroupCoordinator::timers(
    const std::string& group_id, const std::string& member_id) {
  // Looked up by views: a heartbeat arms its member's session timer without copying two ids.
  auto it = timers_.find(MemberKeyView{group_id, member_id});
  if (it == timers_.end()) {
    it = timers_.try_emplace({group_id, member_id}).first;
    it->second.session = std::make_unique<sim::Timer>(
        kernel_, [this, group_id, member_id] { on_session_timeout(group_id, member_id); });
    it->second.rebalance = std::make_unique<sim::Timer>(
        kernel_, [this, group_id, member_id] { on_rebalance_timeout(group_id, member_id); });
    it->second.join = std::make_unique<sim::Timer>(kernel_, [this, group_id, member_id] {
      on_classic_timer(group_id, member_id,
                       "the classic member failed to join within the rebalance timeout");
    });
    it->second.sync = std::make_unique<sim::Timer>(kernel_, [this, group_id, member_id] {
      on_classic_timer(group_id, member_id, "the member failed to sync within timeout");
    });
  }
  return it->second;
}

void ConsumerGroupCoordinator::retire_timers(const std::string& group_id,
                                             const std::string& member_id) {
  const auto it = timers_.find(MemberKeyView{group_id, member_id});
  if (it == timers_.end()) return;
  // The member is gone: its timers go, once the kernel holds them no more.
  MemberTimers& tm = it->second;
  for (auto* t : {&tm.session, &tm.rebalance, &tm.join, &tm.sync}) retired_.retire(std::move(*t));
  timers_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// ConsumerGroupHeartbeat

void ConsumerGroupCoordinator::on_heartbeat(sim::NodeId from, std::int32_t correlation_id,
                                            const ConsumerGroupHeartbeatRequest& r) {
  const Reply to{from, correlation_id};
  const auto invalid = [&](ErrorCode e) {
    reply(to, ConsumerGroupHeartbeatResponse{
                  .error = e, .member_id = r.member_id, .member_epoch = r.member_epoch});
  };
  // Static validation (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid).
  if (r.group_id.empty() || r.member_id.empty() || r.member_epoch < -2 ||
      (r.member_epoch == -2 && !r.instance_id) ||
      (r.member_epoch == 0 && (r.rebalance_timeout_ms == -1 || !r.topic_partitions ||
                               !r.topic_partitions->empty() || !r.subscribed_topic_names))) {
    invalid(ErrorCode::INVALID_REQUEST);
    return;
  }
  if (r.server_assignor &&
      std::find(config_.group_consumer_assignors.begin(), config_.group_consumer_assignors.end(),
                *r.server_assignor) == config_.group_consumer_assignors.end()) {
    invalid(ErrorCode::UNSUPPORTED_ASSIGNOR);
    return;
  }
  if (r.member_epoch < 0)
    leave(to, r);
  else if (!steady_heartbeat(to, r))  // the steady state's, answered without copying the member
    regular_heartbeat(to, r);
}

ErrorCode ConsumerGroupCoordinator::lookup_member(const ConsumerGroupState& before,
                                                  const ConsumerGroupHeartbeatRequest& r,
                                                  bool classic, HeartbeatMember& out) const {
  std::optional<ConsumerGroupMemberState>& replaced = out.replaced;
  ConsumerGroupMemberState& member = out.member;
  bool& new_member = out.new_member;
  if (r.instance_id) {
    const auto s = before.static_members.find(*r.instance_id);
    const ConsumerGroupMemberState* existing =
        s == before.static_members.end() ? nullptr : &before.members.at(s->second);
    if (r.member_epoch == 0) {
      if (existing == nullptr) {
        const auto m = before.members.find(r.member_id);
        new_member = m == before.members.end();
        if (!new_member) member = m->second;
      } else {
        // A classic static member replaces the old one whatever its epoch.
        if (!classic &&
            existing->member.member_epoch != reconciliation::kLeaveGroupStaticMemberEpoch) {
          return ErrorCode::UNRELEASED_INSTANCE_ID;
        }
        replaced = *existing;
        member = *existing;
        member.member.member_id = r.member_id;
        member.member.member_epoch = 0;
        member.member.previous_member_epoch = 0;
      }
    } else {
      if (existing == nullptr) {
        return ErrorCode::UNKNOWN_MEMBER_ID;
      }
      if (existing->member.member_id != r.member_id) {
        return ErrorCode::FENCED_INSTANCE_ID;
      }
      member = *existing;
    }
  } else {
    const auto m = before.members.find(r.member_id);
    if (m == before.members.end()) {
      if (r.member_epoch != 0) {
        return ErrorCode::UNKNOWN_MEMBER_ID;
      }
      new_member = true;
    } else {
      member = m->second;
    }
  }
  if (new_member) {
    member = ConsumerGroupMemberState{};
    member.member.member_id = r.member_id;
    member.member.previous_member_epoch = -1;
  }
  if (r.member_epoch != 0) {
    // throwIfConsumerGroupMemberEpochIsInvalid: ahead of the server, or behind and not the
    // previous epoch of a member that still owns only what it was assigned.
    const ConsumerGroupMember& m = member.member;
    if (r.member_epoch > m.member_epoch ||
        (r.member_epoch < m.member_epoch &&
         (r.member_epoch != m.previous_member_epoch ||
          !is_subset(r.topic_partitions, m.assigned_partitions)))) {
      return ErrorCode::FENCED_MEMBER_EPOCH;
    }
  }

  return ErrorCode::NONE;
}

void ConsumerGroupCoordinator::compute_target_assignment(
    Write& w, ConsumerGroupState& g, std::int64_t now_ms,
    std::pair<std::size_t, std::uint64_t> base) {
  assignors::ServerAssignorInput in;
  for (const auto& [t, count] : g.subscribed_topic_counts) {
    const std::int32_t n = cluster_.partitions(t);
    if (n > 0) in.topics.push_back({t, t, n});
  }
  // Members in java.util.HashMap<String, ...> order of their ids (TargetAssignmentBuilder's
  // memberSpecs), put in the order Kafka walks the group's members: the TimelineHashMap as it
  // was before this heartbeat (less a member it removed), then the member it added. Where two
  // ids share a HashMap bucket, that order decides which comes first.
  std::vector<const ConsumerGroupMemberState*> ms;
  std::vector<std::int32_t> hashes;
  const auto add = [&](const std::string& id) {
    const auto it = g.members.find(id);
    if (it == g.members.end()) return;
    ms.push_back(&it->second);
    hashes.push_back(assignors::server_java::string_hash(id));
  };
  for (const auto& id : g.member_table.order(base.first, base.second)) add(id);
  for (const auto& id : g.member_table.added_since(base.second)) add(id);
  const auto order = assignors::server_java::iteration_order(
      hashes, assignors::server_java::growth_capacity(ms.size()));
  std::vector<const ConsumerGroupMemberState*> ordered;
  ordered.reserve(ms.size());
  for (const auto i : order) ordered.push_back(ms[i]);
  // Each member's target before this computation (null: none), looked up once. A member's entry
  // changes only by its own record below, written after its comparison; the map's other values
  // stay where they are.
  std::vector<const TopicIdPartitions*> targets;
  targets.reserve(ordered.size());
  in.members.reserve(ordered.size());
  for (const auto* m : ordered) {
    assignors::ServerMember sm;
    sm.member_id = m->member.member_id;
    sm.instance_id = m->instance_id;
    sm.rack = m->rack_id;
    sm.subscribed_topics = m->member.subscribed_topic_names;
    const auto t = g.target.find(sm.member_id);
    targets.push_back(t == g.target.end() ? nullptr : &t->second);
    if (t != g.target.end()) sm.target = t->second;
    in.members.push_back(std::move(sm));
  }
  in.subscription_type = assignors::subscription_type_by_names(in.members);
  in.java_set_order = true;  // the records list each set as Kafka iterates it
  const auto result = assignors::assign_server(preferred_assignor(g), in);
  const std::int32_t epoch = g.group_epoch;
  const TopicIdPartitions none;
  std::vector<std::int32_t> scratch_a, scratch_b;  // same_partitions()'s, reused
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const auto* m = ordered[i];
    const std::string& id = m->member.member_id;
    const auto nit = result.find(id);
    const TopicIdPartitions& next = nit == result.end() ? none : nit->second;
    if (targets[i] == nullptr || !same_partitions(*targets[i], next, scratch_a, scratch_b)) {
      emit(w, records::ConsumerGroupTargetAssignmentMember{.group = w.group_id,
                                                           .member_id = id,
                                                           .consumer = m->consumer,
                                                           .partitions = partition_names(next)});
    }
  }
  emit(w, records::ConsumerGroupTargetAssignmentMetadata{
              .group = w.group_id, .assignment_epoch = epoch, .assignment_timestamp = now_ms});
}

void ConsumerGroupCoordinator::reconcile_member(Write& w, ConsumerGroupState& g,
                                                const ConsumerGroupHeartbeatRequest& r,
                                                bool subscription_changed, bool classic) {
  ConsumerGroupMemberState& current = g.members.at(r.member_id);
  const auto t = g.target.find(r.member_id);
  const TopicIdPartitions empty;
  const TopicIdPartitions& target = t == g.target.end() ? empty : t->second;
  std::map<std::string, std::string> ids;  // topic ids are topic names in this model
  for (const auto& name : current.member.subscribed_topic_names)
    if (cluster_.partitions(name) > 0) ids[name] = name;
  const bool skip_revocation = bugs_.skip_revocation;
  const reconciliation::PartitionEpochLookup lookup =
      [&g, skip_revocation](const std::string& topic, std::int32_t p) {
        return skip_revocation ? -1 : g.partition_epoch(topic, p);
      };
  std::optional<std::vector<reconciliation::OwnedTopicPartitions>> owned;
  if (r.topic_partitions) {
    owned.emplace();
    for (const auto& tp : *r.topic_partitions) owned->push_back({tp.topic_id, tp.partitions});
  }
  const std::map<std::string, std::vector<std::string>> regexes;
  const auto result = reconciliation::next_member_state(
      current.member, {.target_assignment_epoch = g.assignment_epoch,
                       .target_assignment = target,
                       .current_partition_epoch = lookup,
                       .owned_topic_partitions = owned,
                       .has_subscription_changed = subscription_changed,
                       .topic_ids_by_name = ids,
                       .resolved_regular_expressions = regexes});
  SIM_ASSERT_MSG(result.error == reconciliation::ReconciliationError::None,
                 "no member reaches state UNKNOWN in this model");
  if (result.next && *result.next != current.member) {  // a record only for a real change
    // The member's node stays where it is: the record only sets its assignment.
    emit_current_assignment(w, r.group_id, current.consumer, *result.next);
    MemberTimers& tm = timers(r.group_id, r.member_id);
    const ConsumerGroupMember& now_member = current.member;
    // Classic members have only their join and sync timers (GMM.maybeReconcile).
    if (classic) {
    } else if (now_member.state == MemberState::UnrevokedPartitions) {
      // The member must revoke within its rebalance timeout (max.poll.interval.ms).
      tm.rebalance_epoch = now_member.member_epoch;
      tm.rebalance->arm(sim::ms(std::max(0, current.rebalance_timeout_ms)));
    } else {
      tm.rebalance->cancel();
    }
  }
}

bool ConsumerGroupCoordinator::steady_heartbeat(const Reply& to,
                                                const ConsumerGroupHeartbeatRequest& r) {
  // Each condition that does not hold leaves the heartbeat to regular_heartbeat. A dynamic member
  // of an existing group, at its own epoch (lookup_member's check passes, nothing is replaced)...
  if (r.member_epoch <= 0 || r.instance_id) return false;
  const auto git = groups_.find(r.group_id);
  if (git == groups_.end()) return false;
  const ConsumerGroupState& g = git->second;
  const auto mit = g.members.find(r.member_id);
  if (mit == g.members.end()) return false;
  const ConsumerGroupMemberState& m = mit->second;
  if (m.classic || r.member_epoch != m.member.member_epoch) return false;
  // ... whose metadata the request leaves as it is (no ConsumerGroupMemberMetadata record, the
  // subscription and the preferred assignor unchanged: no epoch bump) ...
  if ((r.rack_id && r.rack_id != m.rack_id) ||
      (r.rebalance_timeout_ms != -1 && r.rebalance_timeout_ms != m.rebalance_timeout_ms) ||
      (r.server_assignor && r.server_assignor != m.server_assignor) ||
      (!r.client_id.empty() && r.client_id != m.client_id) ||
      (r.subscribed_topic_names && *r.subscribed_topic_names != m.member.subscribed_topic_names) ||
      namer_(to.node) != m.consumer)
    return false;
  // ... in a group whose topics' metadata and target assignment are up to date, the member
  // STABLE at the assignment epoch (no reconciliation, its partitions unchanged).
  if (metadata_hash(g) != g.metadata_hash || g.assignment_epoch < g.group_epoch ||
      m.member.state != MemberState::Stable || m.member.member_epoch != g.assignment_epoch)
    return false;
  // What regular_heartbeat does then: the session timer restarts, the answer carries the epoch
  // (and the assignment only for a full request), no record is written.
  timers(r.group_id, r.member_id).session->arm(sim::ms(config_.group_consumer_session_timeout_ms));
  ConsumerGroupHeartbeatResponse resp = answer(r.member_id, m.member.member_epoch);
  if (r.rebalance_timeout_ms != -1 && r.subscribed_topic_names && r.topic_partitions)
    resp.assignment = to_wire(m.member.assigned_partitions);
  Write w{r.group_id, {}};
  commit(w, to, std::move(resp), std::string());
  return true;
}

void ConsumerGroupCoordinator::regular_heartbeat(const Reply& to,
                                                 const ConsumerGroupHeartbeatRequest& r,
                                                 const JoinGroupRequest* classic) {
  const auto fail = [&](ErrorCode e) {
    if (classic != nullptr) {
      reply(to, JoinGroupResponse{.error = e, .member_id = r.member_id});
      return;
    }
    reply(to, ConsumerGroupHeartbeatResponse{
                  .error = e, .member_id = r.member_id, .member_epoch = r.member_epoch});
  };
  const std::int64_t now_ms = kernel_.now().count() / 1000;
  auto git = groups_.find(r.group_id);
  const bool new_group = git == groups_.end();
  if (new_group && r.member_epoch != 0) {
    fail(ErrorCode::GROUP_ID_NOT_FOUND);
    return;
  }
  ConsumerGroupState fresh;
  fresh.group_id = r.group_id;
  const ConsumerGroupState& before = new_group ? fresh : git->second;
  // The members' table as this heartbeat finds it (its records put and remove members).
  const std::pair<std::size_t, std::uint64_t> base_table{before.member_table.capacity(),
                                                         before.member_table.puts()};
  if (group_full(before, r.member_id, r.instance_id)) {
    fail(ErrorCode::GROUP_MAX_SIZE_REACHED);
    return;
  }

  // Member lookup: static (by instance id) or dynamic (by member id).
  HeartbeatMember found;
  if (const ErrorCode e = lookup_member(before, r, classic != nullptr, found);
      e != ErrorCode::NONE) {
    fail(e);
    return;
  }
  ConsumerGroupMemberState& member = found.member;
  const bool new_member = found.new_member;
  const std::optional<ConsumerGroupMemberState>& replaced = found.replaced;

  Write w{r.group_id, {}};
  std::string reason;
  if (replaced) {
    // A static member comes back: the old member's records are replaced, no epoch bump.
    const auto t = before.target.find(replaced->member.member_id);
    TopicIdPartitions old_target = t == before.target.end() ? TopicIdPartitions{} : t->second;
    // Kafka writes the old member's target as it iterates the sets its replay built.
    for (auto& [topic, ps] : old_target)
      ps = assignors::server_java::int_set_order(ps,
                                                 assignors::server_java::copy_capacity(ps.size()));
    remove_member_records(w, *replaced);
    emit(w, member_metadata_record(r.group_id, member));
    emit(w,
         records::ConsumerGroupTargetAssignmentMember{.group = r.group_id,
                                                      .member_id = member.member.member_id,
                                                      .consumer = member.consumer,
                                                      .partitions = partition_names(old_target)});
    emit_current_assignment(w, r.group_id, member);
    reason = fmt::format("static member {} replaced", member.consumer);
  }
  const ConsumerGroupState& g0 = new_group ? fresh : groups_.at(r.group_id);

  // The updated member (ConsumerGroupMember.Builder.maybeUpdate*).
  ConsumerGroupMemberState updated = member;
  updated.consumer = namer_(to.node);
  if (r.instance_id) updated.instance_id = r.instance_id;
  if (r.rack_id) updated.rack_id = r.rack_id;
  if (r.rebalance_timeout_ms != -1) updated.rebalance_timeout_ms = r.rebalance_timeout_ms;
  if (r.server_assignor) updated.server_assignor = r.server_assignor;
  if (!r.client_id.empty()) updated.client_id = r.client_id;
  if (classic != nullptr)
    updated.classic = ClassicMemberMetadata{classic->session_timeout_ms, classic->protocols};
  if (r.subscribed_topic_names) updated.member.subscribed_topic_names = *r.subscribed_topic_names;
  const std::set<std::string> old_names(member.member.subscribed_topic_names.begin(),
                                        member.member.subscribed_topic_names.end());
  const std::set<std::string> new_names(updated.member.subscribed_topic_names.begin(),
                                        updated.member.subscribed_topic_names.end());
  const bool subscription_changed = new_member ? !new_names.empty() : old_names != new_names;
  const bool metadata_changed =
      new_member || updated.consumer != member.consumer ||
      updated.instance_id != member.instance_id || updated.rack_id != member.rack_id ||
      updated.client_id != member.client_id || old_names != new_names ||
      updated.rebalance_timeout_ms != member.rebalance_timeout_ms ||
      updated.server_assignor != member.server_assignor || updated.classic != member.classic;
  const std::string assignor_before = preferred_assignor(g0);
  if (metadata_changed) {
    emit(w, member_metadata_record(r.group_id, updated));
    if (subscription_changed && reason.empty())
      reason = new_member ? fmt::format("member {} joined", updated.consumer)
                          : fmt::format("member {} changed its subscription", updated.consumer);
  }
  ConsumerGroupState& g = groups_.at(r.group_id);  // exists now: replay created it

  // Group epoch bump: subscription, preferred assignor, or the subscribed topics' metadata.
  bool bump = subscription_changed || preferred_assignor(g) != assignor_before;
  const std::int64_t hash = metadata_hash(g);
  if (hash != g.metadata_hash) {
    bump = true;
    if (reason.empty()) reason = "metadata of subscribed topics changed";
  }
  if (bump) {
    emit(w, records::ConsumerGroupMetadata{
                .group = r.group_id, .epoch = g.group_epoch + 1, .metadata_hash = hash});
  }

  // Target assignment, throttled by group.consumer.assignment.interval.ms (KIP-1263): no timer;
  // the first heartbeat of anyone at or after the interval computes it.
  const std::int64_t interval = config_.group_consumer_assignment_interval_ms;
  if (g.assignment_epoch < g.group_epoch && (g.assignment_timestamp_ms == 0 || interval == 0 ||
                                             now_ms >= g.assignment_timestamp_ms + interval))
    compute_target_assignment(w, g, now_ms, base_table);

  // Reconciliation (CurrentAssignmentBuilder), unless the member is already there.
  ConsumerGroupMemberState& current = g.members.at(r.member_id);
  const PartitionsWithEpochs assigned_before =
      new_member || replaced ? PartitionsWithEpochs{} : member.member.assigned_partitions;
  if (subscription_changed || current.member.state != MemberState::Stable ||
      current.member.member_epoch != g.assignment_epoch)
    reconcile_member(w, g, r, subscription_changed, classic != nullptr);
  const ConsumerGroupMemberState& done = current;  // reconciled in place
  if (classic != nullptr) {
    // The join is over: its join timer stops, the session timer restarts, and the member must
    // sync within its rebalance timeout.
    MemberTimers& tm = timers(r.group_id, r.member_id);
    tm.join->cancel();
    tm.session->arm(sim::ms(classic->session_timeout_ms));
    tm.sync->arm(sim::ms(std::max(0, classic->rebalance_timeout_ms)));
    JoinGroupResponse resp;
    resp.member_id = r.member_id;
    resp.generation_id = done.member.member_epoch;
    resp.protocol_name = classic->protocols.empty() ? "" : classic->protocols.front().name;
    commit(w, to, std::move(resp), reason);
    return;
  }
  timers(r.group_id, r.member_id).session->arm(sim::ms(config_.group_consumer_session_timeout_ms));

  ConsumerGroupHeartbeatResponse resp = answer(r.member_id, done.member.member_epoch);
  const bool full = r.rebalance_timeout_ms != -1 && r.subscribed_topic_names && r.topic_partitions;
  if (r.member_epoch == 0 || full || done.member.assigned_partitions != assigned_before)
    resp.assignment = to_wire(done.member.assigned_partitions);
  commit(w, to, std::move(resp), reason);
}

// ---------------------------------------------------------------------------------------------
// Leaving, fencing, timers

void ConsumerGroupCoordinator::remove_member_records(Write& w, const ConsumerGroupMemberState& m) {
  // The order replay requires: current assignment, target, then metadata.
  for (const auto type : {records::RecordType::ConsumerGroupCurrentMemberAssignment,
                          records::RecordType::ConsumerGroupTargetAssignmentMember,
                          records::RecordType::ConsumerGroupMemberMetadata}) {
    emit(w, records::Tombstone{.type = type,
                               .group = w.group_id,
                               .member_id = m.member.member_id,
                               .consumer = m.consumer});
  }
}

void ConsumerGroupCoordinator::fence_member(Write& w, const std::string& member_id) {
  ConsumerGroupState& g = groups_.at(w.group_id);
  const ConsumerGroupMemberState m = g.members.at(member_id);
  remove_member_records(w, m);
  retire_timers(w.group_id, member_id);
  // A leave always bumps the group epoch; the target is recomputed by the next heartbeat.
  emit(w, records::ConsumerGroupMetadata{
              .group = w.group_id, .epoch = g.group_epoch + 1, .metadata_hash = metadata_hash(g)});
  if (g.members.empty()) {
    // The group is up to date and the next joiner is not throttled.
    emit(w, records::ConsumerGroupTargetAssignmentMetadata{
                .group = w.group_id, .assignment_epoch = g.group_epoch, .assignment_timestamp = 0});
  }
}

void ConsumerGroupCoordinator::leave(const Reply& to, const ConsumerGroupHeartbeatRequest& r) {
  const auto fail = [&](ErrorCode e) {
    reply(to, ConsumerGroupHeartbeatResponse{
                  .error = e, .member_id = r.member_id, .member_epoch = r.member_epoch});
  };
  auto git = groups_.find(r.group_id);
  if (git == groups_.end()) {
    fail(ErrorCode::GROUP_ID_NOT_FOUND);
    return;
  }
  ConsumerGroupState& g = git->second;
  std::string member_id = r.member_id;
  if (r.instance_id) {
    const auto s = g.static_members.find(*r.instance_id);
    if (s == g.static_members.end()) {
      fail(ErrorCode::UNKNOWN_MEMBER_ID);
      return;
    }
    if (s->second != r.member_id) {
      fail(ErrorCode::FENCED_INSTANCE_ID);
      return;
    }
  } else if (g.members.count(r.member_id) == 0) {
    fail(ErrorCode::UNKNOWN_MEMBER_ID);
    return;
  }
  Write w{r.group_id, {}};
  const std::string consumer = g.members.at(member_id).consumer;
  std::string reason;
  if (r.member_epoch == reconciliation::kLeaveGroupStaticMemberEpoch) {
    // A static member's temporary leave: one record; its partitions stay reserved and its
    // session timer keeps running from its last heartbeat.
    ConsumerGroupMemberState m = g.members.at(member_id);
    m.member.member_epoch = reconciliation::kLeaveGroupStaticMemberEpoch;
    m.member.partitions_pending_revocation.clear();
    for (auto& [t, ps] : m.member.assigned_partitions)
      for (auto& pe : ps) pe.assignment_epoch = 0;
    emit_current_assignment(w, r.group_id, m);
    timers(r.group_id, member_id).rebalance->cancel();
    reason = fmt::format("static member {} left temporarily", consumer);
  } else {
    reason = fmt::format("member {} left the group", consumer);
    fence_or_downgrade(r.group_id, member_id, to, answer(r.member_id, r.member_epoch), reason);
    return;
  }
  commit(w, to, answer(r.member_id, r.member_epoch), reason);
}

ConsumerGroupHeartbeatResponse ConsumerGroupCoordinator::answer(const std::string& member_id,
                                                                std::int32_t member_epoch) const {
  return ConsumerGroupHeartbeatResponse{.member_id = member_id,
                                        .member_epoch = member_epoch,
                                        .heartbeat_interval_ms = static_cast<std::int32_t>(
                                            config_.group_consumer_heartbeat_interval_ms)};
}

void ConsumerGroupCoordinator::on_session_timeout(const std::string& group_id,
                                                  const std::string& member_id) {
  auto git = groups_.find(group_id);
  if (git == groups_.end() || git->second.members.count(member_id) == 0) return;
  const std::string consumer = git->second.members.at(member_id).consumer;
  tracer_.publish(trace::MemberLeave{.group = group_id,
                                     .consumer = consumer,
                                     .member_id = member_id,
                                     .reason = "session timeout"});
  fence_or_downgrade(group_id, member_id, std::nullopt, ConsumerGroupHeartbeatResponse{},
                     fmt::format("member {} session timeout", consumer));
}

void ConsumerGroupCoordinator::on_rebalance_timeout(const std::string& group_id,
                                                    const std::string& member_id) {
  auto git = groups_.find(group_id);
  if (git == groups_.end()) return;
  const auto mit = git->second.members.find(member_id);
  if (mit == git->second.members.end()) return;
  const auto tit = timers_.find(MemberKeyView{group_id, member_id});
  if (tit == timers_.end() || mit->second.member.member_epoch != tit->second.rebalance_epoch)
    return;
  const std::string consumer = mit->second.consumer;
  tracer_.publish(
      trace::MemberLeave{.group = group_id,
                         .consumer = consumer,
                         .member_id = member_id,
                         .reason = "rebalance timeout: partitions not revoked in time"});
  fence_or_downgrade(group_id, member_id, std::nullopt, ConsumerGroupHeartbeatResponse{},
                     fmt::format("member {} rebalance timeout", consumer));
}

// ---------------------------------------------------------------------------------------------
// Failover: unload and load (the caller wires them to leadership changes)

ConsumerGroupSnapshot ConsumerGroupCoordinator::snapshot(const ConsumerGroupState& g) const {
  ConsumerGroupSnapshot snap{.group = g.group_id,
                             .state = g.state(),
                             .epoch = g.group_epoch,
                             .assignment_epoch = g.assignment_epoch,
                             .members = {},
                             .offsets = {g.offsets.begin(), g.offsets.end()}};
  snap.members.reserve(g.members.size());
  for (const auto& [id, m] : g.members) {
    ConsumerMemberSnapshot ms{.member_id = id,
                              .consumer = m.consumer,
                              .member_epoch = m.member.member_epoch,
                              .state = std::string(reconciliation::to_string(m.member.state)),
                              .assigned = {}};
    std::vector<std::int32_t> epochs;
    partitions_with_epochs(m.member.assigned_partitions, ms.assigned, epochs);
    snap.members.push_back(std::move(ms));
  }
  return snap;
}

GroupSnapshots ConsumerGroupCoordinator::unload_partition(std::int32_t partition) {
  GroupSnapshots dropped;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (coordinator_partition(it->first, config_.offsets_topic_num_partitions) != partition) {
      ++it;
      continue;
    }
    dropped.push_back(snapshot(it->second));
    member_names_.erase(it->first);
    for (const auto& [id, m] : it->second.members) retire_timers(it->first, id);
    tracer_.publish(trace::GroupStateChange{.group = it->first,
                                            .state = "dead",
                                            .epoch = it->second.group_epoch,
                                            .reason = "the coordinator unloaded the group"});
    traced_.erase(it->first);
    it = groups_.erase(it);
  }
  return dropped;
}

GroupSnapshots ConsumerGroupCoordinator::load_partition(
    std::int32_t partition, const std::vector<records::GroupRecord>& records) {
  unload_partition(partition);
  for (const auto& rec : records) {
    if (coordinator_partition(records::group_of(rec), config_.offsets_topic_num_partitions) !=
        partition)
      continue;
    replay_record(groups_, rec, bugs_);
    member_names_.clear();
  }
  // Offsets committed while a group was classic (before an online upgrade) are its offsets too.
  for (const auto& rec : records) {
    if (const auto* c = std::get_if<records::OffsetCommit>(&rec)) {
      replay_offset(groups_, c->group, {c->topic, c->partition_index}, c);
    } else if (const auto* t = std::get_if<records::Tombstone>(&rec);
               t != nullptr && t->type == records::RecordType::OffsetCommit && t->topic &&
               t->partition_index) {
      replay_offset(groups_, t->group, {*t->topic, *t->partition_index}, nullptr);
    }
  }
  GroupSnapshots loaded;
  for (const auto& [gid, g] : groups_) {
    if (coordinator_partition(gid, config_.offsets_topic_num_partitions) != partition) continue;
    for (const auto& [id, m] : g.members) {
      MemberTimers& tm = timers(gid, id);
      tm.session->arm(sim::ms(m.classic ? m.classic->session_timeout_ms
                                        : config_.group_consumer_session_timeout_ms));
      if (!m.classic && m.member.state == MemberState::UnrevokedPartitions) {
        tm.rebalance_epoch = m.member.member_epoch;
        tm.rebalance->arm(sim::ms(std::max(0, m.rebalance_timeout_ms)));
      }
    }
    loaded.push_back(snapshot(g));
    Traced& tr = traced_[gid];
    tr.epoch = g.group_epoch;
    tr.assignment_epoch = g.assignment_epoch;
    tr.state = g.state();
    tracer_.publish(trace::GroupStateChange{.group = gid,
                                            .state = tr.state,
                                            .epoch = g.group_epoch,
                                            .reason = "the coordinator loaded the group"});
  }
  return loaded;
}

// ---------------------------------------------------------------------------------------------
// OffsetCommit (ConsumerGroup.validateOffsetCommit)

void ConsumerGroupCoordinator::on_offset_commit(sim::NodeId from, std::int32_t correlation_id,
                                                const OffsetCommitRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end());
  const ConsumerGroupState& g = git->second;
  ErrorCode error = ErrorCode::NONE;
  if (!(r.generation_id < 0 && g.members.empty())) {
    const auto mit = g.members.find(r.member_id);
    if (mit == g.members.end()) {
      error = ErrorCode::UNKNOWN_MEMBER_ID;
    } else {
      const ConsumerGroupMember& m = mit->second.member;
      if (r.generation_id > m.member_epoch) {
        // A classic member's generation is its member epoch.
        error = mit->second.classic ? ErrorCode::ILLEGAL_GENERATION : ErrorCode::STALE_MEMBER_EPOCH;
      } else if (r.generation_id < m.member_epoch) {
        // KIP-1251: an older epoch is fine for partitions the member held since that epoch.
        for (const auto& o : r.offsets) {
          std::int32_t assignment_epoch = -1;
          for (const auto* set : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
            const auto t = set->find(o.partition.topic);
            if (t == set->end()) continue;
            for (const auto& pe : t->second)
              if (pe.partition == o.partition.partition) assignment_epoch = pe.assignment_epoch;
          }
          if (assignment_epoch < 0 || r.generation_id < assignment_epoch) {
            error = ErrorCode::STALE_MEMBER_EPOCH;
            break;
          }
        }
      }
    }
  }
  if (error != ErrorCode::NONE) {
    reply(to, OffsetCommitResponse{error});
    return;
  }
  if (r.offsets.empty()) {
    reply(to, OffsetCommitResponse{ErrorCode::NONE});
    return;
  }
  // The offsets become visible to OffsetFetch when the records commit, as does the answer.
  log_.append_offset_commits(r.group_id, r.offsets, sim::to_ms(kernel_.now()), *this, to.node,
                             to.correlation_id);
}

void ConsumerGroupCoordinator::on_offsets_committed(const std::string& group_id,
                                                    std::span<const CommittedOffset> offsets,
                                                    sim::NodeId node, std::int32_t correlation_id) {
  if (const auto git = groups_.find(group_id); git != groups_.end()) {
    ConsumerGroupState& g = git->second;
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

// ---------------------------------------------------------------------------------------------
// OffsetFetch (OffsetMetadataManager.fetchOffsets, ConsumerGroup.validateOffsetFetch)

void ConsumerGroupCoordinator::on_offset_fetch(sim::NodeId from, std::int32_t correlation_id,
                                               const OffsetFetchRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end());
  const ConsumerGroupState& g = git->second;
  // Without a member id and epoch (admin client, or a consumer not in the group) there is nothing
  // to validate; otherwise the member must exist and send exactly its current epoch.
  if (!(r.member_id.empty() && r.member_epoch < 0)) {
    const auto mit = g.members.find(r.member_id);
    if (mit == g.members.end()) {
      reply(to, OffsetFetchResponse{ErrorCode::UNKNOWN_MEMBER_ID, {}});
      return;
    }
    if (r.member_epoch != mit->second.member.member_epoch) {
      reply(to, OffsetFetchResponse{ErrorCode::STALE_MEMBER_EPOCH, {}});
      return;
    }
  }
  OffsetFetchResponse response;
  for (const auto& tp : r.partitions) {
    PartitionOffset p{tp};
    if (const auto it = g.offsets.find(tp); it != g.offsets.end()) p.offset = it->second;
    if (const auto it = g.offset_epochs.find(tp); it != g.offset_epochs.end())
      p.leader_epoch = it->second;
    response.partitions.push_back(p);
  }
  reply(to, std::move(response));
}

}  // namespace rsim

namespace rsim {

// ---------------------------------------------------------------------------------------------
// Classic members of a consumer group (GMM.classicGroup*ToConsumerGroup)

namespace {
/// The member a classic request names: static by instance id, else dynamic by member id.
ErrorCode find_classic_member(const ConsumerGroupState& g, const std::string& member_id,
                              const std::optional<std::string>& instance_id,
                              const ConsumerGroupMemberState** out) {
  if (instance_id) {
    const auto s = g.static_members.find(*instance_id);
    if (s == g.static_members.end()) return ErrorCode::UNKNOWN_MEMBER_ID;
    if (s->second != member_id) return ErrorCode::FENCED_INSTANCE_ID;
  }
  const auto it = g.members.find(member_id);
  if (it == g.members.end()) return ErrorCode::UNKNOWN_MEMBER_ID;
  // throwIfMemberDoesNotUseClassicProtocol.
  if (!it->second.classic) return ErrorCode::UNKNOWN_MEMBER_ID;
  *out = &it->second;
  return ErrorCode::NONE;
}

TopicPartitions to_topic_partitions(const PartitionsWithEpochs& tps) {
  TopicPartitions out;
  for (const auto& [topic, ps] : tps)
    for (const auto& pe : ps) out.push_back({topic, pe.partition});
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

std::string ConsumerGroupCoordinator::new_member_id(const std::string& group_id,
                                                    const std::string& client_id,
                                                    const std::string& consumer) {
  // Drawn from a hash of the group, the client and a counter (no RNG stream).
  std::uint64_t state =
      sim::fnv1a(fmt::format("classic-member/{}/{}/{}", group_id, client_id, ++member_ids_issued_));
  return MemberIdReplay::replayed_or(
      member_ids_, consumer, random_uuid_string([&state] { return sim::splitmix64(state); }));
}

bool ConsumerGroupCoordinator::waiting_on_unreleased(const ConsumerGroupState& g,
                                                     const ConsumerGroupMemberState& m) const {
  const auto t = g.target.find(m.member.member_id);
  if (t == g.target.end()) return false;
  for (const auto& [topic, ps] : t->second) {
    const auto a = m.member.assigned_partitions.find(topic);
    for (const auto p : ps) {
      const bool assigned =
          a != m.member.assigned_partitions.end() &&
          std::any_of(a->second.begin(), a->second.end(),
                      [p](const PartitionEpoch& pe) { return pe.partition == p; });
      if (!assigned && g.partition_epoch(topic, p) != -1) return true;
    }
  }
  return false;
}

bool ConsumerGroupCoordinator::group_full(const ConsumerGroupState& g, const std::string& member_id,
                                          const std::optional<std::string>& instance_id) const {
  if (instance_id && g.static_members.count(*instance_id) > 0) return false;
  return static_cast<std::int64_t>(g.members.size()) >= config_.group_consumer_max_size &&
         (member_id.empty() || g.members.count(member_id) == 0);
}

void ConsumerGroupCoordinator::on_classic_join(sim::NodeId from, std::int32_t correlation_id,
                                               const JoinGroupRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end() && !git->second.members.empty());
  const ConsumerGroupState& g = git->second;
  const auto fail = [&](ErrorCode e, const std::string& member_id) {
    reply(to, JoinGroupResponse{.error = e, .member_id = member_id});
  };
  // throwIfClassicMemberCannotJoinConsumerGroup.
  if (config_.group_consumer_migration_policy == "disabled") {
    fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id);
    return;
  }
  const bool unknown = r.member_id.empty();
  const std::string member_id =
      unknown ? new_member_id(r.group_id, r.client_id, namer_(from)) : r.member_id;
  if (group_full(g, member_id, r.group_instance_id)) {
    fail(ErrorCode::GROUP_MAX_SIZE_REACHED, member_id);
    return;
  }
  // throwIfClassicProtocolIsNotSupported (ConsumerGroup.supportsClassicProtocols): a protocol
  // every other classic member supports.
  bool supported = r.protocol_type == "consumer" && !r.protocols.empty();
  if (supported) {
    std::map<std::string, int> counts;
    int classic_members = 0;
    for (const auto& [id, m] : g.members) {
      if (!m.classic || id == member_id) continue;
      ++classic_members;
      for (const auto& p : m.classic->supported_protocols) ++counts[p.name];
    }
    supported = classic_members == 0 || std::any_of(r.protocols.begin(), r.protocols.end(),
                                                    [&](const JoinGroupProtocol& p) {
                                                      return counts[p.name] == classic_members;
                                                    });
  }
  if (!supported) {
    fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, member_id);
    return;
  }
  if (unknown && !r.group_instance_id) {  // JoinGroupRequest.requiresKnownMemberId
    fail(ErrorCode::MEMBER_ID_REQUIRED, member_id);
    return;
  }
  // The embedded ConsumerProtocolSubscription (every protocol carries the same one).
  const Subscription& sub = r.protocols.front().metadata;
  ConsumerGroupHeartbeatRequest hb;
  hb.group_id = r.group_id;
  hb.member_id = member_id;
  const auto mit = g.members.find(member_id);
  hb.member_epoch = mit == g.members.end() ? 0 : mit->second.member.member_epoch;
  hb.instance_id = r.group_instance_id;
  hb.rack_id = sub.rack;
  hb.rebalance_timeout_ms = r.rebalance_timeout_ms;
  hb.subscribed_topic_names = sub.topics;
  std::vector<ConsumerGroupHeartbeatTopicPartitions> owned;
  for (const auto& tp : sub.owned_partitions) {
    if (owned.empty() || owned.back().topic_id != tp.topic) owned.push_back({tp.topic, {}});
    owned.back().partitions.push_back(tp.partition);
  }
  hb.topic_partitions = std::move(owned);
  hb.client_id = r.client_id;
  regular_heartbeat(to, hb, &r);
}

void ConsumerGroupCoordinator::on_classic_sync(sim::NodeId from, std::int32_t correlation_id,
                                               const SyncGroupRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end());
  const ConsumerGroupState& g = git->second;
  const ConsumerGroupMemberState* m = nullptr;
  ErrorCode error = find_classic_member(g, r.member_id, r.group_instance_id, &m);
  if (error == ErrorCode::NONE && r.generation_id != m->member.member_epoch)
    error = ErrorCode::ILLEGAL_GENERATION;
  if (error == ErrorCode::NONE &&
      (r.protocol_type != "consumer" ||
       (!r.protocol_name.empty() &&
        r.protocol_name != m->classic->supported_protocols.front().name)))
    error = ErrorCode::INCONSISTENT_GROUP_PROTOCOL;
  // throwIfRebalanceInProgress: a newer target the member must rejoin for, unless it is
  // revoking (its next rejoin comes by itself).
  if (error == ErrorCode::NONE && g.assignment_epoch > m->member.member_epoch &&
      m->member.state != MemberState::UnrevokedPartitions) {
    MemberTimers& tm = timers(r.group_id, r.member_id);
    if (!tm.join->armed()) tm.join->arm(sim::ms(std::max(0, m->rebalance_timeout_ms)));
    error = ErrorCode::REBALANCE_IN_PROGRESS;
  }
  if (error != ErrorCode::NONE) {
    reply(to, SyncGroupResponse{.error = error});
    return;
  }
  MemberTimers& tm = timers(r.group_id, r.member_id);
  tm.sync->cancel();
  tm.session->arm(sim::ms(m->classic->session_timeout_ms));
  SyncGroupResponse resp{.error = ErrorCode::NONE,
                         .protocol_name = r.protocol_name,
                         .assignment = to_topic_partitions(m->member.assigned_partitions)};
  log_.after_pending_writes(
      [this, to, resp = std::move(resp)]() mutable { reply(to, std::move(resp)); });
}

void ConsumerGroupCoordinator::on_classic_heartbeat(sim::NodeId from, std::int32_t correlation_id,
                                                    const HeartbeatRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end());
  const ConsumerGroupState& g = git->second;
  const ConsumerGroupMemberState* m = nullptr;
  ErrorCode error = find_classic_member(g, r.member_id, r.group_instance_id, &m);
  if (error == ErrorCode::NONE && r.generation_id != m->member.member_epoch)
    error = ErrorCode::ILLEGAL_GENERATION;
  if (error == ErrorCode::NONE) {
    MemberTimers& tm = timers(r.group_id, r.member_id);
    tm.session->arm(sim::ms(m->classic->session_timeout_ms));
    // Rejoin when the target moved on, to revoke, or to collect partitions now free.
    if (m->member.member_epoch < g.assignment_epoch ||
        m->member.state == MemberState::UnrevokedPartitions ||
        (m->member.state == MemberState::UnreleasedPartitions && !waiting_on_unreleased(g, *m))) {
      error = ErrorCode::REBALANCE_IN_PROGRESS;
      if (!tm.join->armed()) tm.join->arm(sim::ms(std::max(0, m->rebalance_timeout_ms)));
    }
  }
  log_.after_pending_writes([this, to, error] { reply(to, HeartbeatResponse{error}); });
}

void ConsumerGroupCoordinator::on_classic_leave(sim::NodeId from, std::int32_t correlation_id,
                                                const LeaveGroupRequest& r) {
  const Reply to{from, correlation_id};
  const auto git = groups_.find(r.group_id);
  SIM_ASSERT(git != groups_.end());
  LeaveGroupResponse resp;
  std::vector<std::string> leaving;
  for (const auto& who : r.members) {
    const ConsumerGroupState& g = git->second;
    ErrorCode e = ErrorCode::NONE;
    std::string id = who.member_id;
    if (who.group_instance_id) {
      const auto s = g.static_members.find(*who.group_instance_id);
      if (s == g.static_members.end()) {
        e = ErrorCode::UNKNOWN_MEMBER_ID;
      } else if (!who.member_id.empty() && s->second != who.member_id) {
        e = ErrorCode::FENCED_INSTANCE_ID;
      } else {
        id = s->second;
      }
    } else if (g.members.count(who.member_id) == 0) {
      e = ErrorCode::UNKNOWN_MEMBER_ID;
    }
    resp.member_errors.push_back(e);
    if (e == ErrorCode::NONE) leaving.push_back(id);
  }
  if (leaving.empty()) {
    reply(to, std::move(resp));
    return;
  }
  // One member per request from the simulated clients; more are fenced one after the other.
  for (std::size_t i = 0; i < leaving.size(); ++i) {
    const auto it = groups_.find(r.group_id);
    if (it == groups_.end() || it->second.members.count(leaving[i]) == 0) continue;  // downgraded
    const std::string consumer = it->second.members.at(leaving[i]).consumer;
    const bool last = i + 1 == leaving.size();
    fence_or_downgrade(r.group_id, leaving[i], last ? std::optional<Reply>(to) : std::nullopt,
                       last ? Message(resp) : Message(LeaveGroupResponse{}),
                       fmt::format("member {} left the group", consumer));
  }
}

void ConsumerGroupCoordinator::on_classic_timer(const std::string& group_id,
                                                const std::string& member_id, const char* why) {
  const auto git = groups_.find(group_id);
  if (git == groups_.end()) return;
  const auto mit = git->second.members.find(member_id);
  if (mit == git->second.members.end()) return;
  const std::string consumer = mit->second.consumer;
  tracer_.publish(trace::MemberLeave{
      .group = group_id, .consumer = consumer, .member_id = member_id, .reason = why});
  fence_or_downgrade(group_id, member_id, std::nullopt, ConsumerGroupHeartbeatResponse{},
                     fmt::format("member {}: {}", consumer, why));
}

// ---------------------------------------------------------------------------------------------
// Online migration

void ConsumerGroupCoordinator::fence_or_downgrade(const std::string& group_id,
                                                  const std::string& member_id,
                                                  const std::optional<Reply>& to, Message response,
                                                  const std::string& reason) {
  if (downgrade_allowed(groups_.at(group_id), member_id)) {
    downgrade(group_id, member_id, to, std::move(response), reason);
    return;
  }
  Write w{group_id, {}};
  fence_member(w, member_id);
  commit(w, to, std::move(response), reason);
}

bool ConsumerGroupCoordinator::downgrade_allowed(const ConsumerGroupState& g,
                                                 const std::string& leaving) const {
  // GMM.validateOnlineDowngradeWithFencedMembers.
  if (!downgrader_) return false;
  std::size_t remaining = 0;
  for (const auto& [id, m] : g.members) {
    if (id == leaving) continue;
    if (!m.classic) return false;
    ++remaining;
  }
  if (remaining == 0) return false;
  if (!config_.downgrade_enabled()) {
    const std::string refused =
        fmt::format("online downgrade is disabled (group.consumer.migration.policy={})",
                    config_.group_consumer_migration_policy);
    tracer_.publish(trace::GroupMigration{
        .group = g.group_id, .from = "consumer", .to = "classic", .refused = refused});
    return false;
  }
  return remaining <= static_cast<std::size_t>(config_.group_max_size);
}

void ConsumerGroupCoordinator::downgrade(const std::string& group_id, const std::string& leaving,
                                         const std::optional<Reply>& to, Message response,
                                         const std::string& reason) {
  const ConsumerGroupState g = groups_.at(group_id);  // a copy: the tombstones erase it
  ClassicGroupImage image;
  image.group_id = group_id;
  image.generation_id = g.group_epoch;
  image.protocol_type = "consumer";
  for (const auto& [id, m] : g.members) {
    if (id == leaving) continue;
    ClassicGroupImage::Member im{id,
                                 m.instance_id,
                                 m.client_id,
                                 m.consumer,
                                 m.rebalance_timeout_ms,
                                 m.classic->session_timeout_ms,
                                 m.classic->supported_protocols,
                                 {}};
    // The classic assignment is the consumer group's target (ClassicGroup.fromConsumerGroup).
    if (const auto t = g.target.find(id); t != g.target.end())
      for (const auto& [topic, ps] : t->second)
        for (const auto p : ps) im.assignment.push_back({topic, p});
    std::sort(im.assignment.begin(), im.assignment.end());
    image.members.push_back(std::move(im));
  }
  image.offsets = g.offsets;
  image.offset_epochs = g.offset_epochs;
  // ConsumerGroup.createGroupTombstoneRecords, in its order.
  Write w{group_id, {}};
  using records::RecordType;
  const auto tombstone = [&](RecordType type, const std::string* member_id) {
    records::Tombstone rec{.type = type, .group = group_id};
    if (member_id != nullptr) {
      rec.member_id = *member_id;
      rec.consumer = g.members.at(*member_id).consumer;
    }
    emit(w, std::move(rec));
  };
  for (const auto& [id, m] : g.members)
    tombstone(RecordType::ConsumerGroupCurrentMemberAssignment, &id);
  for (const auto& [id, m] : g.members)
    tombstone(RecordType::ConsumerGroupTargetAssignmentMember, &id);
  tombstone(RecordType::ConsumerGroupTargetAssignmentMetadata, nullptr);
  for (const auto& [id, m] : g.members) tombstone(RecordType::ConsumerGroupMemberMetadata, &id);
  tombstone(RecordType::ConsumerGroupMetadata, nullptr);
  for (const auto& [id, m] : g.members) retire_timers(group_id, id);
  tracer_.publish(trace::GroupMigration{.group = group_id,
                                        .from = "consumer",
                                        .to = "classic",
                                        .generation = image.generation_id,
                                        .reason = reason});
  tracer_.publish(trace::GroupStateChange{.group = group_id,
                                          .state = "dead",
                                          .epoch = g.group_epoch,
                                          .reason = "converted to a classic group"});
  traced_.erase(group_id);
  commit(w, to, std::move(response), reason);
  downgrader_(image, fmt::format("Downgrade group {} from consumer to classic for member leaving.",
                                 group_id));
}

namespace {

std::vector<ConsumerGroupMemberState> in_conversion_order(
    std::vector<ConsumerGroupMemberState> members) {
  // ConsumerGroup.fromClassicGroup puts the members into the consumer group's TimelineHashMap in
  // the order of the classic group's HashMap (ClassicGroup.allMembers(), filled member by
  // member), and createConsumerGroupRecords walks that TimelineHashMap: the member records come
  // in its order (docs/fidelity.md, finding 27).
  namespace sj = assignors::server_java;
  std::vector<std::int32_t> hashes;
  for (const auto& m : members) hashes.push_back(sj::string_hash(m.member.member_id));
  sj::TimelineTable table;
  std::map<std::string, std::size_t> at;
  for (const auto i : sj::iteration_order(hashes, sj::growth_capacity(members.size()))) {
    table.put(members[i].member.member_id);
    at.emplace(members[i].member.member_id, i);
  }
  std::vector<ConsumerGroupMemberState> out;
  out.reserve(members.size());
  for (const auto& id : table.order(table.capacity(), table.puts()))
    out.push_back(std::move(members[at.at(id)]));
  return out;
}

}  // namespace

void ConsumerGroupCoordinator::adopt_classic(const ClassicGroupImage& image,
                                             const std::string& reason) {
  const std::string& gid = image.group_id;
  SIM_ASSERT(groups_.count(gid) == 0);
  const std::int32_t epoch = image.generation_id;
  std::vector<ConsumerGroupMemberState> members;
  for (const auto& im : image.members) {
    ConsumerGroupMemberState m;
    m.member.member_id = im.member_id;
    m.member.member_epoch = epoch;
    m.member.previous_member_epoch = epoch;
    m.member.state = MemberState::Stable;
    m.consumer = im.consumer;
    m.instance_id = im.group_instance_id;
    m.client_id = im.client_id;
    m.rebalance_timeout_ms = im.rebalance_timeout_ms;
    const JoinGroupProtocol* chosen = im.protocols.empty() ? nullptr : &im.protocols.front();
    for (const auto& p : im.protocols)
      if (image.protocol_name && p.name == *image.protocol_name) chosen = &p;
    if (chosen != nullptr) {
      m.member.subscribed_topic_names = chosen->metadata.topics;
      m.rack_id = chosen->metadata.rack;
    }
    for (const auto& tp : im.assignment)
      m.member.assigned_partitions[tp.topic].push_back({tp.partition, epoch});
    for (auto& [t, ps] : m.member.assigned_partitions) std::sort(ps.begin(), ps.end());
    m.classic = ClassicMemberMetadata{im.session_timeout_ms, im.protocols};
    members.push_back(std::move(m));
  }
  members = in_conversion_order(std::move(members));
  tracer_.publish(trace::GroupMigration{
      .group = gid, .from = "classic", .to = "consumer", .generation = epoch, .reason = reason});
  // ConsumerGroup.createConsumerGroupRecords, in its order.
  Write w{gid, {}};
  for (const auto& m : members) emit(w, member_metadata_record(gid, m));
  emit(w, records::ConsumerGroupMetadata{
              .group = gid, .epoch = epoch, .metadata_hash = metadata_hash(groups_.at(gid))});
  for (const auto& m : members) {
    TopicPartitions names;
    for (const auto& [topic, ps] : m.member.assigned_partitions)
      for (const auto& pe : ps) names.push_back({topic, pe.partition});
    emit(w, records::ConsumerGroupTargetAssignmentMember{.group = gid,
                                                         .member_id = m.member.member_id,
                                                         .consumer = m.consumer,
                                                         .partitions = std::move(names)});
  }
  emit(w, records::ConsumerGroupTargetAssignmentMetadata{
              .group = gid, .assignment_epoch = epoch, .assignment_timestamp = 0});
  for (const auto& m : members) emit_current_assignment(w, gid, m);
  ConsumerGroupState& g = groups_.at(gid);
  g.offsets = image.offsets;
  g.offset_epochs = image.offset_epochs;
  for (const auto& m : members)
    timers(gid, m.member.member_id).session->arm(sim::ms(m.classic->session_timeout_ms));
  commit(w, std::nullopt, ConsumerGroupHeartbeatResponse{},
         fmt::format("converted from a classic group at generation {}", epoch));
}

ClassicGroupImage ConsumerGroupCoordinator::release_empty_group(const std::string& group_id) {
  const ConsumerGroupState g = groups_.at(group_id);
  SIM_ASSERT(g.members.empty());
  ClassicGroupImage image;
  image.group_id = group_id;
  image.offsets = g.offsets;
  image.offset_epochs = g.offset_epochs;
  Write w{group_id, {}};
  emit(w, records::Tombstone{.type = records::RecordType::ConsumerGroupTargetAssignmentMetadata,
                             .group = group_id});
  emit(w,
       records::Tombstone{.type = records::RecordType::ConsumerGroupMetadata, .group = group_id});
  tracer_.publish(
      trace::GroupStateChange{.group = group_id,
                              .state = "dead",
                              .epoch = g.group_epoch,
                              .reason = "the empty consumer group is replaced by a classic group"});
  traced_.erase(group_id);
  commit(w, std::nullopt, ConsumerGroupHeartbeatResponse{}, "");
  return image;
}

void ConsumerGroupCoordinator::adopt_offsets(const std::string& group_id,
                                             std::map<TopicPartition, std::int64_t> offsets,
                                             std::map<TopicPartition, std::int32_t> epochs) {
  if (offsets.empty()) return;
  member_names_.erase(group_id);
  ConsumerGroupState& g = groups_[group_id];
  g.group_id = group_id;
  g.offsets = std::move(offsets);
  g.offset_epochs = std::move(epochs);
}

}  // namespace rsim
