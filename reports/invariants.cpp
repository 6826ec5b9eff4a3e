#include "reports/invariants.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace reports {

namespace {
using json = nlohmann::ordered_json;

// Offsets covered by processed records, as disjoint [start, end) intervals.
class Coverage {
 public:
  void add(std::int64_t start, std::int64_t end) {
    if (start >= end) return;
    auto it = spans_.upper_bound(start);
    if (it != spans_.begin() && std::prev(it)->second >= start) --it;
    while (it != spans_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = spans_.erase(it);
    }
    spans_[start] = end;
  }
  /// The first offset below `end` not covered, or -1.
  std::int64_t first_gap_below(std::int64_t end) const {
    std::int64_t at = 0;
    for (const auto& [s, e] : spans_) {
      if (s > at) return at < end ? at : -1;
      at = std::max(at, e);
      if (at >= end) return -1;
    }
    return at < end ? at : -1;
  }

 private:
  std::map<std::int64_t, std::int64_t> spans_;
};

struct Consumer {
  std::string group;
  bool alive = false;
  std::set<std::string> owned;
};

// Maps keyed by name, looked up by a view (no string built to find an entry).
template <class V>
using ByName = std::map<std::string, V, std::less<>>;

template <class V>
V& slot(ByName<V>& m, std::string_view key) {
  auto it = m.find(key);
  if (it == m.end()) it = m.emplace(std::string(key), V{}).first;
  return it->second;
}

struct Group {
  std::string protocol;                // "consumer" or classic
  std::set<std::string> members;       // the coordinator's members (by consumer name)
  std::int64_t epoch = -1;             // group epoch or generation
  ByName<std::int64_t> member_epochs;  // by member id
  ByName<std::int64_t> committed;      // by partition "t-0"
  ByName<std::size_t> committed_line;
  ByName<Coverage> processed;
};

// A fetched batch's ranges, until the batch is processed.
struct Range {
  std::string partition;
  std::int64_t first = 0, last = 0;
};

// "orders-3" into `out` (reused: no allocation once it is large enough).
std::string_view partition_name(std::string& out, const rsim::TopicPartition& tp) {
  out.assign(tp.topic);
  out += '-';
  char buf[16];
  const auto r = std::to_chars(buf, buf + sizeof buf, tp.partition);
  out.append(buf, r.ptr);
  return out;
}

// The fields of a __consumer_offsets OffsetCommit record (typed online, a JSON object read back).
struct OffsetCommitFields {
  std::string_view group, topic;
  std::int64_t partition_index = 0, committed_offset = 0;
};

std::optional<OffsetCommitFields> offset_commit(const rsim::trace::Record& r) {
  if (r.value.commit != nullptr) {
    const auto& c = *r.value.commit;
    return OffsetCommitFields{c.group, c.topic, c.partition_index, c.committed_offset};
  }
  if (r.value.object == nullptr) return std::nullopt;
  const json& o = *r.value.object;
  const auto kind = o.find("record");
  if (kind == o.end() || !kind->is_string() ||
      kind->get_ref<const std::string&>() != "OffsetCommit")
    return std::nullopt;
  if (const auto tomb = o.find("tombstone");
      tomb != o.end() && tomb->is_boolean() && tomb->get<bool>())
    return std::nullopt;
  return OffsetCommitFields{
      o.at("group").get_ref<const std::string&>(), o.at("topic").get_ref<const std::string&>(),
      o.at("partition_index").get<std::int64_t>(), o.at("committed_offset").get<std::int64_t>()};
}

constexpr std::size_t kWindowLines = 12;  // the most lines a violation's window shows

}  // namespace

namespace tr = rsim::trace;

struct InvariantChecker::State {
  InvariantContext context;
  std::vector<Violation> violations;
  ByName<Consumer> consumers;
  ByName<Group> groups;
  ByName<std::int32_t> partitions_per_topic;
  ByName<std::set<std::string>> subscriptions;  // consumer -> topics
  std::map<std::pair<std::string, std::int64_t>, std::vector<Range>>
      batches;                     // (consumer, batch) -> ranges
  ByName<std::int64_t> last_lag;   // "group|partition" -> lag
  std::set<std::string> reported;  // one report per (property, subject)
  std::int64_t instant = -1;
  std::size_t instant_first_line = 0;
  std::size_t line_no = 0;
  bool finished = false;
  // The text of the last lines fed (the current one included), for the windows: line i is
  // recent[i % size]; reused buffers.
  std::vector<std::string> recent = std::vector<std::string>(kWindowLines + 1);
  bool texts = false;     // whether any line came with its text
  std::string key, key2;  // scratch

  void report(const std::string& property, const std::string& subject, std::int64_t t,
              const std::string& detail, std::size_t first, std::size_t last) {
    if (!reported.insert(property + "|" + subject).second) return;
    Violation v{property, t, detail, first, last, {}};
    const std::size_t from =
        std::max(first, last >= kWindowLines - 1 ? last - (kWindowLines - 1) : 0);
    if (texts && last <= line_no && from + recent.size() > line_no) {
      // The window's lines are among the recent ones (a window ends at the current line or the
      // one before).
      for (std::size_t i = from; i <= last; ++i)
        v.window.push_back(recent[i % recent.size()].substr(0, 300));
    }
    violations.push_back(std::move(v));
  }

  // Exclusive ownership among the coordinator's live members, at the end of an instant.
  void end_instant() {
    if (instant < 0 || context.shared_ownership) return;
    for (const auto& [gname, g] : groups) {
      std::map<std::string, std::string> owner;
      for (const auto& name : g.members) {
        const auto it = consumers.find(name);
        if (it == consumers.end() || !it->second.alive || it->second.group != gname) continue;
        for (const auto& tp : it->second.owned) {
          const auto [o, inserted] = owner.emplace(tp, name);
          if (!inserted) {
            report(
                "exclusive-ownership", gname + "|" + tp, instant,
                fmt::format("group {}: partition {} owned by both {} and {}, live members of {} {}",
                            gname, tp, o->second, name,
                            g.protocol == "consumer" ? "group epoch" : "generation", g.epoch),
                instant_first_line, line_no == 0 ? 0 : line_no - 1);
          }
        }
      }
    }
  }

  static std::set<std::string> topic_set(tr::Names topics) {
    return std::set<std::string>(topics.begin(), topics.end());
  }

  void on(std::int64_t, const tr::TopicPartitionCount& e) {
    slot(partitions_per_topic, e.topic) = e.partitions;
  }
  void on(std::int64_t, const tr::ConsumerStart& e) {
    Consumer& c = slot(consumers, e.consumer);
    c.group.assign(e.group);
    c.alive = true;
    c.owned.clear();
    slot(subscriptions, e.consumer) = topic_set(e.topics);
    slot(groups, c.group).protocol = e.protocol == "consumer" ? "consumer" : "classic";
  }
  void on(std::int64_t, const tr::ConsumerSubscribe& e) {
    slot(subscriptions, e.consumer) = topic_set(e.topics);
  }
  void gone(std::string_view consumer) {
    Consumer& c = slot(consumers, consumer);
    c.alive = false;
    c.owned.clear();
  }
  void on(std::int64_t, const tr::ConsumerCrash& e) { gone(e.consumer); }
  void on(std::int64_t, const tr::ConsumerClosed& e) { gone(e.consumer); }
  void on(std::int64_t, const tr::Assignment& e) {
    Consumer& c = slot(consumers, e.consumer);
    c.owned.clear();
    for (const auto& tp : e.owned) c.owned.insert(tp.str());
  }
  void on(std::int64_t t, const tr::GroupEpoch& e) {
    Group& g = slot(groups, e.group);
    const std::int64_t epoch = e.generation ? *e.generation : e.epoch.value_or(-1);
    if (epoch < g.epoch) {
      report("monotonic-epochs", fmt::format("group {}", e.group), t,
             fmt::format("group {}: {} went from {} back to {}", e.group,
                         e.generation ? "generation" : "group epoch", g.epoch, epoch),
             line_no, line_no);
    }
    g.epoch = epoch;
    g.members.clear();
    for (const auto& m : e.members) g.members.insert(m);
  }
  void on(std::int64_t, const tr::MemberLeave& e) {
    Group& g = slot(groups, e.group);
    if (const auto it = g.members.find(std::string(e.consumer)); it != g.members.end())
      g.members.erase(it);
    if (const auto it = g.member_epochs.find(e.member_id); it != g.member_epochs.end())
      g.member_epochs.erase(it);
  }
  void on(std::int64_t t, const tr::MemberEpoch& e) {
    Group& g = slot(groups, e.group);
    const auto it = g.member_epochs.find(e.member_id);
    // A member leaving (epoch -1 or -2) ends its epochs; a new one starts again.
    if (e.epoch >= 0 && it != g.member_epochs.end() && e.epoch < it->second) {
      report("monotonic-epochs", fmt::format("member {}", e.member_id), t,
             fmt::format("group {}: member {} ({}) epoch went from {} back to {}", e.group,
                         e.member_id, e.consumer, it->second, e.epoch),
             line_no, line_no);
    }
    if (e.epoch >= 0)
      slot(g.member_epochs, e.member_id) = e.epoch;
    else if (it != g.member_epochs.end())
      g.member_epochs.erase(it);
  }
  void on(std::int64_t, const tr::CoordinatorLoaded&) {
    // A new coordinator resumes the groups from their committed records: what was not yet
    // committed (replicated) is gone, and epochs and offsets may resume from earlier values.
    for (auto& [name, g] : groups) {
      g.epoch = -1;
      g.member_epochs.clear();
      g.committed.clear();
    }
  }
  void on(std::int64_t t, const tr::Record& r) {
    const auto c = offset_commit(r);
    if (!c) return;
    Group& g = slot(groups, c->group);
    const std::string tp = fmt::format("{}-{}", c->topic, c->partition_index);
    const std::int64_t offset = c->committed_offset;
    const auto it = g.committed.find(tp);
    if (it != g.committed.end() && offset < it->second) {
      report("monotonic-commits", fmt::format("{}|{}", c->group, tp), t,
             fmt::format("group {}: committed offset of {} went from {} back to {}", c->group, tp,
                         it->second, offset),
             slot(g.committed_line, tp), line_no);
    }
    slot(g.committed, tp) = offset;
    slot(g.committed_line, tp) = line_no;
    bool checked = false;
    for (const auto& [name, consumer] : consumers)
      if (consumer.group == c->group && context.at_least_once.count(name) > 0) checked = true;
    if (checked) {
      const std::int64_t gap = slot(g.processed, tp).first_gap_below(offset);
      if (gap >= 0) {
        report("no-record-lost", fmt::format("{}|{}", c->group, tp), t,
               fmt::format("group {}: committed offset {} of {} passes record {}, which no member "
                           "of the group processed",
                           c->group, offset, tp, gap),
               line_no, line_no);
      }
    }
  }
  void on(std::int64_t, const tr::RecordsFetched& e) {
    std::vector<Range> ranges;
    ranges.reserve(e.ranges.size());
    for (const auto& r : e.ranges) ranges.push_back(Range{r.partition.str(), r.first, r.last});
    batches[{std::string(e.consumer), e.batch}] = std::move(ranges);
  }
  void on(std::int64_t, const tr::Position& e) {
    // A position chosen by auto.offset.reset skips the records before it by design: they are
    // not the group's to process. (A committed position skips nothing.)
    if (e.source.starts_with("reset"))
      slot(slot(groups, e.group).processed, partition_name(key, *e.partition)).add(0, e.offset);
  }
  void on(std::int64_t, const tr::RecordsProcessed& e) {
    key.assign(e.consumer);
    const auto it = batches.find({key, e.batch});
    if (it == batches.end()) return;
    Group& g = slot(groups, e.group);
    for (const auto& r : it->second) slot(g.processed, r.partition).add(r.first, r.last + 1);
    batches.erase(it);
  }
  void on(std::int64_t, const tr::Lag& e) {
    key.assign(e.group);
    key += '|';
    key += partition_name(key2, *e.partition);
    slot(last_lag, key) = e.lag;
  }
  void on(std::int64_t t, const tr::RunEnd&) {
    end_instant();
    liveness(t);
  }
  template <class E>
  void on(std::int64_t, const E&) {}

  void on_event(std::int64_t t, const tr::Event& e) {
    if (t != instant) {
      end_instant();
      instant = t;
      instant_first_line = line_no;
    }
    std::visit([&](const auto& x) { on(t, x); }, e);
  }

  void liveness(std::int64_t end) {
    if (end - context.last_fault_end_us < context.liveness_bound_us) return;
    for (const auto& [gname, g] : groups) {
      std::set<std::string> topics;
      std::map<std::string, std::string> owner;
      bool any_live = false;
      for (const auto& [name, c] : consumers) {
        if (c.group != gname || !c.alive) continue;
        any_live = true;
        for (const auto& t : slot(subscriptions, name)) topics.insert(t);
        for (const auto& tp : c.owned) owner.emplace(tp, name);
      }
      if (!any_live) continue;
      for (const auto& topic : topics) {
        const auto found = partitions_per_topic.find(topic);
        const auto n = found != partitions_per_topic.end() ? found->second : 0;
        for (std::int32_t p = 0; p < n; ++p) {
          const std::string tp = fmt::format("{}-{}", topic, p);
          if (owner.count(tp) == 0) {
            report(
                "partitions-owned", gname + "|" + tp, end,
                fmt::format("group {}: partition {} has no live owner at the end of the run, {} ms "
                            "after the last fault (bound {} ms)",
                            gname, tp, (end - context.last_fault_end_us) / 1000,
                            context.liveness_bound_us / 1000),
                0, line_no == 0 ? 0 : line_no - 1);
          } else if (const auto it = last_lag.find(gname + "|" + tp);
                     it != last_lag.end() && it->second > context.max_final_lag) {
            report("lag-drains", gname + "|" + tp, end,
                   fmt::format("group {}: partition {} ends the run with lag {} (more than {})",
                               gname, tp, it->second, context.max_final_lag),
                   0, line_no == 0 ? 0 : line_no - 1);
          }
        }
      }
    }
  }
};

InvariantChecker::InvariantChecker(InvariantContext context) : s_(std::make_unique<State>()) {
  s_->context = std::move(context);
}

InvariantChecker::~InvariantChecker() = default;

void InvariantChecker::on_event(std::int64_t t_us, const rsim::trace::Event& e,
                                std::string_view line) {
  State& s = *s_;
  if (!line.empty()) {
    s.texts = true;
    s.recent[s.line_no % s.recent.size()].assign(line);
  }
  s.on_event(t_us, e);
  ++s.line_no;
}

void InvariantChecker::on_line(const std::string& line) {
  tr::ReadStorage storage;
  sim::SimTime t{0};
  const tr::Event e = tr::parse_jsonl(line, storage, t);
  on_event(t.count(), e, line);
}

const std::vector<Violation>& InvariantChecker::finish() {
  if (!s_->finished) {
    s_->finished = true;
    s_->end_instant();
  }
  return s_->violations;
}

InvariantSink::InvariantSink(InvariantContext context, std::optional<rsim::trace::Detail> written,
                             std::uint64_t max_bytes)
    : checker_(std::move(context)), bound_(max_bytes) {
  if (written) filter_.emplace(*written);
}

void InvariantSink::on_event(sim::SimTime t, const rsim::trace::Event& e) {
  // An event still published the untyped way is checked as its typed kind (as read back).
  const rsim::trace::Event* event = &e;
  rsim::trace::Event typed;
  if (const auto* raw = std::get_if<sim::RawTraceEvent>(&e);
      raw != nullptr && raw->fields != nullptr) {
    raw_.clear();
    typed = rsim::trace::parse_fields(raw->type, *raw->fields, raw_);
    event = &typed;
  }
  line_.clear();
  if (filter_) {
    // The level's filter decides on the event as published (its Lag slots, its quiet rpcs).
    if (!rsim::trace::append_jsonl_at(line_, t, e, *filter_)) return;
  } else {
    rsim::trace::append_jsonl(line_, t, e);
  }
  bound_.add(t, line_, 1);  // and its newline
  checker_.on_event(t.count(), *event, line_);
}

std::vector<Violation> check_invariants(const std::vector<std::string>& lines,
                                        const InvariantContext& context) {
  InvariantChecker checker(context);
  tr::ReadStorage storage;
  sim::SimTime t{0};
  for (const auto& l : lines) {
    const tr::Event e = tr::parse_jsonl(l, storage, t);
    checker.on_event(t.count(), e, l);
  }
  return checker.finish();
}

}  // namespace reports
