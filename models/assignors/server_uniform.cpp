// The `uniform` assignor's two builders (Kafka's UniformHomogeneousAssignmentBuilder and
// UniformHeterogeneousAssignmentBuilder), written from their behaviour on integer topic and
// member numbers. Where Kafka's result depends on Java's iteration order, GroupView supplies it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/assignors/server_group_view.hpp"

namespace rsim::assignors::server_detail {
namespace {

using TopicParts = std::vector<std::pair<int, std::vector<std::int32_t>>>;

struct Unassigned {
  int topic;
  std::int32_t partition;
};

/// assignRemainingPartitions' `computeIfAbsent(topic, new HashSet<>()).add(partition)` on a
/// member's sets (`parts`, each in insertion order, and their table sizes).
void add_to_java_set(TopicParts& parts, std::vector<std::size_t>& capacity, int topic,
                     std::int32_t partition) {
  std::size_t e = parts.size();
  if (e > 0 && parts[e - 1].first == topic) {
    e -= 1;
  } else {
    e = static_cast<std::size_t>(std::find_if(parts.begin(), parts.end(),
                                              [topic](const auto& p) { return p.first == topic; }) -
                                 parts.begin());
  }
  if (e == parts.size()) {
    parts.emplace_back(topic, std::vector<std::int32_t>{});
    capacity.push_back(16);  // a default HashSet's table
  }
  parts[e].second.push_back(partition);
  capacity[e] = server_java::grown_capacity(capacity[e], parts[e].second.size());
}

/// A member's result in its sets' iteration order (java_set_order).
MemberAssignment java_set_assignment(const GroupView& group, TopicParts& parts,
                                     const std::vector<std::size_t>& capacity) {
  MemberAssignment out;
  for (std::size_t e = 0; e < parts.size(); ++e) {
    auto& [t, partitions] = parts[e];
    if (partitions.empty()) continue;
    out.emplace(group.input().topics[static_cast<std::size_t>(t)].id,
                server_java::int_set_order(std::move(partitions), capacity[e]));
  }
  return out;
}

}  // namespace

ServerAssignment uniform_homogeneous(GroupView& group) {
  const std::size_t member_count = group.member_count();
  // Homogeneous: the first member's subscription stands for everybody's.
  const std::vector<int> topics = group.java_subscription_order(0);
  if (topics.empty()) return {};

  const std::size_t topic_total = group.input().topics.size();
  std::vector<char> subscribed(topic_total, 0);
  std::vector<std::size_t> base(topic_total, 0);
  std::size_t total_partitions = 0;
  for (const int t : topics) {
    subscribed[static_cast<std::size_t>(t)] = 1;
    base[static_cast<std::size_t>(t)] = total_partitions;
    total_partitions += static_cast<std::size_t>(group.topic(t).partitions);
  }

  // A partition in somebody's current target is "assigned" (Kafka's inverted target map); the
  // others are handed out first, topic by topic in Java's order of the subscribed ids.
  std::vector<char> taken(total_partitions, 0);
  for (const ServerMember& member : group.input().members) {
    for (const auto& [id, partitions] : member.target) {
      const int t = group.topic_by_id(id);
      if (t < 0 || subscribed[static_cast<std::size_t>(t)] == 0) continue;
      const std::int32_t count = group.topic(t).partitions;
      for (const std::int32_t p : partitions) {
        if (p >= 0 && p < count)
          taken[base[static_cast<std::size_t>(t)] + static_cast<std::size_t>(p)] = 1;
      }
    }
  }
  std::vector<Unassigned> unassigned;
  unassigned.reserve(total_partitions);
  for (const int t : topics) {
    const std::int32_t count = group.topic(t).partitions;
    const std::size_t b = base[static_cast<std::size_t>(t)];
    for (std::int32_t p = 0; p < count; ++p) {
      if (taken[b + static_cast<std::size_t>(p)] == 0) unassigned.push_back({t, p});
    }
  }

  const auto members = static_cast<std::int64_t>(member_count);
  const auto min_quota = static_cast<std::int64_t>(total_partitions) / members;
  std::int64_t remaining_extra = static_cast<std::int64_t>(total_partitions) % members;

  // java_set_order: each kept topic's partitions in the HashSet's iteration order, and the
  // set's table size (the replayed set's; a deep copy of it has the same).
  const bool java_order = group.input().java_set_order;
  const auto kept_order = [&](std::size_t i, const std::vector<std::int32_t>& partitions) {
    if (java_order) return group.partitions_in_java_order(i, partitions);
    std::vector<std::int32_t> keep = partitions;
    std::sort(keep.begin(), keep.end());
    return keep;
  };
  std::vector<TopicParts> kept(member_count);
  std::vector<std::vector<std::size_t>> capacity(java_order ? member_count : 0);
  const auto keep_topic = [&](std::size_t i, int t, std::vector<std::int32_t> keep,
                              std::size_t old_size) {
    kept[i].emplace_back(t, std::move(keep));
    if (java_order) capacity[i].push_back(server_java::copy_capacity(old_size));
  };
  std::vector<std::pair<std::size_t, std::int64_t>> unfilled;  // member, quota left
  for (std::size_t i = 0; i < member_count; ++i) {
    std::int64_t quota = min_quota;
    bool has_extra = false;
    if (remaining_extra > 0) {
      ++quota;
      has_extra = true;
    }
    const ServerMember& member = group.input().members[i];
    // Only a member over its quota trims, and only then does the walk order matter.
    std::int64_t held = 0;
    for (const auto& [id, partitions] : member.target) {
      const int t = group.topic_by_id(id);
      if (t >= 0 && subscribed[static_cast<std::size_t>(t)] != 0) {
        held += static_cast<std::int64_t>(partitions.size());
      }
    }
    if (held <= quota) {
      for (const auto& [id, partitions] : member.target) {
        const int t = group.topic_by_id(id);
        if (t < 0 || subscribed[static_cast<std::size_t>(t)] == 0) continue;
        keep_topic(i, t, kept_order(i, partitions), partitions.size());
      }
      quota -= held;
    } else {
      for (const TargetTopic& entry : group.target_in_java_order(i)) {
        if (entry.topic < 0 || subscribed[static_cast<std::size_t>(entry.topic)] == 0) continue;
        const auto size = static_cast<std::int64_t>(entry.partitions->size());
        if (size <= quota) {
          keep_topic(i, entry.topic, kept_order(i, *entry.partitions), entry.partitions->size());
          quota -= size;
          continue;
        }
        // Over quota: keep the first `quota` partitions in Kafka's walk order, release the rest
        // behind the never-assigned ones.
        std::vector<std::int32_t> keep;
        for (const std::int32_t p : group.partitions_in_java_order(i, *entry.partitions)) {
          if (quota > 0) {
            keep.push_back(p);
            --quota;
          } else {
            unassigned.push_back({entry.topic, p});
          }
        }
        // The deep copy less the released partitions: the walk order's first `quota`.
        if (!java_order) std::sort(keep.begin(), keep.end());
        keep_topic(i, entry.topic, std::move(keep), entry.partitions->size());
      }
    }
    // KAFKA-18688: a member that still has room gives its claim on an extra partition back,
    // unless it is one of the last members in order that must take one.
    if (quota > 0 && has_extra && members - static_cast<std::int64_t>(i) > remaining_extra) {
      --quota;
      has_extra = false;
    }
    if (quota > 0) unfilled.emplace_back(i, quota);
    if (has_extra) --remaining_extra;
  }

  std::size_t next = 0;
  for (const auto& [i, quota] : unfilled) {
    TopicParts& parts = kept[i];
    for (std::int64_t k = 0; k < quota && next < unassigned.size(); ++k, ++next) {
      const Unassigned& u = unassigned[next];
      if (java_order) {
        add_to_java_set(parts, capacity[i], u.topic, u.partition);
        continue;
      }
      if (parts.empty() || parts.back().first != u.topic)
        parts.emplace_back(u.topic, std::vector<std::int32_t>{});
      parts.back().second.push_back(u.partition);
    }
  }
  if (next < unassigned.size()) throw PartitionAssignorError("Partitions were left unassigned");

  ServerAssignment out;
  for (std::size_t i = 0; i < member_count; ++i) {
    out.emplace(group.input().members[i].member_id,
                java_order ? java_set_assignment(group, kept[i], capacity[i])
                           : group.make_assignment(kept[i]));
  }
  return out;
}

namespace {

/// Kafka's MemberAssignmentBalancer: two ranges over the subscribers sorted by load, the least
/// loaded growing rightwards as it receives partitions, the most loaded growing leftwards as it
/// gives them up. Reads the live load array, as Kafka's does.
class LoadBalancer {
 public:
  explicit LoadBalancer(const std::vector<std::int32_t>& loads) : loads_(loads) {}

  /// Starts over with `members`; returns the spread between the most and least loaded.
  /// `members` must be in ascending member order (as topic subscriber lists are).
  std::int32_t initialize(const std::vector<int>& members) {
    sort_by_load(members);
    const int n = static_cast<int>(sorted_.size());
    least_end_ = 0;
    least_count_ = load(sorted_.front()) - 1;
    next_least_ = 0;
    most_start_ = n;
    most_end_ = n;
    most_count_ = load(sorted_.back()) + 1;
    next_most_ = n - 1;
    return load(sorted_.back()) - load(sorted_.front());
  }

  /// The member to receive the next partition; counts it as received.
  int next_least_loaded() {
    if (next_least_ >= least_end_) {
      ++least_count_;
      while (least_end_ < static_cast<int>(sorted_.size()) &&
             load(at(least_end_)) == least_count_) {
        ++least_end_;
      }
      next_least_ = 0;
    }
    return at(next_least_++);
  }

  /// The member to give up the next partition, or -1 when nobody can.
  int next_most_loaded() {
    if (next_most_ < most_start_) {
      if (most_end_ <= most_start_ && most_start_ > 0) {
        // Exclusions emptied the range: restart from the load just below it, so that the
        // range always widens here.
        most_count_ = load(at(most_start_ - 1));
      } else {
        --most_count_;
      }
      while (most_start_ > 0 && load(at(most_start_ - 1)) == most_count_) --most_start_;
      next_most_ = most_end_ - 1;
    }
    if (next_most_ < 0) return -1;
    return at(next_most_--);
  }

  /// Drops the member last returned by next_most_loaded() from the most loaded range.
  void exclude_last_most_loaded() {
    std::swap(sorted_[static_cast<std::size_t>(next_most_ + 1)],
              sorted_[static_cast<std::size_t>(most_end_ - 1)]);
    --most_end_;
  }

  bool balanced() const { return most_count_ - least_count_ <= 1; }

 private:
  std::int32_t load(int member) const { return loads_[static_cast<std::size_t>(member)]; }

  // Orders by (load, member). Loads of one topic's subscribers span a narrow range, so a
  // stable counting sort of the ascending member list beats comparison sorting.
  void sort_by_load(const std::vector<int>& members) {
    std::int32_t lo = load(members.front());
    std::int32_t hi = lo;
    for (const int m : members) {
      lo = std::min(lo, load(m));
      hi = std::max(hi, load(m));
    }
    const auto span = static_cast<std::size_t>(hi - lo) + 1;
    if (span > 4 * members.size() + 64) {
      sorted_ = members;
      std::sort(sorted_.begin(), sorted_.end(), [this](int a, int b) {
        const std::int32_t la = load(a);
        const std::int32_t lb = load(b);
        return la != lb ? la < lb : a < b;
      });
      return;
    }
    counts_.assign(span + 1, 0);
    for (const int m : members) ++counts_[static_cast<std::size_t>(load(m) - lo) + 1];
    for (std::size_t i = 1; i <= span; ++i) counts_[i] += counts_[i - 1];
    sorted_.resize(members.size());
    for (const int m : members) {
      sorted_[counts_[static_cast<std::size_t>(load(m) - lo)]++] = m;
    }
  }
  int at(int position) const { return sorted_[static_cast<std::size_t>(position)]; }

  const std::vector<std::int32_t>& loads_;
  std::vector<int> sorted_;
  std::vector<std::size_t> counts_;
  int least_end_ = 0;
  std::int32_t least_count_ = -1;
  int next_least_ = 0;
  int most_start_ = 0;
  int most_end_ = 0;
  std::int32_t most_count_ = 1;
  int next_most_ = -1;
};

class HeterogeneousBuilder {
 public:
  explicit HeterogeneousBuilder(GroupView& group)
      : group_(group),
        member_count_(group.member_count()),
        loads_(member_count_, 0),
        subscribers_(group.input().topics.size()),
        base_(group.input().topics.size(), 0) {
    for (std::size_t m = 0; m < member_count_; ++m) {
      for (const int t : group_.subscription(m)) {
        auto& subs = subscribers_[static_cast<std::size_t>(t)];
        if (subs.empty()) topics_.push_back(t);
        subs.push_back(static_cast<int>(m));
      }
    }
    std::size_t total = 0;
    for (const int t : topics_) {
      base_[static_cast<std::size_t>(t)] = total;
      total += static_cast<std::size_t>(group_.topic(t).partitions);
    }
    owners_.assign(total, -1);
  }

  ServerAssignment build() {
    if (topics_.empty()) return {};
    keep_subscribed_targets();
    assign_unowned();
    balance();
    return result();
  }

 private:
  std::int32_t& owner(int t, std::int32_t p) {
    return owners_[base_[static_cast<std::size_t>(t)] + static_cast<std::size_t>(p)];
  }
  std::size_t subscriber_count(int t) const {
    return subscribers_[static_cast<std::size_t>(t)].size();
  }

  /// Partitions per subscriber descending, then fewer subscribers first, then topic id.
  bool topic_before(int a, int b) const {
    const double ra =
        static_cast<double>(group_.topic(a).partitions) / static_cast<double>(subscriber_count(a));
    const double rb =
        static_cast<double>(group_.topic(b).partitions) / static_cast<double>(subscriber_count(b));
    if (ra != rb) return ra > rb;
    if (subscriber_count(a) != subscriber_count(b))
      return subscriber_count(a) < subscriber_count(b);
    return group_.compare_ids(a, b) < 0;
  }
  std::vector<int> sorted_topics(std::vector<int> topics) const {
    std::sort(topics.begin(), topics.end(), [this](int a, int b) { return topic_before(a, b); });
    return topics;
  }

  void move_partition(int t, std::int32_t p, int member) {
    std::int32_t& o = owner(t, p);
    if (o != -1) --loads_[static_cast<std::size_t>(o)];
    o = member;
    ++loads_[static_cast<std::size_t>(member)];
  }

  // Every member keeps its current target on the topics it still subscribes to; nothing is
  // trimmed yet.
  void keep_subscribed_targets() {
    for (std::size_t m = 0; m < member_count_; ++m) {
      const ServerMember& member = group_.input().members[m];
      if (member.target.empty()) continue;
      const std::vector<int>& subs = group_.sorted_subscription(m);
      for (const auto& [id, partitions] : member.target) {
        const int t = group_.topic_by_id(id);
        if (t < 0 || !std::binary_search(subs.begin(), subs.end(), t)) continue;
        const std::int32_t count = group_.topic(t).partitions;
        for (const std::int32_t p : partitions) {
          if (p < 0 || p >= count) continue;  // Kafka never shrinks a topic
          owner(t, p) = static_cast<std::int32_t>(m);
          ++loads_[m];
        }
      }
    }
  }

  void assign_unowned() {
    std::vector<int> topics;
    for (const int t : topics_) {
      const std::int32_t count = group_.topic(t).partitions;
      for (std::int32_t p = 0; p < count; ++p) {
        if (owner(t, p) == -1) {
          topics.push_back(t);
          break;
        }
      }
    }
    LoadBalancer balancer(loads_);
    for (const int t : sorted_topics(std::move(topics))) {
      balancer.initialize(subscribers_[static_cast<std::size_t>(t)]);
      const std::int32_t count = group_.topic(t).partitions;
      for (std::int32_t p = 0; p < count; ++p) {
        if (owner(t, p) == -1) move_partition(t, p, balancer.next_least_loaded());
      }
    }
  }

  void balance() {
    std::vector<int> topics;
    for (const int t : topics_) {
      if (subscriber_count(t) >= 2) topics.push_back(t);
    }
    if (topics.empty()) return;
    topics = sorted_topics(std::move(topics));
    LoadBalancer balancer(loads_);
    range_start_.assign(member_count_, 0);
    range_end_.assign(member_count_, 0);
    range_stamp_.assign(member_count_, 0);
    // Up to 16 rounds over the topics; stop once a whole round went by without a move.
    constexpr int kMaxRounds = 16;
    int last_moved = -1;
    for (int round = 0; round < kMaxRounds; ++round) {
      for (int i = 0; i < static_cast<int>(topics.size()); ++i) {
        if (i == last_moved) return;
        const int moved = balance_topic(topics[static_cast<std::size_t>(i)], balancer);
        if (moved > 0 || last_moved == -1) last_moved = i;
      }
    }
  }

  int balance_topic(int t, LoadBalancer& balancer) {
    if (balancer.initialize(subscribers_[static_cast<std::size_t>(t)]) <= 1) return 0;
    const std::int32_t count = group_.topic(t).partitions;
    // The topic's partitions grouped by owner (ascending), each group ascending; every member
    // gives up its highest partition of the topic first.
    grouped_.resize(static_cast<std::size_t>(count));
    for (std::int32_t p = 0; p < count; ++p) grouped_[static_cast<std::size_t>(p)] = p;
    std::stable_sort(grouped_.begin(), grouped_.end(),
                     [&](std::int32_t a, std::int32_t b) { return owner(t, a) < owner(t, b); });
    ++stamp_;
    for (std::int32_t i = 0; i < count; ++i) {
      const std::int32_t o = owner(t, grouped_[static_cast<std::size_t>(i)]);
      if (o < 0) continue;
      const auto m = static_cast<std::size_t>(o);
      if (range_stamp_[m] != stamp_) {
        range_stamp_[m] = stamp_;
        range_start_[m] = i;
      }
      range_end_[m] = i + 1;
    }
    int moved = 0;
    while (!balancer.balanced()) {
      int giver = -1;
      while (true) {
        giver = balancer.next_most_loaded();
        if (giver == -1) break;
        const auto g = static_cast<std::size_t>(giver);
        if (range_stamp_[g] != stamp_ || range_end_[g] - range_start_[g] <= 0) {
          balancer.exclude_last_most_loaded();
          continue;
        }
        break;
      }
      if (giver == -1) break;
      const auto g = static_cast<std::size_t>(giver);
      const std::int32_t p = grouped_[static_cast<std::size_t>(range_end_[g] - 1)];
      --range_end_[g];
      const int taker = balancer.next_least_loaded();
      if (balancer.balanced()) break;
      move_partition(t, p, taker);
      ++moved;
    }
    return moved;
  }

  ServerAssignment result() {
    std::vector<TopicParts> parts(member_count_);
    for (const int t : group_.by_id(topics_)) {  // topic-id order: no sorting per member
      const std::int32_t count = group_.topic(t).partitions;
      for (std::int32_t p = 0; p < count; ++p) {
        const std::int32_t o = owner(t, p);
        if (o < 0) continue;
        TopicParts& mine = parts[static_cast<std::size_t>(o)];
        if (mine.empty() || mine.back().first != t)
          mine.emplace_back(t, std::vector<std::int32_t>{});
        mine.back().second.push_back(p);
      }
    }
    ServerAssignment out;
    for (std::size_t m = 0; m < member_count_; ++m) {
      out.emplace(group_.input().members[m].member_id, group_.make_assignment(parts[m]));
    }
    return out;
  }

  GroupView& group_;
  std::size_t member_count_;
  std::vector<std::int32_t> loads_;
  std::vector<std::vector<int>> subscribers_;  // topic -> subscribers, ascending member number
  std::vector<int> topics_;                    // subscribed topics, first-seen order
  std::vector<std::size_t> base_;
  std::vector<std::int32_t> owners_;  // flat: base_[topic] + partition -> member or -1
  std::vector<std::int32_t> grouped_;
  std::vector<std::int32_t> range_start_;
  std::vector<std::int32_t> range_end_;
  std::vector<std::uint32_t> range_stamp_;
  std::uint32_t stamp_ = 0;
};

}  // namespace

ServerAssignment uniform_heterogeneous(GroupView& group) {
  return HeterogeneousBuilder(group).build();
}

}  // namespace rsim::assignors::server_detail
