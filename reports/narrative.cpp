#include "reports/narrative.hpp"

#include <fmt/format.h>

#include "reports/summary.hpp"

namespace reports {

namespace {

std::vector<std::string> owned_at(const Timeline& tl, const Lane& lane, std::int64_t t) {
  std::vector<std::string> out;
  for (const auto& o : lane.owned) {
    if (o.start_us <= t && t < o.end_us) {
      for (const int p : o.partitions) out.push_back(tl.partitions[static_cast<std::size_t>(p)]);
      break;
    }
  }
  return out;
}

std::string join_sentences(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return out;
}

// The member a trigger names ("member B joined", "leader A rejoined"), if it is a lane.
const Lane* named_member(const Timeline& tl, const std::string& trigger) {
  for (const auto& lane : tl.lanes) {
    if (trigger.find("member " + lane.consumer + " ") != std::string::npos ||
        trigger.find("leader " + lane.consumer + " ") != std::string::npos)
      return &lane;
  }
  return nullptr;
}

/// The one rebalance a span of a lane in `group` starting at `t` is told under: of the group's
/// rebalances whose window holds `t`, the last one that started at or before `t` (else the first
/// whose window holds it). Windows of consecutive rebalances overlap (a window opens up to one
/// heartbeat interval before its rebalance), and a callback is told once.
int owning_rebalance(const Timeline& tl, const std::string& group, std::int64_t t) {
  int started = 0, first = 0;
  std::int64_t started_at = 0;
  for (const auto& q : tl.rebalances) {
    if (q.group != group) continue;
    const auto [from, to] = rebalance_window(tl, q);
    if (t < from || t > to) continue;
    if (first == 0) first = q.index;
    if (q.start_us <= t && (started == 0 || q.start_us >= started_at)) {
      started = q.index;
      started_at = q.start_us;
    }
  }
  return started != 0 ? started : first;
}

}  // namespace

std::vector<std::string> narrate(const Timeline& tl) {
  std::vector<std::string> out;
  for (const auto& r : tl.rebalances) {
    const auto [from, to] = rebalance_window(tl, r);
    std::string text = fmt::format("Rebalance {} of group {}{}: from {} to {} ({}), trigger \"{}\"{}.", r.index,
                                   r.group, r.epoch_label.empty() ? "" : " (" + r.epoch_label + ")", seconds(r.start_us),
                                   seconds(r.end_us), milliseconds(r.end_us - r.start_us),
                                   r.trigger, r.completed ? "" : ", not completed by the end of the run");
    std::vector<std::string> facts;
    if (const Lane* who = named_member(tl, r.trigger)) {
      // What the member the trigger names last did before the coordinator acted on it.
      // Only what happened since the group's previous rebalance: a rejoin is not news of a start.
      std::int64_t since = 0;
      for (const auto& q : tl.rebalances)
        if (q.group == r.group && q.index < r.index) since = std::max(since, q.end_us);
      const Instant* last = nullptr;
      for (const auto& i : who->instants) {
        if (i.t_us > r.start_us) break;
        if (i.t_us < since) continue;
        if (i.kind == "start" || i.kind == "stop" || i.kind == "crash" || i.kind == "fenced") last = &i;
      }
      if (last != nullptr) {
        std::string what = last->kind == "start" ? "started" : last->kind == "crash" ? "crashed" : last->label;
        if (last->kind == "stop") what = last->label == "closed" ? "closed" : "called close()";
        facts.push_back(fmt::format("{} {} at {}", who->consumer, what, seconds(last->t_us)));
      }
    }
    for (const auto& lane : tl.lanes) {
      if (lane.group != r.group) continue;
      std::vector<std::string> mine;
      bool learned = false;
      for (const auto& i : lane.instants) {
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
      for (const auto& s : lane.spans) {
        if (s.start_us < from || s.start_us > to) continue;
        if (owning_rebalance(tl, r.group, s.start_us) != r.index) continue;
        if (s.kind == "callback" && (s.label.rfind("onPartitionsRevoked", 0) == 0 || s.label.rfind("onPartitionsLost", 0) == 0))
          mine.push_back(fmt::format("ran {} from {} to {}", s.label, seconds(s.start_us), seconds(s.end_us)));
        else if (s.kind == "stalled" || s.kind == "paused")
          mine.push_back(fmt::format("was {} from {} to {}", s.kind, seconds(s.start_us), seconds(s.end_us)));
      }
      const auto before = owned_at(tl, lane, r.start_us - 1), after = owned_at(tl, lane, r.end_us);
      if (before != after) {
        std::int64_t when = r.end_us;
        for (const auto& o : lane.owned)
          if (o.start_us <= r.end_us && o.start_us >= r.start_us) when = o.start_us;
        mine.push_back(fmt::format("went from {} to {} (last change at {})", compress_partitions(before),
                                   compress_partitions(after), seconds(when)));
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
    out.push_back(text);
  }
  return out;
}

std::string explain_text(const Timeline& tl) {
  std::string out = fmt::format("{} [{}]: {} rebalance{}\n", tl.scenario, tl.protocol, tl.rebalances.size(),
                                tl.rebalances.size() == 1 ? "" : "s");
  if (tl.summary.is_object() && tl.summary.contains("verdict"))
    out += "  Verdict: " + tl.summary.at("verdict").get<std::string>() + "\n";
  if (tl.summary.is_object() && tl.summary.contains("metrics")) out += "  " + headline_of(tl.summary) + "\n";
  if (tl.summary.is_object())
    for (const auto& m : moment_lines(tl.summary)) out += "  Decisive moment " + m + "\n";
  for (const auto& p : narrate(tl)) out += "  " + p + "\n";
  return out;
}

}  // namespace reports
