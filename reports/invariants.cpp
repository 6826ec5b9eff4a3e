#include "reports/invariants.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace reports {

namespace {
using json = nlohmann::json;

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

struct Group {
  std::string protocol;                 // "consumer" or classic
  std::set<std::string> members;        // the coordinator's members (by consumer name)
  std::int64_t epoch = -1;              // group epoch or generation
  std::map<std::string, std::int64_t> member_epochs;  // by member id
  std::map<std::string, std::int64_t> committed;      // by partition "t-0"
  std::map<std::string, std::size_t> committed_line;
  std::map<std::string, Coverage> processed;
};

std::string str(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

struct InvariantChecker::State {
  InvariantContext context;
  std::vector<Violation> violations;
  std::map<std::string, Consumer> consumers;
  std::map<std::string, Group> groups;
  std::map<std::string, std::int32_t> partitions_per_topic;
  std::map<std::string, std::set<std::string>> subscriptions;  // consumer -> topics
  std::map<std::pair<std::string, std::int64_t>, json> batches;  // (consumer, batch) -> ranges
  std::map<std::string, std::int64_t> last_lag;  // "group|partition" -> lag
  std::set<std::string> reported;  // one report per (property, subject)
  std::int64_t instant = -1;
  std::size_t instant_first_line = 0;
  std::size_t line_no = 0;
  bool finished = false;

  void report(const std::string& property, const std::string& subject, std::int64_t t,
              const std::string& detail, std::size_t first, std::size_t last) {
    if (!reported.insert(property + "|" + subject).second) return;
    violations.push_back({property, t, detail, first, last});
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
            report("exclusive-ownership", gname + "|" + tp, instant,
                   fmt::format("group {}: partition {} owned by both {} and {}, live members of {} {}",
                               gname, tp, o->second, name,
                               g.protocol == "consumer" ? "group epoch" : "generation", g.epoch),
                   instant_first_line, line_no == 0 ? 0 : line_no - 1);
          }
        }
      }
    }
  }

  void on(const json& e) {
    const std::string type = e.value("type", "");
    const std::int64_t t = e.value("t_us", std::int64_t{0});
    if (t != instant) {
      end_instant();
      instant = t;
      instant_first_line = line_no;
    }
    if (type == "topic.partitions") {
      partitions_per_topic[str(e["topic"])] = e["partitions"].get<std::int32_t>();
    } else if (type == "consumer.start") {
      Consumer& c = consumers[str(e["consumer"])];
      c.group = e.value("group", "");
      c.alive = true;
      c.owned.clear();
      std::set<std::string> topics;
      if (e.contains("topics"))
        for (const auto& x : e["topics"]) topics.insert(x.get<std::string>());
      subscriptions[str(e["consumer"])] = topics;
      Group& g = groups[c.group];
      g.protocol = e.value("protocol", "") == "consumer" ? "consumer" : "classic";
    } else if (type == "consumer.subscribe") {
      std::set<std::string> topics;
      for (const auto& x : e["topics"]) topics.insert(x.get<std::string>());
      subscriptions[str(e["consumer"])] = topics;
    } else if (type == "consumer.crash" || type == "consumer.closed") {
      Consumer& c = consumers[str(e["consumer"])];
      c.alive = false;
      c.owned.clear();
    } else if (type == "assignment" && e.contains("owned")) {
      Consumer& c = consumers[str(e["consumer"])];
      c.owned.clear();
      for (const auto& x : e["owned"]) c.owned.insert(x.get<std::string>());
    } else if (type == "group.epoch") {
      Group& g = groups[str(e["group"])];
      const std::int64_t epoch = e.contains("generation") ? e["generation"].get<std::int64_t>()
                                                          : e.value("epoch", std::int64_t{-1});
      if (epoch < g.epoch) {
        report("monotonic-epochs", "group " + str(e["group"]), t,
               fmt::format("group {}: {} went from {} back to {}", str(e["group"]),
                           e.contains("generation") ? "generation" : "group epoch", g.epoch, epoch),
               line_no, line_no);
      }
      g.epoch = epoch;
      g.members.clear();
      if (e.contains("members"))
        for (const auto& m : e["members"]) g.members.insert(m.get<std::string>());
    } else if (type == "member.leave") {
      Group& g = groups[str(e["group"])];
      g.members.erase(e.value("consumer", ""));
      g.member_epochs.erase(e.value("member_id", ""));
    } else if (type == "member.epoch") {
      Group& g = groups[str(e["group"])];
      const std::string id = e.value("member_id", "");
      const std::int64_t epoch = e["epoch"].get<std::int64_t>();
      const auto it = g.member_epochs.find(id);
      // A member leaving (epoch -1 or -2) ends its epochs; a new one starts again.
      if (epoch >= 0 && it != g.member_epochs.end() && epoch < it->second) {
        report("monotonic-epochs", "member " + id, t,
               fmt::format("group {}: member {} ({}) epoch went from {} back to {}", str(e["group"]), id,
                           e.value("consumer", ""), it->second, epoch),
               line_no, line_no);
      }
      if (epoch >= 0) g.member_epochs[id] = epoch;
      else g.member_epochs.erase(id);
    } else if (type == "coordinator.loaded") {
      // A new coordinator resumes the groups from their committed records: what was not yet
      // committed (replicated) is gone, and epochs and offsets may resume from earlier values.
      for (auto& [name, g] : groups) {
        g.epoch = -1;
        g.member_epochs.clear();
        g.committed.clear();
      }
    } else if (type == "record" && e.value("record", "") == "OffsetCommit" && !e.value("tombstone", false)) {
      Group& g = groups[str(e["group"])];
      const std::string tp = fmt::format("{}-{}", str(e["topic"]), e["partition_index"].get<std::int64_t>());
      const std::int64_t offset = e["committed_offset"].get<std::int64_t>();
      const auto it = g.committed.find(tp);
      if (it != g.committed.end() && offset < it->second) {
        report("monotonic-commits", str(e["group"]) + "|" + tp, t,
               fmt::format("group {}: committed offset of {} went from {} back to {}", str(e["group"]), tp,
                           it->second, offset),
               g.committed_line[tp], line_no);
      }
      g.committed[tp] = offset;
      g.committed_line[tp] = line_no;
      bool checked = false;
      for (const auto& [name, c] : consumers)
        if (c.group == str(e["group"]) && context.at_least_once.count(name) > 0) checked = true;
      if (checked) {
        const std::int64_t gap = g.processed[tp].first_gap_below(offset);
        if (gap >= 0) {
          report("no-record-lost", str(e["group"]) + "|" + tp, t,
                 fmt::format("group {}: committed offset {} of {} passes record {}, which no member "
                             "of the group processed",
                             str(e["group"]), offset, tp, gap),
                 line_no, line_no);
        }
      }
    } else if (type == "records.fetched") {
      batches[{str(e["consumer"]), e["batch"].get<std::int64_t>()}] = e["ranges"];
    } else if (type == "position") {
      // A position chosen by auto.offset.reset skips the records before it by design: they are
      // not the group's to process. (A committed position skips nothing.)
      if (e.value("source", "").rfind("reset", 0) == 0)
        groups[str(e["group"])].processed[str(e["partition"])].add(0, e["offset"].get<std::int64_t>());
    } else if (type == "records.processed") {
      const auto it = batches.find({str(e["consumer"]), e["batch"].get<std::int64_t>()});
      if (it != batches.end()) {
        Group& g = groups[e.value("group", "")];
        for (const auto& r : it->second)
          g.processed[str(r["partition"])].add(r["first_offset"].get<std::int64_t>(),
                                          r["last_offset"].get<std::int64_t>() + 1);
        batches.erase(it);
      }
    } else if (type == "lag") {
      if (e.contains("group") && e.contains("partition") && e.contains("lag"))
        last_lag[str(e["group"]) + "|" + str(e["partition"])] = e["lag"].get<std::int64_t>();
    } else if (type == "run.end") {
      end_instant();
      liveness(t);
    }
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
        for (const auto& t : subscriptions[name]) topics.insert(t);
        for (const auto& tp : c.owned) owner.emplace(tp, name);
      }
      if (!any_live) continue;
      for (const auto& topic : topics) {
        const auto n = partitions_per_topic.count(topic) ? partitions_per_topic.at(topic) : 0;
        for (std::int32_t p = 0; p < n; ++p) {
          const std::string tp = fmt::format("{}-{}", topic, p);
          if (owner.count(tp) == 0) {
            report("partitions-owned", gname + "|" + tp, end,
                   fmt::format("group {}: partition {} has no live owner at the end of the run, {} ms "
                               "after the last fault (bound {} ms)",
                               gname, tp, (end - context.last_fault_end_us) / 1000,
                               context.liveness_bound_us / 1000),
                   0, line_no == 0 ? 0 : line_no - 1);
          } else if (const auto it = last_lag.find(gname + "|" + tp);
                     it != last_lag.end() && it->second > context.max_final_lag) {
            report("lag-drains", gname + "|" + tp, end,
                   fmt::format("group {}: partition {} ends the run with lag {} (more than {})", gname, tp,
                               it->second, context.max_final_lag),
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

void InvariantChecker::on_line(const std::string& line) {
  s_->on(json::parse(line));
  ++s_->line_no;
}

const std::vector<Violation>& InvariantChecker::finish() {
  if (!s_->finished) {
    s_->finished = true;
    s_->end_instant();
  }
  return s_->violations;
}

std::vector<Violation> check_invariants(const std::vector<std::string>& lines, const InvariantContext& context) {
  InvariantChecker checker(context);
  for (const auto& l : lines) checker.on_line(l);
  return checker.finish();
}

}  // namespace reports
