// Processing time accounting for summary.json: when is a partition *processed*? Kept apart from
// the ownership clock of reports/summary.cpp (which counts an owner as consuming as long as its
// process runs) because the question users ask is another one: was the partition's data being
// worked on? A sink-side structure, fed by the summary builder from trace events only.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reports {

/// A window of the run, [from, to); `from` may move forward once (the steady window's start is
/// found while the run goes: until then it is the end of time and nothing accrues).
struct ClockWindow {
  std::int64_t from = 0;
  std::int64_t to = INT64_MAX;
  std::int64_t clip(std::int64_t a, std::int64_t b) const {
    return std::max<std::int64_t>(0, std::min(b, to) - std::max(a, from));
  }
};

/// A partition's owners, consumer name -> a flag, in name order: a sorted vector where a std::map
/// spent a node (about 80 bytes) on a partition's one owner and an allocation at every change of
/// owner (an eager rebalance of 100,000 partitions disowns and owns each of them).
class OwnerList {
 public:
  using value_type = std::pair<std::string, bool>;
  /// The flag of `name`, added (false) if it is not there, as std::map's operator[].
  bool& operator[](const std::string& name) {
    auto it = lower(name);
    if (it == items_.end() || it->first != name) it = items_.insert(it, value_type{name, false});
    return it->second;
  }
  void erase(const std::string& name) {
    const auto it = lower(name);
    if (it != items_.end() && it->first == name) items_.erase(it);
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  std::vector<value_type>::const_iterator begin() const { return items_.begin(); }
  std::vector<value_type>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<value_type>::iterator lower(const std::string& name) {
    return std::lower_bound(items_.begin(), items_.end(), name,
                            [](const value_type& v, const std::string& n) { return v.first < n; });
  }
  std::vector<value_type> items_;
};

/// Per (group, partition): *not processed* while the partition is wanted (a live member of the
/// group subscribes to it, or someone owns it) and no owner is *active*. An owner is active while
/// its process runs (not paused), its application is not stalled and has not begun close(), and
/// it runs no rebalance callback (Kafka runs callbacks on the application thread, inside poll():
/// nothing is processed meanwhile). A partition without an owner (being revoked, awaiting its
/// assignment, held by a crashed member not yet detected) is not processed either. Each interval is
/// attributed to the consumer that holds the partition (the first of its owners by name) or, with
/// no owner, to the last consumer that held it; a partition never owned is attributed to no one.
/// Per group: the group is *stopped* while it has live members and none of its wanted partitions
/// is processed.
class ProcessingClock {
 public:
  using Key = std::pair<std::string, std::string>;  // (group, "topic-partition")

  /// A partition's entry. Entries are never removed and stay where they are (nodes of a hash
  /// table), so a caller may keep one (entry()) and hand it to the calls that take an entry
  /// instead of looking its key up again: the same effect, without hashing two strings.
  struct State {
    OwnerList owners;  // consumer -> active
    std::string last_owner;
    std::int64_t since = 0, gap_since = 0, sum_us = 0, max_gap_us = 0;
    std::int64_t gap_closed_at = -1;  // when the last interval closed (one reopened then goes on)
    bool wanted = false, not_processed = false, processed = false, unowned = false;
    std::vector<std::pair<std::int64_t, std::int64_t>> gaps;  // with record_gaps() only
    const Key* key = nullptr;                                 // its key in the table
  };

  explicit ProcessingClock(ClockWindow w) : window_(w) {}
  /// The window starts at `from` (a steady window found while the run goes).
  void set_from(std::int64_t from) { window_.from = from; }
  /// Also keep every not-processed interval (clipped to the window), for gaps(): what the
  /// report's partition view draws. Off by default (a run keeps only the sums).
  void record_gaps() { record_ = true; }

  void want(const Key& key, bool wanted, std::int64_t now) { want(entry(key, now), wanted, now); }
  void own(const Key& key, const std::string& consumer, bool active, std::int64_t now) {
    own(entry(key, now), consumer, active, now);
  }
  void disown(const Key& key, const std::string& consumer, std::int64_t now) {
    disown(entry(key, now), consumer, now);
  }
  /// The entry of `key`, added if new, its time accrued up to `now`.
  State& entry(const Key& key, std::int64_t now) { return touch(key, now); }
  /// As the calls above, on an entry from entry().
  void want(State& st, bool wanted, std::int64_t now) {
    accrue(st, now);
    st.wanted = wanted;
    refresh(*st.key, st, now);
  }
  void own(State& st, const std::string& consumer, bool active, std::int64_t now) {
    accrue(st, now);
    st.owners[consumer] = active;
    if (st.last_owner != consumer) st.last_owner.assign(consumer);
    refresh(*st.key, st, now);
  }
  void disown(State& st, const std::string& consumer, std::int64_t now) {
    accrue(st, now);
    st.owners.erase(consumer);
    refresh(*st.key, st, now);
  }
  void live(const std::string& group, int delta, std::int64_t now) {
    const auto git = groups_.try_emplace(group).first;
    git->second.live += delta;
    refresh_group(git->first, git->second, now);
  }
  void finish(std::int64_t now) {
    for (auto& [key, st] : states_) {
      accrue(st, now);
      if (st.not_processed) {
        st.max_gap_us = std::max(st.max_gap_us, window_.clip(st.gap_since, now));
        keep_gap(st, now);
      }
    }
    for (auto& [name, g] : groups_) {
      accrue_group(g, now);
      if (g.stopped) close_stop(name, g, now, true);
    }
  }

  std::int64_t total_us() const {
    std::int64_t sum = 0;
    for (const auto& [key, st] : states_) sum += st.sum_us;
    return sum;
  }
  std::int64_t max_us() const {
    std::int64_t m = 0;
    for (const auto& [key, st] : states_) m = std::max(m, st.max_gap_us);
    return m;
  }
  /// Per partition name (summed over groups), only partitions with time not processed.
  template <class Less>
  std::map<std::string, std::int64_t, Less> by_partition() const {
    std::map<std::string, std::int64_t, Less> out;
    for (const auto& [key, st] : states_)
      if (st.sum_us > 0) out[key.second] += st.sum_us;
    return out;
  }
  const std::map<std::string, std::int64_t>& by_consumer() const { return by_consumer_; }
  /// With record_gaps(): per partition name (all groups), its not-processed intervals
  /// [start_us, end_us) in time order, each as long as the time not_processed_ms_by_partition
  /// counted for it (their lengths add up to it).
  template <class Less>
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>, Less> gaps() const {
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>, Less> out;
    for (const auto& [key, st] : states_)
      if (!st.gaps.empty()) {
        auto& list = out[key.second];
        list.insert(list.end(), st.gaps.begin(), st.gaps.end());
      }
    for (auto& [name, list] : out) std::sort(list.begin(), list.end());
    return out;
  }
  /// The partitions of `group` that are wanted and have no owner now.
  int unowned(const std::string& group) const {
    const auto it = groups_.find(group);
    return it == groups_.end() ? 0 : it->second.unowned;
  }
  std::int64_t stopped_us() const {
    std::int64_t sum = 0;
    for (const auto& [name, g] : groups_) sum += g.stopped_us;
    return sum;
  }
  std::int64_t max_stopped_us() const {
    std::int64_t m = 0;
    for (const auto& [name, g] : groups_) m = std::max(m, g.max_stopped_us);
    return m;
  }
  struct Stop {
    std::string group;
    std::int64_t start_us, end_us;
    bool open;  // still stopped when the run ended
  };
  /// The group stops, in the order they ended (clipped to the window; empty ones left out).
  const std::vector<Stop>& stops() const { return stops_; }

 private:
  struct Group {
    int live = 0;
    int processed = 0;  // partitions processed now
    int unowned = 0;    // wanted partitions without an owner now
    bool stopped = false;
    std::int64_t since = 0, stopped_since = 0, stopped_us = 0, max_stopped_us = 0;
    std::int64_t stop_closed_at = -1,
                 stop_closed_since = 0;  // the last stop (one reopened then goes on)
    bool stop_recorded = false;          // the last stop is in stops_
  };

  State& touch(const Key& key, std::int64_t now) {
    auto [it, inserted] = states_.try_emplace(key);
    if (inserted) {
      it->second.since = now;
      it->second.key = &it->first;
    }
    accrue(it->second, now);
    return it->second;
  }
  const std::string* attributed(const State& st) const {
    if (!st.owners.empty()) return &st.owners.begin()->first;
    return st.last_owner.empty() ? nullptr : &st.last_owner;
  }
  // The interval [gap_since, now) clipped to the window, kept when recording.
  void keep_gap(State& st, std::int64_t now) {
    if (!record_) return;
    const std::int64_t a = std::max(st.gap_since, window_.from), b = std::min(now, window_.to);
    if (b > a) st.gaps.emplace_back(a, b);
  }
  void accrue(State& st, std::int64_t now) {
    if (st.not_processed) {
      const std::int64_t d = window_.clip(st.since, now);
      st.sum_us += d;
      if (d > 0)
        if (const std::string* who = attributed(st)) by_consumer_[*who] += d;
    }
    st.since = now;
  }
  void accrue_group(Group& g, std::int64_t now) {
    if (g.stopped) g.stopped_us += window_.clip(g.since, now);
    g.since = now;
  }
  void close_stop(const std::string& group, Group& g, std::int64_t now, bool open) {
    const std::int64_t d = window_.clip(g.stopped_since, now);
    g.max_stopped_us = std::max(g.max_stopped_us, d);
    g.stop_closed_at = now;
    g.stop_closed_since = g.stopped_since;
    g.stop_recorded = d > 0;
    if (d > 0) stops_.push_back(Stop{group, std::max(g.stopped_since, window_.from), now, open});
  }
  void refresh_group(const std::string& name, Group& g, std::int64_t now) {
    accrue_group(g, now);
    const bool stopped = g.live > 0 && g.processed == 0;
    if (stopped && !g.stopped) {
      // A stop that ended at this very instant goes on (a partition's owner changed and its
      // callback began at one instant): one stop, not two.
      if (g.stop_closed_at == now) {
        g.stopped_since = g.stop_closed_since;
        if (g.stop_recorded)
          for (auto it = stops_.rbegin(); it != stops_.rend(); ++it)
            if (it->end_us == now && it->group == name) {
              stops_.erase(std::next(it).base());
              break;
            }
      } else {
        g.stopped_since = now;
      }
    }
    if (!stopped && g.stopped) close_stop(name, g, now, false);
    g.stopped = stopped;
  }
  void refresh(const Key& key, State& st, std::int64_t now) {
    bool active = false;
    for (const auto& [c, a] : st.owners) active = active || a;
    const bool wanted = st.wanted || !st.owners.empty();
    const bool not_processed = wanted && !active;
    if (not_processed && !st.not_processed) {
      if (st.gap_closed_at != now)
        st.gap_since = now;
      else if (record_ && !st.gaps.empty() && st.gaps.back().second == std::min(now, window_.to))
        st.gaps.pop_back();  // it goes on: kept again, whole, when it closes
    }
    if (!not_processed && st.not_processed) {
      st.max_gap_us = std::max(st.max_gap_us, window_.clip(st.gap_since, now));
      st.gap_closed_at = now;
      keep_gap(st, now);
    }
    st.not_processed = not_processed;
    const bool unowned = wanted && st.owners.empty();
    if (unowned != st.unowned) {
      groups_[key.first].unowned += unowned ? 1 : -1;
      st.unowned = unowned;
    }
    if (active != st.processed) {
      const auto git = groups_.try_emplace(key.first).first;
      Group& g = git->second;
      accrue_group(g, now);
      g.processed += active ? 1 : -1;
      st.processed = active;
      refresh_group(git->first, g, now);
    }
  }

  ClockWindow window_;
  bool record_ = false;
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::string>{}(k.first) * 31 + std::hash<std::string>{}(k.second);
    }
  };
  // Hashed: every ownership change and callback looks its partitions up here (a rebalance of
  // 100,000 partitions, a few hundred thousand times). Nothing read from it depends on its
  // order: it is iterated only into sums, maxima and maps ordered by partition.
  std::unordered_map<Key, State, KeyHash> states_;
  std::map<std::string, Group> groups_;
  std::map<std::string, std::int64_t> by_consumer_;
  std::vector<Stop> stops_;
};

}  // namespace reports
