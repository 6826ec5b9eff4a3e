#include "models/reconciliation/current_assignment_builder.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <utility>

namespace rsim::reconciliation {
namespace {

constexpr std::array<std::pair<MemberState, std::string_view>, 4> kStateNames = {{
    {MemberState::Stable, "STABLE"},
    {MemberState::UnrevokedPartitions, "UNREVOKED_PARTITIONS"},
    {MemberState::UnreleasedPartitions, "UNRELEASED_PARTITIONS"},
    {MemberState::Unknown, "UNKNOWN"},
}};

bool holds(const std::vector<PartitionEpoch>& partitions, std::int32_t partition) {
  const auto it =
      std::lower_bound(partitions.begin(), partitions.end(), partition,
                       [](const PartitionEpoch& pe, std::int32_t p) { return pe.partition < p; });
  return it != partitions.end() && it->partition == partition;
}

class Reconciler {
 public:
  Reconciler(const ConsumerGroupMember& member, const ReconciliationInput& input)
      : member_(member), input_(input), subscribed_(subscribed_topic_ids()) {}

  ReconciliationResult build() {
    switch (member_.state) {
      case MemberState::Stable:
        // A newer target exists: reconcile towards it. Otherwise only a subscription change
        // can shrink the assignment.
        if (member_.member_epoch != input_.target_assignment_epoch) {
          return compute_next(member_.member_epoch);
        }
        if (input_.has_subscription_changed) return update_current(member_.member_epoch);
        return {};
      case MemberState::UnrevokedPartitions:
        // Waits until the heartbeat no longer reports any partition pending revocation.
        if (owns_any(member_.partitions_pending_revocation)) {
          if (input_.has_subscription_changed) return update_current(member_.member_epoch);
          return {};
        }
        return compute_next(member_.member_epoch);
      case MemberState::UnreleasedPartitions:
        // Picks up partitions their previous owners released since the last heartbeat.
        return compute_next(member_.member_epoch);
      case MemberState::Unknown:
        // Only reachable after a coordinator downgrade: the member must drop everything and
        // rejoin, which an empty owned set proves.
        if (!input_.owned_topic_partitions || !input_.owned_topic_partitions->empty()) {
          return {ReconciliationError::FencedMemberEpoch, std::nullopt};
        }
        return compute_next(input_.target_assignment_epoch);
    }
    return {};
  }

 private:
  /// Topic ids of the subscribed names plus the names the regex resolved to, when it did.
  std::vector<std::string_view> subscribed_topic_ids() const {
    std::vector<std::string_view> ids;
    const auto add = [&](const std::string& name) {
      const auto it = input_.topic_ids_by_name.find(name);
      if (it != input_.topic_ids_by_name.end()) ids.push_back(it->second);
    };
    for (const std::string& name : member_.subscribed_topic_names) add(name);
    if (member_.subscribed_topic_regex && !member_.subscribed_topic_regex->empty()) {
      // An unresolved regex matches nothing, to be conservative (Kafka does the same).
      const auto it = input_.resolved_regular_expressions.find(*member_.subscribed_topic_regex);
      if (it != input_.resolved_regular_expressions.end()) {
        for (const std::string& name : it->second) add(name);
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }

  bool is_subscribed(const std::string& topic_id) const {
    return std::binary_search(subscribed_.begin(), subscribed_.end(), std::string_view(topic_id));
  }

  /// True when the heartbeat still reports one of `partitions`; a heartbeat without the owned
  /// field counts as reporting everything.
  bool owns_any(const PartitionsWithEpochs& partitions) const {
    if (!input_.owned_topic_partitions) return true;
    for (const OwnedTopicPartitions& owned : *input_.owned_topic_partitions) {
      const auto it = partitions.find(owned.topic_id);
      if (it == partitions.end()) continue;
      for (const std::int32_t p : owned.partitions) {
        if (holds(it->second, p)) return true;
      }
    }
    return false;
  }

  /// The member with its epoch moved to `epoch`, the old one becoming the previous epoch.
  ConsumerGroupMember with_epoch(std::int32_t epoch) const {
    ConsumerGroupMember next = member_;
    next.previous_member_epoch = member_.member_epoch;
    next.member_epoch = epoch;
    return next;
  }

  // Fast path for a subscription change at the same epoch: partitions of topics the member
  // left go to pending revocation, nothing else is recomputed.
  ReconciliationResult update_current(std::int32_t epoch) const {
    const PartitionsWithEpochs& assigned = member_.assigned_partitions;
    PartitionsWithEpochs new_assigned;
    PartitionsWithEpochs new_pending;
    if (subscribed_.empty() && member_.partitions_pending_revocation.empty()) {
      // Everything goes. Kafka always builds a new member here (the coordinator's maps are
      // never its shared empty map), so even an empty assignment moves the previous epoch.
      new_pending = assigned;
    } else {
      bool removed = false;
      new_pending = member_.partitions_pending_revocation;
      for (const auto& [topic, partitions] : assigned) {
        if (is_subscribed(topic)) {
          new_assigned.emplace_hint(new_assigned.end(), topic, partitions);
          continue;
        }
        removed = true;
        auto& pending = new_pending[topic];
        for (const PartitionEpoch& pe : partitions) {  // the assigned epoch wins on overlap
          const auto it = std::lower_bound(pending.begin(), pending.end(), pe,
                                           [](const PartitionEpoch& a, const PartitionEpoch& b) {
                                             return a.partition < b.partition;
                                           });
          if (it != pending.end() && it->partition == pe.partition) {
            *it = pe;
          } else {
            pending.insert(it, pe);
          }
        }
      }
      if (!removed) return {};
    }
    ConsumerGroupMember next = with_epoch(epoch);
    next.assigned_partitions = std::move(new_assigned);
    if (!new_pending.empty() && owns_any(new_pending)) {
      next.state = MemberState::UnrevokedPartitions;
      next.partitions_pending_revocation = std::move(new_pending);
    }
    // Otherwise the removed partitions were already revoked: the assignment just shrinks and
    // the state stays as it was.
    return {ReconciliationError::None, std::move(next)};
  }

  ReconciliationResult compute_next(std::int32_t epoch) const {
    const PartitionsWithEpochs& assigned = member_.assigned_partitions;
    const TopicIdPartitions& target = input_.target_assignment;
    PartitionsWithEpochs keep;
    PartitionsWithEpochs revoke;
    std::map<std::string, std::vector<std::int32_t>> add;
    bool unreleased = false;

    std::set<std::string_view> topics;
    for (const auto& entry : target) topics.insert(entry.first);
    for (const auto& entry : assigned) topics.insert(entry.first);
    static const std::vector<PartitionEpoch> kNone;
    std::vector<std::int32_t> wanted;
    for (const std::string_view topic_view : topics) {
      const std::string topic(topic_view);
      wanted.clear();
      // An unsubscribed topic's target counts as empty, whatever the assignor said.
      if (const auto it = target.find(topic); it != target.end() && is_subscribed(topic)) {
        wanted = it->second;
        std::sort(wanted.begin(), wanted.end());
        wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
      }
      const auto a_it = assigned.find(topic);
      const std::vector<PartitionEpoch>& current = a_it == assigned.end() ? kNone : a_it->second;
      const auto p_it = member_.partitions_pending_revocation.find(topic);
      const std::vector<PartitionEpoch>& pending =
          p_it == member_.partitions_pending_revocation.end() ? kNone : p_it->second;

      std::vector<PartitionEpoch> kept;
      std::vector<PartitionEpoch> revoked;
      std::vector<std::int32_t> added;
      std::size_t i = 0;
      std::size_t j = 0;
      while (i < current.size() || j < wanted.size()) {
        if (j == wanted.size() || (i < current.size() && current[i].partition < wanted[j])) {
          revoked.push_back(current[i++]);
        } else if (i == current.size() || wanted[j] < current[i].partition) {
          const std::int32_t p = wanted[j++];
          // Still owned by someone else: wait for its release. A partition this member itself
          // has pending revocation does not count, only one member can own it.
          if (input_.current_partition_epoch(topic, p) != -1 && !holds(pending, p)) {
            unreleased = true;
          } else {
            added.push_back(p);
          }
        } else {
          kept.push_back(current[i++]);
          ++j;
        }
      }
      if (!kept.empty()) keep.emplace_hint(keep.end(), topic, std::move(kept));
      if (!revoked.empty()) revoke.emplace_hint(revoke.end(), topic, std::move(revoked));
      if (!added.empty()) add.emplace_hint(add.end(), topic, std::move(added));
    }

    if (!revoke.empty() && owns_any(revoke)) {
      // KIP-848: revoke before assigning. The member keeps its epoch until the client confirms.
      ConsumerGroupMember next = with_epoch(epoch);
      next.state = MemberState::UnrevokedPartitions;
      next.assigned_partitions = std::move(keep);
      next.partitions_pending_revocation = std::move(revoke);
      return {ReconciliationError::None, std::move(next)};
    }
    ConsumerGroupMember next = with_epoch(input_.target_assignment_epoch);
    // KIP-1251: a newly assigned partition carries the target epoch; kept ones keep theirs.
    for (auto& [topic, partitions] : add) {
      auto& mine = keep[topic];
      for (const std::int32_t p : partitions) {
        mine.push_back({p, input_.target_assignment_epoch});
      }
      std::sort(mine.begin(), mine.end());
    }
    next.state = unreleased ? MemberState::UnreleasedPartitions : MemberState::Stable;
    next.assigned_partitions = std::move(keep);
    next.partitions_pending_revocation.clear();
    return {ReconciliationError::None, std::move(next)};
  }

  const ConsumerGroupMember& member_;
  const ReconciliationInput& input_;
  std::vector<std::string_view> subscribed_;
};

}  // namespace

std::string_view to_string(MemberState state) {
  for (const auto& [s, name] : kStateNames) {
    if (s == state) return name;
  }
  return "UNKNOWN";
}

std::optional<MemberState> member_state_from_string(std::string_view text) {
  for (const auto& [s, name] : kStateNames) {
    if (name == text) return s;
  }
  return std::nullopt;
}

ReconciliationResult next_member_state(const ConsumerGroupMember& member,
                                       const ReconciliationInput& input) {
  return Reconciler(member, input).build();
}

}  // namespace rsim::reconciliation
