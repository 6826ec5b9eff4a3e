#include "models/assignors/client_sticky.hpp"

#include <algorithm>
#include <cstdlib>
#include <list>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/assignors/client_common.hpp"
#include "models/assignors/client_java_order.hpp"

namespace rsim::assignors {

namespace {

constexpr std::int32_t kDefaultGeneration = -1;  // Kafka's DEFAULT_GENERATION
constexpr int kNobody = -1;

// Partitions are numbered densely: topics in name order, partitions ascending within a topic,
// so "sorted by (topic, partition)" is plain integer order.
class PartitionIndex {
 public:
  explicit PartitionIndex(const std::map<std::string, std::int32_t>& counts) {
    for (const auto& [topic, count] : counts) {
      topic_ids_[topic] = static_cast<int>(topics_.size());
      topics_.push_back(topic);
      first_.push_back(size_);
      count_.push_back(count);
      for (std::int32_t p = 0; p < count; ++p)
        topic_of_.push_back(static_cast<int>(topics_.size()) - 1);
      size_ += count;
    }
  }
  int size() const { return size_; }
  int topic_count() const { return static_cast<int>(topics_.size()); }
  int topic_id(const std::string& topic) const {
    const auto it = topic_ids_.find(topic);
    return it == topic_ids_.end() ? -1 : it->second;
  }
  /// -1 when the topic is not in the metadata or the partition number is out of range.
  int id(const TopicPartition& tp) const {
    const int t = topic_id(tp.topic);
    if (t < 0 || tp.partition < 0 || tp.partition >= count_[static_cast<std::size_t>(t)]) return -1;
    return first_[static_cast<std::size_t>(t)] + tp.partition;
  }
  int topic_of(int pid) const { return topic_of_[static_cast<std::size_t>(pid)]; }
  std::int32_t partition_of(int pid) const {
    return pid - first_[static_cast<std::size_t>(topic_of(pid))];
  }
  int first(int topic) const { return first_[static_cast<std::size_t>(topic)]; }
  int count(int topic) const { return count_[static_cast<std::size_t>(topic)]; }
  const std::string& topic_name(int topic) const {
    return topics_[static_cast<std::size_t>(topic)];
  }
  TopicPartition tp(int pid) const {
    return TopicPartition{topic_name(topic_of(pid)), partition_of(pid)};
  }

 private:
  std::map<std::string, int> topic_ids_;
  std::vector<std::string> topics_;
  std::vector<int> first_;
  std::vector<std::int32_t> count_;
  std::vector<int> topic_of_;
  int size_ = 0;
};

// Everything both builders share: the decoded subscriptions, validated previous ownership,
// rack information. Members are referred to by their index in `input.members`.
struct Group {
  const ClientAssignorInput& input;
  PartitionIndex index;
  std::vector<std::size_t> order;       // the subscription map's (Java HashMap) order
  std::vector<int> id_rank;             // member -> position in member-id order
  std::vector<std::vector<int>> owned;  // member -> still-valid owned partitions, in report order
  std::vector<bool> multiply_claimed;   // partition -> claimed by two members of one generation
  int max_generation = kDefaultGeneration;
  bool all_subscriptions_equal = true;
  // Rack awareness (empty when not used).
  bool rack_aware = false;
  std::vector<std::string> member_rack;                // "" = no rack or rack logic off
  std::vector<std::set<std::string>> partition_racks;  // per partition; filled if any member rack
  std::vector<int> consumers_on_partition_racks;       // per partition; empty if no member rack

  Group(const ClientAssignorInput& in, std::map<std::string, std::int32_t> counts)
      : input(in), index(counts) {}

  std::size_t n() const { return input.members.size(); }
  const std::string& id(std::size_t m) const { return input.members[m].member_id; }

  bool racks_mismatch(std::size_t m, int pid) const {
    if (member_rack[m].empty()) return false;
    return partition_racks[static_cast<std::size_t>(pid)].count(member_rack[m]) == 0;
  }
};

std::int32_t generation_of(const ClientMember& m) {
  return m.generation.value_or(kDefaultGeneration);
}

// Kafka only looks at subscribed topics that have partitions (AbstractPartitionAssignor).
std::map<std::string, std::int32_t> subscribed_counts(const ClientAssignorInput& input) {
  std::map<std::string, std::int32_t> counts;
  for (const auto& m : input.members) {
    for (const auto& topic : m.topics) {
      const auto it = input.partitions_per_topic.find(topic);
      if (it != input.partitions_per_topic.end() && it->second > 0) counts[topic] = it->second;
    }
  }
  return counts;
}

// Decodes ownership as Kafka's allSubscriptionsEqual() does, walking members in the subscription
// map's order: a partition claimed twice in one generation is taken from both claimants; across
// generations the newer claim wins.
void resolve_ownership(Group& g) {
  g.owned.assign(g.n(), {});
  g.multiply_claimed.assign(static_cast<std::size_t>(g.index.size()), false);
  std::vector<int> claimed_by(static_cast<std::size_t>(g.index.size()), kNobody);
  std::set<std::string> first_topics;
  for (const std::size_t m : g.order) {
    const ClientMember& member = g.input.members[m];
    if (first_topics.empty()) {
      first_topics.insert(member.topics.begin(), member.topics.end());
    } else if (g.all_subscriptions_equal) {
      const bool same = member.topics.size() == first_topics.size() &&
                        std::all_of(member.topics.begin(), member.topics.end(),
                                    [&](const auto& t) { return first_topics.count(t) > 0; });
      if (!same) g.all_subscriptions_equal = false;
    }
    const std::int32_t generation = generation_of(member);
    g.max_generation = std::max(g.max_generation, generation);
    for (const auto& tp : member.owned_partitions) {
      const int pid = g.index.id(tp);
      if (pid < 0) continue;  // topic gone from the metadata (or no such partition)
      int& holder = claimed_by[static_cast<std::size_t>(pid)];
      if (holder == kNobody) {
        g.owned[m].push_back(pid);
        holder = static_cast<int>(m);
        continue;
      }
      const auto other = static_cast<std::size_t>(holder);
      const std::int32_t other_generation = generation_of(g.input.members[other]);
      auto& other_owned = g.owned[other];
      if (generation == other_generation) {
        g.multiply_claimed[static_cast<std::size_t>(pid)] = true;
        const auto it = std::find(other_owned.begin(), other_owned.end(), pid);
        if (it != other_owned.end()) other_owned.erase(it);
        holder = static_cast<int>(m);
      } else if (generation > other_generation) {
        g.owned[m].push_back(pid);
        const auto it = std::find(other_owned.begin(), other_owned.end(), pid);
        if (it != other_owned.end()) other_owned.erase(it);
        holder = static_cast<int>(m);
      }
    }
  }
}

// KIP-881 rack information, as Kafka's RackInfo computes it.
void init_racks(Group& g) {
  g.member_rack.assign(g.n(), std::string());
  std::map<std::string, int> members_per_rack;
  for (std::size_t m = 0; m < g.n(); ++m) {
    if (const std::string* rack = detail::effective_rack(g.input.members[m]))
      ++members_per_rack[*rack];
  }
  if (members_per_rack.empty()) return;
  std::set<std::string> all_partition_racks;
  g.partition_racks.reserve(static_cast<std::size_t>(g.index.size()));
  for (int pid = 0; pid < g.index.size(); ++pid) {
    g.partition_racks.push_back(detail::replica_racks(g.input, g.index.tp(pid)));
    all_partition_racks.insert(g.partition_racks.back().begin(), g.partition_racks.back().end());
  }
  // Counted whenever some member has a rack, even if rack-aware assignment ends up off.
  for (const auto& racks : g.partition_racks) {
    int count = 0;
    for (const auto& r : racks) {
      const auto it = members_per_rack.find(r);
      if (it != members_per_rack.end()) count += it->second;
    }
    g.consumers_on_partition_racks.push_back(count);
  }
  const bool overlap =
      std::any_of(members_per_rack.begin(), members_per_rack.end(),
                  [&](const auto& e) { return all_partition_racks.count(e.first) > 0; });
  if (!overlap) return;
  g.rack_aware = g.input.prefer_rack_aware_logic ||
                 !std::all_of(g.partition_racks.begin(), g.partition_racks.end(),
                              [&](const auto& r) { return r == all_partition_racks; });
  if (!g.rack_aware) return;
  for (std::size_t m = 0; m < g.n(); ++m) {
    if (const std::string* rack = detail::effective_rack(g.input.members[m]))
      g.member_rack[m] = *rack;
  }
}

// The first member of `members`, starting at `first` and wrapping, whose rack holds a replica
// of `pid`; -1 if none.
int next_rack_member(const Group& g, int pid, const std::vector<std::size_t>& members,
                     std::size_t first) {
  if (g.partition_racks.empty()) return -1;
  const auto& racks = g.partition_racks[static_cast<std::size_t>(pid)];
  if (racks.empty()) return -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::size_t at = (first + i) % members.size();
    const std::string& rack = g.member_rack[members[at]];
    if (!rack.empty() && racks.count(rack) > 0) return static_cast<int>(at);
  }
  return -1;
}

// Sorts partitions by how many members sit on their replicas' racks (stable), as Kafka does
// before rack-aware round robin so that scarce partitions are placed first.
void sort_by_rack_members(const Group& g, std::vector<int>& partitions) {
  if (g.consumers_on_partition_racks.empty()) return;
  std::stable_sort(partitions.begin(), partitions.end(), [&](int a, int b) {
    return g.consumers_on_partition_racks[static_cast<std::size_t>(a)] <
           g.consumers_on_partition_racks[static_cast<std::size_t>(b)];
  });
}

// ---- equal subscriptions ---------------------------------------------------------------------

// Kafka's ConstrainedAssignmentBuilder: keep owned partitions up to the quota, then deal the rest
// round robin (first within racks). Near-linear in members + partitions.
class ConstrainedBuilder {
 public:
  explicit ConstrainedBuilder(Group& g) : g_(g) {
    const auto members = static_cast<int>(g.n());
    total_ = g.index.size();
    min_quota_ = total_ / members;
    max_quota_ = (total_ + members - 1) / members;
    expected_over_min_ = total_ % members;
    assignment_.assign(g.n(), {});
    maybe_revoked_.assign(static_cast<std::size_t>(total_), kNobody);
    taken_.assign(static_cast<std::size_t>(total_), false);
  }

  std::vector<std::vector<int>> build(std::map<TopicPartition, std::string>& transfers) {
    transfers_ = &transfers;
    assign_owned();
    std::vector<int> unassigned;
    unassigned.reserve(static_cast<std::size_t>(total_));
    for (int pid = 0; pid < total_; ++pid) {
      if (!taken_[static_cast<std::size_t>(pid)]) unassigned.push_back(pid);
    }
    const auto by_id = [&](std::size_t a, std::size_t b) { return g_.id(a) < g_.id(b); };
    std::sort(under_min_.begin(), under_min_.end(), by_id);
    exactly_min_.sort(by_id);
    sort_by_rack_members(g_, unassigned);
    assign_rack_aware_round_robin(unassigned);
    assign_round_robin(unassigned);
    verify_unfilled();
    return std::move(assignment_);
  }

 private:
  void keep(std::size_t m, int pid) {
    assignment_[m].push_back(pid);
    taken_[static_cast<std::size_t>(pid)] = true;
  }

  void assign_owned() {
    for (const std::size_t m : g_.order) {
      std::vector<int> owned;
      for (const int pid : g_.owned[m]) {
        if (g_.racks_mismatch(m, pid)) {
          maybe_revoked_[static_cast<std::size_t>(pid)] = static_cast<int>(m);
        } else {
          owned.push_back(pid);
        }
      }
      // Kafka keeps the lowest partition numbers first, across topics.
      std::sort(owned.begin(), owned.end(), [&](int a, int b) {
        const auto pa = g_.index.partition_of(a);
        const auto pb = g_.index.partition_of(b);
        return pa != pb ? pa < pb : a < b;
      });
      std::erase_if(owned,
                    [&](int pid) { return g_.multiply_claimed[static_cast<std::size_t>(pid)]; });
      const auto size = static_cast<int>(owned.size());
      if (size < min_quota_) {
        for (const int pid : owned) keep(m, pid);
        under_min_.push_back(m);
      } else if (size >= max_quota_ && over_min_ < expected_over_min_) {
        if (++over_min_ == expected_over_min_) exactly_min_.clear();
        keep_prefix(m, owned, max_quota_);
      } else {
        keep_prefix(m, owned, min_quota_);
        if (over_min_ < expected_over_min_) exactly_min_.push_back(m);
      }
    }
  }

  void keep_prefix(std::size_t m, const std::vector<int>& owned, int quota) {
    for (std::size_t i = 0; i < owned.size(); ++i) {
      if (static_cast<int>(i) < quota) {
        keep(m, owned[i]);
      } else {
        maybe_revoked_[static_cast<std::size_t>(owned[i])] = static_cast<int>(m);
      }
    }
  }

  int give(int pid, std::size_t m) {
    assignment_[m].push_back(pid);
    const int revoked_from = maybe_revoked_[static_cast<std::size_t>(pid)];
    if ((revoked_from != kNobody && revoked_from != static_cast<int>(m)) ||
        g_.multiply_claimed[static_cast<std::size_t>(pid)]) {
      (*transfers_)[g_.index.tp(pid)] = g_.id(m);
    }
    return static_cast<int>(assignment_[m].size());
  }

  // Fills members on the partition's racks first; partitions no rack-local member can take
  // within quota are left for plain round robin.
  void assign_rack_aware_round_robin(std::vector<int>& unassigned) {
    if (!g_.rack_aware) return;
    std::size_t next_under = 0;
    std::vector<int> left;
    for (const int pid : unassigned) {
      std::optional<std::size_t> chosen;
      const int at = next_rack_member(g_, pid, under_min_, next_under);
      if (at >= 0) {
        auto pos = static_cast<std::size_t>(at);
        const std::size_t m = under_min_[pos];
        chosen = m;
        const int count = static_cast<int>(assignment_[m].size()) + 1;
        if (count >= min_quota_) {
          under_min_.erase(under_min_.begin() + static_cast<std::ptrdiff_t>(pos));
          // At min quota a member is still unfilled only while more may go above it.
          if (count < max_quota_ && over_min_ < expected_over_min_) exactly_min_.push_back(m);
        } else {
          ++pos;
        }
        next_under = under_min_.empty() ? 0 : pos % under_min_.size();
      } else if (!exactly_min_.empty()) {
        const std::vector<std::size_t> candidates(exactly_min_.begin(), exactly_min_.end());
        const int first = next_rack_member(g_, pid, candidates, 0);
        if (first >= 0) {
          const std::size_t m = candidates[static_cast<std::size_t>(first)];
          chosen = m;
          if (static_cast<int>(assignment_[m].size()) + 1 == max_quota_) {
            exactly_min_.erase(std::next(exactly_min_.begin(), first));
            if (++over_min_ == expected_over_min_) exactly_min_.clear();
          }
        }
      }
      if (chosen) {
        give(pid, *chosen);
      } else {
        left.push_back(pid);
      }
    }
    unassigned = std::move(left);
  }

  void assign_round_robin(const std::vector<int>& unassigned) {
    std::list<std::size_t> under(under_min_.begin(), under_min_.end());
    auto next = under.begin();
    auto last = under.end();  // the element `next` returned most recently
    for (const int pid : unassigned) {
      std::size_t m = 0;
      bool from_under = false;
      if (next != under.end()) {
        last = next++;
        m = *last;
        from_under = true;
      } else if (under.empty() && exactly_min_.empty()) {
        throw std::logic_error("sticky assignor: no more unfilled members to assign to");
      } else if (under.empty()) {
        m = exactly_min_.front();
        exactly_min_.pop_front();
      } else {
        next = under.begin();
        last = next++;
        m = *last;
        from_under = true;
      }
      const int count = give(pid, m);
      if (count == min_quota_) {
        if (!from_under) throw std::logic_error("sticky assignor: member reached min quota twice");
        under.erase(last);
        last = under.end();
        exactly_min_.push_back(m);
      } else if (count == max_quota_) {
        ++over_min_;
      }
    }
    under_min_.assign(under.begin(), under.end());
  }

  void verify_unfilled() const {
    if (under_min_.empty()) return;
    if (over_min_ != expected_over_min_) {
      throw std::logic_error(
          "sticky assignor: too few members above min quota and none left to fill");
    }
    for (const std::size_t m : under_min_) {
      if (static_cast<int>(assignment_[m].size()) != min_quota_) {
        throw std::logic_error("sticky assignor: member " + g_.id(m) + " below min quota");
      }
    }
  }

  Group& g_;
  int total_ = 0;
  int min_quota_ = 0;
  int max_quota_ = 0;
  int expected_over_min_ = 0;
  int over_min_ = 0;
  std::vector<std::vector<int>> assignment_;
  std::vector<int> maybe_revoked_;  // partition -> member it may be revoked from
  std::vector<bool> taken_;
  std::vector<std::size_t> under_min_;
  std::list<std::size_t> exactly_min_;
  std::map<TopicPartition, std::string>* transfers_ = nullptr;
};

// ---- unequal subscriptions -------------------------------------------------------------------

// A Java HashSet<TopicPartition> reduced to what Kafka asks of it: add, remove, and the first
// element its iterator yields (lowest bucket, then earliest insertion within the bucket).
class JavaPartitionSet {
 public:
  void add(int pid, std::int32_t hash) {
    if (members_.count(pid) > 0) return;
    members_[pid] = {hash, next_seq_++};
    if (members_.size() > capacity_ / 4 * 3) capacity_ *= 2;
  }
  void remove(int pid) { members_.erase(pid); }
  bool empty() const { return members_.empty(); }
  int first() const {
    int best = -1;
    std::pair<std::size_t, std::uint64_t> best_key{SIZE_MAX, 0};
    for (const auto& [pid, entry] : members_) {
      const std::pair<std::size_t, std::uint64_t> key{java::bucket_of(entry.first, capacity_),
                                                      entry.second};
      if (best < 0 || key < best_key) {
        best = pid;
        best_key = key;
      }
    }
    return best;
  }

 private:
  std::map<int, std::pair<std::int32_t, std::uint64_t>> members_;  // pid -> (hash, insertion seq)
  std::size_t capacity_ = 16;
  std::uint64_t next_seq_ = 0;
};

// Kafka's PartitionMovements: which partitions moved between which members during balancing,
// so that a move back cancels an earlier move instead of shuffling a second partition.
class PartitionMovements {
 public:
  explicit PartitionMovements(const PartitionIndex& index) : index_(index) {}

  int actual_partition_to_move(int pid, std::size_t old_owner, std::size_t new_owner) const {
    const int topic = index_.topic_of(pid);
    const auto by_topic = by_topic_.find(topic);
    if (by_topic == by_topic_.end()) return pid;
    const auto moved = moves_.find(pid);
    if (moved != moves_.end()) old_owner = moved->second.first;
    const auto reverse = by_topic->second.find({new_owner, old_owner});
    if (reverse == by_topic->second.end()) return pid;
    return reverse->second.first();
  }

  void move(int pid, std::size_t old_owner, std::size_t new_owner) {
    const auto moved = moves_.find(pid);
    if (moved == moves_.end()) {
      add(pid, {old_owner, new_owner});
      return;
    }
    const Pair existing = moved->second;
    remove(pid);
    if (existing.first != new_owner) add(pid, {existing.first, new_owner});
  }

 private:
  using Pair = std::pair<std::size_t, std::size_t>;  // (from, to)

  void add(int pid, Pair pair) {
    moves_[pid] = pair;
    by_topic_[index_.topic_of(pid)][pair].add(pid, java::topic_partition_hash(index_.tp(pid)));
  }

  void remove(int pid) {
    const Pair pair = moves_.at(pid);
    moves_.erase(pid);
    const int topic = index_.topic_of(pid);
    auto& pairs = by_topic_.at(topic);
    auto& set = pairs.at(pair);
    set.remove(pid);
    if (set.empty()) pairs.erase(pair);
    if (pairs.empty()) by_topic_.erase(topic);
  }

  const PartitionIndex& index_;
  std::map<int, Pair> moves_;
  std::map<int, std::map<Pair, JavaPartitionSet>> by_topic_;
};

// Kafka's GeneralAssignmentBuilder: keep valid owned partitions, place the rest on the least
// loaded eligible member, then move partitions while that improves balance, preferring to move
// a partition back to its previous-generation owner. Quadratic or worse; only used when
// subscriptions differ.
class GeneralBuilder {
 public:
  explicit GeneralBuilder(Group& g) : g_(g), movements_(g.index) {
    const int topics = g.index.topic_count();
    potential_members_.assign(static_cast<std::size_t>(topics), {});
    member_topics_.assign(g.n(), {});
    subscribed_.assign(g.n(), std::vector<bool>(static_cast<std::size_t>(topics), false));
    for (const std::size_t m : g.order) {
      for (const auto& topic : g.input.members[m].topics) {
        const int t = g.index.topic_id(topic);
        if (t < 0) continue;
        member_topics_[m].push_back(t);
        subscribed_[m][static_cast<std::size_t>(t)] = true;
        potential_members_[static_cast<std::size_t>(t)].push_back(m);
      }
    }
    current_ = g.owned;
    owner_.assign(static_cast<std::size_t>(g.index.size()), kNobody);
    for (std::size_t m = 0; m < g.n(); ++m) {
      for (const int pid : current_[m]) owner_[static_cast<std::size_t>(pid)] = static_cast<int>(m);
    }
    // Topics with the fewest potential members first, then by name.
    std::vector<int> topic_order(static_cast<std::size_t>(topics));
    std::iota(topic_order.begin(), topic_order.end(), 0);
    std::stable_sort(topic_order.begin(), topic_order.end(), [&](int a, int b) {
      return potential_members_[static_cast<std::size_t>(a)].size() <
             potential_members_[static_cast<std::size_t>(b)].size();
    });
    for (const int t : topic_order) {
      for (int p = 0; p < g.index.count(t); ++p) sorted_all_.push_back(g.index.first(t) + p);
    }
    active_.assign(g.n(), true);
  }

  std::vector<std::vector<int>> build() {
    prepopulate_previous_owners();
    std::vector<bool> assigned(static_cast<std::size_t>(g_.index.size()), false);
    keep_owned(assigned);
    std::vector<int> unassigned;
    for (const int pid : sorted_all_) {
      if (!assigned[static_cast<std::size_t>(pid)]) unassigned.push_back(pid);
    }
    for (std::size_t m = 0; m < g_.n(); ++m) by_load_.insert(key(m));
    balance(unassigned);
    return std::move(current_);
  }

 private:
  using Key = std::pair<std::size_t, int>;  // (assigned count, member-id rank)

  Key key(std::size_t m) const { return {current_[m].size(), g_.id_rank[m]}; }
  std::size_t member_at(const Key& k) const {
    return rank_to_member_[static_cast<std::size_t>(k.second)];
  }
  std::size_t size(std::size_t m) const { return current_[m].size(); }

  // Generation history: a partition last owned in an older generation remembers that owner.
  void prepopulate_previous_owners() {
    rank_to_member_.assign(g_.n(), 0);
    for (std::size_t m = 0; m < g_.n(); ++m)
      rank_to_member_[static_cast<std::size_t>(g_.id_rank[m])] = m;
    previous_.assign(static_cast<std::size_t>(g_.index.size()), {kNobody, 0});
    for (const std::size_t m : g_.order) {
      const ClientMember& member = g_.input.members[m];
      std::int32_t generation = 0;
      if (member.generation && *member.generation < g_.max_generation) {
        generation = *member.generation;
      } else if (!member.generation && g_.max_generation > kDefaultGeneration) {
        generation = kDefaultGeneration;
      } else {
        continue;
      }
      for (const auto& tp : member.owned_partitions) {
        const int pid = g_.index.id(tp);
        if (pid < 0) continue;
        auto& prev = previous_[static_cast<std::size_t>(pid)];
        if (prev.first == kNobody || generation > prev.second)
          prev = {static_cast<int>(m), generation};
      }
    }
  }

  void keep_owned(std::vector<bool>& assigned) {
    for (std::size_t m = 0; m < g_.n(); ++m) {
      std::vector<int> kept;
      for (const int pid : current_[m]) {
        const int t = g_.index.topic_of(pid);
        if (!subscribed_[m][static_cast<std::size_t>(t)] || g_.racks_mismatch(m, pid)) {
          revocation_required_ = true;  // Kafka leaves the stale owner entry in place here
        } else {
          kept.push_back(pid);
          assigned[static_cast<std::size_t>(pid)] = true;
        }
      }
      current_[m] = std::move(kept);
    }
  }

  void add_to(std::size_t m, int pid) {
    by_load_.erase(key(m));
    current_[m].push_back(pid);
    owner_[static_cast<std::size_t>(pid)] = static_cast<int>(m);
    by_load_.insert(key(m));
  }

  // The least loaded eligible member takes the partition.
  bool maybe_assign_partition(int pid, bool match_racks) {
    const auto t = static_cast<std::size_t>(g_.index.topic_of(pid));
    for (const Key& k : by_load_) {
      const std::size_t m = member_at(k);
      if (subscribed_[m][t] && (!match_racks || !g_.racks_mismatch(m, pid))) {
        add_to(m, pid);
        return true;
      }
    }
    return false;
  }

  bool topic_movable(int t) const {
    return potential_members_[static_cast<std::size_t>(t)].size() >= 2;
  }

  std::size_t max_assignment_size(std::size_t m) const {
    std::size_t total = 0;
    for (const int t : member_topics_[m]) total += static_cast<std::size_t>(g_.index.count(t));
    // Kafka counts every partition when the member lists as many topics as exist.
    if (member_topics_[m].size() == static_cast<std::size_t>(g_.index.topic_count())) {
      total = static_cast<std::size_t>(g_.index.size());
    }
    return total;
  }

  bool member_movable(std::size_t m) const {
    if (size(m) < max_assignment_size(m)) return true;
    return std::any_of(current_[m].begin(), current_[m].end(),
                       [&](int pid) { return topic_movable(g_.index.topic_of(pid)); });
  }

  bool is_balanced() const {
    const std::size_t lo = by_load_.begin()->first;
    const std::size_t hi = by_load_.rbegin()->first;
    if (lo + 1 >= hi) return true;
    for (const Key& k : by_load_) {
      const std::size_t m = member_at(k);
      const std::size_t count = size(m);
      if (count == max_assignment_size(m)) continue;
      for (const int t : member_topics_[m]) {
        for (int p = 0; p < g_.index.count(t); ++p) {
          const int pid = g_.index.first(t) + p;
          const int other = owner_[static_cast<std::size_t>(pid)];
          if (other == static_cast<int>(m) || other == kNobody ||
              !active_[static_cast<std::size_t>(other)])
            continue;
          if (count + 1 < size(static_cast<std::size_t>(other))) return false;
        }
      }
    }
    return true;
  }

  static long balance_score(const std::vector<std::size_t>& sizes) {
    long score = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::size_t j = i + 1; j < sizes.size(); ++j) {
        score += std::labs(static_cast<long>(sizes[i]) - static_cast<long>(sizes[j]));
      }
    }
    return score;
  }

  std::vector<std::size_t> active_sizes() const {
    std::vector<std::size_t> sizes;
    for (std::size_t m = 0; m < g_.n(); ++m) {
      if (active_[m]) sizes.push_back(size(m));
    }
    return sizes;
  }

  void balance(std::vector<int> unassigned) {
    const bool initializing = size(member_at(*by_load_.rbegin())) == 0;
    if (g_.rack_aware) {
      std::vector<int> left;
      for (const int pid : unassigned) {
        if (potential_members_[static_cast<std::size_t>(g_.index.topic_of(pid))].empty() ||
            !maybe_assign_partition(pid, true)) {
          left.push_back(pid);
        }
      }
      for (const int pid : left) {
        if (!potential_members_[static_cast<std::size_t>(g_.index.topic_of(pid))].empty()) {
          maybe_assign_partition(pid, false);
        }
      }
    } else {
      for (const int pid : unassigned) {
        if (!potential_members_[static_cast<std::size_t>(g_.index.topic_of(pid))].empty()) {
          maybe_assign_partition(pid, false);
        }
      }
    }

    // Only partitions of topics with two or more potential members can move.
    const auto fixed_partition = [&](int pid) { return !topic_movable(g_.index.topic_of(pid)); };
    std::erase_if(sorted_all_, fixed_partition);
    std::erase_if(unassigned, fixed_partition);

    std::vector<std::size_t> fixed_members;
    for (std::size_t m = 0; m < g_.n(); ++m) {
      if (!member_movable(m)) {
        by_load_.erase(key(m));
        active_[m] = false;
        fixed_members.push_back(m);
      }
    }
    if (by_load_.empty()) return;

    const auto saved_assignment = current_;
    const auto saved_owner = owner_;
    const long saved_score = balance_score(active_sizes());

    if (!revocation_required_) perform_reassignments(unassigned);
    const bool reassigned = perform_reassignments(sorted_all_);

    // Keep the moves only if they made the assignment more balanced.
    if (!initializing && reassigned && balance_score(active_sizes()) >= saved_score) {
      for (std::size_t m = 0; m < g_.n(); ++m) {
        if (active_[m]) current_[m] = saved_assignment[m];
      }
      owner_ = saved_owner;
    }
    for (const std::size_t m : fixed_members) active_[m] = true;
  }

  bool perform_reassignments(const std::vector<int>& partitions) {
    bool reassigned = false;
    bool modified = true;
    while (modified) {
      modified = false;
      for (std::size_t i = 0; i < partitions.size() && !is_balanced(); ++i) {
        const int pid = partitions[i];
        const int t = g_.index.topic_of(pid);
        const int holder = owner_[static_cast<std::size_t>(pid)];
        if (holder == kNobody) continue;
        const auto m = static_cast<std::size_t>(holder);
        const auto& prev = previous_[static_cast<std::size_t>(pid)];
        if (prev.first != kNobody && active_[static_cast<std::size_t>(prev.first)] &&
            size(m) > size(static_cast<std::size_t>(prev.first)) + 1) {
          reassign(pid, static_cast<std::size_t>(prev.first));
          reassigned = modified = true;
          continue;
        }
        bool moved = false;
        const std::string& rack = g_.member_rack[m];
        if (!rack.empty() && g_.partition_racks[static_cast<std::size_t>(pid)].count(rack) > 0) {
          for (const std::size_t other : potential_members_[static_cast<std::size_t>(t)]) {
            const std::string& other_rack = g_.member_rack[other];
            if (other_rack.empty() ||
                g_.partition_racks[static_cast<std::size_t>(pid)].count(other_rack) == 0) {
              continue;
            }
            if (size(m) > size(other) + 1) {
              reassign_to_least_loaded(pid);
              reassigned = modified = moved = true;
              break;
            }
          }
        }
        if (moved) continue;
        for (const std::size_t other : potential_members_[static_cast<std::size_t>(t)]) {
          if (size(m) > size(other) + 1) {
            reassign_to_least_loaded(pid);
            reassigned = modified = true;
            break;
          }
        }
      }
    }
    return reassigned;
  }

  void reassign_to_least_loaded(int pid) {
    const auto t = static_cast<std::size_t>(g_.index.topic_of(pid));
    for (const Key& k : by_load_) {
      const std::size_t m = member_at(k);
      if (subscribed_[m][t]) {
        reassign(pid, m);
        return;
      }
    }
    throw std::logic_error("sticky assignor: no member can take " + g_.index.tp(pid).str());
  }

  void reassign(int pid, std::size_t new_owner) {
    const auto old_owner = static_cast<std::size_t>(owner_[static_cast<std::size_t>(pid)]);
    const int actual = movements_.actual_partition_to_move(pid, old_owner, new_owner);
    move(actual, new_owner);
  }

  void move(int pid, std::size_t new_owner) {
    const auto old_owner = static_cast<std::size_t>(owner_[static_cast<std::size_t>(pid)]);
    by_load_.erase(key(old_owner));
    by_load_.erase(key(new_owner));
    movements_.move(pid, old_owner, new_owner);
    auto& from = current_[old_owner];
    from.erase(std::find(from.begin(), from.end(), pid));
    current_[new_owner].push_back(pid);
    owner_[static_cast<std::size_t>(pid)] = static_cast<int>(new_owner);
    by_load_.insert(key(new_owner));
    by_load_.insert(key(old_owner));
  }

  Group& g_;
  PartitionMovements movements_;
  std::vector<std::vector<std::size_t>> potential_members_;  // topic -> members, map order
  std::vector<std::vector<int>> member_topics_;              // member -> existing subscribed topics
  std::vector<std::vector<bool>> subscribed_;                // member x topic
  std::vector<std::vector<int>> current_;                    // member -> partitions, in order
  std::vector<int> owner_;                                   // partition -> member
  std::vector<std::pair<int, std::int32_t>> previous_;       // partition -> (member, generation)
  std::vector<int> sorted_all_;
  std::vector<std::size_t> rank_to_member_;
  std::vector<bool> active_;  // false while a member's assignment cannot change
  std::set<Key> by_load_;
  bool revocation_required_ = false;
};

// KIP-429: in the general path the cooperative assignor works out itself which partitions
// change owner: those one member gains while another gives them up.
std::set<TopicPartition> transfers_from_diff(const ClientAssignorInput& input,
                                             const ClientAssignment& result) {
  std::set<TopicPartition> added;
  std::set<TopicPartition> revoked;
  for (const auto& m : input.members) {
    const auto& got = result.at(m.member_id);
    const std::set<TopicPartition> owned(m.owned_partitions.begin(), m.owned_partitions.end());
    const std::set<TopicPartition> now(got.begin(), got.end());
    for (const auto& tp : now) {
      if (owned.count(tp) == 0) added.insert(tp);
    }
    for (const auto& tp : owned) {
      if (now.count(tp) == 0) revoked.insert(tp);
    }
  }
  std::set<TopicPartition> both;
  for (const auto& tp : added) {
    if (revoked.count(tp) > 0) both.insert(tp);
  }
  return both;
}

}  // namespace

StickyOutcome assign_sticky(const ClientAssignorInput& input, StickyFlavor flavor) {
  StickyOutcome outcome;
  for (const auto& m : input.members) outcome.assignment[m.member_id];
  if (input.members.empty()) {
    outcome.transferring_ownership.emplace();
    outcome.constrained_path = true;
    return outcome;
  }

  Group g(input, subscribed_counts(input));
  g.order = detail::subscription_order(input);
  std::vector<std::size_t> by_id(g.n());
  std::iota(by_id.begin(), by_id.end(), std::size_t{0});
  std::stable_sort(by_id.begin(), by_id.end(),
                   [&](std::size_t a, std::size_t b) { return g.id(a) < g.id(b); });
  g.id_rank.assign(g.n(), 0);
  for (std::size_t r = 0; r < by_id.size(); ++r) g.id_rank[by_id[r]] = static_cast<int>(r);
  init_racks(g);
  resolve_ownership(g);

  std::vector<std::vector<int>> result;
  if (g.all_subscriptions_equal) {
    outcome.constrained_path = true;
    outcome.transferring_ownership.emplace();
    result = ConstrainedBuilder(g).build(*outcome.transferring_ownership);
  } else {
    result = GeneralBuilder(g).build();
  }
  for (std::size_t m = 0; m < g.n(); ++m) {
    auto& list = outcome.assignment[g.id(m)];
    list.clear();
    for (const int pid : result[m]) list.push_back(g.index.tp(pid));
  }

  if (flavor == StickyFlavor::Cooperative) {
    // KIP-429: a partition changing owner is withheld until its old owner has revoked it.
    std::set<TopicPartition> withheld;
    if (outcome.transferring_ownership) {
      for (const auto& [tp, _] : *outcome.transferring_ownership) withheld.insert(tp);
    } else {
      withheld = transfers_from_diff(input, outcome.assignment);
    }
    for (auto& [_, list] : outcome.assignment) {
      std::erase_if(list, [&](const TopicPartition& tp) { return withheld.count(tp) > 0; });
    }
  }
  return outcome;
}

}  // namespace rsim::assignors
