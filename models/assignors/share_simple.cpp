// SimpleAssignor (Kafka's share-group assignor). Both builders follow the same four steps:
// drop what a member no longer subscribes to, trim members holding more than their desired
// count, trim partitions shared by more members than desired, then hand out what is missing
// to the members still short of their count. Which partition moves depends on Java's HashMap
// and HashSet iteration order, which JavaTable below reproduces (bucket order, then list order
// within a bucket: computeIfAbsent links a new key at the head, put/add at the tail; tree bins
// of a crowded bucket in a table of 64 or more are not modelled).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/assignors/server_group_view.hpp"
#include "models/assignors/server_java_order.hpp"
#include "models/assignors/share_assignor.hpp"

namespace rsim::assignors {
namespace {

using server_detail::GroupView;

/// Java's HashMap.tableSizeFor: the power of two at or above `n` (at least 1).
std::size_t table_size_for(std::size_t n) {
  std::size_t capacity = 1;
  while (capacity < n) capacity <<= 1;
  return capacity;
}

/// AssignorHelpers.newHashMap / newHashSet(n): new HashMap<>((int) ((n + 1) / 0.75f + 1)).
std::size_t presized(std::size_t n) {
  return table_size_for(static_cast<std::size_t>((static_cast<float>(n) + 1.0F) / 0.75F + 1.0F));
}

constexpr std::size_t kDefaultCapacity = 16;

/// The keys of a Java HashMap/HashSet with their hashes, iterated as Java iterates them: by
/// bucket, and within a bucket in list order. Two ways in, as in java.util.HashMap:
///  - put / HashSet.add (putVal) appends the new entry to its bucket's list, then doubles the
///    table once the size passes the threshold (3/4 of the capacity);
///  - computeIfAbsent first doubles the table if the size is already past the threshold, then
///    puts the new entry at the head of its bucket's list.
/// A bucket that reaches 8 entries (putVal: 9) is to be turned into a tree bin; a table under
/// 64 buckets is doubled instead, as HashMap.treeifyBin does. Real tree bins (a crowded bucket
/// in a table of 64 or more) are not modelled; well-spread hashes do not reach them. A resize
/// keeps the relative order of the entries that land in one bucket, so one order key per entry
/// (heads negative, tails positive, both growing in magnitude) gives every list's order.
template <class Key, class Value>
class JavaTable {
 public:
  explicit JavaTable(std::size_t capacity = kDefaultCapacity)
      : capacity_(table_size_for(capacity)), bucket_sizes_(capacity_, 0) {}

  bool contains(const Key& key) const { return slots_.count(key) > 0; }
  std::size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }

  /// computeIfAbsent: the value of `key`, inserted at the head of its bucket if new.
  Value& get_or_insert(const Key& key, std::int32_t hash, Value fresh = Value{}) {
    if (slots_.size() > threshold()) grow();
    auto it = slots_.find(key);
    if (it == slots_.end()) {
      const std::size_t bucket = server_java::bucket_of(hash, capacity_);
      const std::uint32_t already = bucket_sizes_[bucket]++;
      it = slots_.emplace(key, Slot{std::move(fresh), hash, -(next_order_++)}).first;
      if (already >= 7) treeify_bin();
    }
    return it->second.value;
  }
  /// put of a new key / HashSet.add: appended at the tail of its bucket.
  bool insert(const Key& key, std::int32_t hash) {
    if (contains(key)) return false;
    const std::size_t bucket = server_java::bucket_of(hash, capacity_);
    const std::uint32_t already = bucket_sizes_[bucket]++;
    slots_.emplace(key, Slot{Value{}, hash, next_order_++});
    if (already >= 8) treeify_bin();
    if (slots_.size() > threshold()) grow();
    return true;
  }
  bool erase(const Key& key) {
    const auto it = slots_.find(key);
    if (it == slots_.end()) return false;
    --bucket_sizes_[server_java::bucket_of(it->second.hash, capacity_)];
    slots_.erase(it);
    return true;
  }
  Value* find(const Key& key) {
    const auto it = slots_.find(key);
    return it == slots_.end() ? nullptr : &it->second.value;
  }

  /// The keys in Java's iteration order.
  std::vector<Key> keys() const {
    std::vector<std::pair<std::pair<std::size_t, std::int64_t>, Key>> order;
    order.reserve(slots_.size());
    for (const auto& [key, slot] : slots_) {
      order.push_back({{server_java::bucket_of(slot.hash, capacity_), slot.order}, key});
    }
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Key> out;
    out.reserve(order.size());
    for (auto& entry : order) out.push_back(std::move(entry.second));
    return out;
  }

 private:
  struct Slot {
    Value value;
    std::int32_t hash = 0;
    std::int64_t order = 0;  // position in its bucket's list (see the class comment)
  };
  /// HashMap's threshold: (int) (capacity * 0.75f).
  std::size_t threshold() const {
    return static_cast<std::size_t>(static_cast<float>(capacity_) * 0.75F);
  }
  void grow() {
    capacity_ <<= 1;
    bucket_sizes_.assign(capacity_, 0);
    for (const auto& [key, slot] : slots_) {
      ++bucket_sizes_[server_java::bucket_of(slot.hash, capacity_)];
    }
  }
  /// HashMap.treeifyBin: a table under MIN_TREEIFY_CAPACITY (64) is resized instead.
  void treeify_bin() {
    if (capacity_ < 64) grow();
  }
  std::map<Key, Slot> slots_;
  std::size_t capacity_;
  std::vector<std::uint32_t> bucket_sizes_;
  std::int64_t next_order_ = 1;
};

struct Nothing {};
using IntSet = JavaTable<int, Nothing>;
/// (topic number, partition): Kafka's TopicIdPartition record.
using TopicPartitionKey = std::pair<int, std::int32_t>;
using PartitionSet = JavaTable<TopicPartitionKey, Nothing>;

/// Java's Integer.hashCode.
std::int32_t int_hash(int value) {
  return value;
}

/// A member's assignment as the builders edit it: topic number -> partitions.
using WorkingAssignment = std::map<int, std::set<std::int32_t>>;

/// The desired assignment count of each of `count` members sharing `partitions` partitions
/// `sharing` times: ceil(precise * (i + 1)) - ceil(precise * i), earlier members first.
std::vector<int> desired_counts(int sharing, std::size_t partitions, std::size_t count) {
  std::vector<int> desired(count, 0);
  if (count == 0) return desired;
  const double precise =
      static_cast<double>(sharing * static_cast<int>(partitions)) / static_cast<double>(count);
  for (std::size_t i = 0; i < count; ++i) {
    desired[i] = static_cast<int>(std::ceil(precise * static_cast<double>(i + 1))) -
                 static_cast<int>(std::ceil(precise * static_cast<double>(i)));
  }
  return desired;
}

int sharing_for(std::size_t members, std::size_t partitions) {
  if (partitions == 0) return 0;
  return static_cast<int>((members + partitions - 1) / partitions);
}

/// What both builders share: the members' previous targets as topic numbers, the copies made
/// when a member's assignment changes, and the result.
class Builder {
 public:
  /// `keep_foreign`: whether a previous target's topics unknown to the metadata survive (the
  /// heterogeneous builder never visits them; the homogeneous one drops them as unsubscribed).
  Builder(GroupView& group, const AssignablePartitions& assignable, bool keep_foreign)
      : group_(group),
        assignable_(assignable),
        keep_foreign_(keep_foreign),
        old_(group.member_count()),
        changed_(group.member_count(), false),
        updated_(group.member_count()) {
    for (std::size_t m = 0; m < group.member_count(); ++m) {
      for (const server_detail::TargetTopic& target : group.target_in_java_order(m)) {
        if (target.topic < 0) {
          foreign_[m].push_back(*target.id);
          continue;
        }
        old_[m].push_back({target.topic, group.partitions_in_java_order(m, *target.partitions)});
      }
    }
  }

  std::int32_t partition_hash(int topic, std::int32_t partition) const {
    // Records hash as 31 * h(topicId) + h(partitionId).
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(group_.topic(topic).java_hash) *
                                         31U +
                                     static_cast<std::uint32_t>(partition));
  }

  bool assignable(int topic, std::int32_t partition) const {
    if (!assignable_) return true;
    const auto it = assignable_->find(group_.input().topics[static_cast<std::size_t>(topic)].id);
    return it != assignable_->end() &&
           std::find(it->second.begin(), it->second.end(), partition) != it->second.end();
  }
  std::vector<std::int32_t> target_partitions(int topic) const {
    std::vector<std::int32_t> out;
    for (std::int32_t p = 0; p < group_.topic(topic).partitions; ++p) {
      if (assignable(topic, p)) out.push_back(p);
    }
    return out;
  }

  /// The member's previous target, in the order Kafka walks it.
  const std::vector<std::pair<int, std::vector<std::int32_t>>>& old(std::size_t m) const {
    return old_[m];
  }

  /// The member's assignment for editing (Kafka's deepCopyAssignment on first change).
  WorkingAssignment& edit(std::size_t m) {
    if (!changed_[m]) {
      changed_[m] = true;
      for (const auto& [topic, partitions] : old_[m]) {
        updated_[m][topic].insert(partitions.begin(), partitions.end());
      }
    }
    return updated_[m];
  }
  bool changed(std::size_t m) const { return changed_[m]; }

  ServerAssignment result() {
    ServerAssignment out;
    for (std::size_t m = 0; m < group_.member_count(); ++m) {
      std::vector<std::pair<int, std::vector<std::int32_t>>> parts;
      if (changed_[m]) {
        for (const auto& [topic, partitions] : updated_[m]) {
          parts.push_back({topic, std::vector<std::int32_t>(partitions.begin(), partitions.end())});
        }
      } else {
        parts = old_[m];
      }
      MemberAssignment assignment = group_.make_assignment(parts);
      if (keep_foreign_) {
        const auto it = foreign_.find(m);
        if (it != foreign_.end()) {
          for (const std::string& id : it->second) {
            const auto& partitions = group_.input().members[m].target.at(id);
            if (!partitions.empty()) assignment[id] = partitions;
          }
        }
      }
      out.emplace(group_.input().members[m].member_id, std::move(assignment));
    }
    return out;
  }

 private:
  GroupView& group_;
  const AssignablePartitions& assignable_;
  bool keep_foreign_;
  std::vector<std::vector<std::pair<int, std::vector<std::int32_t>>>> old_;
  std::map<std::size_t, std::vector<std::string>> foreign_;
  std::vector<bool> changed_;
  std::vector<WorkingAssignment> updated_;
};

/// Cycles over a set of member numbers in ascending order (a presized HashSet<Integer> of member
/// indices iterates them ascending), with Java Iterator's next / remove / hasNext.
class CyclingMembers {
 public:
  explicit CyclingMembers(std::vector<int> members) : members_(std::move(members)) {
    std::sort(members_.begin(), members_.end());
  }
  bool empty() const { return members_.empty(); }
  bool has_next() const { return next_ < members_.size(); }
  /// Java's Iterator.next(): past the end it throws (NoSuchElementException), never reads on.
  int next() {
    if (next_ >= members_.size()) {
      throw ShareAssignorCrash(
          "NoSuchElementException: SimpleAssignor restarted its iterator over unfilled members "
          "after "
          "the last one was filled (Kafka 4.4.0 throws here too)");
    }
    return members_[next_++];
  }
  void remove_last() { members_.erase(members_.begin() + static_cast<std::ptrdiff_t>(--next_)); }
  void restart() { next_ = 0; }

 private:
  std::vector<int> members_;
  std::size_t next_ = 0;
};

/// Step 5 of both builders: one pass over the partitions (in the table's order); a partition
/// held by fewer than `sharing` members goes to the next members of the cycle that do not hold
/// it. `give(member, key)` records the assignment and returns whether the member is now full.
/// Like Kafka, the pass does not add the new holder to the partition's set.
template <class Key, class Give>
void hand_out(JavaTable<Key, IntSet>& by_partition, int sharing, CyclingMembers& cycle, Give give) {
  bool assigned_this_round = false;
  for (const Key& key : by_partition.keys()) {
    IntSet& holders = *by_partition.find(key);
    if (holders.size() < static_cast<std::size_t>(sharing)) {
      std::size_t to_make = static_cast<std::size_t>(sharing) - holders.size();
      while (to_make > 0) {
        if (!cycle.has_next()) {
          if (!assigned_this_round) break;
          cycle.restart();
          assigned_this_round = false;
        }
        const int mi = cycle.next();
        if (holders.contains(mi)) continue;
        --to_make;
        assigned_this_round = true;
        if (give(mi, key)) cycle.remove_last();
      }
    }
    if (cycle.empty()) break;
  }
}

// --- homogeneous ------------------------------------------------------------------------------

ServerAssignment homogeneous(GroupView& group, const AssignablePartitions& assignable) {
  // The first member's TopicIds view, iterated in the order of its HashSet of names: the order
  // of the target partitions, and so of their insertion into the partition table.
  const std::vector<int> subscribed = group.topic_ids_view_order(0);
  if (subscribed.empty()) return {};
  Builder b(group, assignable, false);
  const std::size_t members = group.member_count();

  std::vector<TopicPartitionKey> targets;
  for (const int t : subscribed) {
    for (const std::int32_t p : b.target_partitions(t)) targets.push_back({t, p});
  }
  const int sharing = sharing_for(members, targets.size());
  const std::vector<int> desired = desired_counts(sharing, targets.size(), members);
  const auto subscribes = [&](int topic) {
    return std::find(subscribed.begin(), subscribed.end(), topic) != subscribed.end();
  };

  JavaTable<TopicPartitionKey, IntSet> by_partition(presized(targets.size()));
  std::vector<PartitionSet> by_member(members);
  std::vector<int> unfilled;
  std::vector<int> overfilled;

  // 1. Keep each member's previous partitions of subscribed topics.
  for (std::size_t m = 0; m < members; ++m) {
    const int mi = static_cast<int>(m);
    int held = 0;
    for (const auto& [topic, partitions] : b.old(m)) {
      if (!subscribes(topic)) {
        b.edit(m).erase(topic);
        continue;
      }
      for (const std::int32_t p : partitions) {
        ++held;
        by_partition.get_or_insert({topic, p}, b.partition_hash(topic, p)).insert(mi, int_hash(mi));
        by_member[m].insert({topic, p}, b.partition_hash(topic, p));
        if (held >= desired[m]) b.edit(m);
      }
    }
    if (held < desired[m]) unfilled.push_back(mi);
    if (held > desired[m]) overfilled.push_back(mi);
  }

  // 2. Trim members over their desired count, in the order their HashSet iterates.
  for (const int mi : overfilled) {
    const auto m = static_cast<std::size_t>(mi);
    PartitionSet& mine = by_member[m];
    if (mine.size() <= static_cast<std::size_t>(desired[m])) continue;
    for (const TopicPartitionKey& tp : mine.keys()) {
      b.edit(m)[tp.first].erase(tp.second);
      by_partition.find(tp)->erase(mi);
      mine.erase(tp);
      if (mine.size() == static_cast<std::size_t>(desired[m])) break;
    }
  }

  // 3. Trim partitions shared by more members than desired.
  for (const TopicPartitionKey& tp : by_partition.keys()) {
    IntSet& holders = *by_partition.find(tp);
    std::size_t count = holders.size();
    if (count <= static_cast<std::size_t>(sharing)) continue;
    for (const int mi : holders.keys()) {
      const auto m = static_cast<std::size_t>(mi);
      WorkingAssignment& mine = b.edit(m);
      const auto topic = mine.find(tp.first);
      if (topic != mine.end() && topic->second.erase(tp.second) > 0) {
        --count;
        holders.erase(mi);
        by_member[m].erase(tp);
        if (std::find(unfilled.begin(), unfilled.end(), mi) == unfilled.end())
          unfilled.push_back(mi);
      }
      if (count <= static_cast<std::size_t>(sharing)) break;
    }
  }

  // 4. Every assignable partition takes part, held or not.
  for (const TopicPartitionKey& tp : targets) {
    by_partition.get_or_insert(tp, b.partition_hash(tp.first, tp.second));
  }

  // 5. Hand out what is missing, cycling over the members short of their count.
  CyclingMembers cycle(std::move(unfilled));
  if (!cycle.empty()) {
    hand_out(by_partition, sharing, cycle, [&](int mi, const TopicPartitionKey& tp) {
      const auto m = static_cast<std::size_t>(mi);
      b.edit(m)[tp.first].insert(tp.second);
      by_member[m].insert(tp, b.partition_hash(tp.first, tp.second));
      return by_member[m].size() >= static_cast<std::size_t>(desired[m]);
    });
  }
  return b.result();
}

// --- heterogeneous ----------------------------------------------------------------------------

ServerAssignment heterogeneous(GroupView& group, const AssignablePartitions& assignable) {
  const std::size_t members = group.member_count();
  // The union of the subscriptions, a default HashSet<Uuid>.
  JavaTable<int, Nothing> topics;
  std::map<int, std::vector<int>> subscribers;  // topic -> member numbers, member order
  for (std::size_t m = 0; m < members; ++m) {
    for (const int t : group.subscription(m)) {
      topics.insert(t, group.topic(t).java_hash);
      subscribers[t].push_back(static_cast<int>(m));
    }
  }
  if (topics.empty()) return {};
  Builder b(group, assignable, true);

  for (const int topic : topics.keys()) {
    const std::vector<std::int32_t> targets = b.target_partitions(topic);
    const std::vector<int>& subs = subscribers.at(topic);
    const int sharing = sharing_for(subs.size(), targets.size());
    std::vector<int> desired(members, 0);
    const std::vector<int> counts = desired_counts(sharing, targets.size(), subs.size());
    for (std::size_t i = 0; i < subs.size(); ++i)
      desired[static_cast<std::size_t>(subs[i])] = counts[i];

    JavaTable<std::int32_t, IntSet> by_partition(presized(targets.size()));
    JavaTable<int, IntSet> by_member(presized(subs.size()));

    // 1. Every member's previous partitions of this topic (the topic is always subscribed by
    //    someone here; a member that dropped it is due 0 and is trimmed in step 2).
    for (std::size_t m = 0; m < members; ++m) {
      const int mi = static_cast<int>(m);
      for (const auto& [t, partitions] : b.old(m)) {
        if (t != topic) continue;
        for (const std::int32_t p : partitions) {
          by_partition.get_or_insert(p, int_hash(p)).insert(mi, int_hash(mi));
          by_member.get_or_insert(mi, int_hash(mi)).insert(p, int_hash(p));
        }
      }
    }

    // 2. Trim members over their desired count of this topic.
    for (const int mi : by_member.keys()) {
      const auto m = static_cast<std::size_t>(mi);
      IntSet& mine = *by_member.find(mi);
      if (mine.size() <= static_cast<std::size_t>(desired[m])) continue;
      for (const std::int32_t p : mine.keys()) {
        if (mine.size() <= static_cast<std::size_t>(desired[m])) break;
        by_partition.find(p)->erase(mi);
        mine.erase(p);
        b.edit(m)[topic].erase(p);
      }
    }

    // 3. Trim partitions shared by more members than desired.
    for (const std::int32_t p : by_partition.keys()) {
      IntSet& holders = *by_partition.find(p);
      std::size_t count = holders.size();
      if (count <= static_cast<std::size_t>(sharing)) continue;
      for (const int mi : holders.keys()) {
        const auto m = static_cast<std::size_t>(mi);
        WorkingAssignment& mine = b.edit(m);
        const auto it = mine.find(topic);
        if (it != mine.end() && it->second.erase(p) > 0) {
          --count;
          holders.erase(mi);
          by_member.find(mi)->erase(p);
        }
        if (count <= static_cast<std::size_t>(sharing)) break;
      }
    }

    // 4. Every assignable partition takes part.
    for (const std::int32_t p : targets)
      by_partition.get_or_insert(p, int_hash(p), IntSet(presized(subs.size())));

    // 5. Hand out what is missing.
    std::vector<int> unfilled;
    for (const int mi : subs) {
      const IntSet* mine = by_member.find(mi);
      const std::size_t held = mine == nullptr ? 0 : mine->size();
      if (held < static_cast<std::size_t>(desired[static_cast<std::size_t>(mi)]))
        unfilled.push_back(mi);
    }
    CyclingMembers cycle(std::move(unfilled));
    hand_out(by_partition, sharing, cycle, [&](int mi, std::int32_t p) {
      const auto m = static_cast<std::size_t>(mi);
      b.edit(m)[topic].insert(p);
      IntSet& mine = by_member.get_or_insert(mi, int_hash(mi));
      mine.insert(p, int_hash(p));
      return mine.size() >= static_cast<std::size_t>(desired[m]);
    });
  }
  return b.result();
}

}  // namespace

ServerAssignment assign_share_simple(const ServerAssignorInput& input,
                                     const AssignablePartitions& assignable) {
  if (input.members.empty()) return {};
  GroupView group(input);
  if (input.subscription_type == SubscriptionType::Homogeneous)
    return homogeneous(group, assignable);
  return heterogeneous(group, assignable);
}

}  // namespace rsim::assignors
