#include "reports/narrative.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "reports/max_tree.hpp"
#include "reports/summary.hpp"

namespace reports {

namespace {

// The first stretch of ownership that holds t. A timeline in time order keeps its stretches
// by start and apart from each other: the one that starts last at or before t is the only
// candidate (a binary search, so that a long run's report stays linear).
const Ownership* owning_at(const Lane& lane, std::int64_t t, bool time_ordered) {
  if (!time_ordered) {
    for (const auto& o : lane.owned)
      if (o.start_us <= t && t < o.end_us) return &o;
    return nullptr;
  }
  auto it = std::upper_bound(lane.owned.begin(), lane.owned.end(), t,
                             [](std::int64_t v, const Ownership& o) { return v < o.start_us; });
  if (it == lane.owned.begin()) return nullptr;
  --it;
  return t < it->end_us ? &*it : nullptr;
}

std::vector<std::string> owned_at(const Timeline& tl, const Lane& lane, std::int64_t t) {
  std::vector<std::string> out;
  if (const Ownership* o = owning_at(lane, t, tl.time_ordered))
    for (const int p : o->partitions) out.push_back(tl.partitions[static_cast<std::size_t>(p)]);
  return out;
}

// The instants of a lane with from <= t <= to, in order: found by binary search in a timeline
// in time order, else every instant looked at.
std::pair<std::vector<Instant>::const_iterator, std::vector<Instant>::const_iterator>
instants_within(const Timeline& tl, const Lane& lane, std::int64_t from, std::int64_t to) {
  if (!tl.time_ordered) return {lane.instants.begin(), lane.instants.end()};
  const auto lo = std::lower_bound(lane.instants.begin(), lane.instants.end(), from,
                                   [](const Instant& i, std::int64_t v) { return i.t_us < v; });
  const auto hi = std::upper_bound(lo, lane.instants.end(), to,
                                   [](std::int64_t v, const Instant& i) { return v < i.t_us; });
  return {lo, hi};
}

std::string join_sentences(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return out;
}

// The member a trigger names ("member B joined", "leader A rejoined"), if it is a lane: the
// first lane (in lane order) whose name follows "member " or "leader " and is followed by a
// space. Each such stretch of the trigger is looked up by name (not every lane per rebalance).
const Lane* named_member(const Timeline& tl,
                         const std::map<std::string_view, std::size_t>& first_lane,
                         const std::string& trigger, std::uint64_t& steps) {
  std::size_t best = tl.lanes.size();
  for (const std::string_view prefix : {std::string_view("member "), std::string_view("leader ")}) {
    for (std::size_t at = trigger.find(prefix); at != std::string::npos;
         at = trigger.find(prefix, at + 1)) {
      const std::size_t from = at + prefix.size();
      for (std::size_t end = trigger.find(' ', from); end != std::string::npos;
           end = trigger.find(' ', end + 1)) {
        ++steps;
        const auto it = first_lane.find(std::string_view(trigger).substr(from, end - from));
        if (it != first_lane.end()) best = std::min(best, it->second);
      }
    }
  }
  return best < tl.lanes.size() ? &tl.lanes[best] : nullptr;
}

// "2,001 ms", "3.5 ms", "10,264.32 ms".
std::string readable_ms(double ms) {
  const auto us = static_cast<std::int64_t>(std::llround(ms * 1000.0));
  const std::int64_t magnitude = us < 0 ? -us : us;
  const std::string digits = std::to_string(magnitude / 1000);
  std::string whole = us < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) whole += ',';
    whole += digits[i];
  }
  std::string frac = fmt::format("{:03d}", magnitude % 1000);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return whole + (frac.empty() ? "" : "." + frac) + " ms";
}

// "key=value" when the value is known, else the key: the member's own value, or the cluster's;
// a consumer key of no member (the coordinator) when every consumer has the same value.
std::string config_text(const ConfigValues* config, const std::string& actor,
                        const std::string& key) {
  if (config == nullptr) return key;
  // An empty value: not one value (the member's incarnations disagree): the key alone.
  const auto with =
      [&](const std::map<std::string, std::string>& values) -> std::optional<std::string> {
    const auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second.empty() ? key : key + "=" + it->second;
  };
  if (const auto a = config->find(actor); a != config->end() && !actor.empty())
    if (auto v = with(a->second)) return *v;
  if (const auto c = config->find(""); c != config->end())
    if (auto v = with(c->second)) return *v;
  std::optional<std::string> same;
  for (const auto& [name, values] : *config) {
    if (name.empty()) continue;
    const auto v = with(values);
    if (!v || *v == key || (same && *same != *v)) return key;
    same = v;
  }
  return same.value_or(key);
}

// One cause in plain words: who waited for what, and the config that governs it.
std::string cause_words(const std::string& cause, const std::string& actor, bool kip848,
                        const ConfigValues* config) {
  const std::string who = actor.empty() || actor == "coordinator" ? std::string("a member") : actor;
  const auto key = [&](const char* k) { return config_text(config, actor, k); };
  if (cause == "heartbeat_wait_ms")
    return who + (kip848
                      ? " waiting for its next heartbeat (" +
                            key("group.consumer.heartbeat.interval.ms") + ")"
                      : " waiting for its next heartbeat (" + key("heartbeat.interval.ms") + ")");
  if (cause == "poll_wait_ms")
    return who + " waiting for its next poll() (processing between polls; " +
           key("max.poll.interval.ms") + " bounds it)";
  if (cause == "session_timeout_ms")
    return "waiting for " + who + "'s session to expire (" +
           key(kip848 ? "group.consumer.session.timeout.ms" : "session.timeout.ms") + ")";
  if (cause == "rebalance_timeout_ms")
    return "waiting out the rebalance timeout (" + key("max.poll.interval.ms") + ")";
  if (cause == "initial_delay_ms")
    return "the coordinator's initial delay (" + key("group.initial.rebalance.delay.ms") + ")";
  if (cause == "assignment_interval_ms")
    return "the coordinator holding back the target assignment (" +
           key("group.consumer.assignment.interval.ms") + ")";
  if (cause == "network_ms") return "network";
  if (cause == "broker_ms") return "the broker handling requests and writing __consumer_offsets";
  if (cause == "callback_ms") return who + " inside its rebalance callbacks";
  return "other";
}

/// Which rebalance a span is told under. Per group, its rebalances in start order with their
/// windows, found by binary search (a long run's report stays linear).
class RebalanceOwners {
 public:
  explicit RebalanceOwners(const Timeline& tl) {
    for (const auto& q : tl.rebalances) {
      const auto [from, to] = rebalance_window(tl, q);
      auto& g = groups_[q.group];
      g.entries.push_back(Entry{q.start_us, from, to, q.index});
    }
    for (auto& [name, g] : groups_) {
      std::stable_sort(g.entries.begin(), g.entries.end(),
                       [](const Entry& a, const Entry& b) { return a.start_us < b.start_us; });
      std::vector<std::int64_t> ends;
      ends.reserve(g.entries.size());
      for (const auto& e : g.entries) {
        ends.push_back(e.to);
        g.max_lead = std::max(g.max_lead, e.start_us - e.from);
      }
      g.ends = MaxTree(ends);
    }
  }

  /// The one rebalance a span of a lane in `group` starting at `t` is told under: of the group's
  /// rebalances whose window holds `t`, the last one that started at or before `t` (else the
  /// first whose window holds it). Windows of consecutive rebalances overlap (a window opens up to
  /// one heartbeat interval before its rebalance), and a callback is told once.
  int owner(const std::string& group, std::int64_t t, std::uint64_t& steps) const {
    const auto it = groups_.find(group);
    if (it == groups_.end()) return 0;
    const auto& g = it->second.entries;
    const auto after = std::upper_bound(
        g.begin(), g.end(), t, [](std::int64_t v, const Entry& e) { return v < e.start_us; });
    // Started at or before t (so its window opens at or before t): the last in start order whose
    // window ends at or after t. A window opens at or before its start, so `from <= t` holds.
    for (std::ptrdiff_t k =
             it->second.ends.last_at_least(static_cast<std::size_t>(after - g.begin()), t, steps);
         k >= 0; k = it->second.ends.last_at_least(static_cast<std::size_t>(k), t, steps)) {
      const Entry& e = g[static_cast<std::size_t>(k)];
      if (e.from <= t) return e.index;
    }
    // Else the first (in index order) whose window opens before it starts and holds t.
    int first = 0;
    for (auto k = after; k != g.end() && k->start_us - it->second.max_lead <= t; ++k) {
      ++steps;
      if (k->from <= t && k->to >= t && (first == 0 || k->index < first)) first = k->index;
    }
    return first;
  }

 private:
  struct Entry {
    std::int64_t start_us, from, to;
    int index;
  };
  struct Group {
    std::vector<Entry> entries;  // in start order
    MaxTree ends;                // entries' window ends
    std::int64_t max_lead = 0;   // the longest window opening before its rebalance
  };
  std::map<std::string, Group> groups_;
};

/// Per group, every time at which something of a lane may be told: its instants, the starts of
/// its spans, the starts and ends of its stretches of ownership. A rebalance looks only at the
/// lanes with such a time in its window (the others have nothing to tell), not at every member.
class LaneMoments {
 public:
  explicit LaneMoments(const Timeline& tl) : seen_(tl.lanes.size(), 0) {
    for (std::size_t l = 0; l < tl.lanes.size(); ++l) {
      const Lane& lane = tl.lanes[l];
      auto& at = groups_[lane.group];
      for (const auto& i : lane.instants) at.push_back({i.t_us, l});
      for (const auto& s : lane.spans) at.push_back({s.start_us, l});
      for (const auto& o : lane.owned) {
        at.push_back({o.start_us, l});
        at.push_back({o.end_us, l});
      }
    }
    for (auto& [name, at] : groups_)
      std::sort(at.begin(), at.end(), [](const Moment& a, const Moment& b) {
        return a.t_us < b.t_us || (a.t_us == b.t_us && a.lane < b.lane);
      });
  }

  /// The lanes of `group` with a moment in [from, to], in lane order.
  const std::vector<std::size_t>& lanes(const std::string& group, std::int64_t from,
                                        std::int64_t to, std::uint64_t& steps) {
    found_.clear();
    ++stamp_;
    const auto it = groups_.find(group);
    if (it == groups_.end() || from > to) return found_;
    const auto& at = it->second;
    for (auto m = std::lower_bound(at.begin(), at.end(), from,
                                   [](const Moment&x, std::int64_t v) { return x.t_us < v; });
         m != at.end() && m->t_us <= to; ++m) {
      ++steps;
      if (seen_[m->lane] != stamp_) {
        seen_[m->lane] = stamp_;
        found_.push_back(m->lane);
      }
    }
    std::sort(found_.begin(), found_.end());
    return found_;
  }

 private:
  struct Moment {
    std::int64_t t_us;
    std::size_t lane;
  };
  std::map<std::string, std::vector<Moment>> groups_;
  std::vector<std::uint64_t> seen_;
  std::uint64_t stamp_ = 0;
  std::vector<std::size_t> found_;
};

}  // namespace

std::string config_quote(const ConfigValues* config, const std::string& actor,
                         const std::string& key) {
  return config_text(config, actor, key);
}

std::string critical_path_sentence(const nlohmann::ordered_json& rebalance, int index,
                                   const ConfigValues* config) {
  if (!rebalance.is_object() || !rebalance.contains("critical_path")) return "";
  const auto& cp = rebalance["critical_path"];
  if (!cp.contains("causes") || !cp["causes"].is_object()) return "";
  // Each cause's time and the actor that spent most of it (on the steps of the path).
  std::vector<std::pair<std::string, double>> causes;
  for (auto it = cp["causes"].begin(); it != cp["causes"].end(); ++it)
    if (it.value().is_number() && it.value().get<double>() > 0)
      causes.emplace_back(it.key(), it.value().get<double>());
  std::stable_sort(causes.begin(), causes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::map<std::string, std::map<std::string, double>> by_actor;  // cause -> actor -> ms
  bool kip848 = false;  // the consumer protocol: the coordinator sets the heartbeat interval
  if (cp.contains("steps") && cp["steps"].is_array())
    for (const auto& step : cp["steps"]) {
      kip848 = kip848 || step.value("what", "").rfind("ConsumerGroupHeartbeat", 0) == 0;
      if (!step.contains("causes")) continue;
      for (auto it = step["causes"].begin(); it != step["causes"].end(); ++it) {
        // A wait for another member's heartbeat is that member's.
        const bool theirs = it.key() == "heartbeat_wait_ms" && step.contains("waited_for");
        const std::string actor =
            theirs ? step["waited_for"].value("actor", "") : step.value("actor", "");
        by_actor[it.key()][actor] += it.value().get<double>();
      }
    }
  auto main_actor = [&](const std::string& cause) {
    std::string best;
    double most = -1;
    for (const auto& [actor, ms] : by_actor[cause])
      if (ms > most) {
        most = ms;
        best = actor;
      }
    return best;
  };
  std::string out =
      fmt::format("R{} took {}", index, readable_ms(rebalance.value("duration_ms", 0.0)));
  for (std::size_t i = 0; i < causes.size(); ++i)
    out += fmt::format("{}{} {}", i == 0 ? ": " : ", ", readable_ms(causes[i].second),
                       cause_words(causes[i].first, main_actor(causes[i].first), kip848, config));
  return out + ".";
}

ConfigValues config_values_of(const nlohmann::ordered_json& summary) {
  ConfigValues out;
  const auto it = summary.is_object() ? summary.find("config") : summary.end();
  if (it == summary.end() || !it->is_object()) return out;
  const auto text = [](const nlohmann::ordered_json& v) {
    return v.is_number_integer() ? std::to_string(v.get<std::int64_t>())
           : v.is_string()       ? v.get<std::string>()
                                 : std::string();
  };
  auto& shared = out[""];
  for (const char* part : {"cluster", "consumer"})
    if (const auto p = it->find(part); p != it->end() && p->is_object())
      for (auto kv = p->begin(); kv != p->end(); ++kv) shared[kv.key()] = text(kv.value());
  if (const auto c = it->find("consumers"); c != it->end() && c->is_object())
    for (auto member = c->begin(); member != c->end(); ++member)
      if (member.value().is_object())
        for (auto kv = member.value().begin(); kv != member.value().end(); ++kv)
          out[member.key()][kv.key()] = text(kv.value());
  return out;
}

std::vector<std::string> narrate(const Timeline& tl, const ConfigValues* given,
                                 std::uint64_t* steps_out) {
  // Without values given, summary.json's `config` (a run folder's explain and report.html).
  const ConfigValues from_summary =
      given == nullptr ? config_values_of(tl.summary) : ConfigValues{};
  const ConfigValues* config = given != nullptr ? given : &from_summary;
  std::vector<std::string> out;
  std::uint64_t steps = 0;
  std::map<std::string_view, std::size_t> first_lane;  // consumer name -> its first lane
  for (std::size_t l = 0; l < tl.lanes.size(); ++l) first_lane.emplace(tl.lanes[l].consumer, l);
  LaneMoments moments(tl);
  // Per group, the latest end of its rebalances so far (in index order): what each rebalance
  // counts as "since the group's previous rebalance", without a pass over all of them.
  std::map<std::string, std::int64_t> previous_end;
  const RebalanceOwners owners(tl);
  for (const auto& r : tl.rebalances) {
    const auto [from, to] = rebalance_window(tl, r);
    std::string text =
        fmt::format("Rebalance {} of group {}{}: from {} to {} ({}), trigger \"{}\"{}.", r.index,
                    r.group, r.epoch_label.empty() ? "" : " (" + r.epoch_label + ")",
                    seconds(r.start_us), seconds(r.end_us), milliseconds(r.end_us - r.start_us),
                    r.trigger, r.completed ? "" : ", not completed by the end of the run");
    std::vector<std::string> facts;
    if (const Lane* who = named_member(tl, first_lane, r.trigger, steps)) {
      // What the member the trigger names last did before the coordinator acted on it.
      // Only what happened since the group's previous rebalance: a rejoin is not news of a start.
      std::int64_t since = 0;
      if (const auto it = previous_end.find(r.group); it != previous_end.end())
        since = std::max(since, it->second);
      const Instant* last = nullptr;
      if (tl.time_ordered) {
        const auto [lo, hi] = instants_within(tl, *who, since, r.start_us);
        for (auto it = hi; it != lo;) {
          --it;
          ++steps;
          if (it->kind == "start" || it->kind == "stop" || it->kind == "crash" ||
              it->kind == "fenced") {
            last = &*it;
            break;
          }
        }
      } else {
        for (const auto& i : who->instants) {
          if (i.t_us > r.start_us) break;
          if (i.t_us < since) continue;
          if (i.kind == "start" || i.kind == "stop" || i.kind == "crash" || i.kind == "fenced")
            last = &i;
        }
      }
      if (last != nullptr) {
        std::string what = last->kind == "start"   ? "started"
                           : last->kind == "crash" ? "crashed"
                                                   : last->label;
        if (last->kind == "stop") what = last->label == "closed" ? "closed" : "called close()";
        facts.push_back(fmt::format("{} {} at {}", who->consumer, what, seconds(last->t_us)));
      }
    }
    // The lanes with something in the window, or whose ownership changes across the rebalance
    // (a stretch starts or ends between r.start_us - 1 and r.end_us); every lane of the group
    // when the timeline is not in time order.
    std::vector<std::size_t> all_lanes;
    if (!tl.time_ordered)
      for (std::size_t l = 0; l < tl.lanes.size(); ++l) all_lanes.push_back(l);
    const auto& told = tl.time_ordered ? moments.lanes(r.group, std::min(from, r.end_us),
                                                       std::max(to, r.start_us), steps)
                                       : all_lanes;
    for (const std::size_t l : told) {
      const Lane& lane = tl.lanes[l];
      ++steps;
      if (lane.group != r.group) continue;
      std::vector<std::string> mine;
      bool learned = false;
      const auto [first_instant, end_instant] = instants_within(tl, lane, from, to);
      for (auto it = first_instant; it != end_instant; ++it) {
        const Instant& i = *it;
        ++steps;
        if (i.t_us < from || i.t_us > to) continue;
        if (i.kind == "heartbeat" && !learned && i.t_us >= r.start_us) {
          learned = true;
          mine.push_back(fmt::format("learned of it from its {} at {}", i.label, seconds(i.t_us)));
        } else if (i.kind == "join" && i.label == "JoinGroup request" && mine.size() < 6) {
          mine.push_back(fmt::format("sent JoinGroup at {}", seconds(i.t_us)));
        } else if (i.kind == "leave" && i.label == "LeaveGroup request") {
          mine.push_back(fmt::format("sent LeaveGroup at {}", seconds(i.t_us)));
        } else if (i.kind == "crash" || i.kind == "fenced" || i.kind == "leave") {
          mine.push_back(fmt::format("{} at {}", i.label, seconds(i.t_us)));
        }
      }
      // Spans are kept by start: only those that start in the window are looked at.
      const auto first_span =
          std::lower_bound(lane.spans.begin(), lane.spans.end(), from,
                           [](const Span& x, std::int64_t v) { return x.start_us < v; });
      for (auto it = first_span; it != lane.spans.end() && it->start_us <= to; ++it) {
        const Span& s = *it;
        ++steps;
        if (s.start_us < from || s.start_us > to) continue;
        if (owners.owner(r.group, s.start_us, steps) != r.index) continue;
        if (s.kind == "callback" && (s.label.rfind("onPartitionsRevoked", 0) == 0 ||
                                     s.label.rfind("onPartitionsLost", 0) == 0))
          mine.push_back(
              fmt::format("ran {} from {} to {}", s.label, seconds(s.start_us), seconds(s.end_us)));
        else if (s.kind == "stalled" || s.kind == "paused")
          mine.push_back(
              fmt::format("was {} from {} to {}", s.kind, seconds(s.start_us), seconds(s.end_us)));
      }
      const auto before = owned_at(tl, lane, r.start_us - 1), after = owned_at(tl, lane, r.end_us);
      if (before != after) {
        std::int64_t when = r.end_us;
        if (tl.time_ordered) {
          // The last stretch that starts within the rebalance.
          const auto it =
              std::upper_bound(lane.owned.begin(), lane.owned.end(), r.end_us,
                               [](std::int64_t v, const Ownership& o) { return v < o.start_us; });
          if (it != lane.owned.begin() && std::prev(it)->start_us >= r.start_us)
            when = std::prev(it)->start_us;
        } else {
          for (const auto& o : lane.owned)
            if (o.start_us <= r.end_us && o.start_us >= r.start_us) when = o.start_us;
        }
        mine.push_back(fmt::format("went from {} to {} (last change at {})",
                                   compress_partitions(before), compress_partitions(after),
                                   seconds(when)));
      } else if (!mine.empty() && !after.empty()) {
        mine.push_back(fmt::format("kept {}", compress_partitions(after)));
      }
      if (!mine.empty()) {
        std::string sentence = lane.consumer + " ";
        for (std::size_t k = 0; k < mine.size(); ++k) {
          sentence += k == 0 ? "" : k + 1 == mine.size() ? " and " : ", ";
          sentence += mine[k];
        }
        facts.push_back(sentence);
      }
    }
    if (!facts.empty()) text += " " + join_sentences(facts) + ".";
    // Why it took that long: the critical path (reports/critical_path.hpp).
    if (tl.summary.contains("rebalances") && tl.summary["rebalances"].is_array() && r.index >= 1 &&
        static_cast<std::size_t>(r.index) <= tl.summary["rebalances"].size()) {
      const std::string why = critical_path_sentence(
          tl.summary["rebalances"][static_cast<std::size_t>(r.index - 1)], r.index, config);
      if (!why.empty()) text += " " + why;
    }
    out.push_back(text);
    auto& end = previous_end.try_emplace(r.group, r.end_us).first->second;
    end = std::max(end, r.end_us);
    ++steps;
  }
  if (steps_out != nullptr) *steps_out = steps;
  return out;
}

std::string explain_text(const Timeline& tl, const ConfigValues* config) {
  std::string out = fmt::format("{} [{}]: {} rebalance{}\n", tl.scenario, tl.protocol,
                                tl.rebalances.size(), tl.rebalances.size() == 1 ? "" : "s");
  if (tl.summary.is_object() && tl.summary.contains("verdict"))
    out += "  Verdict: " + tl.summary.at("verdict").get<std::string>() + "\n";
  if (tl.summary.is_object() && tl.summary.contains("metrics"))
    out += "  " + headline_of(tl.summary) + "\n";
  if (tl.summary.is_object())
    for (const auto& m : moment_lines(tl.summary)) out += "  Decisive moment " + m + "\n";
  for (const auto& p : narrate(tl, config)) out += "  " + p + "\n";
  // Fleets: the autoscaling loop, one line per scaling action (summary.json's `scaling`).
  if (const auto it = tl.summary.find("scaling"); it != tl.summary.end() && it->is_array()) {
    for (const auto& a : *it) {
      const std::int64_t rebalances = a.value("rebalances", std::int64_t{0});
      std::string line = fmt::format(
          "  at {} {}: {} -> {} replicas ({}); {} rebalance{}; {} partition-ms unavailable; {} "
          "records redelivered; ",
          seconds(static_cast<std::int64_t>(a.value("at_ms", 0.0) * 1000)),
          a.value("deployment", ""), a.value("from", 0), a.value("to", 0), a.value("reason", ""),
          rebalances, rebalances == 1 ? "" : "s", a.value("unavailable_partition_ms", 0.0),
          a.value("records_redelivered", std::int64_t{0}));
      const auto drain = a.find("drain_ms");
      line += drain != a.end() && drain->is_number()
                  ? fmt::format("backlog drained {} after\n",
                                seconds(static_cast<std::int64_t>(drain->get<double>() * 1000)))
                  : std::string("backlog not drained by the next action\n");
      out += line;
    }
  }
  return out;
}

}  // namespace reports
