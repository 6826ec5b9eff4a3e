#include "reports/summary.hpp"
#include "reports/availability.hpp"
#include "reports/critical_path.hpp"
#include "reports/json_indent.hpp"
#include "reports/wait_set.hpp"

#include "models/trace/trace_jsonl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace reports {

namespace {

namespace trace = rsim::trace;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

double ms_of(std::int64_t us) {
  return static_cast<double>(us) / 1000.0;
}

std::pair<std::string, long> partition_key(const std::string& s) {
  const auto dash = s.rfind('-');
  if (dash == std::string::npos) return {s, -1};
  try {
    return {s.substr(0, dash), std::stol(s.substr(dash + 1))};
  } catch (const std::exception&) {
    return {s, -1};
  }
}

/// A set of partitions ordered as Kafka prints them (orders-2 before orders-10).
struct PartitionLess {
  bool operator()(const std::string& a, const std::string& b) const {
    return kafka_partition_less(a, b);
  }
};
using PartitionSet = std::set<std::string, PartitionLess>;

/// Appends `key` to `object` without looking for it first: ordered_json's operator[] searches its
/// members linearly, O(n^2) for the 10,000-consumer and 100,000-partition objects. Only for keys
/// known to be new (a std::map's, in order).
void put_new(ojson& object, const std::string& key, ojson value) {
  using Members = std::vector<std::pair<const std::string, ojson>>;
  static_cast<Members&>(object.get_ref<ojson::object_t&>()).emplace_back(key, std::move(value));
}

ojson partition_list(const PartitionSet& parts) {
  ojson list = ojson::array();
  for (const auto& p : parts) list.push_back(p);
  return list;
}

/// Appends the keys of the object `more` to `text`, an object as compact dump() text: the text
/// of the object with `more`'s keys set on it in order (none of them already in it).
void append_keys(std::string& text, const ojson& more) {
  if (more.empty() || text.size() < 2 || text.back() != '}') return;
  const std::string tail = more.dump();
  text.pop_back();
  if (text.back() != '{') text += ',';
  text.append(tail, 1, std::string::npos);
}

/// Appends `s` as dump() writes a JSON string: printable ASCII other than the quote and the
/// backslash as it is, any other string through nlohmann (its escapes, its UTF-8 check).
void append_json_string(std::string& out, const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') {
      out += ojson(s).dump();
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

/// Appends the object {consumer: [partitions]} of `m`'s non-empty sets to `out`, as dump() wrote
/// it from a tree of them, without building the tree: an eager rebalance of
/// 100,000 partitions made two trees of 100,000 strings at its close (about 60 bytes each).
void append_partition_map(std::string& out, const std::map<std::string, PartitionSet>& m) {
  out += '{';
  bool first = true;
  for (const auto& [consumer, parts] : m) {
    if (parts.empty()) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, consumer);
    out += ":[";
    bool first_part = true;
    for (const auto& p : parts) {
      if (!first_part) out += ',';
      first_part = false;
      append_json_string(out, p);
    }
    out += ']';
  }
  out += '}';
}

/// The run's window: [from, to). Times are clipped to it.
struct Window {
  std::int64_t from = 0;
  std::int64_t to = INT64_MAX;
  bool contains(std::int64_t t) const { return t >= from && t < to; }
  std::int64_t clip(std::int64_t a, std::int64_t b) const {
    return std::max<std::int64_t>(0, std::min(b, to) - std::max(a, from));
  }
};

using Range = std::pair<std::int64_t, std::int64_t>;  // [first, last] offsets

/// Adds [r.first, r.second] to the disjoint ranges `ranges` (first -> last), merging what it
/// touches; returns how many of its offsets were already covered.
std::int64_t add_to_ranges(std::map<std::int64_t, std::int64_t>& ranges, Range r) {
  std::int64_t seen = 0;
  auto it = ranges.upper_bound(r.first);
  if (it != ranges.begin()) --it;
  std::int64_t first = r.first, last = r.second;
  while (it != ranges.end() && it->first <= r.second + 1) {
    if (it->second + 1 < r.first) {
      ++it;
      continue;
    }
    seen += std::max<std::int64_t>(
        0, std::min(it->second, r.second) - std::max(it->first, r.first) + 1);
    first = std::min(first, it->first);
    last = std::max(last, it->second);
    it = ranges.erase(it);
  }
  ranges.emplace(first, last);
  return seen;
}

/// Values per partition of one group, in a deque per topic indexed by the partition number: a
/// lookup compares one topic name (the last topic found is remembered) and indexes, where a hash
/// map of TopicPartition missed the cache on every lag sample and fetched batch of a large group.
/// Slots never move (deques grow at the end), so a caller may keep a pointer to one. Partition
/// numbers outside [0, kDense) (only a hand-made trace has them) live in a map instead.
template <class T>
class PartitionTable {
 public:
  /// The value of `tp`, made (value-initialised) if it is new; `created` says whether it was.
  /// `topic`, if given, is set to the table's own copy of the topic name (it lives as long as
  /// the table).
  T& find_or_add(const rsim::TopicPartition& tp, bool* created = nullptr,
                 const std::string** topic = nullptr) {
    if (tp.partition < 0 || tp.partition >= kDense) {
      auto [it, inserted] = sparse_.try_emplace(tp);
      if (created != nullptr) *created = inserted;
      if (topic != nullptr) *topic = &it->first.topic;
      return it->second;
    }
    auto& [name, slots] = topic_of(tp.topic);
    if (topic != nullptr) *topic = &name;
    const auto i = static_cast<std::size_t>(tp.partition);
    if (slots.size() <= i) slots.resize(i + 1);
    Slot& slot = slots[i];
    if (created != nullptr) *created = !slot.present;
    slot.present = true;
    return slot;
  }
  /// Starts loading the slot of `tp`, if it has one: a batch's partitions are spread over a table
  /// too large for the cache, and their misses overlap when every slot is asked for first.
  void prefetch(const rsim::TopicPartition& tp) {
    if (tp.partition < 0 || tp.partition >= kDense) return;
    const auto& slots = topic_of(tp.topic).second;
    if (static_cast<std::size_t>(tp.partition) < slots.size())
      __builtin_prefetch(&slots[static_cast<std::size_t>(tp.partition)]);
  }
  /// Calls f(value) for every value made (in no particular order: callers only sum).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [name, slots] : topics_)
      for (const auto& slot : slots)
        if (slot.present) f(static_cast<const T&>(slot));
    for (const auto& [tp, value] : sparse_) f(value);
  }

 private:
  static constexpr std::int32_t kDense = 1 << 22;
  // The flag in the value's tail padding where the ABI allows it (a class that is not POD).
  struct Slot : T {
    bool present = false;
  };
  using Topic = std::pair<const std::string, std::deque<Slot>>;
  Topic& topic_of(std::string_view name) {
    if (last_ != nullptr && last_->first == name) return *last_;
    auto it = topics_.find(name);
    if (it == topics_.end()) it = topics_.emplace(std::string(name), std::deque<Slot>{}).first;
    last_ = &*it;
    return *it;
  }
  std::map<std::string, std::deque<Slot>, std::less<>> topics_;
  Topic* last_ = nullptr;  // map nodes never move
  std::map<rsim::TopicPartition, T> sparse_;
};

/// Offsets of one group's partition: what was delivered (as disjoint ranges: a delivery that
/// covers offsets again counts duplicates), what was processed (ranges in order), where it
/// started and the highest offset committed. A partition's fetch, its processing and its commits
/// each touch it, every second at 100,000 partitions: its state is one cache line (with the
/// table's flag). The range that starts last and the last range processed live inline; the
/// others (a partition read out of order, or again from an older offset: rare) out of line.
class PartitionRecords {
 public:
  /// Adds [first, last] delivered; returns how many of its offsets were already delivered.
  std::int64_t add_delivered(Range r) {
    if ((flags_ & kDelivered) != 0 && delivered_.first <= r.first &&
        r.first <= delivered_.second + 1) {
      // Nothing starts after the inline range: it only grows.
      const std::int64_t seen =
          std::max<std::int64_t>(0, std::min(delivered_.second, r.second) - r.first + 1);
      delivered_.second = std::max(delivered_.second, r.second);
      return seen;
    }
    if ((flags_ & kDelivered) == 0) {  // the first: nothing out of line yet either
      delivered_ = r;
      flags_ |= kDelivered;
      return 0;
    }
    auto& ranges = cold().delivered;
    ranges.emplace(delivered_.first, delivered_.second);
    const std::int64_t seen = add_to_ranges(ranges, r);
    const auto top = std::prev(ranges.end());
    delivered_ = Range{top->first, top->second};
    flags_ |= kDelivered;
    ranges.erase(top);
    return seen;
  }
  /// Appends [first, last] processed, merged into the previous range when it continues it (the
  /// usual case: a consumer reads a partition in order).
  void add_processed(Range r) {
    if ((flags_ & kProcessed) != 0 && processed_.second + 1 == r.first) {
      processed_.second = r.second;
      return;
    }
    if ((flags_ & kProcessed) != 0) cold().processed.push_back(processed_);
    processed_ = r;
    flags_ |= kProcessed;
  }
  /// Every range processed, in the order they came.
  std::vector<Range> processed() const {
    std::vector<Range> out;
    if (cold_) out = cold_->processed;
    if ((flags_ & kProcessed) != 0) out.push_back(processed_);
    return out;
  }
  /// The first position reported is kept.
  void position(std::int64_t offset) {
    if ((flags_ & kPosition) != 0) return;
    first_position_ = offset;
    flags_ |= kPosition;
  }
  void committed(std::int64_t offset) {
    max_committed_ = (flags_ & kCommitted) != 0 ? std::max(max_committed_, offset) : offset;
    flags_ |= kCommitted;
  }
  std::optional<std::int64_t> first_position() const {
    return (flags_ & kPosition) != 0 ? std::optional<std::int64_t>(first_position_) : std::nullopt;
  }
  std::optional<std::int64_t> max_committed() const {
    return (flags_ & kCommitted) != 0 ? std::optional<std::int64_t>(max_committed_) : std::nullopt;
  }

 private:
  struct Cold {
    std::map<std::int64_t, std::int64_t> delivered;  // the delivered ranges but the inline one
    std::vector<Range> processed;                    // the processed ranges before the inline one
  };
  Cold& cold() {
    if (!cold_) cold_ = std::make_unique<Cold>();
    return *cold_;
  }
  static constexpr std::uint8_t kDelivered = 1, kProcessed = 2, kPosition = 4, kCommitted = 8;
  Range delivered_{0, 0}, processed_{0, 0};
  std::int64_t first_position_ = 0, max_committed_ = 0;
  std::unique_ptr<Cold> cold_;
  std::uint8_t flags_ = 0;  // which of the values above are set
};
static_assert(sizeof(PartitionRecords) <= 64, "a partition's records: one cache line");

// Offsets in [from, to) not covered by any range.
std::int64_t uncovered(std::vector<Range> ranges, std::int64_t from, std::int64_t to) {
  std::sort(ranges.begin(), ranges.end());
  std::int64_t missing = 0, next = from;
  for (const auto& [first, last] : ranges) {
    if (next >= to) break;
    if (first > next) missing += std::min(first, to) - next;
    next = std::max(next, last + 1);
  }
  if (next < to) missing += to - next;
  return missing;
}

/// Time accounting per (group, partition), updated incrementally from ownership events:
/// `unavailable` while a partition some live member of the group subscribes to (or owns) has no
/// running owner, `overlap` while two or more live members believe they own it; per group,
/// `stop the world` while the group has live members and none of its partitions has a running
/// owner. Each event touches only the partitions it changes.
class OwnershipClock {
 public:
  using Key = std::pair<std::string, std::string>;  // (group, "topic-partition")

  /// A partition's entry (a node of states_: never removed, never moved), which a caller may
  /// keep (entry()) and hand to the calls that take one instead of the partition's name.
  struct State {
    std::int64_t unavailable_us = 0;
    std::int64_t overlap_us = 0;
    std::int64_t since = 0;
    std::int64_t gap_since = 0;  // start of the current unavailability
    std::int64_t max_gap_us = 0;
    OwnerList owners;  // consumer -> running (not paused)
    // The same partition's entry in the processing clock, found at the first refresh (entries
    // are never removed, nor moved).
    ProcessingClock::State* processing = nullptr;
    const Key* key = nullptr;  // its key in states_
    bool unavailable = false;
    bool overlap = false;
    bool running = false;
  };

  explicit OwnershipClock(Window w) : window_(w) {}
  /// The processing clock told of every change of a partition's being wanted.
  void attach(ProcessingClock* processing) { processing_ = processing; }
  void set_from(std::int64_t from) { window_.from = from; }

  void subscribe(const std::string& group, const std::string& topic, int delta, std::int64_t now) {
    int& n = subscribers_[{group, topic}];
    const bool before = n > 0;
    n += delta;
    if ((n > 0) != before) for_partitions(group, topic, 0, partitions_of(topic), now);
  }
  void set_partitions(const std::string& topic, std::int32_t count, std::int64_t now) {
    const std::int32_t old = partitions_of(topic);
    partitions_[topic] = count;
    for (const auto& [key, n] : subscribers_)
      if (key.second == topic && n > 0)
        for_partitions(key.first, topic, std::min(old, count), std::max(old, count), now);
  }
  /// Both return the partition's entry, whose `processing` the caller tells of the same change
  /// without looking the partition up again (nullptr if no processing clock is attached).
  State& own(const std::string& group, const std::string& partition, const std::string& consumer,
             bool running, std::int64_t now) {
    const Key key{group, partition};
    State& st = touch(key, now);
    st.owners[consumer] = running;
    refresh(key, st, now);
    return st;
  }
  State& disown(const std::string& group, const std::string& partition, const std::string& consumer,
                std::int64_t now) {
    return disown(entry(group, partition, now), consumer, now);
  }
  /// As disown() above, on an entry from own() or entry().
  State& disown(State& st, const std::string& consumer, std::int64_t now) {
    accrue(st, now);
    st.owners.erase(consumer);
    refresh(*st.key, st, now);
    return st;
  }
  /// The partition's entry, added (from `now`) if new; nothing accrued, nothing refreshed.
  State& entry(const std::string& group, const std::string& partition, std::int64_t now) {
    return add(Key{group, partition}, now);
  }
  /// A live member of `group` came (+1) or went (-1).
  void live(const std::string& group, int delta, std::int64_t now) {
    GroupState& g = groups_[group];
    g.live += delta;
    refresh_group(g, now);
  }
  void finish(std::int64_t now) {
    // Overlaps still open at the end keep "end_us": null.
    for (auto& [key, st] : states_) {
      accrue(st, now);
      if (st.unavailable) st.max_gap_us = std::max(st.max_gap_us, window_.clip(st.gap_since, now));
    }
    for (auto& [name, g] : groups_) {
      accrue_group(g, now);
      if (g.stopped)
        g.max_stopped_us = std::max(g.max_stopped_us, window_.clip(g.stopped_since, now));
    }
  }
  std::int64_t unavailable_us() const {
    std::int64_t sum = 0;
    for (const auto& [key, st] : states_) sum += st.unavailable_us;
    return sum;
  }
  /// `group`'s unavailable partition time up to `now`, the open intervals included.
  std::int64_t unavailable_us_of(const std::string& group, std::int64_t now) const {
    std::int64_t sum = 0;
    for (auto it = states_.lower_bound({group, std::string()});
         it != states_.end() && it->first.first == group; ++it)
      sum += it->second.unavailable_us +
             (it->second.unavailable ? window_.clip(it->second.since, now) : 0);
    return sum;
  }
  std::int64_t max_unavailable_us() const {
    std::int64_t m = 0;
    for (const auto& [key, st] : states_) m = std::max(m, st.max_gap_us);
    return m;
  }
  std::int64_t overlap_us() const {
    std::int64_t sum = 0;
    for (const auto& [key, st] : states_) sum += st.overlap_us;
    return sum;
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
  /// Per partition (over every group): the summed and the longest single unavailability.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>, PartitionLess>
  unavailable_by_partition() const {
    std::map<std::string, std::pair<std::int64_t, std::int64_t>, PartitionLess> out;
    for (const auto& [key, st] : states_) {
      if (st.unavailable_us == 0) continue;
      auto& [sum, max] = out[key.second];
      sum += st.unavailable_us;
      max = std::max(max, st.max_gap_us);
    }
    return out;
  }
  const ojson& overlaps() const { return overlaps_; }

 private:
  struct GroupState {
    int live = 0;
    int running = 0;  // partitions with a running owner
    bool stopped = false;
    std::int64_t since = 0;
    std::int64_t stopped_since = 0;
    std::int64_t stopped_us = 0;
    std::int64_t max_stopped_us = 0;
  };

  std::int32_t partitions_of(const std::string& topic) const {
    const auto it = partitions_.find(topic);
    return it == partitions_.end() ? 0 : it->second;
  }
  void for_partitions(const std::string& group, const std::string& topic, std::int32_t from,
                      std::int32_t to, std::int64_t now) {
    for (std::int32_t p = from; p < to; ++p) {
      const Key key{group, topic + "-" + std::to_string(p)};
      refresh(key, touch(key, now), now);
    }
  }
  void accrue(State& st, std::int64_t now) const {
    if (st.unavailable) st.unavailable_us += window_.clip(st.since, now);
    if (st.overlap) st.overlap_us += window_.clip(st.since, now);
    st.since = now;
  }
  void accrue_group(GroupState& g, std::int64_t now) const {
    if (g.stopped) g.stopped_us += window_.clip(g.since, now);
    g.since = now;
  }
  void refresh_group(GroupState& g, std::int64_t now) {
    accrue_group(g, now);
    const bool stopped = g.live > 0 && g.running == 0;
    if (stopped && !g.stopped) g.stopped_since = now;
    if (!stopped && g.stopped)
      g.max_stopped_us = std::max(g.max_stopped_us, window_.clip(g.stopped_since, now));
    g.stopped = stopped;
  }
  State& add(const Key& key, std::int64_t now) {
    auto [it, inserted] = states_.try_emplace(key);
    if (inserted) {
      it->second.since = now;
      it->second.key = &it->first;
    }
    return it->second;
  }
  State& touch(const Key& key, std::int64_t now) {
    State& st = add(key, now);
    accrue(st, now);
    return st;
  }
  bool wanted(const Key& key, const State& st) const {
    if (!st.owners.empty()) return true;
    const auto [topic, number] = partition_key(key.second);
    const auto sub = subscribers_.find({key.first, topic});
    return sub != subscribers_.end() && sub->second > 0 && number < partitions_of(topic);
  }
  void refresh(const Key& key, State& st, std::int64_t now) {
    const bool w = wanted(key, st);
    if (processing_ != nullptr) {
      if (st.processing == nullptr) st.processing = &processing_->entry(key, now);
      processing_->want(*st.processing, w, now);
    }
    bool running = false;
    for (const auto& [c, r] : st.owners) running = running || r;
    const bool unavailable = w && !running;
    if (unavailable && !st.unavailable) st.gap_since = now;
    if (!unavailable && st.unavailable)
      st.max_gap_us = std::max(st.max_gap_us, window_.clip(st.gap_since, now));
    st.unavailable = unavailable;
    if (running != st.running) {
      GroupState& g = groups_[key.first];
      accrue_group(g, now);
      g.running += running ? 1 : -1;
      st.running = running;
      refresh_group(g, now);
    }
    st.overlap = st.owners.size() >= 2;
    const auto open_it = open_overlap_.find(key);
    if (st.overlap && open_it == open_overlap_.end()) {
      ojson o;
      o["group"] = key.first;
      o["partition"] = key.second;
      ojson names = ojson::array();
      for (const auto& [c, r] : st.owners) names.push_back(c);
      o["consumers"] = names;
      o["start_us"] = now;
      o["end_us"] = nullptr;
      open_overlap_[key] = overlaps_.size();
      overlaps_.push_back(o);
    } else if (!st.overlap && open_it != open_overlap_.end()) {
      overlaps_[open_it->second]["end_us"] = now;
      open_overlap_.erase(open_it);
    }
  }

  Window window_;
  ProcessingClock* processing_ = nullptr;
  std::map<Key, State> states_;
  std::map<std::string, GroupState> groups_;
  std::map<std::pair<std::string, std::string>, int>
      subscribers_;  // (group, topic) -> live subscribers
  std::map<std::string, std::int32_t> partitions_;
  ojson overlaps_ = ojson::array();
  std::map<Key, std::size_t> open_overlap_;
};

struct Consumer {
  std::string group;
  std::string member_id;  // of the current incarnation (consumer protocol)
  std::set<std::string> topics;
  PartitionSet owned;
  // The ownership clock's entries of `owned`, in its order, while owned_entries_valid
  // (SummaryBuilder::owned_entries(): kept with `owned` by its assignments and clears).
  std::vector<OwnershipClock::State*> owned_entries;
  bool owned_entries_valid = true;
  bool live = false;
  bool paused = false;   // the whole process is frozen: it owns, but consumes nothing
  bool closing = false;  // close() began (consumer.stop), not yet closed
  bool stalled = false;  // the application does not call poll() (consumer.stall to consumer.resume)
  bool assigned = false;  // an assignment reached the application since it started
  std::int64_t started_us = 0;
  int callbacks_running = 0;
  std::int64_t paused_since = 0;
  std::int64_t paused_us = 0;
  std::int64_t records_processed = 0;
  // The same since the steady window opened (SummaryBuilder::steady_from()), and whether a batch
  // it processed was counted there: the steady window's builder reads them (read_records_of()).
  std::int64_t steady_records_processed = 0;
  bool steady_processed = false;
  // onPartitionsRevoked run by close() before the leave that triggers the next rebalance.
  std::map<std::string, PartitionSet> leave_revoked;
};

/// A consumer-protocol member as the coordinator sees it (its
/// ConsumerGroupCurrentMemberAssignment).
struct CoordinatorMember {
  // What a bump's fill reads of every member first, together (one cache line, not two).
  const std::string* interned = nullptr;  // its id, kept for the whole run (WaitSet points at it)
  std::uint64_t wait_key = 0;             // WaitSet::key_of(*interned), for a bump's fill
  std::int64_t epoch = -1;
  std::uint32_t dense = 0;  // the id's dense number (SummaryBuilder::intern)
  bool stable = false;
  std::string group;
  std::string consumer;
  PartitionSet assigned;
};

struct Rebalance {
  std::string group;
  std::int64_t start_us = 0;
  std::optional<std::int64_t> settled_us;  // classic: group reached Stable/Empty
  std::int64_t end_us = 0;
  bool completed = false;
  std::string trigger;
  std::vector<std::string> causes;  // in the order they came
  std::set<std::string> cause_set;
  std::int64_t generation = -1;   // classic generation, or the consumer-protocol group epoch
  std::set<std::string> waiting;  // classic: consumer names
  WaitSet members;                // consumer protocol: member ids
  std::map<std::string, PartitionSet> revoked, lost, assigned;
  bool consumer_protocol = false;  // a KIP-848 group (lower-case states, epochs)
  // Consumer protocol: the members of `members` to look at when the group settles, those whose
  // state (or their application's) changed since they were last found not reconciled; all of
  // them when `check_all` (the wait was filled or its epoch changed since).
  // The interned ids' dense numbers (SummaryBuilder::intern), in the order they were touched,
  // repeats included: a member is noted in O(1), whatever the size of the wait.
  std::vector<std::uint32_t> to_check;
  bool check_all = false;

  void add_cause(const std::string& c) {
    if (c.empty()) return;
    // A join storm gives a rebalance one cause per member: looked up in a set, not the list.
    if (cause_set.insert(c).second) causes.push_back(c);
  }
};

/// A rebalance once closed: what finish() and the critical paths read of it. Its entry of
/// summary.json's `rebalances`, from `group` to `assigned`, is written when it closes, as compact
/// JSON text: a closed rebalance keeps no partition sets, member ids or causes (an eager
/// rebalance of 100,000 partitions held two sets of 100,000 names to the end of the run).
/// finish() adds what comes later (`lag_before`, `drain_ms`; the sink adds `critical_path`).
struct ClosedRebalance {
  std::string group;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::int64_t generation = -1;
  std::string
      entry;  // empty when the builder writes no `rebalances` (the steady window's) or spools it
  std::uint64_t spool_at = 0, spool_size = 0;  // where the spool holds the entry's text
};

/// Where closed rebalances' entries go when the summary is streamed
/// (SummarySink::spool_rebalances): a file, appended as each rebalance closes and read back one
/// entry at a time when summary.json is written, so that memory holds none of them. The sink
/// removes the file when it goes.
class EntrySpool {
 public:
  explicit EntrySpool(std::filesystem::path path) : path_(std::move(path)) {
    file_ = std::fopen(path_.string().c_str(), "w+b");
    if (file_ == nullptr) throw std::runtime_error("cannot create " + path_.string());
  }
  EntrySpool(const EntrySpool&) = delete;
  EntrySpool& operator=(const EntrySpool&) = delete;
  ~EntrySpool() {
    std::fclose(file_);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  /// Appends `text`; its offset.
  std::uint64_t append(std::string_view text) {
    const std::uint64_t at = size_;
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
      throw std::runtime_error("cannot write " + path_.string());
    size_ += text.size();
    return at;
  }
  std::string read(std::uint64_t at, std::uint64_t n) const {
    std::string out(n, '\0');
    if (std::fflush(file_) != 0 || std::fseek(file_, static_cast<long>(at), SEEK_SET) != 0 ||
        std::fread(out.data(), 1, n, file_) != n)
      throw std::runtime_error("cannot read back " + path_.string());
    std::fseek(file_, 0, SEEK_END);
    return out;
  }
  std::uint64_t bytes() const { return size_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
};

/// The summary's state, fed one trace event at a time; one handler per event kind.
class SummaryBuilder {
 public:
  explicit SummaryBuilder(Window w)
      : window_(w), clock_(w), processing_(ClockWindow{w.from, w.to}) {
    clock_.attach(&processing_);
  }
  /// Moves the window's start to `from` (the steady window, found while the run goes).
  void set_from(std::int64_t from) {
    window_.from = from;
    clock_.set_from(from);
    processing_.set_from(from);
  }
  /// Keep the not-processed intervals (SummaryInputs::not_processed_gaps).
  void record_gaps() { processing_.record_gaps(); }
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>, PartitionLess> gaps()
      const {
    return processing_.gaps<PartitionLess>();
  }
  /// The steady moment once found (see steady_check()).
  std::optional<std::int64_t> steady_from() const { return steady_from_; }
  /// The consumers whose stable assignment starts the steady window (none: no steady window).
  void set_steady_consumers(std::vector<std::string> names) {
    steady_consumers_ = std::move(names);
    steady_wanted_ = !steady_consumers_.empty();
  }
  /// The steady window's builder: the records, offsets and lag (every batch, commit and lag
  /// sample: most of a steady run's events) are read once, by `whole`, the whole run's builder,
  /// which counts them also from its steady moment on; this builder skips them and takes its
  /// record metrics and lag series from `whole` (the same numbers a second pass gave: the series
  /// and `lost` do not depend on the window, the counts start with the window).
  void read_records_of(const SummaryBuilder* whole) { whole_ = whole; }
  static bool read_by_whole(const trace::Event& e) {
    return std::holds_alternative<trace::RecordsFetched>(e) ||
           std::holds_alternative<trace::RecordsProcessed>(e) ||
           std::holds_alternative<trace::Position>(e) || std::holds_alternative<trace::Lag>(e);
  }
  // It keeps pointers into its own maps.
  SummaryBuilder(const SummaryBuilder&) = delete;
  SummaryBuilder& operator=(const SummaryBuilder&) = delete;

  void on_event(std::int64_t t, const trace::Event& event) {
    if (t != lag_t_) {
      settle();
      flush_lag();
      steady_check(lag_t_);
      lag_t_ = t;
    }
    if (!final_taken_ && t >= window_.to) take_final();
    end_t_ = t;
    if (whole_ != nullptr && read_by_whole(event)) return;
    using namespace rsim::trace;
    std::visit(
        Overloaded{
            [&](const RecordsFetched& e) { on_records_fetched(e, t); },
            [&](const RecordsProcessed& e) { on_records_processed(e, t); },
            [&](const Position& e) { on_position(e); },
            [&](const Record& e) { on_record(e, t); },
            [&](const Lag& e) { on_lag(e, t); },
            [&](const RunStart& e) { duration_us_ = e.duration_ms * 1000; },
            [&](const TopicPartitionCount& e) {
              clock_.set_partitions(str(e.topic), e.partitions, t);
            },
            [&](const ConsumerStart& e) { on_consumer_start(e, t); },
            [&](const ConsumerStop& e) {
              const std::string name = str(e.consumer);
              Consumer& c = consumers_[name];
              c.closing = true;
              refresh_active(c, name, t);  // close() began: the application processes no more
            },
            [&](const ConsumerPause& e) { on_pause(e.consumer, t, true); },
            [&](const ConsumerStall& e) { on_stall(e.consumer, t, true); },
            [&](const ConsumerResume& e) {
              if (e.after && *e.after == "stall")
                on_stall(e.consumer, t, false);
              else
                on_pause(e.consumer, t, false);
            },
            [&](const ConsumerSubscribe& e) { on_subscribe(e, t); },
            [&](const ConsumerCrash& e) { on_gone(e.consumer, t); },
            [&](const ConsumerClosed& e) { on_gone(e.consumer, t); },
            [&](const MemberJoin& e) { on_static_join(e); },
            [&](const ConsumerError& e) {
              on_fatal_error(e, t);
              on_gone(e.consumer, t);
            },
            [&](const ConsumerPollTimeout& e) {
              moment(t, "poll_timeout", e.consumer,
                     "max.poll.interval.ms (" + std::to_string(e.max_poll_interval_ms) +
                         ") expired: the consumer left the group while its application was not "
                         "calling poll()");
            },
            [&](const ConsumerFenced& e) {
              moment(t, "fenced", e.consumer,
                     "fenced (" + str(e.error) + "): its partitions were lost");
            },
            [&](const MemberReplaced& e) {
              on_instance_id_taken_over(e);
              moment(t, "fenced", e.consumer,
                     "group.instance.id " + str(e.group_instance_id) +
                         " taken over by a new member: the old member is fenced");
            },
            [&](const Assignment& e) { on_assignment(e, t); },
            [&](const MemberEpoch& e) { on_member_epoch(e, t); },
            [&](const MemberLeave& e) {
              on_member_leave(e);
              on_static_leave(e, t);
              if (e.reason.find("session timeout") != std::string_view::npos)
                moment(t, "session_timeout", e.consumer,
                       "session timeout: the coordinator removed the member (no heartbeat in "
                       "session.timeout.ms)");
              else if (e.reason.find("rebalance timeout") != std::string_view::npos)
                moment(t, "rebalance_timeout", e.consumer, "rebalance timeout: " + str(e.reason));
            },
            [&](const GroupStateChange& e) { on_group_state(e, t); },
            [&](const GroupEpoch& e) { on_group_epoch(e, t); },
            [&](const Callback& e) { on_callback(e, t); },
            [&](const GroupMigration& e) {
              on_group_migration(e, t);
              if (e.refused)
                moment(t, "migration", "",
                       "group " + str(e.group) + ": conversion from " + str(e.from) + " to " +
                           str(e.to) + " refused (" + str(*e.refused) + ")");
              else
                moment(t, "migration", "",
                       "group " + str(e.group) + " converted from the " + str(e.from) + " to the " +
                           str(e.to) + " protocol (group.migration)");
            },
            [&](const AutoscalerDecision& e) { on_scaling(e, t); },
            [&](const auto&) {},  // kinds the summary does not read
        },
        event);
  }

  /// summary.json; with `entries` false, `rebalances` is left to write_rebalances() and holds
  /// kStreamedRebalances.
  ojson finish(const SummaryInputs& inputs, bool entries = true);
  /// Streaming: the closed rebalances' entries go to a spool file as they close (see EntrySpool).
  void spool_to(EntrySpool* spool) { spool_ = spool; }
  /// After finish(): the `rebalances` entry of done_[i] as finish() writes it, as compact text:
  /// the spooled text with add_drain's keys appended, its partition lists not parsed (false: not
  /// in the window, or no entries written).
  bool entry_compact(std::size_t i, std::string& text) const;
  std::size_t entry_slots() const { return done_.size(); }
  /// The bytes of closed rebalances' entries held in memory (none when spooled): what the
  /// bounded-memory test reads.
  std::size_t retained_entry_bytes() const {
    std::size_t n = 0;
    for (const auto& c : done_) n += c.entry.size();
    return n;
  }
  /// finish()'s parts: the end of the run (open rebalances close), the `rebalances` entries and
  /// their totals, the metrics by what they read, the scaling actions.
  void close_run();
  ojson rebalance_entries(std::optional<std::int64_t>& max_drain_us, std::int64_t& count,
                          std::int64_t& total_us, std::int64_t& max_us, bool entries) const;
  /// Adds `lag_before` and `drain_ms` to the entry of `r` (the time to drain its lag).
  void add_drain(const ClosedRebalance& r, ojson& j,
                 std::optional<std::int64_t>& max_drain_us) const;
  /// The entry's text up to `assigned`, from memory or the spool.
  std::string entry_of(const ClosedRebalance& r) const {
    return spool_ != nullptr && r.spool_size > 0 ? spool_->read(r.spool_at, r.spool_size) : r.entry;
  }
  void add_ownership_metrics(ojson& metrics) const;
  void add_record_metrics(ojson& metrics, std::optional<std::int64_t> max_drain_us) const;
  void add_processing_metrics(ojson& metrics) const;
  void add_moments(ojson& out) const;
  static std::string fmt_overlap(const std::string& group, const std::string& who,
                                 std::int64_t partitions) {
    return "zombie overlap in group " + group + ": " + who + " both believed they owned " +
           std::to_string(partitions) + (partitions == 1 ? " partition" : " partitions");
  }
  /// The members' index (group_members_, member_of_dense_) holds exactly members_.
  bool member_index_consistent() const { return group_index_consistent(); }
  std::size_t retained_wait_entries() const {
    std::size_t n = 0;
    for (const auto& [g, rs] : open_)
      for (const auto& r : rs) n += r.members.size() + r.to_check.size();
    return n;
  }
  /// What the rebalances held in full hold (the open ones; a closed one is its entry's text):
  /// rebalances, and partition names in their revoked / lost / assigned maps.
  std::pair<std::size_t, std::size_t> retained_rebalances() const {
    std::size_t count = 0, partitions = 0;
    for (const auto& [g, rs] : open_)
      for (const auto& r : rs) {
        ++count;
        for (const auto* m : {&r.revoked, &r.lost, &r.assigned})
          for (const auto& [c, parts] : *m) partitions += parts.size();
      }
    return {count, partitions};
  }
  /// The builder of the steady window writes no `rebalances` (only its metrics are read).
  void set_write_rebalances(bool write) { write_rebalances_ = write; }
  /// For the critical paths (SummarySink): the rebalances closed so far, in the order they
  /// closed (until finish() sorts them), and the starts of those still open.
  std::size_t closed_count() const { return done_.size(); }
  const ClosedRebalance& closed(std::size_t i) const { return done_[i]; }
  void open_starts(std::vector<std::int64_t>& out) const {
    for (const auto& [g, rs] : open_)
      for (const auto& r : rs) out.push_back(r.start_us);
  }

 private:
  static std::string str(std::string_view v) { return std::string(v); }
  // --- fleets: autoscaler decisions (issue 38) ---
  /// One scaling action and the counters when it happened (what it caused is counted up to the
  /// next action of the same group, or the end).
  struct ScalingAction {
    std::int64_t t_us = 0;
    std::string deployment, group, reason;
    std::int64_t from = 0, to = 0, lag = 0;
    std::int64_t duplicates_before = 0;
    std::int64_t unavailable_before = 0;
  };
  /// Two actions of one deployment in opposite directions this close together are a flap.
  static constexpr std::int64_t kFlapWindowUs = 300'000'000;
  void on_scaling(const trace::AutoscalerDecision& e, std::int64_t t) {
    scaling_.push_back({t, str(e.deployment), str(e.group), str(e.reason), e.from, e.to, e.lag,
                        duplicates_, clock_.unavailable_us_of(str(e.group), t)});
  }
  std::vector<ScalingAction> scaling_;
  ojson scaling_entries(ojson& metrics) const;
  ojson scaling_drain_ms(const ScalingAction& a, std::int64_t rebalance_end) const;
  /// Whether the JSON list of partition names holds exactly `set`'s partitions, in its order.
  static bool same_partitions(const ojson& list, const PartitionSet& set) {
    if (!list.is_array() || list.size() != set.size()) return false;
    auto it = set.begin();
    for (const auto& p : list) {
      if (!p.is_string() || p.get_ref<const std::string&>() != *it) return false;
      ++it;
    }
    return true;
  }
  /// The publishers list partitions in Kafka's order: each name is tried at the set's end first,
  /// one comparison instead of a walk down the tree (the same set whatever the order).
  static PartitionSet partition_set(trace::Partitions ps) {
    PartitionSet out;
    for (const auto& tp : ps) out.emplace_hint(out.end(), tp.str());
    return out;
  }
  /// Calls f(p) for each p of `a` that `b` does not hold (as `b.count(p) == 0` would say): one
  /// walk of both sets (both in Kafka's order), no lookup per partition.
  /// With `f(p, i)`, also p's index in `a`.
  template <class F>
  static void for_each_missing(const PartitionSet& a, const PartitionSet& b, F&& f) {
    const PartitionLess less;
    auto it = b.begin();
    std::size_t i = 0;
    for (auto pa = a.begin(); pa != a.end(); ++pa, ++i) {
      while (it != b.end() && less(*it, *pa)) ++it;
      if (it == b.end() || less(*pa, *it)) {
        if constexpr (std::is_invocable_v<F&, const std::string&, std::size_t>)
          f(*pa, i);
        else
          f(*pa);
      }
    }
  }
  /// Calls f(i, j) for each partition both hold, at index i in `a` and j in `b`.
  template <class F>
  static void for_each_kept(const PartitionSet& a, const PartitionSet& b, F&& f) {
    const PartitionLess less;
    auto it = b.begin();
    std::size_t j = 0;
    std::size_t i = 0;
    for (auto pa = a.begin(); pa != a.end(); ++pa, ++i) {
      while (it != b.end() && less(*it, *pa)) ++it, ++j;
      if (it != b.end() && !less(*pa, *it)) f(i, j);
    }
  }

  // --- records and lag ---
  void on_records_fetched(const trace::RecordsFetched& e, std::int64_t t) {
    InHandEntry* in = in_hand(e.consumer, e.consumer_slot);
    if (in == nullptr) in = &*in_hand_.emplace(str(e.consumer), InHand{}).first;
    remember_slot(e.consumer_slot, in);
    auto& pending = in->second;
    pending.first = e.batch;
    pending.second.clear();  // keeps its capacity: no allocation per batch
    auto& [group, table] = group_records(e.group);
    for (const auto& range : e.ranges) table.prefetch(range.partition);
    std::int64_t delivered = 0, duplicates = 0;
    for (const auto& range : e.ranges) {
      const Range offsets{range.first, range.last};
      const std::string* topic = nullptr;
      PartitionRecords& r = table.find_or_add(range.partition, nullptr, &topic);
      duplicates += r.add_delivered(offsets);
      delivered += offsets.second - offsets.first + 1;
      pending.second.push_back({&group, topic, range.partition.partition, &r, offsets});
    }
    if (window_.contains(t)) {
      delivered_ += delivered;
      duplicates_ += duplicates;
    }
    if (steady_from_) {
      steady_counts_.delivered += delivered;
      steady_counts_.duplicates += duplicates;
    }
  }
  void on_records_processed(const trace::RecordsProcessed& e, std::int64_t t) {
    InHandEntry* const it = in_hand(e.consumer, e.consumer_slot);
    if (it == nullptr || it->second.first != e.batch) return;
    // The consumer's entry is made (as its first processed range in the window made it) once.
    Consumer* consumer = nullptr;
    if (window_.contains(t) && !it->second.second.empty()) {
      if (it->second.consumer == nullptr)
        it->second.consumer = &consumers_[str(e.consumer)];  // map nodes stay put
      consumer = it->second.consumer;
    }
    for (const auto& range : it->second.second) __builtin_prefetch(range.records);
    std::int64_t processed = 0;
    for (const auto& [group, topic, partition, records, offsets] : it->second.second) {
      // The entry the fetch found (table slots never move), unless the group differs.
      PartitionRecords& r =
          *group == e.group
              ? *records
              : group_records(e.group).second.find_or_add(rsim::TopicPartition{*topic, partition});
      r.add_processed(offsets);
      processed += offsets.second - offsets.first + 1;
    }
    if (consumer != nullptr) {
      processed_ += processed;
      consumer->records_processed += processed;
      if (steady_from_) {  // the steady window's builder would have made its entry too
        steady_counts_.processed += processed;
        consumer->steady_records_processed += processed;
        consumer->steady_processed = true;
      }
    }
    it->second.first = -1;  // none in hand (batches count from 1); the entry stays for reuse
    it->second.second.clear();
  }
  void on_position(const trace::Position& e) {
    if (e.partition == nullptr) return;
    auto& r = group_records(e.group).second.find_or_add(*e.partition);
    r.position(e.offset);
  }
  void on_lag(const trace::Lag& e, std::int64_t t) {
    if (e.partition == nullptr) return;
    if (window_.contains(t)) max_lag_ = std::max(max_lag_, e.lag);
    if (steady_from_) steady_counts_.max_lag = std::max(steady_counts_.max_lag, e.lag);
    if (last_lag_ == nullptr || last_lag_->first != e.group) {
      auto g = latest_lag_.find(e.group);
      if (g == latest_lag_.end()) g = latest_lag_.emplace(str(e.group), GroupLag{}).first;
      last_lag_ = &*g;
    }
    auto* g = last_lag_;
    GroupLag& gl = g->second;
    // The group's total and its partitions without an owner, kept up to date: a flush costs
    // O(1) per group, not O(partitions) (owner changes come at many instants of a rebalance).
    const bool owned = e.owner.value.has_value();
    bool inserted = false;
    LatestLag& latest = gl.latest.find_or_add(*e.partition, &inserted);
    if (inserted) {
      gl.total += e.lag;
      if (!owned) ++gl.unowned;
    } else {
      gl.total += e.lag - latest.lag;
      gl.unowned += (owned ? 0 : 1) - (latest.owned ? 0 : 1);
    }
    latest = LatestLag{e.lag, owned};
    if (!gl.touched) {
      gl.touched = true;
      lag_touched_.push_back(&*g);
    }
  }
  void flush_lag() {
    // Groups in name order, as the set of names this replaces gave them.
    std::sort(lag_touched_.begin(), lag_touched_.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (auto* g : lag_touched_) {
      g->second.touched = false;
      group_lag_[g->first].push_back({lag_t_, g->second.total, g->second.unowned == 0});
    }
    lag_touched_.clear();
  }

  // --- the __consumer_offsets records ---
  void on_record(const trace::Record& rec, std::int64_t t) {
    if (const trace::OffsetCommitValue* c = rec.value.commit; c != nullptr) {
      if (whole_ != nullptr) return;  // offsets are read by the whole run's builder
      // The typed OffsetCommit (a live run's): what the JSON branch below reads, unparsed.
      commit_topic_.topic.assign(c->topic);  // reused: no allocation per record
      commit_topic_.partition = c->partition_index;
      auto& r = group_records(c->group).second.find_or_add(commit_topic_);
      r.committed(c->committed_offset);
      return;
    }
    if (rec.value.object == nullptr) return;
    const ojson& e = *rec.value.object;
    const auto kind = e.find("record");
    if (kind == e.end() || !kind->is_string()) return;
    const std::string& record = kind->get_ref<const std::string&>();
    const bool tombstone = e.value("tombstone", false);
    if (record == "OffsetCommit" && !tombstone) {
      if (whole_ != nullptr) return;
      auto& r =
          group_records(e.at("group").get_ref<const std::string&>())
              .second.find_or_add(rsim::TopicPartition{
                  e.at("topic").get<std::string>(), e.at("partition_index").get<std::int32_t>()});
      const auto offset = e.at("committed_offset").get<std::int64_t>();
      r.committed(offset);
    } else if (record == "ConsumerGroupMemberMetadata" ||
               record == "ConsumerGroupCurrentMemberAssignment") {
      const std::string member_id = e.at("member_id").get<std::string>();
      if (tombstone) {
        remove_member(member_id, t);
        return;
      }
      auto [mit, created] = members_.try_emplace(member_id);
      CoordinatorMember& m = mit->second;
      if (created) {
        const auto& [id, dense] = intern(member_id);
        m.interned = &id;
        m.dense = dense;
        m.wait_key = WaitSet::key_of(member_id);
        member_of_dense_[dense] = &m;
      }
      std::string group = e.at("group").get<std::string>();
      if (created || group != m.group) {
        if (!created) unindex_group_member(m.group, member_id);
        m.group = group;
        index_group_member(group, m);
      }
      m.group = std::move(group);
      std::string consumer = e.value("consumer", "");
      if (consumer != m.consumer) {
        unindex_member(m.consumer, member_id);
        members_by_consumer_[consumer].insert(member_id);
        m.consumer = std::move(consumer);
      }
      touch_member(m.dense);
      if (record == "ConsumerGroupCurrentMemberAssignment") {
        set_epoch(m, e.at("member_epoch").get<std::int64_t>());
        m.stable = e.value("state", 0) == 0;
        // An epoch bump mostly leaves the partitions as they were: the set is rebuilt only when the
        // record's list (in the set's order when unchanged) differs from it.
        const auto a = e.find("assigned");
        if (a == e.end() ? !m.assigned.empty() : !same_partitions(*a, m.assigned)) {
          m.assigned = PartitionSet{};
          if (a != e.end())  // in Kafka's order: tried at the end first (partition_set)
            for (const auto& p : *a)
              m.assigned.emplace_hint(m.assigned.end(), p.get<std::string>());
        }
        reevaluate(m.group, member_id, t);
      }
    }
  }
  void on_member_epoch(const trace::MemberEpoch& e, std::int64_t t) {
    if (e.member_id.empty()) return;
    const std::string member_id = str(e.member_id);
    const auto it = members_.find(member_id);
    if (it == members_.end()) return;
    set_epoch(it->second, e.epoch);
    it->second.stable = e.state == "STABLE";
    touch_member(it->second.dense);
    reevaluate(it->second.group, member_id, t);
  }
  void remove_member(const std::string& member_id, std::int64_t t) {
    const auto it = members_.find(member_id);
    if (it == members_.end()) return;
    const std::string group = it->second.group;
    const std::uint32_t dense = it->second.dense;
    unindex_member(it->second.consumer, member_id);
    unindex_group_member(group, member_id);
    member_of_dense_[dense] = nullptr;
    members_.erase(it);
    // A member fenced or removed leaves the wait of every open rebalance.
    for (auto& r : open_[group]) {
      r.waiting.erase(member_id);
      r.members.erase(member_id);
    }
    touch_member(dense);
    dirty_.insert(group);
    dirty_t_ = t;
  }

  // --- consumers (the application's view) ---
  void on_consumer_start(const trace::ConsumerStart& e, std::int64_t t) {
    const std::string name = str(e.consumer);
    Consumer& c = consumers_[name];
    if (c.live) {  // a start without an end of the previous incarnation: end it first
      for (OwnershipClock::State* st : owned_entries(c, t)) disown(name, *st, t);
      for (const auto& topic : c.topics) clock_.subscribe(c.group, topic, -1, t);
      live(c.group, -1, t);
    }
    c.group = str(e.group);
    c.member_id = str(e.member_id.value_or(""));
    c.topics.clear();
    for (const auto& tp : e.topics) c.topics.insert(tp);
    c.owned.clear();
    c.owned_entries.clear();
    c.owned_entries_valid = true;
    c.live = true;
    c.paused = false;
    c.closing = false;
    c.stalled = false;
    c.assigned = false;
    c.started_us = t;
    c.callbacks_running = 0;
    c.leave_revoked.clear();
    touch_consumer(name);
    for (const auto& topic : c.topics) clock_.subscribe(c.group, topic, +1, t);
    live(c.group, +1, t);
    // A classic member that starts while its group rebalances joins that rebalance.
    auto& rs = open_[c.group];
    if (!rs.empty() && !rs.back().consumer_protocol && !rs.back().settled_us)
      rs.back().add_cause(fmt_member(name, "joined"));
  }
  void on_pause(std::string_view consumer, std::int64_t t, bool pause) {
    const std::string name = str(consumer);
    Consumer& c = consumers_[name];
    if (pause && !c.paused) c.paused_since = t;
    if (!pause && c.paused) c.paused_us += window_.clip(c.paused_since, t);
    c.paused = pause;
    if (c.live)
      for (const auto& p : c.owned) own(c, name, p, t);
  }
  void on_subscribe(const trace::ConsumerSubscribe& e, std::int64_t t) {
    Consumer& c = consumers_[str(e.consumer)];
    if (c.live)
      for (const auto& topic : c.topics) clock_.subscribe(c.group, topic, -1, t);
    c.topics.clear();
    for (const auto& tp : e.topics) c.topics.insert(tp);
    if (c.live)
      for (const auto& topic : c.topics) clock_.subscribe(c.group, topic, +1, t);
  }
  void on_gone(std::string_view consumer, std::int64_t t) {
    const std::string name = str(consumer);
    // A static member gone without leaving: its group.instance.id stays held by the dead member.
    if (const auto it = instance_ids_.of.find(name); it != instance_ids_.of.end()) {
      instance_ids_.unreleased.try_emplace(it->second, InstanceIds::Held{name, t});
      instance_ids_.of.erase(it);  // its next incarnation joins again
    }
    Consumer& c = consumers_[name];
    if (c.paused) c.paused_us += window_.clip(c.paused_since, t);
    c.paused = false;
    if (c.live) {
      for (OwnershipClock::State* st : owned_entries(c, t)) disown(name, *st, t);
      for (const auto& topic : c.topics) clock_.subscribe(c.group, topic, -1, t);
      live(c.group, -1, t);
    }
    c.live = false;
    c.closing = false;
    c.stalled = false;
    c.callbacks_running = 0;
    c.owned.clear();
    c.owned_entries.clear();
    c.owned_entries_valid = true;
    c.leave_revoked.clear();
    touch_consumer(name);
    for (auto& r : open_[c.group])
      if (!r.consumer_protocol) r.waiting.erase(name);
    // Its member (consumer protocol) stays until the coordinator removes it; it waits on the
    // coordinator's side only from now on.
    reevaluate(c.group, c.member_id, t);
    close_done(c.group, t);
  }
  void on_assignment(const trace::Assignment& e, std::int64_t t) {
    const std::string name = str(e.consumer);
    Consumer& c = consumers_[name];
    PartitionSet now_owned = partition_set(e.owned);
    if (c.live) {
      // The partitions given up, then those taken, each set in its order; the entries of the
      // partitions kept carry over to the new set's.
      const std::vector<OwnershipClock::State*>& was = owned_entries(c, t);
      for_each_missing(c.owned, now_owned,
                       [&](const std::string&, std::size_t i) { disown(name, *was[i], t); });
      std::vector<OwnershipClock::State*> is(now_owned.size());
      for_each_missing(now_owned, c.owned,
                       [&](const std::string& p, std::size_t i) { is[i] = &own(c, name, p, t); });
      for_each_kept(now_owned, c.owned, [&](std::size_t i, std::size_t j) { is[i] = was[j]; });
      c.owned_entries = std::move(is);
      c.owned_entries_valid = true;
    } else {
      c.owned_entries_valid = false;
    }
    c.owned = std::move(now_owned);
    if (c.live) c.assigned = true;
    touch_consumer(name);
    reevaluate(c.group, c.member_id, t);
  }
  void on_callback(const trace::Callback& e, std::int64_t t) {
    const std::string name = str(e.consumer);
    Consumer& c = consumers_[name];
    const std::string_view cb = e.callback;
    const bool start = e.phase == "start";
    touch_consumer(name);  // callbacks_running changes
    if (start) {
      ++c.callbacks_running;
      if (c.callbacks_running == 1) refresh_active(c, name, t);
      if (cb == "onPartitionsRevoked" && window_.contains(t))
        revocations_ += static_cast<std::int64_t>(e.partitions.size());
      const PartitionSet parts = partition_set(e.partitions);
      if (Rebalance* r = rebalance_of(c)) {
        auto& target = cb == "onPartitionsRevoked" ? r->revoked
                       : cb == "onPartitionsLost"  ? r->lost
                                                   : r->assigned;
        target[name].insert(parts.begin(), parts.end());
      } else if (c.closing && cb == "onPartitionsRevoked") {
        c.leave_revoked[name].insert(parts.begin(), parts.end());
      }
      return;
    }
    c.callbacks_running = std::max(0, c.callbacks_running - 1);
    if (c.callbacks_running == 0) refresh_active(c, name, t);
    if (cb == "onPartitionsAssigned") {
      for (auto& r : open_[c.group]) {
        if (r.consumer_protocol || !r.settled_us) continue;
        r.waiting.erase(name);
      }
    }
    reevaluate(c.group, c.member_id, t);
    close_done(c.group, t);
  }
  // --- unreleased instance ids (static members, KIP-345) ---
  void on_static_join(const trace::MemberJoin& e) {
    if (!e.group_instance_id || e.consumer.empty()) return;
    const std::pair<std::string, std::string> id{str(e.group), str(*e.group_instance_id)};
    instance_ids_.of[str(e.consumer)] = id;
    instance_ids_.unreleased.erase(id);
  }
  /// A new member took the id over (KIP-345's replacement): the id is its holder's now, released
  /// by the dead one if it was held; a live old holder is fenced and leaves it.
  void on_instance_id_taken_over(const trace::MemberReplaced& e) {
    const std::pair<std::string, std::string> id{str(e.group), str(e.group_instance_id)};
    instance_ids_.unreleased.erase(id);
    for (auto it = instance_ids_.of.begin(); it != instance_ids_.of.end();)
      it = it->second == id ? instance_ids_.of.erase(it) : std::next(it);
    if (!e.consumer.empty()) instance_ids_.of[str(e.consumer)] = id;
  }
  void on_static_leave(const trace::MemberLeave& e, std::int64_t t) {
    // The dead member the coordinator removes: the one whose id is held.
    for (auto it = instance_ids_.unreleased.begin(); it != instance_ids_.unreleased.end(); ++it) {
      if (it->first.first != str(e.group) || it->second.consumer != str(e.consumer)) continue;
      moment(it->second.since_us, "unreleased_instance_id", it->second.consumer,
             "group.instance.id " + it->first.second +
                 " not released: held by the dead member for " +
                 fmt_ms_us(t - it->second.since_us) + " ms, until the coordinator removed it (" +
                 str(e.reason) + ")");
      instance_ids_.unreleased.erase(it);
      return;
    }
    const auto of = instance_ids_.of.find(str(e.consumer));
    if (of != instance_ids_.of.end() && of->second.first == str(e.group))
      instance_ids_.of.erase(of);
  }
  static std::string fmt_ms_us(std::int64_t us) {
    std::string frac =
        std::to_string(1000 + us % 1000).substr(1);  // three digits, trailing zeros dropped
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return std::to_string(us / 1000) + (frac.empty() ? "" : "." + frac);
  }

  void on_member_leave(const trace::MemberLeave& e) {
    auto& rs = open_[str(e.group)];
    // Classic: a member leaving while the group rebalances joins that rebalance's causes (the
    // consumer protocol says so with the group epoch bump's reason).
    if (!rs.empty() && !rs.back().consumer_protocol && !rs.back().settled_us)
      rs.back().add_cause(
          fmt_member(e.consumer.empty() ? std::string("?") : str(e.consumer), "left the group"));
  }

  // --- processing (reports/availability.hpp) ---
  /// Whether the application processes what it owns: its process runs, it calls poll(), it has
  /// not begun close() and runs no rebalance callback.
  static bool active(const Consumer& c) {
    return c.live && !c.paused && !c.stalled && !c.closing && c.callbacks_running == 0;
  }
  OwnershipClock::State& own(const Consumer& c, const std::string& name, const std::string& p,
                             std::int64_t t) {
    // The ownership clock hands over the partition's entry, and with it the processing clock's.
    OwnershipClock::State& st = clock_.own(c.group, p, name, !c.paused, t);
    processing_.own(processing_of(st, t), name, active(c), t);
    return st;
  }
  void disown(const std::string& name, OwnershipClock::State& st, std::int64_t t) {
    processing_.disown(processing_of(clock_.disown(st, name, t), t), name, t);
  }
  /// The processing clock's entry of an ownership clock's partition (set by its refresh).
  ProcessingClock::State& processing_of(OwnershipClock::State& st, std::int64_t t) {
    if (st.processing == nullptr) st.processing = &processing_.entry(*st.key, t);
    return *st.processing;
  }
  /// c.owned's entries in the ownership clock, in its order.
  std::vector<OwnershipClock::State*>& owned_entries(Consumer& c, std::int64_t t) {
    if (!c.owned_entries_valid) {
      c.owned_entries.clear();
      for (const auto& p : c.owned) c.owned_entries.push_back(&clock_.entry(c.group, p, t));
      c.owned_entries_valid = true;
    }
    return c.owned_entries;
  }
  void live(const std::string& group, int delta, std::int64_t t) {
    clock_.live(group, delta, t);
    processing_.live(group, delta, t);
  }
  /// The consumer became (in)active: its owned partitions say so.
  void refresh_active(Consumer& c, const std::string& name, std::int64_t t) {
    if (!c.live) return;
    const bool a = active(c);
    // Through the owned partitions' entries (a callback's start and end each refresh them all:
    // four times an eager rebalance), not their names.
    for (OwnershipClock::State* st : owned_entries(c, t))
      processing_.own(processing_of(*st, t), name, a, t);
  }
  void on_stall(std::string_view consumer, std::int64_t t, bool stall) {
    const std::string name = str(consumer);
    Consumer& c = consumers_[name];
    if (c.stalled == stall) return;
    c.stalled = stall;
    refresh_active(c, name, t);
  }
  // --- decisive moments ---
  void moment(std::int64_t t, const char* kind, std::string_view consumer, std::string text) {
    if (!window_.contains(t)) return;
    ojson m;
    m["t_us"] = t;
    m["kind"] = kind;
    if (!consumer.empty()) m["consumer"] = str(consumer);
    m["text"] = std::move(text);
    moments_.push_back(std::move(m));
  }
  void on_fatal_error(const trace::ConsumerError& e, std::int64_t t) {
    if (window_.contains(t)) ++fatal_errors_;
    moment(t, "fatal_error", e.consumer,
           "fatal error " + str(e.error) +
               (e.where.empty() ? std::string() : " (" + str(e.where) + ")") +
               ": the consumer stopped");
  }
  /// The steady window starts at the end of the first instant `t` at which every consumer of
  /// the initial set is live, has received an assignment, runs no callback, no rebalance of its
  /// group is open and every partition its group wants has an owner.
  void steady_check(std::int64_t t) {
    if (!steady_wanted_ || steady_from_ || t < 0) return;
    for (const auto& name : steady_consumers_) {
      const auto it = consumers_.find(name);
      if (it == consumers_.end()) return;
      const Consumer& c = it->second;
      if (!c.live || !c.assigned || c.callbacks_running > 0) return;
      const auto rs = open_.find(c.group);
      if (rs != open_.end() && !rs->second.empty()) return;
      // A cooperative group between its revoking rebalance and the follow-up has partitions
      // nobody owns: not yet a stable assignment.
      if (processing_.unowned(c.group) > 0) return;
    }
    steady_from_ = t;
  }

  // --- the group (the coordinator's view) ---
  void on_group_state(const trace::GroupStateChange& e, std::int64_t t) {
    const std::string group = str(e.group);
    const std::string_view state = e.state;
    // A consumer-protocol rebalance opens with its new group epoch (group.epoch below): a
    // static member's temporary leave makes the group `reconciling` without one.
    if (state == "PreparingRebalance") {
      begin_classic(group, t, str(e.reason.value_or("")));
      return;
    }
    if (state != "Stable" && state != "Empty") return;
    auto& rs = open_[group];
    if (rs.empty() || rs.back().consumer_protocol || rs.back().settled_us) return;
    Rebalance& r = rs.back();
    r.settled_us = t;
    r.waiting.clear();
    // Classic: done when every live member of the new generation has run onPartitionsAssigned.
    if (state == "Stable")
      for (const auto& name : last_members_[group])
        if (consumers_.count(name) > 0 && consumers_[name].live) r.waiting.insert(name);
    close_done(group, t);
  }
  void on_group_epoch(const trace::GroupEpoch& e, std::int64_t t) {
    const std::string group = str(e.group);
    // Only a classic generation's members are read (a classic rebalance's Stable, in
    // on_group_state): a consumer-protocol bump's list of every member is not copied (a join
    // storm of n members bumps n times: n^2 names).
    if (e.generation || !e.epoch) last_members_[group].assign(e.members.begin(), e.members.end());
    if (e.generation) {
      auto& rs = open_[group];
      if (!rs.empty()) {
        rs.back().generation = *e.generation;
        rs.back().check_all = true;
      }
    }
    if (e.assignment_epoch) assignment_epoch_[group] = *e.assignment_epoch;
    if (e.epoch) {
      const std::int64_t epoch = *e.epoch;
      const auto last = group_epoch_.find(group);
      const bool bump = last == group_epoch_.end() || epoch > last->second;
      group_epoch_[group] = epoch;
      if (bump) begin_consumer(group, t, epoch, str(e.reason.value_or("")));
    }
  }

  /// An online migration: the rebalances open under the old protocol end with the conversion
  /// (the members carry their assignments over); the new protocol's own events open the next.
  void on_group_migration(const trace::GroupMigration& e, std::int64_t t) {
    if (e.refused) return;
    const std::string group(e.group);
    auto& rs = open_[group];
    while (!rs.empty()) close_at(group, 0, t, true);
    if (e.to == "consumer") {
      // The conversion writes the group epoch as it was (the classic generation): no bump.
      group_epoch_[group] = e.generation.value_or(0);
      assignment_epoch_[group] = e.generation.value_or(0);
    } else {
      group_epoch_.erase(group);
      assignment_epoch_.erase(group);
    }
  }

  // --- rebalances ---
  static std::string fmt_member(const std::string& name, const char* what) {
    return "member " + name + " " + what;
  }
  Rebalance& open_new(const std::string& group, std::int64_t t, const std::string& trigger,
                      bool consumer_protocol) {
    Rebalance r;
    r.group = group;
    r.start_us = t;
    r.trigger = trigger;
    r.add_cause(trigger);
    r.consumer_protocol = consumer_protocol;
    // onPartitionsRevoked that close() ran before the leave that opens this rebalance.
    for (auto& [name, c] : consumers_) {
      if (c.group != group || c.leave_revoked.empty()) continue;
      for (auto& [n, parts] : c.leave_revoked) r.revoked[n].insert(parts.begin(), parts.end());
      c.leave_revoked.clear();
    }
    auto& rs = open_[group];
    rs.push_back(std::move(r));
    return rs.back();
  }
  void begin_classic(const std::string& group, std::int64_t t, const std::string& reason) {
    auto& rs = open_[group];
    if (!rs.empty() && rs.back().settled_us) close_at(group, rs.size() - 1, t, true);
    if (!rs.empty()) {
      rs.back().add_cause(reason);  // merged into the rebalance in progress
      return;
    }
    open_new(group, t, reason, /*consumer_protocol=*/false);
  }
  /// Consumer protocol (KIP-848): a rebalance runs from a group epoch bump until every member at
  /// that epoch has reconciled to its target. A bump that comes before the previous bump's target
  /// was computed (the assignment interval) is folded into it: one target, several causes.
  void begin_consumer(const std::string& group, std::int64_t t, std::int64_t epoch,
                      const std::string& reason) {
    auto& rs = open_[group];
    Rebalance* r = nullptr;
    if (!rs.empty() && rs.back().consumer_protocol &&
        assignment_epoch_[group] < rs.back().generation) {
      r = &rs.back();
      r->add_cause(reason);
    } else {
      r = &open_new(group, t, reason, /*consumer_protocol=*/true);
    }
    r->generation = epoch;
    r->waiting.clear();
    r->members.clear();
    r->to_check.clear();
    // The wait is every member of the group, but only a member whose epoch is already at the
    // bump's (its record came first) or below 0 can be reconciled at it: any other is not, and
    // stays so until its state changes, which touch_member() notes. So only those are looked at
    // when the group settles, not the whole wait (a join storm of n members bumps n times).
    if (const auto gm = group_members_.find(group); gm != group_members_.end()) {
      r->members.reserve(gm->second.size());
      // One walk of the group's own array (every field it reads is there): no member's node.
      for (const GroupMember& gm_entry : gm->second) {
        r->members.push_back(gm_entry.key, gm_entry.id, gm_entry.dense);  // in id order
        if (gm_entry.epoch < 0 || gm_entry.epoch >= epoch) r->to_check.push_back(gm_entry.dense);
      }
    }
    r->check_all = false;
    dirty_.insert(group);
    dirty_t_ = t;
  }
  /// A member has reconciled to the target of epoch `epoch` when the coordinator has it STABLE at
  /// that epoch or later and, if its application is alive, the application owns exactly what the
  /// coordinator assigned it and runs no rebalance callback. `found` is its member (nullptr: not
  /// a member).
  bool reconciled(const std::string& member_id, const CoordinatorMember* found,
                  std::int64_t epoch) const {
    if (found == nullptr) return true;
    const CoordinatorMember& m = *found;
    if (m.epoch < 0) return true;  // a static member's temporary leave (epoch -2): not waited for
    if (m.epoch < epoch || !m.stable) return false;
    const auto c = consumers_.find(m.consumer);
    if (c == consumers_.end() || !c->second.live || c->second.member_id != member_id) return true;
    return c->second.callbacks_running == 0 && c->second.owned == m.assigned;
  }
  /// Marks `group` for a look at its waiting members once every event of this instant is in:
  /// the application's assignment, its callbacks and the coordinator's records of one instant
  /// come in some order, and the callbacks of that instant belong to the rebalance they complete.
  void reevaluate(const std::string& group, const std::string& member_id, std::int64_t t) {
    if (member_id.empty()) return;
    dirty_.insert(group);
    dirty_t_ = t;
  }
  /// The member's state changed: the open rebalances waiting for it look at it again when their
  /// group settles (the others need not: nothing reconciled() reads of them changed).
  /// `dense` is the interned id's dense number. A member not (or no longer) in a wait is found
  /// missing when the group settles, as it would be here.
  /// Once a rebalance has noted as many members as its wait has slots, it looks at its whole
  /// wait instead (the same answer: a member not noted is unchanged): noting stays O(1) and the
  /// notes never outgrow the wait, however long the group goes without settling.
  void touch_member(std::uint32_t dense) {
    for (auto& [g, rs] : open_)
      for (auto& r : rs) {
        if (!r.consumer_protocol || r.check_all) continue;
        if (r.to_check.size() >= r.members.size()) {
          r.check_all = true;
          r.to_check.clear();
        } else {
          r.to_check.push_back(dense);
        }
      }
  }
  /// The application `name` changed: every member it is (or was) the application of.
  void touch_consumer(const std::string& name) {
    const auto it = members_by_consumer_.find(name);
    if (it == members_by_consumer_.end()) return;
    for (const auto& id : it->second) touch_member(interned_ids_.find(id)->second);
  }
  /// A member of a group's array, in id order: what a bump's fill reads of it, copied (its key,
  /// dense number and epoch), so that the fill walks one array and reads no member's node.
  struct GroupMember {
    std::uint64_t key;  // WaitSet::key_of(*id)
    const std::string* id;
    std::int64_t epoch;  // the member's epoch (set_epoch keeps it equal to CoordinatorMember's)
    std::uint32_t dense;
  };
  using GroupMembers = std::vector<GroupMember>;  // by id
  /// The first entry not below `id` (its key compared first: the array's own bytes; the id's
  /// string only on equal keys).
  static GroupMembers::iterator find_in(GroupMembers& v, const std::string& id) {
    const std::uint64_t key = WaitSet::key_of(id);
    return std::lower_bound(v.begin(), v.end(), id,
                            [key](const GroupMember& a, const std::string& b) {
                              return a.key != key ? a.key < key : *a.id < b;
                            });
  }
  void index_group_member(const std::string& group, const CoordinatorMember& m) {
    auto& v = group_members_[group];
    v.insert(find_in(v, *m.interned), GroupMember{m.wait_key, m.interned, m.epoch, m.dense});
  }
  void unindex_group_member(const std::string& group, const std::string& id) {
    const auto g = group_members_.find(group);
    if (g == group_members_.end()) return;
    const auto it = find_in(g->second, id);
    if (it != g->second.end() && *it->id == id) g->second.erase(it);
  }
  /// The member's epoch, in its node and in its group's array.
  void set_epoch(CoordinatorMember& m, std::int64_t epoch) {
    m.epoch = epoch;
    const auto g = group_members_.find(m.group);
    if (g == group_members_.end()) return;
    const auto it = find_in(g->second, *m.interned);
    if (it != g->second.end() && it->id == m.interned) it->epoch = epoch;
  }
  /// Whether every group's array holds exactly its members (by id, in id order), each with its
  /// member's key, dense number and epoch: what the index test checks after joins, leaves and
  /// fencing.
  bool group_index_consistent() const {
    std::size_t indexed = 0;
    for (const auto& [group, v] : group_members_) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        const GroupMember& e = v[i];
        if (i > 0 && !(*v[i - 1].id < *e.id)) return false;
        const auto m = members_.find(*e.id);
        if (m == members_.end() || m->second.group != group || m->second.interned != e.id ||
            m->second.epoch != e.epoch || m->second.dense != e.dense ||
            m->second.wait_key != e.key || member_of_dense_[e.dense] != &m->second)
          return false;
      }
      indexed += v.size();
    }
    return indexed == members_.size();
  }
  void unindex_member(const std::string& consumer, const std::string& member_id) {
    const auto it = members_by_consumer_.find(consumer);
    if (it == members_by_consumer_.end()) return;
    it->second.erase(member_id);
    if (it->second.empty()) members_by_consumer_.erase(it);
  }
  void settle() {
    for (const auto& group : dirty_) {
      for (auto& r : open_[group]) {
        if (!r.consumer_protocol) continue;
        if (r.check_all) {
          // Every waiting member, each found by its dense number (no lookup by id).
          for (std::size_t i = 0; i < r.members.size(); ++i) {
            if (!r.members.live(i)) continue;
            const std::string& id = r.members.at(i);
            if (reconciled(id, member_of_dense(r.members.dense_at(i), id), r.generation))
              r.members.erase_at(i);
          }
        } else {
          // Only the members whose state changed: the others are still not reconciled.
          std::sort(r.to_check.begin(), r.to_check.end());
          r.to_check.erase(std::unique(r.to_check.begin(), r.to_check.end()), r.to_check.end());
          // Each by its dense number: its slot in the wait and its member, one read each.
          for (const std::uint32_t d : r.to_check)
            if (const std::size_t w = r.members.find_dense(d);
                w != WaitSet::npos &&
                reconciled(r.members.at(w), member_of_dense_[d], r.generation))
              r.members.erase_at(w);
        }
        r.check_all = false;
        r.to_check.clear();
      }
      close_done(group, dirty_t_);
    }
    dirty_.clear();
  }
  /// The open rebalance a callback of `c` belongs to: the oldest that still waits for it, else the
  /// newest one.
  Rebalance* rebalance_of(const Consumer& c) {
    auto& rs = open_[c.group];
    if (rs.empty()) return nullptr;
    for (auto& r : rs)
      if (r.consumer_protocol ? r.members.count(c.member_id) : false) return &r;
    return &rs.back();
  }
  void close_done(const std::string& group, std::int64_t t) {
    auto& rs = open_[group];
    for (std::size_t i = 0; i < rs.size();) {
      Rebalance& r = rs[i];
      const bool done =
          r.consumer_protocol ? r.members.empty() : (r.settled_us && r.waiting.empty());
      if (done) {
        close_at(group, i, t, true);
      } else {
        ++i;
      }
    }
  }
  void close_at(const std::string& group, std::size_t i, std::int64_t at, bool completed) {
    auto& rs = open_[group];
    Rebalance r = std::move(rs[i]);
    rs.erase(rs.begin() + static_cast<std::ptrdiff_t>(i));
    // Only its entry's text stays (ClosedRebalance): the partition sets, the wait (a few hundred
    // KiB at 10,000 members) and the causes go with the Rebalance.
    r.end_us = std::max(at, r.settled_us.value_or(r.start_us));
    r.completed = completed;
    ClosedRebalance c{r.group, r.start_us, r.end_us, r.generation, {}, 0, 0};
    if (write_rebalances_ && window_.contains(r.start_us)) {
      c.entry = entry_text(r);
      if (spool_ != nullptr) {
        c.spool_at = spool_->append(c.entry);
        c.spool_size = c.entry.size();
        c.entry = std::string();
      }
    }
    done_.push_back(std::move(c));
  }
  /// The rebalance's entry of `rebalances` up to `assigned`, as compact JSON text.
  static std::string entry_text(const Rebalance& r) {
    ojson j;
    j["group"] = r.group;
    j["start_us"] = r.start_us;
    j["end_us"] = r.end_us;
    j["duration_ms"] = ms_of(r.end_us - r.start_us);
    j["trigger"] = r.trigger;
    j["causes"] = r.causes;
    j["generation"] = r.generation;
    j["completed"] = r.completed;
    // The partition maps are written as text after the fields above: the same bytes as dump()
    // of the whole entry, without its tree of every partition name.
    std::string text = j.dump();
    text.pop_back();  // the closing brace
    text += ",\"revoked\":";
    append_partition_map(text, r.revoked);
    text += ",\"lost\":";
    append_partition_map(text, r.lost);
    text += ",\"assigned\":";
    append_partition_map(text, r.assigned);
    text += '}';
    return text;
  }
  void take_final() {
    final_taken_ = true;
    final_ = ojson::object();
    for (const auto& [name, c] : consumers_)
      if (c.live) put_new(final_, name, partition_list(c.owned));
  }

  struct LagPoint {
    std::int64_t t_us;
    std::int64_t total;
    bool all_owned;  // every partition with a lag had an owner
  };

  Window window_;
  OwnershipClock clock_;
  ProcessingClock processing_;
  std::vector<std::string> steady_consumers_;
  bool steady_wanted_ = false;
  std::optional<std::int64_t> steady_from_;
  std::int64_t fatal_errors_ = 0;
  ojson moments_ = ojson::array();
  /// Static members' group.instance.ids: which (group, id) each consumer holds, and those still
  /// held by a member whose process is gone (since when), until it leaves or the id is taken over.
  struct InstanceIds {
    struct Held {
      std::string consumer;
      std::int64_t since_us = 0;
    };
    std::map<std::string, std::pair<std::string, std::string>> of;
    std::map<std::pair<std::string, std::string>, Held> unreleased;
  } instance_ids_;
  std::map<std::string, Consumer> consumers_;
  std::map<std::string, CoordinatorMember> members_;  // by member id (consumer protocol)
  std::map<std::string, std::set<std::string>>
      members_by_consumer_;  // consumer -> its members' ids
  // Every member id seen, never erased, and its dense number (0, 1, 2, ... in the order seen).
  std::map<std::string, std::uint32_t> interned_ids_;
  // The member (members_'s entry) of each dense number, nullptr while it is not a member.
  std::vector<CoordinatorMember*> member_of_dense_;
  const std::pair<const std::string, std::uint32_t>& intern(const std::string& id) {
    const auto [it, fresh] =
        interned_ids_.try_emplace(id, static_cast<std::uint32_t>(member_of_dense_.size()));
    if (fresh) member_of_dense_.push_back(nullptr);
    return *it;
  }
  /// members_'s entry of `id`, whose dense number is `dense` (kNoDense: looked up by the id).
  const CoordinatorMember* member_of_dense(std::uint32_t dense, const std::string& id) const {
    if (dense != WaitSet::kNoDense) return member_of_dense_[dense];
    const auto m = members_.find(id);
    return m == members_.end() ? nullptr : &m->second;
  }
  // Each group's members_ (by their group), in id order: what a bump's wait is filled from.
  std::map<std::string, GroupMembers> group_members_;
  std::map<std::string, std::vector<std::string>>
      last_members_;  // group -> members of its last classic generation
  std::map<std::string, std::int64_t> group_epoch_, assignment_epoch_;
  std::map<std::string, std::vector<Rebalance>> open_;  // per group, oldest first
  std::vector<ClosedRebalance> done_;
  EntrySpool* spool_ = nullptr;
  bool write_rebalances_ = true;
  std::int64_t end_t_ = 0;
  std::int64_t duration_us_ = -1;
  // group -> partition -> its offsets (only ever looked up, and summed over in finish(): an
  // integer sum, the order does not matter).
  using GroupRecords = std::pair<const std::string, PartitionTable<PartitionRecords>>;
  std::map<std::string, PartitionTable<PartitionRecords>, std::less<>> records_;
  GroupRecords* last_records_ = nullptr;  // the group looked up last (map nodes never move)
  GroupRecords& group_records(std::string_view group) {
    if (last_records_ != nullptr && last_records_->first == group) return *last_records_;
    auto it = records_.find(group);
    if (it == records_.end()) it = records_.try_emplace(std::string(group)).first;
    last_records_ = &*it;
    return *it;
  }
  // Each consumer's batch in hand (fetched, not yet processed): batch number and ranges, each
  // with its records_ entry (and that entry's group and partition, the tables' own strings).
  struct InHandRange {
    const std::string* group;
    const std::string* topic;
    std::int32_t partition;
    PartitionRecords* records;
    Range offsets;
  };
  struct InHand {
    std::int64_t first = -1;  // the batch in hand (batches count from 1)
    std::vector<InHandRange> second;
    Consumer* consumer = nullptr;  // its consumers_ entry, once one was made
  };
  // Looked up twice per batch by name; never iterated (no order reaches the output).
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, InHand, NameHash, std::equal_to<>> in_hand_;
  rsim::TopicPartition commit_topic_;  // a typed OffsetCommit's partition (its string reused)
  using InHandEntry = std::pair<const std::string, InHand>;
  // The entries by the events' consumer_slot (hash nodes never move), checked by name: a
  // consumer's batches are found without hashing its name.
  std::vector<InHandEntry*> in_hand_by_slot_;
  InHandEntry* in_hand(std::string_view consumer, std::uint32_t slot) {
    if (slot < in_hand_by_slot_.size()) {
      InHandEntry* e = in_hand_by_slot_[slot];
      if (e != nullptr && e->first == consumer) return e;
    }
    const auto it = in_hand_.find(consumer);
    return it == in_hand_.end() ? nullptr : &*it;
  }
  void remember_slot(std::uint32_t slot, InHandEntry* e) {
    if (slot == 0) return;
    if (slot >= in_hand_by_slot_.size()) in_hand_by_slot_.resize(slot + 1, nullptr);
    in_hand_by_slot_[slot] = e;
  }
  std::int64_t delivered_ = 0, processed_ = 0, duplicates_ = 0, revocations_ = 0, max_lag_ = 0;
  /// The same counts since steady_from_ (what the steady window's builder reports).
  struct RecordCounts {
    std::int64_t delivered = 0, processed = 0, duplicates = 0, max_lag = 0;
  } steady_counts_;
  /// Set on the steady window's builder: the whole run's builder, which reads the records.
  const SummaryBuilder* whole_ = nullptr;
  /// The lag series per group: this builder's, or the whole run's (the same series).
  const std::map<std::string, std::vector<LagPoint>>& lag_points() const {
    return whole_ != nullptr ? whole_->group_lag_ : group_lag_;
  }
  struct LatestLag {
    std::int64_t lag = 0;
    bool owned = false;
  };
  /// A group's latest lag per partition (only summed, never listed), their total and how many
  /// have no owner.
  struct GroupLag {
    PartitionTable<LatestLag> latest;
    std::int64_t total = 0;
    std::int64_t unowned = 0;
    bool touched = false;  // in lag_touched_
  };
  std::map<std::string, GroupLag, std::less<>> latest_lag_;
  std::pair<const std::string, GroupLag>* last_lag_ = nullptr;  // looked up last (nodes never move)
  std::map<std::string, std::vector<LagPoint>> group_lag_;
  std::vector<std::pair<const std::string, GroupLag>*> lag_touched_;  // groups with lag at lag_t_
  std::int64_t lag_t_ = -1;
  bool final_taken_ = false;
  ojson final_;
  std::set<std::string> dirty_;  // groups whose waiting members to look at when the instant ends
  std::int64_t dirty_t_ = 0;
};

ojson SummaryBuilder::finish(const SummaryInputs& inputs, bool entries) {
  // The steady window's builder: a consumer that it knows only from a batch it processed in the
  // window (only a hand-made trace has one) has its entry, as reading that batch made it.
  if (whole_ != nullptr)
    for (const auto& [name, c] : whole_->consumers_)
      if (c.steady_processed) consumers_.try_emplace(name);
  close_run();
  std::optional<std::int64_t> max_drain_us;
  std::int64_t total_us = 0, max_us = 0, count = 0;
  ojson rebalances = rebalance_entries(max_drain_us, count, total_us, max_us, entries);
  ojson metrics;
  metrics["rebalance_count"] = count;
  metrics["max_rebalance_ms"] = ms_of(max_us);
  metrics["total_rebalance_ms"] = ms_of(total_us);
  add_ownership_metrics(metrics);
  add_processing_metrics(metrics);
  add_record_metrics(metrics, max_drain_us);
  ojson scaling = scaling_entries(metrics);

  ojson out;
  out["scenario"] = inputs.scenario;
  out["protocol"] = inputs.protocol;
  out["seed"] = inputs.seed;
  out["produced_by"] = inputs.produced_by;
  if (inputs.from_us || inputs.to_us) {
    out["window"] = {{"from_ms", ms_of(window_.from)},
                     {"to_ms", inputs.to_us ? ojson(ms_of(*inputs.to_us)) : ojson(nullptr)}};
  }
  if (entries)
    out["rebalances"] = std::move(rebalances);
  else
    out["rebalances"] = std::string(kStreamedRebalances);
  out["overlaps"] = clock_.overlaps();
  if (!scaling_.empty()) out["scaling"] = std::move(scaling);
  out["metrics"] = std::move(metrics);
  add_moments(out);
  return out;
}

void SummaryBuilder::close_run() {
  settle();
  flush_lag();
  steady_check(lag_t_);
  if (duration_us_ >= 0 && duration_us_ > end_t_) end_t_ = duration_us_;
  if (!final_taken_) take_final();
  for (auto& [name, c] : consumers_) {
    if (c.paused) c.paused_us += window_.clip(c.paused_since, end_t_);
    c.paused = false;
  }
  clock_.finish(end_t_);
  processing_.finish(end_t_);
  // A rebalance still open at the end of the run ends there (and says so).
  for (auto& [g, rs] : open_)
    while (!rs.empty()) close_at(g, 0, end_t_, false);
  std::sort(done_.begin(), done_.end(), [](const ClosedRebalance& a, const ClosedRebalance& b) {
    return std::tie(a.start_us, a.group, a.generation) <
           std::tie(b.start_us, b.group, b.generation);
  });
}

void SummaryBuilder::add_drain(const ClosedRebalance& r, ojson& j,
                               std::optional<std::int64_t>& max_drain_us) const {
  // Time to drain lag after a rebalance: from its end to the first lag observation at which the
  // group's total lag is back at or below its level before the rebalance: the last observation
  // before its start at which every partition had an owner (so lag that built up while a dead
  // member still held its partitions counts as lag to drain).
  const auto& group_lag = lag_points();
  const auto it = group_lag.find(r.group);
  if (it == group_lag.end()) return;
  std::optional<std::int64_t> before;
  for (const auto& p : it->second) {
    if (p.t_us >= r.start_us) break;
    if (p.all_owned) before = p.total;
  }
  if (!before) return;
  j["lag_before"] = *before;
  j["drain_ms"] = nullptr;
  for (const auto& p : it->second) {
    if (p.t_us < r.end_us || p.total > *before || !p.all_owned) continue;
    j["drain_ms"] = ms_of(p.t_us - r.end_us);
    max_drain_us = std::max(max_drain_us.value_or(0), p.t_us - r.end_us);
    return;
  }
}

ojson SummaryBuilder::rebalance_entries(std::optional<std::int64_t>& max_drain_us,
                                        std::int64_t& count, std::int64_t& total_us,
                                        std::int64_t& max_us, bool entries) const {
  ojson rebalances = ojson::array();
  for (const auto& r : done_) {
    if (!window_.contains(r.start_us)) continue;
    const std::int64_t d = r.end_us - r.start_us;
    ++count;
    total_us += d;
    max_us = std::max(max_us, d);
    // Streamed (entries false): only the totals; write_rebalances() reads each entry back.
    ojson j = write_rebalances_ && entries ? ojson::parse(entry_of(r)) : ojson::object();
    add_drain(r, j, max_drain_us);
    if (write_rebalances_ && entries) rebalances.push_back(std::move(j));
  }
  return rebalances;
}

bool SummaryBuilder::entry_compact(std::size_t i, std::string& text) const {
  const ClosedRebalance& r = done_[i];
  if (!write_rebalances_ || !window_.contains(r.start_us)) return false;
  text = entry_of(r);
  ojson more = ojson::object();
  std::optional<std::int64_t> unused;
  add_drain(r, more, unused);
  append_keys(text, more);
  return true;
}

void SummaryBuilder::add_ownership_metrics(ojson& metrics) const {
  metrics["unavailable_partition_ms"] = ms_of(clock_.unavailable_us());
  metrics["max_unavailable_ms"] = ms_of(clock_.max_unavailable_us());
  ojson by_partition = ojson::object(), max_by_partition = ojson::object();
  for (const auto& [p, sum_max] : clock_.unavailable_by_partition()) {
    put_new(by_partition, p, ms_of(sum_max.first));
    put_new(max_by_partition, p, ms_of(sum_max.second));
  }
  metrics["unavailable_ms_by_partition"] = by_partition;
  metrics["max_unavailable_ms_by_partition"] = max_by_partition;
  metrics["stop_the_world_ms"] = ms_of(clock_.stopped_us());
  metrics["max_stop_the_world_ms"] = ms_of(clock_.max_stopped_us());
  metrics["overlap_partition_ms"] = ms_of(clock_.overlap_us());
}

void SummaryBuilder::add_record_metrics(ojson& metrics,
                                        std::optional<std::int64_t> max_drain_us) const {
  metrics["revocations"] = revocations_;
  // The steady window's builder reads the records of the whole run's (read_records_of()).
  const SummaryBuilder& reader = whole_ != nullptr ? *whole_ : *this;
  std::int64_t lost = 0;  // always over the whole run
  for (const auto& [group, table] : reader.records_)
    table.for_each([&](const PartitionRecords& r) {
      if (const auto committed = r.max_committed())
        lost += uncovered(r.processed(), r.first_position().value_or(0), *committed);
    });
  std::int64_t max_group_lag = 0;
  for (const auto& [g, points] : lag_points())
    for (const auto& p : points)
      if (window_.contains(p.t_us)) max_group_lag = std::max(max_group_lag, p.total);
  ojson paused = ojson::object(), processed_by = ojson::object();
  for (const auto& [name, c] : consumers_) {
    put_new(paused, name, ms_of(c.paused_us));
    if (whole_ == nullptr) {
      put_new(processed_by, name, c.records_processed);
    } else {
      const auto w = whole_->consumers_.find(name);
      put_new(processed_by, name,
              w == whole_->consumers_.end() ? 0 : w->second.steady_records_processed);
    }
  }
  const RecordCounts counts = whole_ != nullptr
                                  ? whole_->steady_counts_
                                  : RecordCounts{delivered_, processed_, duplicates_, max_lag_};
  metrics["paused_ms_by_consumer"] = paused;
  metrics["records_delivered"] = counts.delivered;
  metrics["records_processed"] = counts.processed;
  metrics["records_processed_by_consumer"] = processed_by;
  metrics["duplicates"] = counts.duplicates;
  metrics["lost"] = lost;
  metrics["max_lag"] = counts.max_lag;
  metrics["max_group_lag"] = max_group_lag;
  metrics["max_drain_ms"] = max_drain_us ? ojson(ms_of(*max_drain_us)) : ojson(nullptr);
  metrics["final_assignment"] = final_;
}

ojson SummaryBuilder::scaling_entries(ojson& metrics) const {
  // Scaling actions: what each caused until the group's next action (or the end of the run):
  // the rebalances that started, the records fetched again, and the time from the action until
  // the group's lag is back at or below its level at the action (after those rebalances).
  ojson scaling = ojson::array();
  std::int64_t actions = 0, flaps = 0;
  for (std::size_t i = 0; i < scaling_.size(); ++i) {
    const ScalingAction& a = scaling_[i];
    if (!window_.contains(a.t_us)) continue;
    ++actions;
    std::int64_t until = end_t_, duplicates_after = duplicates_;
    std::int64_t unavailable_after = clock_.unavailable_us_of(a.group, end_t_);
    for (std::size_t k = i + 1; k < scaling_.size(); ++k)
      if (scaling_[k].group == a.group) {
        until = scaling_[k].t_us;
        duplicates_after = scaling_[k].duplicates_before;
        unavailable_after = scaling_[k].unavailable_before;
        break;
      }
    for (std::size_t k = i; k-- > 0;) {
      const ScalingAction& b = scaling_[k];
      if (b.deployment != a.deployment) continue;
      if (a.t_us - b.t_us <= kFlapWindowUs && (b.to > b.from) != (a.to > a.from)) ++flaps;
      break;
    }
    std::int64_t rebalances_caused = 0, rebalance_end = a.t_us;
    for (const auto& r : done_)
      if (r.group == a.group && r.start_us >= a.t_us && r.start_us < until) {
        ++rebalances_caused;
        rebalance_end = std::max(rebalance_end, r.end_us);
      }
    ojson j;
    j["at_ms"] = ms_of(a.t_us);
    j["deployment"] = a.deployment;
    j["group"] = a.group;
    j["from"] = a.from;
    j["to"] = a.to;
    j["reason"] = a.reason;
    j["lag"] = a.lag;
    j["rebalances"] = rebalances_caused;
    j["unavailable_partition_ms"] = ms_of(unavailable_after - a.unavailable_before);
    j["records_redelivered"] = duplicates_after - a.duplicates_before;
    j["drain_ms"] = scaling_drain_ms(a, rebalance_end);
    scaling.push_back(j);
  }
  metrics["scaling_actions"] = actions;
  metrics["flaps"] = flaps;
  return scaling;
}

ojson SummaryBuilder::scaling_drain_ms(const ScalingAction& a, std::int64_t rebalance_end) const {
  const auto& group_lag = lag_points();
  const auto it = group_lag.find(a.group);
  if (it == group_lag.end()) return nullptr;
  std::optional<std::int64_t> at_action;
  for (const auto& p : it->second) {
    if (p.t_us > a.t_us) break;
    at_action = p.total;
  }
  if (at_action)
    for (const auto& p : it->second)
      if (p.t_us >= rebalance_end && p.total <= *at_action && p.all_owned)
        return ms_of(p.t_us - a.t_us);
  return nullptr;
}

void SummaryBuilder::add_processing_metrics(ojson& metrics) const {
  metrics["not_processed_partition_ms"] = ms_of(processing_.total_us());
  metrics["max_not_processed_ms"] = ms_of(processing_.max_us());
  ojson by_partition = ojson::object(), by_consumer = ojson::object();
  for (const auto& [p, us] : processing_.by_partition<PartitionLess>())
    put_new(by_partition, p, ms_of(us));
  for (const auto& [c, us] : processing_.by_consumer()) put_new(by_consumer, c, ms_of(us));
  metrics["not_processed_ms_by_partition"] = by_partition;
  metrics["not_processed_ms_by_consumer"] = by_consumer;
  metrics["group_stopped_ms"] = ms_of(processing_.stopped_us());
  metrics["max_group_stopped_ms"] = ms_of(processing_.max_stopped_us());
  metrics["fatal_errors"] = fatal_errors_;
}

void SummaryBuilder::add_moments(ojson& out) const {
  ojson stops = ojson::array();
  for (const auto& st : processing_.stops())
    stops.push_back({{"group", st.group},
                     {"start_us", st.start_us},
                     {"end_us", st.open ? ojson(nullptr) : ojson(st.end_us)}});
  out["stops"] = stops;
  // Zombie overlaps, one moment per group and set of owners: when it began, how many partitions.
  ojson moments = moments_;
  std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>>
      overlaps;  // -> (first start, partitions)
  for (const auto& o : clock_.overlaps()) {
    const std::int64_t start = o.at("start_us").get<std::int64_t>();
    if (!window_.contains(start)) continue;
    std::string who;
    for (const auto& c : o.at("consumers"))
      who += (who.empty() ? "" : " and ") + c.get<std::string>();
    auto [it, fresh] = overlaps.try_emplace({o.at("group").get<std::string>(), who}, start, 0);
    it->second.first = std::min(it->second.first, start);
    ++it->second.second;
  }
  // Instance ids still held by a dead member when the run ends.
  for (const auto& [id, held] : instance_ids_.unreleased) {
    if (!window_.contains(held.since_us)) continue;
    ojson m;
    m["t_us"] = held.since_us;
    m["kind"] = "unreleased_instance_id";
    m["consumer"] = held.consumer;
    m["text"] = "group.instance.id " + id.second +
                " not released: still held by the dead member at the end of the run "
                "(its partitions wait for session.timeout.ms or a new member with that id)";
    moments.push_back(std::move(m));
  }
  for (const auto& [key, first_count] : overlaps) {
    ojson m;
    m["t_us"] = first_count.first;
    m["kind"] = "overlap";
    m["text"] = fmt_overlap(key.first, key.second, first_count.second);
    moments.push_back(std::move(m));
  }
  std::stable_sort(moments.begin(), moments.end(), [](const ojson& a, const ojson& b) {
    return a.at("t_us").get<std::int64_t>() < b.at("t_us").get<std::int64_t>();
  });
  out["moments"] = moments;
}

Window window_of(const SummaryInputs& inputs) {
  Window w;
  if (inputs.from_us) w.from = *inputs.from_us;
  if (inputs.to_us) w.to = *inputs.to_us;
  return w;
}

}  // namespace

namespace {
/// partition_key() without its copies, for "topic-N" with N plain decimal digits (what the
/// simulator writes); false for anything else, which takes partition_key()'s own path.
bool plain_partition_key(std::string_view s, std::string_view& topic, long& number) {
  const auto dash = s.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == s.size() || s.size() - dash - 1 > 18)
    return false;
  long n = 0;
  for (std::size_t i = dash + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    n = n * 10 + (s[i] - '0');
  }
  topic = s.substr(0, dash);
  number = n;
  return true;
}
}  // namespace

bool kafka_partition_less(const std::string& a, const std::string& b) {
  std::string_view ta, tb;
  long na = 0, nb = 0;
  if (plain_partition_key(a, ta, na) && plain_partition_key(b, tb, nb)) {
    if (const int c = ta.compare(tb); c != 0) return c < 0;
    return na < nb;
  }
  return partition_key(a) < partition_key(b);
}

struct SummarySink::State {
  explicit State(Window w) : builder(w) {}
  SummaryBuilder builder;
  CriticalPaths paths;  // each rebalance's critical_path (reports/critical_path.hpp)
  // The steady window's builder: it sees every event, its window opens once `builder` finds the
  // steady moment (before that nothing accrues: its start is the end of time).
  std::unique_ptr<SummaryBuilder> steady;
  bool steady_open = false;
  // The graph keeps only what a rebalance not yet found can reach (CriticalPaths::prune): the
  // rebalances closed since the last prune wait here (group, start, end) until every event at
  // their end has come, then their paths are found and remembered for finish().
  using PathKey = std::tuple<std::string, std::int64_t, std::int64_t>;
  std::size_t paths_seen = 0;  // builder.closed(i) below this are pending or remembered
  std::vector<PathKey> paths_pending;
  std::int64_t now = 0;  // the latest event's time
  void prune_paths(const Window& w);
  trace::ReadStorage raw_storage;     // events published the untyped way, read as their kind
  std::unique_ptr<EntrySpool> spool;  // streamed: the closed rebalances' entries
};

void SummarySink::spool_rebalances(const std::filesystem::path& spool) {
  s_->spool = std::make_unique<EntrySpool>(spool);
  s_->builder.spool_to(s_->spool.get());
}

SummarySink::SummarySink(SummaryInputs inputs)
    : inputs_(std::move(inputs)), s_(std::make_unique<State>(window_of(inputs_))) {
  if (inputs_.not_processed_gaps) s_->builder.record_gaps();
  // The critical paths split a deferred KIP-848 target assignment with the broker's interval.
  if (const auto cl = inputs_.config.find("cluster"); cl != inputs_.config.end() && cl->is_object())
    if (const auto iv = cl->find("group.consumer.assignment.interval.ms");
        iv != cl->end() && iv->is_number_integer())
      s_->paths.set_assignment_interval_ms(iv->get<std::int64_t>());
  if (inputs_.steady_consumers && !inputs_.from_us && !inputs_.to_us) {
    s_->builder.set_steady_consumers(*inputs_.steady_consumers);
    s_->steady = std::make_unique<SummaryBuilder>(Window{INT64_MAX, INT64_MAX});
    s_->steady->set_write_rebalances(false);    // only its metrics are read
    s_->steady->read_records_of(&s_->builder);  // not a second pass over every batch
  }
}
SummarySink::~SummarySink() = default;

void SummarySink::on_event(sim::SimTime t, const trace::Event& e) {
  if (const auto* raw = std::get_if<sim::RawTraceEvent>(&e);
      raw != nullptr && raw->fields != nullptr) {
    s_->raw_storage.clear();
    const trace::Event typed = trace::parse_fields(raw->type, *raw->fields, s_->raw_storage);
    s_->builder.on_event(t.count(), typed);
    if (inputs_.critical_paths) {
      s_->paths.on_event(t.count(), typed);
      s_->now = std::max(s_->now, t.count());
      if (s_->paths.prune_due()) s_->prune_paths(window_of(inputs_));
    }
    steady_event(t.count(), typed);
    return;
  }
  s_->builder.on_event(t.count(), e);
  if (inputs_.critical_paths) {
    s_->paths.on_event(t.count(), e);
    s_->now = std::max(s_->now, t.count());
    if (s_->paths.prune_due()) s_->prune_paths(window_of(inputs_));
  }
  steady_event(t.count(), e);
}

void SummarySink::steady_event(std::int64_t t, const trace::Event& e) {
  if (!s_->steady) return;
  if (!s_->steady_open && s_->builder.steady_from()) {
    s_->steady->set_from(*s_->builder.steady_from());
    s_->steady_open = true;
  }
  s_->steady->on_event(t, e);
}

void SummarySink::State::prune_paths(const Window& w) {
  for (; paths_seen < builder.closed_count(); ++paths_seen) {
    const ClosedRebalance& r = builder.closed(paths_seen);
    if (w.contains(r.start_us)) paths_pending.emplace_back(r.group, r.start_us, r.end_us);
  }
  // A rebalance that ended before now has all its events in the graph (a later vertex is never
  // an earlier one's predecessor): its path is what finish() would find. One that ended now
  // may still get its end vertex from this instant's other events: the prune waits for the next.
  bool wait = false;
  std::erase_if(paths_pending, [&](const PathKey& k) {
    const auto& [group, start, end] = k;
    if (end >= now) {
      wait = true;
      return false;
    }
    paths.remember(group, start, end);
    return true;
  });
  if (wait) return;
  // An open rebalance ends now or later (at the instant it is found complete, or the run's end).
  std::vector<std::int64_t> starts;
  builder.open_starts(starts);
  paths.prune(starts);
}

std::vector<NotProcessedGaps> SummarySink::not_processed_gaps() const {
  std::vector<NotProcessedGaps> out;
  for (auto& [partition, intervals] : s_->builder.gaps())
    out.push_back(NotProcessedGaps{partition, intervals});
  return out;
}

ojson SummarySink::finish() {
  return finish(true);
}
ojson SummarySink::finish_streamed() {
  return finish(false);
}

ojson SummarySink::finish(bool entries) {
  ojson out = s_->builder.finish(inputs_, entries);
  if (inputs_.critical_paths && entries)
    for (auto& r : out["rebalances"])
      r["critical_path"] =
          s_->paths.to_json(r["group"].get<std::string>(), r["start_us"].get<std::int64_t>(),
                            r["end_us"].get<std::int64_t>());
  if (s_->steady) {
    const auto from = s_->builder.steady_from();
    ojson steady;
    steady["from_us"] = from ? ojson(*from) : ojson(nullptr);
    if (from) {
      if (!s_->steady_open) s_->steady->set_from(*from);
      steady["metrics"] = s_->steady->finish(inputs_).at("metrics");
    } else {
      steady["metrics"] = nullptr;
    }
    out["steady"] = std::move(steady);
    out["verdict"] = verdict_of(out);
  }
  if (!inputs_.config.is_null()) out["config"] = inputs_.config;
  return out;
}

void SummarySink::write_json(std::ostream& out, const ojson& summary) const {
  write_json(
      [&](std::string_view bytes) {
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      },
      summary);
}

void SummarySink::write_json(const std::function<void(std::string_view)>& put,
                             const ojson& summary) const {
  const std::string text = summary.dump(2);
  const std::string placeholder = ojson(std::string(kStreamedRebalances)).dump();
  const std::string key = "\n  \"rebalances\": ";
  const std::size_t at = text.find(key + placeholder);
  if (at == std::string::npos) {
    put(text);
    return;
  }
  // Written in pieces of about a MiB.
  std::string buffer = text.substr(0, at + key.size());
  const auto flush = [&](bool always) {
    if (!always && buffer.size() < (std::size_t{1} << 20)) return;
    put(buffer);
    buffer.clear();
  };
  // As dump(2) writes an array of objects one level down: each entry indented by 4 more. The
  // entries' compact text is laid out directly (a parse of its partition lists cost more than
  // the rest of the write at 10,000 x 100,000).
  bool first = true;
  std::string e;
  for (std::size_t i = 0; i < s_->builder.entry_slots(); ++i) {
    if (!s_->builder.entry_compact(i, e)) continue;
    if (inputs_.critical_paths) {
      const ClosedRebalance& r = s_->builder.closed(i);
      ojson path = ojson::object();
      path["critical_path"] = s_->paths.to_json(r.group, r.start_us, r.end_us);
      append_keys(e, path);
    }
    buffer += first ? "[\n    " : ",\n    ";
    first = false;
    append_indented_json(buffer, e, 4);
    flush(false);
  }
  buffer += first ? "[]" : "\n  ]";
  buffer.append(text, at + key.size() + placeholder.size(), std::string::npos);
  flush(true);
}

std::size_t SummarySink::retained_entry_bytes() const {
  return s_->builder.retained_entry_bytes() + (s_->steady ? s_->steady->retained_entry_bytes() : 0);
}

std::size_t SummarySink::retained_wait_entries() const {
  return s_->builder.retained_wait_entries();
}
bool SummarySink::member_index_consistent() const {
  return s_->builder.member_index_consistent() &&
         (s_->steady == nullptr || s_->steady->member_index_consistent());
}
std::size_t SummarySink::retained_path_vertices() const {
  return s_->paths.vertices();
}
std::pair<std::size_t, std::size_t> SummarySink::retained_rebalances() const {
  auto held = s_->builder.retained_rebalances();
  if (s_->steady) {
    const auto steady = s_->steady->retained_rebalances();
    held.first += steady.first;
    held.second += steady.second;
  }
  return held;
}

ojson summarize(const std::vector<std::string>& trace_lines, const SummaryInputs& inputs) {
  SummarySink sink(inputs);
  trace::read_jsonl(trace_lines, sink);
  return sink.finish();
}

ojson summarize_jsonl(std::istream& trace_jsonl, const SummaryInputs& inputs) {
  SummarySink sink(inputs);
  trace::read_jsonl(trace_jsonl, sink);
  return sink.finish();
}

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{
        "rebalance_count", "max_rebalance_ms", "total_rebalance_ms", "unavailable_partition_ms",
        "max_unavailable_ms", "unavailable_ms_by_partition", "max_unavailable_ms_by_partition",
        "stop_the_world_ms", "max_stop_the_world_ms", "overlap_partition_ms",
        "not_processed_partition_ms", "max_not_processed_ms", "not_processed_ms_by_partition",
        "not_processed_ms_by_consumer", "group_stopped_ms", "max_group_stopped_ms", "fatal_errors",
        "revocations", "paused_ms_by_consumer", "records_delivered", "records_processed",
        "records_processed_by_consumer", "duplicates", "lost", "max_lag", "max_group_lag",
        "max_drain_ms", "final_assignment",
        // fleets (issue 38)
        "scaling_actions", "flaps",
        // share groups (reports/share_summary.cpp)
        "acknowledged", "acknowledged_twice", "acknowledge_errors", "archived",
        "archived_delivery_limit", "archived_rejected", "deliveries_by_delivery_count",
        "lock_timeouts", "min_records_processed_by_consumer", "redelivered", "released",
        "released_on_disconnect", "share_window_by_partition", "throughput_by_consumer",
        "unacknowledged_at_end"};
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

const std::vector<std::string>& metrics_by_consumer() {
  static const std::vector<std::string> v{"final_assignment", "not_processed_ms_by_consumer",
                                          "paused_ms_by_consumer", "records_processed_by_consumer",
                                          "throughput_by_consumer"};
  return v;
}

const std::vector<std::string>& metrics_by_partition() {
  static const std::vector<std::string> v{"max_unavailable_ms_by_partition",
                                          "not_processed_ms_by_partition",
                                          "unavailable_ms_by_partition"};
  return v;
}

const std::vector<std::string>& rebalance_fields() {
  static const std::vector<std::string> v{
      "assigned",   "causes", "completed",  "critical_path", "drain_ms", "duration_ms", "end_us",
      "generation", "group",  "lag_before", "lost",          "revoked",  "start_us",    "trigger"};
  return v;
}

const std::vector<std::string>& summary_keys() {
  static const std::vector<std::string> v{
      "config",  "metrics",  "moments", "overlaps", "produced_by", "protocol", "rebalances",
      "scaling", "scenario", "seed",    "steady",   "stops",       "verdict",  "window"};
  return v;
}

}  // namespace reports
