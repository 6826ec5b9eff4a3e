#include "reports/summary.hpp"

#include "models/protocol/trace_jsonl.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace reports {

namespace trace = rsim::trace;

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

double ms_of(std::int64_t us) { return static_cast<double>(us) / 1000.0; }

struct Consumer {
  std::string group;
  std::set<std::string> topics;
  std::set<std::string> owned;
  bool live = false;
  bool paused = false;  // the whole process is frozen: it owns, but consumes nothing
};

struct Rebalance {
  std::string group;
  std::int64_t start_us = 0;
  std::optional<std::int64_t> settled_us;  // group reached Stable/Empty
  std::int64_t end_us = 0;
  std::string trigger;
  std::int64_t generation = -1;
  std::set<std::string> waiting;  // members whose onPartitionsAssigned has not ended yet
  std::map<std::string, std::set<std::string>> revoked, lost, assigned;
  bool consumer_protocol = false;  // a KIP-848 group (lower-case states, epochs)
};

ojson partition_map(const std::map<std::string, std::set<std::string>>& m) {
  ojson out = ojson::object();
  for (const auto& [consumer, parts] : m) {
    if (parts.empty()) continue;
    ojson list = ojson::array();
    for (const auto& p : parts) list.push_back(p);
    out[consumer] = list;
  }
  return out;
}

// Sorted as Kafka sorts TopicPartition: by topic, then partition number (not as strings).
std::vector<std::string> sorted_partitions(const std::set<std::string>& parts) {
  std::vector<std::string> v(parts.begin(), parts.end());
  auto key = [](const std::string& s) {
    const auto dash = s.rfind('-');
    return std::make_pair(s.substr(0, dash), std::stol(s.substr(dash + 1)));
  };
  std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return v;
}

// Offsets of one group's partition: what was delivered, processed, committed, where it started.
struct PartitionRecords {
  std::vector<std::pair<std::int64_t, std::int64_t>> delivered;  // [first, last]
  std::vector<std::pair<std::int64_t, std::int64_t>> processed;
  std::optional<std::int64_t> first_position;
  std::optional<std::int64_t> max_committed;
};

// Appends [first, last], merged into the previous range when it continues it (the usual case:
// a consumer reads a partition in order), which keeps long runs to a few ranges.
void add_range(std::vector<std::pair<std::int64_t, std::int64_t>>& ranges, std::pair<std::int64_t, std::int64_t> r) {
  if (!ranges.empty() && ranges.back().second + 1 == r.first) {
    ranges.back().second = r.second;
    return;
  }
  ranges.push_back(r);
}

// Sum over offsets of (times delivered - 1) for those delivered more than once.
std::int64_t duplicates_of(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  std::map<std::int64_t, std::int64_t> delta;
  for (const auto& [first, last] : ranges) {
    ++delta[first];
    --delta[last + 1];
  }
  std::int64_t count = 0, total = 0, at = 0;
  for (const auto& [offset, d] : delta) {
    if (count > 1) total += (count - 1) * (offset - at);
    count += d;
    at = offset;
  }
  return total;
}

// Offsets in [from, to) not covered by any range.
std::int64_t uncovered(std::vector<std::pair<std::int64_t, std::int64_t>> ranges, std::int64_t from,
                       std::int64_t to) {
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

}  // namespace

/// Time accounting per (group, partition), updated incrementally from ownership events:
/// `unavailable` while a partition some live member of the group subscribes to (or owns) has no
/// running owner, `overlap` while two or more live members believe they own it. Each event
/// touches only the partitions it changes.
class OwnershipClock {
 public:
  using Key = std::pair<std::string, std::string>;  // (group, "topic-partition")

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
      if (key.second == topic && n > 0) for_partitions(key.first, topic, std::min(old, count), std::max(old, count), now);
  }
  void own(const std::string& group, const std::string& partition, const std::string& consumer, bool running,
           std::int64_t now) {
    State& st = touch({group, partition}, now);
    st.owners[consumer] = running;
    refresh({group, partition}, st, now);
  }
  void disown(const std::string& group, const std::string& partition, const std::string& consumer,
              std::int64_t now) {
    State& st = touch({group, partition}, now);
    st.owners.erase(consumer);
    refresh({group, partition}, st, now);
  }
  void finish(std::int64_t now) {
    // Overlaps still open at the end keep "end_us": null.
    for (auto& [key, st] : states_) accrue(st, now);
  }
  std::int64_t unavailable_us() const {
    std::int64_t sum = 0;
    for (const auto& [key, st] : states_) sum += st.unavailable_us;
    return sum;
  }
  std::int64_t overlap_us() const {
    std::int64_t sum = 0;
    for (const auto& [key, st] : states_) sum += st.overlap_us;
    return sum;
  }
  std::map<std::string, std::int64_t> unavailable_by_partition() const {
    std::map<std::string, std::int64_t> out;
    for (const auto& [key, st] : states_)
      if (st.unavailable_us > 0) out[key.second] += st.unavailable_us;
    return out;
  }
  const ojson& overlaps() const { return overlaps_; }

 private:
  struct State {
    std::int64_t unavailable_us = 0;
    std::int64_t overlap_us = 0;
    std::int64_t since = 0;
    std::map<std::string, bool> owners;  // consumer -> running (not paused)
    bool unavailable = false;
    bool overlap = false;
  };

  std::int32_t partitions_of(const std::string& topic) const {
    const auto it = partitions_.find(topic);
    return it == partitions_.end() ? 0 : it->second;
  }
  void for_partitions(const std::string& group, const std::string& topic, std::int32_t from, std::int32_t to,
                      std::int64_t now) {
    for (std::int32_t p = from; p < to; ++p) {
      const Key key{group, topic + "-" + std::to_string(p)};
      refresh(key, touch(key, now), now);
    }
  }
  static void accrue(State& st, std::int64_t now) {
    if (st.unavailable) st.unavailable_us += now - st.since;
    if (st.overlap) st.overlap_us += now - st.since;
    st.since = now;
  }
  State& touch(const Key& key, std::int64_t now) {
    auto [it, inserted] = states_.try_emplace(key);
    if (inserted) it->second.since = now;
    accrue(it->second, now);
    return it->second;
  }
  bool wanted(const Key& key, const State& st) const {
    if (!st.owners.empty()) return true;
    const auto dash = key.second.rfind('-');
    const std::string topic = key.second.substr(0, dash);
    const auto sub = subscribers_.find({key.first, topic});
    return sub != subscribers_.end() && sub->second > 0 &&
           std::stol(key.second.substr(dash + 1)) < partitions_of(topic);
  }
  void refresh(const Key& key, State& st, std::int64_t now) {
    const bool w = wanted(key, st);
    bool running = false;
    for (const auto& [c, r] : st.owners) running = running || r;
    st.unavailable = w && !running;
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

  std::map<Key, State> states_;
  std::map<std::pair<std::string, std::string>, int> subscribers_;  // (group, topic) -> live subscribers
  std::map<std::string, std::int32_t> partitions_;
  ojson overlaps_ = ojson::array();
  std::map<Key, std::size_t> open_overlap_;
};

// The summary's state while the trace streams by: what each event kind changes.
struct SummarySink::State {
  std::map<std::string, Consumer> consumers;
  std::map<std::string, std::int32_t> topic_partitions;
  std::vector<Rebalance> done;
  std::map<std::string, Rebalance> open;  // per group
  std::map<std::string, std::vector<std::string>> last_members;  // group -> members of its last generation
  // Consumer protocol (KIP-848): what the coordinator last assigned each member (from its
  // ConsumerGroupCurrentMemberAssignment records), and each group's last epoch.
  std::map<std::string, std::set<std::string>> broker_assigned;
  std::map<std::string, std::int64_t> group_epoch;
  std::int64_t end_t = 0;
  std::int64_t duration_us = -1;
  // Records: per (group, partition); lag: per group, the latest lag of each partition and the
  // group's total after each instant that had lag events.
  std::map<std::pair<std::string, std::string>, PartitionRecords> records;
  // Each consumer's batch in hand (fetched, not yet processed): batch number and ranges.
  std::map<std::string, std::pair<std::int64_t, std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>>>>
      in_hand;
  std::int64_t max_lag = 0;
  std::map<std::string, std::map<std::string, std::int64_t>> latest_lag;
  std::map<std::string, std::map<std::string, bool>> latest_owned;
  struct LagPoint {
    std::int64_t t_us;
    std::int64_t total;
    bool all_owned;  // every partition with a lag had an owner
  };
  std::map<std::string, std::vector<LagPoint>> group_lag;
  std::set<std::string> lag_touched;
  std::int64_t lag_t = -1;

  OwnershipClock clock;
  std::int64_t revocations = 0;
  rsim::trace::ReadStorage raw_storage;  // events still published the untyped way, read back

  void flush_lag() {
    for (const auto& g : lag_touched) {
      std::int64_t total = 0;
      bool all_owned = true;
      for (const auto& [p, l] : latest_lag[g]) total += l;
      for (const auto& [p, owned] : latest_owned[g]) all_owned = all_owned && owned;
      group_lag[g].push_back({lag_t, total, all_owned});
    }
    lag_touched.clear();
  }

  void close(const std::string& group, std::int64_t at) {
    auto it = open.find(group);
    if (it == open.end()) return;
    it->second.end_us = std::max(at, it->second.settled_us.value_or(it->second.start_us));
    done.push_back(std::move(it->second));
    open.erase(it);
  }

  // A new rebalance of `group` starts at `t` unless one is still open (a settled one closes).
  void begin_rebalance(const std::string& group, std::int64_t t, std::string trigger, bool consumer_protocol) {
    auto it = open.find(group);
    if (it != open.end() && it->second.settled_us) close(group, t);
    if (open.count(group) > 0) return;
    Rebalance r;
    r.group = group;
    r.start_us = t;
    r.trigger = std::move(trigger);
    r.consumer_protocol = consumer_protocol;
    open.emplace(group, std::move(r));
  }

  void on(std::int64_t t, const trace::Event& event);
  void pause_or_resume(std::int64_t t, const std::string& name, bool pause);
  void gone(std::int64_t t, const std::string& name);
};

void SummarySink::State::pause_or_resume(std::int64_t t, const std::string& name, bool pause) {
  Consumer& c = consumers[name];
  c.paused = pause;
  if (c.live)
    for (const auto& p : c.owned) clock.own(c.group, p, name, !c.paused, t);
}

// consumer.crash, consumer.closed, consumer.error: the member is gone.
void SummarySink::State::gone(std::int64_t t, const std::string& name) {
  Consumer& c = consumers[name];
  if (c.live) {
    for (const auto& p : c.owned) clock.disown(c.group, p, name, t);
    for (const auto& topic : c.topics) clock.subscribe(c.group, topic, -1, t);
  }
  c.live = false;
  c.owned.clear();
  for (auto& [g, r] : open) r.waiting.erase(name);
}

void SummarySink::State::on(std::int64_t t, const trace::Event& event) {
  using namespace rsim::trace;
  if (const auto* raw = std::get_if<sim::RawTraceEvent>(&event); raw != nullptr && raw->fields != nullptr) {
    // Transitional: an event published untyped is read as its typed kind.
    raw_storage.clear();
    const Event typed = parse_fields(raw->type, *raw->fields, raw_storage);
    if (!std::holds_alternative<sim::RawTraceEvent>(typed)) {
      on(t, typed);
      return;
    }
  }
  if (t != lag_t) {
    flush_lag();
    lag_t = t;
  }
  end_t = t;

  auto str = [](std::string_view v) { return std::string(v); };
  auto names = [](Partitions ps) {
    std::set<std::string> out;
    for (const auto& tp : ps) out.insert(tp.str());
    return out;
  };
  std::visit(
      Overloaded{
          [&](const RecordsFetched& e) {
            const std::string group = str(e.group);
            auto& pending = in_hand[str(e.consumer)];
            pending = {e.batch, {}};
            for (const auto& range : e.ranges) {
              const std::string partition = range.partition.str();
              const std::pair<std::int64_t, std::int64_t> offsets{range.first, range.last};
              add_range(records[{group, partition}].delivered, offsets);
              pending.second.emplace_back(partition, offsets);
            }
          },
          [&](const RecordsProcessed& e) {
            const std::string group = str(e.group);
            const auto it = in_hand.find(str(e.consumer));
            if (it != in_hand.end() && it->second.first == e.batch) {
              for (const auto& [partition, offsets] : it->second.second) add_range(records[{group, partition}].processed, offsets);
              in_hand.erase(it);
            }
          },
          [&](const Position& e) {
            if (e.partition == nullptr) return;
            auto& r = records[{str(e.group), e.partition->str()}];
            if (!r.first_position) r.first_position = e.offset;
          },
          [&](const Record& e) {
            if (e.value.object == nullptr) return;
            const ojson& v = *e.value.object;
            if (v.at("record") == "OffsetCommit" && !v.value("tombstone", false)) {
              auto& r = records[{v.at("group").get<std::string>(),
                                 v.at("topic").get<std::string>() + "-" + std::to_string(v.at("partition_index").get<std::int32_t>())}];
              const auto offset = v.at("committed_offset").get<std::int64_t>();
              r.max_committed = std::max(r.max_committed.value_or(offset), offset);
            } else if (v.at("record") == "ConsumerGroupCurrentMemberAssignment") {
              auto& set = broker_assigned[v.at("consumer").get<std::string>()];
              set.clear();
              if (v.contains("assigned"))
                for (const auto& tp : v.at("assigned")) set.insert(tp.get<std::string>());
            }
          },
          [&](const Lag& e) {
            if (e.partition == nullptr) return;
            const std::string group = str(e.group);
            const std::string partition = e.partition->str();
            max_lag = std::max(max_lag, e.lag);
            latest_lag[group][partition] = e.lag;
            latest_owned[group][partition] = e.owner.value.has_value();
            lag_touched.insert(group);
          },
          [&](const RunStart& e) { duration_us = e.duration_ms * 1000; },
          [&](const TopicPartitionCount& e) {
            topic_partitions[str(e.topic)] = e.partitions;
            clock.set_partitions(str(e.topic), e.partitions, t);
          },
          [&](const ConsumerStart& e) {
            const std::string name = str(e.consumer);
            Consumer& c = consumers[name];
            c.group = str(e.group);
            c.topics.clear();
            for (const auto& tp : e.topics) c.topics.insert(tp);
            c.owned.clear();
            c.live = true;
            c.paused = false;
            for (const auto& topic : c.topics) clock.subscribe(c.group, topic, +1, t);
          },
          [&](const ConsumerPause& e) { pause_or_resume(t, str(e.consumer), true); },
          [&](const ConsumerResume& e) { pause_or_resume(t, str(e.consumer), false); },
          [&](const ConsumerSubscribe& e) {
            Consumer& c = consumers[str(e.consumer)];
            if (c.live)
              for (const auto& topic : c.topics) clock.subscribe(c.group, topic, -1, t);
            c.topics.clear();
            for (const auto& tp : e.topics) c.topics.insert(tp);
            if (c.live)
              for (const auto& topic : c.topics) clock.subscribe(c.group, topic, +1, t);
          },
          [&](const ConsumerCrash& e) { gone(t, str(e.consumer)); },
          [&](const ConsumerClosed& e) { gone(t, str(e.consumer)); },
          [&](const ConsumerError& e) { gone(t, str(e.consumer)); },
          [&](const Assignment& e) {
            const std::string name = str(e.consumer);
            Consumer& c = consumers[name];
            std::set<std::string> now_owned = names(e.owned);
            if (c.live) {
              for (const auto& p : c.owned)
                if (now_owned.count(p) == 0) clock.disown(c.group, p, name, t);
              for (const auto& p : now_owned)
                if (c.owned.count(p) == 0) clock.own(c.group, p, name, !c.paused, t);
            }
            c.owned = std::move(now_owned);
            // A consumer-protocol member is done once it owns what the coordinator assigned it.
            auto it = open.find(c.group);
            if (it != open.end() && it->second.settled_us && it->second.consumer_protocol &&
                it->second.waiting.count(name) > 0 && c.owned == broker_assigned[name]) {
              it->second.waiting.erase(name);
              if (it->second.waiting.empty()) close(c.group, t);
            }
          },
          [&](const GroupStateChange& e) {
            const std::string group = str(e.group);
            const std::string state = str(e.state);
            // A consumer-protocol rebalance opens with its new group epoch (group.epoch below): a
            // static member's temporary leave makes the group `reconciling` without one.
            if (state == "PreparingRebalance") {
              begin_rebalance(group, t, str(e.reason.value_or("")), /*consumer_protocol=*/false);
            } else if (state == "Stable" || state == "Empty" || state == "stable" || state == "empty") {
              auto it = open.find(group);
              if (it != open.end() && !it->second.settled_us) {
                it->second.settled_us = t;
                it->second.waiting.clear();
                if (it->second.consumer_protocol) {
                  // Members still reconciling on the client side: their owned set differs from the
                  // coordinator's assignment until their callbacks have run.
                  for (const auto& [name, c] : consumers) {
                    if (c.live && c.group == group && c.owned != broker_assigned[name]) it->second.waiting.insert(name);
                  }
                } else if (state == "Stable" || state == "stable") {
                  for (const auto& name : last_members[group]) {
                    if (consumers.count(name) > 0 && consumers[name].live) it->second.waiting.insert(name);
                  }
                }
                if (it->second.waiting.empty()) close(group, t);
              }
            }
          },
          [&](const GroupEpoch& e) {
            const std::string group = str(e.group);
            last_members[group].assign(e.members.begin(), e.members.end());
            if (e.generation) {
              auto it = open.find(group);
              if (it != open.end()) it->second.generation = *e.generation;
            }
            if (e.epoch) {
              // Consumer protocol: a new group epoch is a rebalance (its inputs changed) until every
              // member owns what the coordinator assigned it.
              const std::int64_t epoch = *e.epoch;
              const auto last = group_epoch.find(group);
              if (last == group_epoch.end() || epoch > last->second) {
                begin_rebalance(group, t, str(e.reason.value_or("")), /*consumer_protocol=*/true);
                open.at(group).generation = epoch;
              }
              group_epoch[group] = epoch;
            }
          },
          [&](const Callback& e) {
            const std::string name = str(e.consumer);
            if (e.phase == "start") {
              if (e.callback == "onPartitionsRevoked") revocations += static_cast<std::int64_t>(e.partitions.size());
              const std::string group = consumers[name].group;
              auto it = open.find(group);
              if (it != open.end()) {
                auto& target = e.callback == "onPartitionsRevoked" ? it->second.revoked
                               : e.callback == "onPartitionsLost"  ? it->second.lost
                                                                   : it->second.assigned;
                auto& set = target[name];
                for (const auto& p : e.partitions) set.insert(p.str());
              }
            } else if (e.phase == "end" && e.callback == "onPartitionsAssigned") {
              const std::string group = consumers[name].group;
              auto it = open.find(group);
              if (it != open.end() && it->second.settled_us) {
                it->second.waiting.erase(name);
                if (it->second.waiting.empty()) close(group, t);
              }
            }
          },
          [&](const auto&) {},  // kinds the summary does not read
      },
      event);
}

SummarySink::SummarySink(SummaryInputs inputs) : inputs_(std::move(inputs)), s_(std::make_unique<State>()) {}
SummarySink::~SummarySink() = default;

void SummarySink::on_event(sim::SimTime t, const trace::Event& e) { s_->on(t.count(), e); }

ojson SummarySink::finish() {
  State& st = *s_;
  const SummaryInputs& inputs = inputs_;
  auto& consumers = st.consumers;
  auto& done = st.done;
  auto& open = st.open;
  auto& end_t = st.end_t;
  auto& records = st.records;
  auto& group_lag = st.group_lag;
  auto& clock = st.clock;
  const std::int64_t duration_us = st.duration_us, max_lag = st.max_lag, revocations = st.revocations;
  auto flush_lag = [&] { st.flush_lag(); };
  auto close = [&](const std::string& group, std::int64_t at) { st.close(group, at); };
  flush_lag();
  if (duration_us >= 0 && duration_us > end_t) end_t = duration_us;
  clock.finish(end_t);
  const std::int64_t unavailable_us = clock.unavailable_us();
  const std::int64_t overlap_us = clock.overlap_us();
  std::map<std::string, std::int64_t> unavailable_by_partition = clock.unavailable_by_partition();
  // A rebalance still open at the end of the run ends there (and says so).
  std::vector<std::string> unfinished;
  for (auto& [g, r] : open) unfinished.push_back(g);
  for (const auto& g : unfinished) close(g, end_t);
  std::sort(done.begin(), done.end(), [](const Rebalance& a, const Rebalance& b) {
    return std::tie(a.start_us, a.group) < std::tie(b.start_us, b.group);
  });

  // Time to drain lag after a rebalance: from its end to the first lag observation at which the
  // group's total lag is back at or below its level before the rebalance: the last observation
  // before its start at which every partition had an owner (so lag that built up while a dead
  // member still held its partitions counts as lag to drain).
  std::optional<std::int64_t> max_drain_us;
  auto drain = [&](const Rebalance& r, ojson& j) {
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
  };

  ojson rebalances = ojson::array();
  std::int64_t total_us = 0, max_us = 0;
  for (const auto& r : done) {
    const std::int64_t d = r.end_us - r.start_us;
    total_us += d;
    max_us = std::max(max_us, d);
    ojson j;
    j["group"] = r.group;
    j["start_us"] = r.start_us;
    j["end_us"] = r.end_us;
    j["duration_ms"] = ms_of(d);
    j["trigger"] = r.trigger;
    j["generation"] = r.generation;
    j["completed"] = r.settled_us.has_value();
    j["revoked"] = partition_map(r.revoked);
    j["lost"] = partition_map(r.lost);
    j["assigned"] = partition_map(r.assigned);
    drain(r, j);
    rebalances.push_back(j);
  }
  ojson final_assignment = ojson::object();
  for (const auto& [name, c] : consumers) {
    if (!c.live) continue;
    ojson list = ojson::array();
    for (const auto& p : sorted_partitions(c.owned)) list.push_back(p);
    final_assignment[name] = list;
  }
  ojson metrics;
  metrics["rebalance_count"] = done.size();
  metrics["max_rebalance_ms"] = ms_of(max_us);
  metrics["total_rebalance_ms"] = ms_of(total_us);
  metrics["unavailable_partition_ms"] = ms_of(unavailable_us);
  ojson by_partition = ojson::object();
  {
    std::set<std::string> names;
    for (const auto& [p, us] : unavailable_by_partition) names.insert(p);
    for (const auto& p : sorted_partitions(names)) by_partition[p] = ms_of(unavailable_by_partition[p]);
  }
  metrics["unavailable_ms_by_partition"] = by_partition;
  metrics["overlap_partition_ms"] = ms_of(overlap_us);
  metrics["revocations"] = revocations;
  std::int64_t duplicates = 0, lost = 0, delivered = 0, processed = 0;
  for (const auto& [key, r] : records) {
    duplicates += duplicates_of(r.delivered);
    for (const auto& [first, last] : r.delivered) delivered += last - first + 1;
    for (const auto& [first, last] : r.processed) processed += last - first + 1;
    if (r.max_committed) lost += uncovered(r.processed, r.first_position.value_or(0), *r.max_committed);
  }
  std::int64_t max_group_lag = 0;
  for (const auto& [g, points] : group_lag)
    for (const auto& p : points) max_group_lag = std::max(max_group_lag, p.total);
  metrics["records_delivered"] = delivered;
  metrics["records_processed"] = processed;
  metrics["duplicates"] = duplicates;
  metrics["lost"] = lost;
  metrics["max_lag"] = max_lag;
  metrics["max_group_lag"] = max_group_lag;
  metrics["max_drain_ms"] = max_drain_us ? ojson(ms_of(*max_drain_us)) : ojson(nullptr);
  metrics["final_assignment"] = final_assignment;

  ojson out;
  out["scenario"] = inputs.scenario;
  out["protocol"] = inputs.protocol;
  out["seed"] = inputs.seed;
  out["produced_by"] = inputs.produced_by;
  out["rebalances"] = rebalances;
  out["overlaps"] = clock.overlaps();
  out["metrics"] = metrics;
  return out;
}

ojson summarize(const std::vector<std::string>& trace_lines, const SummaryInputs& inputs) {
  SummarySink sink(inputs);
  rsim::trace::read_jsonl(trace_lines, sink);
  return sink.finish();
}

ojson summarize_jsonl(std::istream& trace_jsonl, const SummaryInputs& inputs) {
  SummarySink sink(inputs);
  rsim::trace::read_jsonl(trace_jsonl, sink);
  return sink.finish();
}

}  // namespace reports
