#include "models/assignors/client_range.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/assignors/client_common.hpp"
#include "models/assignors/client_java_order.hpp"

namespace rsim::assignors {

namespace {

// One topic's bookkeeping while the range assignor runs: who may take how many more, and which
// partitions are still free (kept in partition order, which is the order ranges are cut in).
struct TopicState {
  std::string topic;
  std::int32_t partition_count = 0;
  // Subscribed members in MemberInfo order: index into input.members, and rack (empty = none).
  std::vector<std::size_t> consumers;
  std::vector<std::string> consumer_racks;
  std::vector<int> assigned_count;  // parallel to `consumers`
  // Free partitions, ascending: unassigned[first_free..]. Ranges are cut from the front, so a
  // member's take is usually the next `k` free partitions and only moves `first_free`.
  std::vector<std::int32_t> unassigned;
  std::size_t first_free = 0;
  // Replica racks per partition; filled only when some subscribed member has a rack.
  std::vector<std::set<std::string>> partition_racks;
  bool has_partition_racks = false;
  int quota = 0;
  int members_with_extra = 0;
  bool needs_rack_aware = false;

  int max_assignable(std::size_t c) const {
    const int cap = quota + (members_with_extra > 0 ? 1 : 0) - assigned_count[c];
    return std::max(0, cap);
  }

  bool racks_match(std::size_t c, std::int32_t partition) const {
    if (consumer_racks[c].empty()) return true;
    if (!has_partition_racks) return false;
    return partition_racks[static_cast<std::size_t>(partition)].count(consumer_racks[c]) > 0;
  }

  void on_assigned(std::size_t c, const std::vector<std::int32_t>& partitions) {
    assigned_count[c] += static_cast<int>(partitions.size());
    // Kafka decrements once per call that leaves the member above the base quota.
    if (assigned_count[c] > quota) --members_with_extra;
    remove_free(partitions);
  }

  bool none_free() const { return first_free == unassigned.size(); }

  // `partitions` is ascending (taken in free order); drops them from the free list.
  void remove_free(const std::vector<std::int32_t>& partitions) {
    const auto free_begin = unassigned.begin() + static_cast<std::ptrdiff_t>(first_free);
    if (partitions.size() <= unassigned.size() - first_free &&
        std::equal(partitions.begin(), partitions.end(), free_begin)) {
      first_free += partitions.size();
      return;
    }
    std::vector<std::int32_t> taken(partitions);
    std::sort(taken.begin(), taken.end());
    const auto kept = std::remove_if(free_begin, unassigned.end(), [&](std::int32_t p) {
      return std::binary_search(taken.begin(), taken.end(), p);
    });
    unassigned.erase(kept, unassigned.end());
  }
};

// KIP-881: rack awareness applies only if members and replicas share a rack and, unless the
// test switch is on, some partition is missing from some rack.
bool use_rack_aware(const std::set<std::string>& member_racks,
                    const std::set<std::string>& all_partition_racks,
                    const std::vector<std::set<std::string>>& racks_per_partition,
                    bool prefer_rack_aware_logic) {
  if (member_racks.empty()) return false;
  const bool overlap = std::any_of(member_racks.begin(), member_racks.end(),
                                   [&](const auto& r) { return all_partition_racks.count(r) > 0; });
  if (!overlap) return false;
  if (prefer_rack_aware_logic) return true;
  return !std::all_of(racks_per_partition.begin(), racks_per_partition.end(),
                      [&](const auto& racks) { return racks == all_partition_racks; });
}

class RangeRun {
 public:
  explicit RangeRun(const ClientAssignorInput& input) : input_(input) {
    for (const auto& m : input.members) result_[m.member_id];
  }

  ClientAssignment run() {
    build_topic_states();
    const bool rack_aware = std::any_of(states_.begin(), states_.end(),
                                        [](const TopicState& t) { return t.needs_rack_aware; });
    if (rack_aware) assign_with_rack_matching();
    for (auto& state : states_) assign_ranges(state, false);
    if (rack_aware) {
      for (auto& [member, partitions] : result_) std::sort(partitions.begin(), partitions.end());
    }
    return std::move(result_);
  }

 private:
  void build_topic_states() {
    // The leader's topic map is a Java HashMap of the subscribed topics that have partitions;
    // its order is the order each member's list is appended to.
    std::vector<std::string> topics;
    for (const std::size_t i : detail::subscription_order(input_)) {
      for (const auto& topic : input_.members[i].topics) {
        const auto it = input_.partitions_per_topic.find(topic);
        if (it != input_.partitions_per_topic.end() && it->second > 0) topics.push_back(topic);
      }
    }
    for (const std::size_t k : java::hash_map_order(topics))
      states_.push_back(make_state(topics[k]));
  }

  TopicState make_state(const std::string& topic) const {
    TopicState s;
    s.topic = topic;
    s.partition_count = input_.partitions_per_topic.at(topic);
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < input_.members.size(); ++i) {
      const auto& subs = input_.members[i].topics;
      if (std::find(subs.begin(), subs.end(), topic) != subs.end()) members.push_back(i);
    }
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return detail::member_info_less(input_.members[a], input_.members[b]);
    });
    std::set<std::string> member_racks;
    for (const std::size_t i : members) {
      s.consumers.push_back(i);
      const std::string* rack = detail::effective_rack(input_.members[i]);
      s.consumer_racks.push_back(rack ? *rack : std::string());
      if (rack) member_racks.insert(*rack);
    }
    s.assigned_count.assign(s.consumers.size(), 0);
    for (std::int32_t p = 0; p < s.partition_count; ++p) s.unassigned.push_back(p);
    if (!s.consumers.empty()) {
      const auto n = static_cast<int>(s.consumers.size());
      s.quota = s.partition_count / n;
      s.members_with_extra = s.partition_count % n;
    }
    std::set<std::string> all_partition_racks;
    if (!member_racks.empty()) {
      s.has_partition_racks = true;
      for (std::int32_t p = 0; p < s.partition_count; ++p) {
        s.partition_racks.push_back(detail::replica_racks(input_, TopicPartition{topic, p}));
        all_partition_racks.insert(s.partition_racks.back().begin(),
                                   s.partition_racks.back().end());
      }
    }
    s.needs_rack_aware = use_rack_aware(member_racks, all_partition_racks, s.partition_racks,
                                        input_.prefer_rack_aware_logic);
    return s;
  }

  void give(TopicState& state, std::size_t c, const std::vector<std::int32_t>& partitions) {
    auto& list = result_[input_.members[state.consumers[c]].member_id];
    for (const std::int32_t p : partitions) list.push_back(TopicPartition{state.topic, p});
    state.on_assigned(c, partitions);
  }

  // Each member in order takes the first free partitions it may take, up to its quota.
  void assign_ranges(TopicState& state, bool only_matching_racks) {
    for (std::size_t c = 0; c < state.consumers.size(); ++c) {
      if (state.none_free()) break;
      const int limit = state.max_assignable(c);
      std::vector<std::int32_t> take;
      for (std::size_t i = state.first_free; i < state.unassigned.size(); ++i) {
        const std::int32_t p = state.unassigned[i];
        if (static_cast<int>(take.size()) >= limit) break;
        if (!only_matching_racks || state.racks_match(c, p)) take.push_back(p);
      }
      if (!take.empty()) give(state, c, take);
    }
  }

  // Topics with the same members (and racks) and the same partition count are co-partitioned:
  // partition p of all of them goes to one member whose rack holds all of them.
  void assign_with_rack_matching() {
    std::vector<bool> grouped(states_.size(), false);
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (grouped[i]) continue;
      std::vector<std::size_t> group;
      for (std::size_t j = i; j < states_.size(); ++j) {
        if (!grouped[j] && same_group(states_[i], states_[j])) {
          grouped[j] = true;
          group.push_back(j);
        }
      }
      if (group.size() > 1) {
        assign_co_partitioned(group);
      } else if (states_[i].needs_rack_aware) {
        assign_ranges(states_[i], true);
      }
    }
  }

  static std::size_t rack_key(const TopicState& s) {
    return s.has_partition_racks ? static_cast<std::size_t>(s.partition_count) : 0;
  }

  bool same_group(const TopicState& a, const TopicState& b) const {
    if (rack_key(a) != rack_key(b) || a.consumers.size() != b.consumers.size()) return false;
    for (std::size_t c = 0; c < a.consumers.size(); ++c) {
      if (input_.members[a.consumers[c]].member_id != input_.members[b.consumers[c]].member_id) {
        return false;
      }
      if (a.consumer_racks[c] != b.consumer_racks[c]) return false;
    }
    return true;
  }

  void assign_co_partitioned(const std::vector<std::size_t>& group) {
    const auto partition_count = static_cast<std::int32_t>(rack_key(states_[group.front()]));
    const std::size_t member_count = states_[group.front()].consumers.size();
    std::vector<std::size_t> remaining;  // consumer positions, same in every state of the group
    for (std::size_t c = 0; c < member_count; ++c) remaining.push_back(c);
    for (std::int32_t p = 0; p < partition_count; ++p) {
      const auto match = std::find_if(remaining.begin(), remaining.end(), [&](std::size_t c) {
        return std::all_of(group.begin(), group.end(), [&](std::size_t t) {
          return states_[t].racks_match(c, p) && states_[t].max_assignable(c) > 0;
        });
      });
      if (match == remaining.end()) continue;
      const std::size_t c = *match;
      for (const std::size_t t : group) give(states_[t], c, {p});
      const bool full = std::none_of(group.begin(), group.end(), [&](std::size_t t) {
        return states_[t].max_assignable(c) > 0;
      });
      if (full) {
        remaining.erase(match);
        if (remaining.empty()) break;
      }
    }
  }

  const ClientAssignorInput& input_;
  std::vector<TopicState> states_;
  ClientAssignment result_;
};

}  // namespace

ClientAssignment assign_range(const ClientAssignorInput& input) {
  return RangeRun(input).run();
}

}  // namespace rsim::assignors
