#include "reports/lesson_view.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "reports/escape.hpp"

namespace reports::lesson {

using json = nlohmann::ordered_json;

namespace {

bool blocking(const std::string& kind) {
  // Not "waiting": a member waiting for partitions it will get goes on processing those it owns
  // (cooperative, KIP-848); the partitions it waits for have no owner yet (a gap of their own).
  return kind == "revoking" || kind == "callback" || kind == "stalled" || kind == "paused" ||
         kind == "crashed";
}

std::string why_of(const Lane& lane, const Span& s) {
  if (s.kind == "waiting") return lane.consumer + " waiting for its assignment";
  if (s.kind == "callback") return lane.consumer + " in a rebalance callback";
  if (s.kind == "crashed") return lane.consumer + " dead, not yet detected";
  return lane.consumer + " " + s.kind;
}

// The glossary: term, definition. Kafka's spelling of every name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 62> kGlossary{{
    // metrics
    {"rebalance_count", "How many rebalances the group went through (summary.json's rebalances)."},
    {"max_rebalance_ms",
     "The longest rebalance: from its trigger to the last member's new assignment."},
    {"total_rebalance_ms", "All rebalances' durations added up."},
    {"stop_the_world_ms",
     "Time in which no partition of the group was processed while members were live: the whole "
     "group stopped."},
    {"max_stop_the_world_ms", "The longest single stretch in which the whole group stopped."},
    {"not_processed_partition_ms",
     "Summed over partitions: time a partition with a live member in its group was not processed "
     "(no owner, or an owner revoking, waiting for its assignment, in a callback, stalled, paused "
     "or dead and not yet detected)."},
    {"max_not_processed_ms", "The longest stretch in which one partition was not processed."},
    {"unavailable_partition_ms",
     "Summed over partitions: time a partition had no owner that could fetch it (the older, "
     "narrower measure)."},
    {"revocations", "Partitions taken away from a member (onPartitionsRevoked)."},
    {"duplicates",
     "Records processed more than once (an owner's uncommitted work redone by the next owner)."},
    {"lost", "Records never processed."},
    {"max_lag", "The largest lag of one partition: records written but not yet consumed."},
    {"max_group_lag", "The largest lag summed over the group's partitions at one moment."},
    {"records_processed", "Records the consumers processed."},
    {"overlap_partition_ms",
     "Time two members processed the same partition at once (a zombie still working after losing "
     "it)."},
    {"fatal_errors",
     "Clients stopped by a fatal error (e.g. INVALID_SESSION_TIMEOUT, FENCED_INSTANCE_ID)."},
    {"final_assignment", "Which partitions each consumer owns at the end of the run."},
    {"steady from",
     "The steady window starts when every consumer of start-up holds a stable assignment: "
     "start-up is excluded. Start-up is the script's first starts, each within 3 s of the one "
     "before; a later start is a scale-out and counts."},
    {"scaling_actions", "Autoscaler decisions that changed a deployment's replicas."},
    {"flaps", "Scaling decisions reversed shortly after (up then down, or down then up)."},
    // classic group states
    {"Empty", "Classic group state: no members."},
    {"PreparingRebalance",
     "Classic group state: the coordinator waits for every member to (re)send JoinGroup."},
    {"CompletingRebalance",
     "Classic group state: joined; the coordinator waits for the leader's assignment in "
     "SyncGroup."},
    {"Stable", "Classic group state: every member has its assignment and processes."},
    {"Dead", "Classic group state: the group is gone."},
    // KIP-848 group states
    {"assigning",
     "KIP-848 group state: the group epoch moved on; the coordinator computes the new target "
     "assignment."},
    {"reconciling",
     "KIP-848 group state: members move towards the target assignment, revoking first, through "
     "their heartbeats."},
    {"stable", "KIP-848 group state: every member owns its target assignment at the group epoch."},
    {"empty", "KIP-848 group state: no members."},
    // a consumer's spans
    {"revoking",
     "The consumer commits and gives up partitions (onPartitionsRevoked); they are not processed."},
    {"waiting",
     "The consumer waits for its assignment; the partitions it will get are not processed yet."},
    {"processing", "The consumer works on fetched records between two poll() calls."},
    {"callback",
     "The consumer runs a rebalance listener callback (onPartitionsRevoked / Assigned / Lost)."},
    {"stalled",
     "The application stopped calling poll(); max.poll.interval.ms decides when the group "
     "notices."},
    {"paused", "The consumer paused its partitions (pause())."},
    {"crashed", "The process is down; the coordinator notices only after session.timeout.ms."},
    // configs
    {"heartbeat.interval.ms",
     "Classic: how often a member heartbeats; a member learns of a rebalance only with its next "
     "heartbeat."},
    {"session.timeout.ms",
     "Classic: how long the coordinator waits without a heartbeat before removing a member."},
    {"max.poll.interval.ms",
     "Longest time allowed between two poll() calls; also the classic rebalance timeout."},
    {"group.initial.rebalance.delay.ms",
     "Broker: how long the first rebalance of an empty group waits for more members."},
    {"group.consumer.heartbeat.interval.ms",
     "KIP-848 broker config: the heartbeat interval the coordinator gives its members."},
    {"group.consumer.session.timeout.ms",
     "KIP-848 broker config: how long without a heartbeat before a member is removed."},
    {"group.consumer.assignment.interval.ms",
     "KIP-848: the coordinator recomputes the target assignment at most this often."},
    {"partition.assignment.strategy",
     "Classic: the client-side assignors (range, roundrobin, sticky, cooperative-sticky)."},
    {"group.instance.id",
     "Static membership: a restarted member with the same id gets its partitions back without a "
     "rebalance."},
    // APIs and errors
    {"JoinGroup",
     "Classic: a member (re)joins the group; the coordinator answers when everyone joined, and the "
     "leader gets the members."},
    {"SyncGroup",
     "Classic: the leader sends the assignment; every member gets its partitions in the response."},
    {"Heartbeat",
     "Classic: tells the coordinator the member is alive; REBALANCE_IN_PROGRESS tells the member "
     "to rejoin."},
    {"ConsumerGroupHeartbeat",
     "KIP-848: one request carries liveness, the owned partitions and gets the member epoch and "
     "target assignment back."},
    {"LeaveGroup",
     "A member leaves the group on close(): the group rebalances at once instead of after "
     "session.timeout.ms."},
    {"OffsetCommit", "Stores the consumed positions in __consumer_offsets."},
    {"MEMBER_ID_REQUIRED",
     "A normal round trip (KIP-394): a new member's first JoinGroup gets its member id back and "
     "joins again with it."},
    {"REBALANCE_IN_PROGRESS", "The group is rebalancing: the member must rejoin (classic)."},
    // causes of a critical path
    {"heartbeat_wait",
     "Waiting for a member's next heartbeat: it learns of the rebalance only then."},
    {"poll_wait",
     "Waiting for a member's next poll(): rebalance work runs inside poll(), after the current "
     "batch is processed."},
    {"session_timeout", "Waiting for a dead member's session to expire."},
    {"rebalance_timeout", "Waiting out the rebalance timeout for a member that does not rejoin."},
    {"initial_delay", "The coordinator's group.initial.rebalance.delay.ms."},
    {"assignment_interval", "The KIP-848 coordinator holding back the next target assignment."},
    {"member epoch",
     "KIP-848: the epoch of a member's assignment; it reaches the group epoch when the member "
     "reconciled."},
    {"group epoch",
     "KIP-848: bumped on every membership or subscription change; a new target assignment "
     "follows."},
    {"critical path",
     "The chain of events from a rebalance's trigger to the last member's assignment that decided "
     "how long it took."},
}};

bool term_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// "10,261.454" -> 10261.454; false when `s` is not such a number.
bool parse_number(std::string_view s, double& out) {
  std::string digits;
  for (const char c : s)
    if (c != ',') digits += c;
  if (digits.empty()) return false;
  try {
    std::size_t used = 0;
    out = std::stod(digits, &used);
    return used == digits.size();
  } catch (const std::exception&) {
    return false;
  }
}

// A row's stretches with the summary's own not-processed intervals in place of the gaps read
// from the lanes: a moment is hatched exactly when it lies in one of `gaps`; the owner (colour)
// and the reason come from the lanes' stretches. Time that is neither owned nor in a gap (no
// live member wants the partition) is left out.
std::vector<PartitionSegment> with_exact_gaps(
    const Timeline& tl, const std::vector<PartitionSegment>& segs,
    const std::vector<std::pair<std::int64_t, std::int64_t>>& gaps) {
  std::vector<std::int64_t> cuts;
  cuts.reserve(2 * (segs.size() + gaps.size()));
  for (const auto& s : segs) {
    cuts.push_back(s.start_us);
    cuts.push_back(s.end_us);
  }
  for (const auto& [a, b] : gaps) {
    cuts.push_back(a);
    cuts.push_back(b);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<PartitionSegment> out;
  std::size_t si = 0, gi = 0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const std::int64_t a = cuts[k], b = cuts[k + 1];
    while (si < segs.size() && segs[si].end_us <= a) ++si;
    while (gi < gaps.size() && gaps[gi].second <= a) ++gi;
    const PartitionSegment* seg = si < segs.size() && segs[si].start_us <= a ? &segs[si] : nullptr;
    const bool gap = gi < gaps.size() && gaps[gi].first <= a;
    if (seg == nullptr && !gap) continue;
    PartitionSegment piece{a, b, seg != nullptr ? seg->owner : -1, !gap, {}};
    if (gap) {
      if (seg != nullptr && !seg->processed)
        piece.why = seg->why;
      else if (piece.owner >= 0)
        piece.why = tl.lanes[static_cast<std::size_t>(piece.owner)].consumer + " not processing it";
      else
        piece.why = "no owner";
    } else if (piece.owner < 0) {
      continue;  // processed with no owner read from the lanes: nothing to colour it with
    }
    if (!out.empty() && out.back().end_us == a && out.back().owner == piece.owner &&
        out.back().processed == piece.processed && out.back().why == piece.why)
      out.back().end_us = b;
    else
      out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace

std::string owner_colour(int lane) {
  const int hue = static_cast<int>((static_cast<long long>(lane) * 137508 / 1000 + 200) % 360);
  return fmt::format("hsl({},55%,{}%)", hue, 45 + (lane % 3) * 9);
}

std::vector<PartitionRow> partition_rows(const Timeline& tl) {
  std::vector<PartitionRow> rows(tl.partitions.size());
  for (std::size_t p = 0; p < rows.size(); ++p) rows[p].partition = tl.partitions[p];
  std::int64_t first_start = -1;
  for (std::size_t l = 0; l < tl.lanes.size(); ++l) {
    const auto& lane = tl.lanes[l];
    for (const auto& i : lane.instants)
      if (i.kind == "start" && (first_start < 0 || i.t_us < first_start)) first_start = i.t_us;
    // The lane's blocking spans in start order (they may overlap each other).
    std::vector<const Span*> blocks;
    for (const auto& s : lane.spans)
      if (blocking(s.kind) && s.end_us > s.start_us) blocks.push_back(&s);
    std::stable_sort(blocks.begin(), blocks.end(),
                     [](const Span* a, const Span* b) { return a->start_us < b->start_us; });
    std::size_t from = 0;
    for (std::size_t k = 0; k < lane.owned.size(); ++k) {
      const auto& own = lane.owned[k];
      if (own.end_us <= own.start_us) continue;
      while (from < blocks.size() && blocks[from]->end_us <= own.start_us) ++from;
      // The partitions this stretch gives up (not in the lane's next stretch): only they wait for
      // a revocation; those kept go on being processed (cooperative, KIP-848).
      const std::vector<int>* next =
          k + 1 < lane.owned.size() && lane.owned[k + 1].start_us == own.end_us
              ? &lane.owned[k + 1].partitions
              : nullptr;
      for (const int p : own.partitions) {
        const bool gone =
            next == nullptr || std::find(next->begin(), next->end(), p) == next->end();
        auto& segs = rows[static_cast<std::size_t>(p)].segments;
        std::int64_t at = own.start_us;
        for (std::size_t b = from; b < blocks.size() && blocks[b]->start_us < own.end_us; ++b) {
          if (blocks[b]->kind == "revoking" && !gone) continue;
          const std::int64_t b0 = std::max(blocks[b]->start_us, own.start_us),
                             b1 = std::min(blocks[b]->end_us, own.end_us);
          if (b1 <= at) continue;
          if (b0 > at) segs.push_back({at, b0, static_cast<int>(l), true, {}});
          segs.push_back(
              {std::max(b0, at), b1, static_cast<int>(l), false, why_of(lane, *blocks[b])});
          at = b1;
        }
        if (at < own.end_us) segs.push_back({at, own.end_us, static_cast<int>(l), true, {}});
      }
    }
  }
  for (auto& row : rows) {
    auto& segs = row.segments;
    std::stable_sort(segs.begin(), segs.end(),
                     [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
    std::vector<PartitionSegment> out;
    std::int64_t at = first_start;
    for (auto& s : segs) {
      if (at >= 0 && s.start_us > at) out.push_back({at, s.start_us, -1, false, "no owner"});
      if (!out.empty() && s.start_us < out.back().end_us)
        s.start_us = out.back().end_us;  // two owners at once: the first kept
      if (s.end_us <= s.start_us) continue;
      at = s.end_us;
      out.push_back(std::move(s));
    }
    segs = std::move(out);
    if (!segs.empty() && segs.back().owner >= 0 && segs.back().end_us >= tl.duration_us)
      row.final_owner = tl.lanes[static_cast<std::size_t>(segs.back().owner)].consumer;
  }
  // While the group still has an owner at the end, a partition left without one is not
  // processed up to the end (its owner died, or nobody took it over).
  const bool live_at_end = std::any_of(
      rows.begin(), rows.end(), [](const PartitionRow& r) { return !r.final_owner.empty(); });
  if (live_at_end)
    for (auto& row : rows)
      if (!row.segments.empty() && row.segments.back().end_us < tl.duration_us) {
        const auto& last = row.segments.back();
        std::string why = "no owner";
        if (last.owner >= 0)
          for (const auto& sp : tl.lanes[static_cast<std::size_t>(last.owner)].spans)
            if (sp.kind == "crashed" && sp.start_us <= last.end_us && sp.end_us > last.end_us)
              why = "its owner dead";
        row.segments.push_back({last.end_us, tl.duration_us, -1, false, why});
      }
  if (tl.not_processed_exact) {
    std::map<std::string_view, const std::vector<std::pair<std::int64_t, std::int64_t>>*> exact;
    for (const auto& g : tl.not_processed) exact[g.partition] = &g.intervals;
    const std::vector<std::pair<std::int64_t, std::int64_t>> none;
    for (auto& row : rows) {
      const auto it = exact.find(row.partition);
      row.segments = with_exact_gaps(tl, row.segments, it == exact.end() ? none : *it->second);
    }
  }
  return rows;
}

std::vector<std::pair<std::int64_t, int>> not_processed_steps(
    const std::vector<PartitionRow>& rows) {
  std::map<std::int64_t, int> delta;
  for (const auto& row : rows)
    for (const auto& s : row.segments)
      if (!s.processed) {
        ++delta[s.start_us];
        --delta[s.end_us];
      }
  std::vector<std::pair<std::int64_t, int>> out{{0, 0}};
  int n = 0;
  for (const auto& [t, d] : delta) {
    if (d == 0) continue;
    n += d;
    if (out.back().first == t)
      out.back().second = n;
    else
      out.emplace_back(t, n);
  }
  return out;
}

std::size_t opened_rebalance(const Timeline& tl, std::size_t limit) {
  const std::size_t n = std::min(tl.rebalances.size(), limit);
  const auto pb = tl.summary.find("produced_by");
  if (pb != tl.summary.end() && pb->is_object()) {
    if (const auto from = pb->find("lesson_rebalance_from_ms");
        from != pb->end() && from->is_number_integer()) {
      const std::int64_t from_us = from->get<std::int64_t>() * 1000;
      for (std::size_t i = 0; i < n; ++i)
        if (tl.rebalances[i].start_us >= from_us) return i;
    }
  }
  const auto length = [&](std::size_t i) {
    return tl.rebalances[i].end_us - tl.rebalances[i].start_us;
  };
  std::optional<std::size_t> best, longest;
  std::vector<std::string_view> formed;  // groups whose first rebalance came already
  for (std::size_t i = 0; i < n; ++i) {
    const bool start_up =
        std::find(formed.begin(), formed.end(), tl.rebalances[i].group) == formed.end();
    if (start_up) formed.push_back(tl.rebalances[i].group);
    if (!longest || length(i) > length(*longest)) longest = i;
    if (!start_up && (!best || length(i) > length(*best))) best = i;
  }
  return best ? *best : longest.value_or(0);
}

std::vector<WatchNote> watch_notes(const json& rebalance, bool kip848, const ConfigValues* config) {
  std::vector<WatchNote> out;
  const auto cp = rebalance.find("critical_path");
  if (cp == rebalance.end() || !cp->is_object() || !cp->contains("steps")) return out;
  const double total = rebalance.value("duration_ms", 0.0);
  for (const auto& step : (*cp)["steps"]) {
    if (!step.contains("causes") || !step["causes"].is_object()) continue;
    std::string cause;
    double most = 0;
    for (auto it = step["causes"].begin(); it != step["causes"].end(); ++it)
      if (it.value().is_number() && it.value().get<double>() > most) {
        most = it.value().get<double>();
        cause = it.key();
      }
    if (cause.empty() || (most < 1.0 && most < total / 5)) continue;
    std::string actor = step.value("actor", "");
    if (step.contains("waited_for") && step["waited_for"].is_object())
      actor = step["waited_for"].value("actor", actor);
    const std::string who =
        actor.empty() || actor == "coordinator" ? std::string("a member") : actor;
    const auto key = [&](const char* k) { return config_quote(config, actor, k); };
    const std::string took = readable_times(fmt::format("{:.3f} ms", most));
    std::string text;
    if (cause == "heartbeat_wait_ms")
      text = fmt::format(
          "{} learns of the rebalance only with its next heartbeat: {} of waiting ({}).", who, took,
          key(kip848 ? "group.consumer.heartbeat.interval.ms" : "heartbeat.interval.ms"));
    else if (cause == "poll_wait_ms")
      text = fmt::format(
          "{} acts only in its next poll(), after processing its batch: {} ({} bounds it).", who,
          took, key("max.poll.interval.ms"));
    else if (cause == "session_timeout_ms")
      text = fmt::format(
          "The coordinator notices a dead member only when its session expires: {} ({}).", took,
          key(kip848 ? "group.consumer.session.timeout.ms" : "session.timeout.ms"));
    else if (cause == "rebalance_timeout_ms")
      text = fmt::format("The group waits for a member that does not rejoin: {} ({}).", took,
                         key("max.poll.interval.ms"));
    else if (cause == "initial_delay_ms")
      text = fmt::format("The first rebalance waits for more members: {} ({}).", took,
                         key("group.initial.rebalance.delay.ms"));
    else if (cause == "assignment_interval_ms")
      text = fmt::format("The coordinator holds back the new target assignment: {} ({}).", took,
                         key("group.consumer.assignment.interval.ms"));
    else if (cause == "callback_ms")
      text = fmt::format(
          "{} is inside its rebalance callback: {}; its partitions are not processed meanwhile.",
          who, took);
    else if (cause == "network_ms")
      text = fmt::format("{} on the network.", took);
    else if (cause == "broker_ms")
      text = fmt::format("{} of broker work (handling, writing __consumer_offsets).", took);
    else
      text = fmt::format("{}: {}.", cause, took);
    out.push_back({step.value("t_us", std::int64_t{0}), cause, std::move(text)});
  }
  return out;
}

std::string_view glossary(std::string_view term) {
  for (const auto& [k, v] : kGlossary)
    if (k == term) return v;
  return {};
}

std::vector<std::string_view> glossary_terms() {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : kGlossary) out.push_back(k);
  return out;
}

std::string glossed(std::string_view text) {
  std::string out;
  std::size_t plain = 0;  // start of the text not yet written
  for (std::size_t i = 0; i < text.size();) {
    if (i > 0 && term_char(text[i - 1])) {
      ++i;
      continue;
    }
    std::string_view hit, def;
    for (const auto& [k, v] : kGlossary) {
      if (k.size() > hit.size() && text.substr(i, k.size()) == k &&
          (i + k.size() == text.size() || !term_char(text[i + k.size()]) ||
           (text[i + k.size()] == '.' &&
            (i + k.size() + 1 == text.size() || !term_char(text[i + k.size() + 1]))))) {
        hit = k;
        def = v;
      }
    }
    // Single common words (stable, empty, waiting, ...) only as they are spelled in the glossary,
    // and the lower-case ones only in a timeline's words, never inside a sentence's prose.
    if (hit.empty() || (hit.find_first_of("._ ") == std::string_view::npos && hit.front() >= 'a' &&
                        hit.front() <= 'z')) {
      ++i;
      continue;
    }
    out += markup_escape(text.substr(plain, i - plain));
    out += fmt::format("<abbr class=\"g\" title=\"{}\">{}</abbr>", markup_escape(def),
                       markup_escape(hit));
    i += hit.size();
    plain = i;
  }
  out += markup_escape(text.substr(plain));
  return out;
}

std::string abbr(std::string_view term, std::string_view shown) {
  if (shown.empty()) shown = term;
  const std::string_view def = glossary(term);
  if (def.empty()) return markup_escape(shown);
  return fmt::format("<abbr class=\"g\" title=\"{}\">{}</abbr>", markup_escape(def),
                     markup_escape(shown));
}

std::string readable_times(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool starts = c >= '0' && c <= '9' && (i == 0 || !term_char(text[i - 1]));
    if (!starts) {
      out += c;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() &&
           ((text[j] >= '0' && text[j] <= '9') || text[j] == '.' || text[j] == ','))
      ++j;
    std::size_t num_end = j;
    while (num_end > i && (text[num_end - 1] == '.' || text[num_end - 1] == ','))
      --num_end;  // a sentence's end
    const std::string_view number = text.substr(i, num_end - i);
    double v = 0;
    // A unit ends at the text's end, a non-word character, or a sentence's full stop.
    auto ends = [&](std::size_t k) {
      return k >= text.size() || !term_char(text[k]) ||
             (text[k] == '.' && (k + 1 == text.size() || !term_char(text[k + 1])));
    };
    const bool is_s = text.substr(num_end, 2) == " s" && ends(num_end + 2);
    const bool is_ms = text.substr(num_end, 3) == " ms" && ends(num_end + 3);
    const std::size_t dot = number.find('.');
    if ((is_s || is_ms) && parse_number(number, v)) {
      if (is_s) {
        // A time: to the millisecond ("2.706736 s" is "2.707 s"); shorter ones as they are.
        if (dot != std::string_view::npos && number.size() - dot - 1 > 3)
          out += fmt::format("{:.3f} s", v);
        else
          out.append(number).append(" s");
      } else if (v >= 1000.0) {
        out += fmt::format("{:.2f} s", v / 1000.0);  // a duration of seconds in seconds
      } else if (v >= 10.0) {
        out += fmt::format("{:.0f} ms", v);
      } else {
        std::string d = fmt::format("{:.1f}", v);
        if (d.ends_with(".0")) d.resize(d.size() - 2);
        out += d + " ms";
      }
      i = num_end + (is_s ? 2 : 3);
      continue;
    }
    out.append(text.substr(i, num_end - i));
    i = num_end;
  }
  return out;
}

std::vector<std::string> short_sentences(const std::string& paragraph) {
  std::vector<std::string> out;
  std::size_t from = 0;
  auto push = [&](std::size_t to) {
    std::string s = paragraph.substr(from, to - from);
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    if (s.empty()) return;
    if (s.front() >= 'a' && s.front() <= 'z') s.front() = static_cast<char>(s.front() - 'a' + 'A');
    if (s.back() != '.') s += '.';
    out.push_back(readable_times(s));
  };
  for (std::size_t i = 0; i + 1 < paragraph.size(); ++i) {
    const bool semi = paragraph[i] == ';' && paragraph[i + 1] == ' ';
    // ". " ends a sentence unless it follows a number ("2.5 s" has no space; "v. 2" is rare).
    const bool stop =
        paragraph[i] == '.' && paragraph[i + 1] == ' ' && i > 0 && paragraph[i - 1] != ' ';
    if (semi || stop) {
      push(stop ? i + 1 : i);
      from = i + 2;
    }
  }
  push(paragraph.size());
  return out;
}

namespace {

// A step line of `steps` (time, value) in [y, y+h] scaled to `top`, at most two points per pixel.
void step_line(html::Out o, const std::vector<std::pair<std::int64_t, int>>& steps,
               const html::Scale& sc, double y, double h, int top, std::string_view colour,
               std::string_view title, std::string_view cls) {
  if (steps.empty()) return;
  const double denom = std::max(1, top);
  auto py = [&](int v) { return y + h - 1 - (h - 3) * static_cast<double>(v) / denom; };
  fmt::format_to(o,
                 "<polyline class=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
                 "vector-effect=\"non-scaling-stroke\" points=\"",
                 cls, colour);
  long long bucket = -1;
  int last = 0, peak = 0;
  bool open = false;
  for (const auto& [t, v] : steps) {
    const long long b = static_cast<long long>(sc.x(t) * 2);
    if (b == bucket) {  // same half pixel: keep the peak and the last value
      peak = std::max(peak, v);
      last = v;
      continue;
    }
    if (open)
      fmt::format_to(o, "{:.2f},{:.1f} {:.2f},{:.1f} ", sc.x(t), py(peak), sc.x(t), py(last));
    fmt::format_to(o, "{:.2f},{:.1f} {:.2f},{:.1f} ", sc.x(t), py(last), sc.x(t), py(v));
    bucket = b;
    last = peak = v;
    open = true;
  }
  fmt::format_to(o, "{:.2f},{:.1f}\"><title>{}</title></polyline>", sc.x(sc.duration_us), py(last),
                 markup_escape(title));
}

constexpr double kRowH = 12;
constexpr double kChartH = 70;

void open_plot(html::Out o, const std::string& clip_id) {
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 html::kLabelWidth, clip_id);
}

void cursor_line(html::Out o, double height) {
  fmt::format_to(
      o, "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"0\" y2=\"{:.0f}\" style=\"display:none\"/>",
      height);
}

}  // namespace

void render_partition_view(html::Out o, const Timeline& tl, const std::vector<PartitionRow>& rows,
                           const html::Scale& sc, const std::string& clip_id) {
  const bool per_row = rows.size() <= kMaxPartitionRows;
  const double height = per_row ? kRowH * static_cast<double>(rows.size()) + 6 : kChartH + 6;
  const double width = html::kLabelWidth + html::kPlotWidth + 10;
  fmt::format_to(o,
                 "<svg class=\"pview\" data-variant=\"{}\" data-partitions=\"{}\" data-rows=\"{}\" "
                 "viewBox=\"0 0 {} {:.0f}\" "
                 "xmlns=\"http://www.w3.org/2000/svg\"><defs><clipPath id=\"{}\"><rect x=\"0\" "
                 "y=\"0\" width=\"{}\" height=\"100000\"/>"
                 "</clipPath><pattern id=\"{}-np\" width=\"4\" height=\"4\" "
                 "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                 "<rect width=\"4\" height=\"4\" fill=\"#fff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" "
                 "y2=\"4\" stroke=\"#d62728\" stroke-width=\"1.5\"/>"
                 "</pattern></defs>",
                 markup_escape(tl.protocol), rows.size(), per_row ? rows.size() : 0, width, height,
                 clip_id, html::kPlotWidth, clip_id);
  if (!per_row) {
    const auto steps = not_processed_steps(rows);
    int top = 0;
    for (const auto& [t, v] : steps) top = std::max(top, v);
    fmt::format_to(o,
                   "<text class=\"lbl\" x=\"{:.1f}\" y=\"16\">partitions not</text><text "
                   "class=\"lbl\" x=\"{:.1f}\" y=\"30\">processed</text>"
                   "<text class=\"lbl small\" x=\"{:.1f}\" y=\"44\">max {} of {}</text>",
                   html::kLabelWidth - 6, html::kLabelWidth - 6, html::kLabelWidth - 6, top,
                   rows.size());
    open_plot(o, clip_id);
    fmt::format_to(o, "<rect class=\"lanebg\" x=\"0\" y=\"2\" width=\"{}\" height=\"{}\"/>",
                   html::kPlotWidth, kChartH);
    step_line(o, steps, sc, 2, kChartH, top, "#d62728",
              fmt::format("partitions not processed (max {} of {})", top, rows.size()), "np-count");
    cursor_line(o, height);
    fmt::format_to(o, "</g></g></g></svg>");
    return;
  }
  // The number each row carries is summary.json's (not_processed_ms_by_partition); the hatched
  // gaps are the intervals that number adds up (Timeline::not_processed, the summary's own sink
  // over the trace), coloured by the owner the lanes give.
  const json* by_partition = nullptr;
  if (const auto m = tl.summary.find("metrics"); m != tl.summary.end() && m->is_object())
    if (const auto b = m->find("not_processed_ms_by_partition"); b != m->end() && b->is_object())
      by_partition = &*b;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    std::string np_ms = "–";
    if (by_partition != nullptr)
      if (const auto v = by_partition->find(row.partition);
          v != by_partition->end() && v->is_number())
        np_ms = v->dump();
    const double y = 3 + kRowH * static_cast<double>(r);
    std::int64_t gaps = 0;
    for (const auto& s : row.segments) gaps += s.processed ? 0 : s.end_us - s.start_us;
    fmt::format_to(o,
                   "<g class=\"prow\" data-partition=\"{}\" data-final-owner=\"{}\" "
                   "data-gaps-us=\"{}\" data-not-processed-ms=\"{}\"><title>{}</title><text "
                   "class=\"lbl small\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
                   markup_escape(row.partition), markup_escape(row.final_owner), gaps, np_ms,
                   markup_escape(fmt::format(
                       "{}: not processed {} ms in all (not_processed_ms_by_partition); owned at "
                       "the end by {}",
                       row.partition, np_ms, row.final_owner.empty() ? "nobody" : row.final_owner)),
                   html::kLabelWidth - 6, y + kRowH * 0.75, markup_escape(row.partition));
    open_plot(o, clip_id);
    fmt::format_to(o,
                   "<rect class=\"lanebg\" x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\"/>",
                   y, html::kPlotWidth, kRowH - 2);
    for (const auto& s : row.segments) {
      const std::string owner =
          s.owner >= 0 ? tl.lanes[static_cast<std::size_t>(s.owner)].consumer : std::string();
      const std::string title =
          s.processed ? fmt::format("{}: owned by {} from {} to {}", row.partition, owner,
                                    seconds(s.start_us), seconds(s.end_us))
                      : fmt::format("{}: not processed from {} to {} ({}, {})", row.partition,
                                    seconds(s.start_us), seconds(s.end_us), s.why,
                                    readable_times(milliseconds(s.end_us - s.start_us)));
      const std::string fill =
          s.processed ? owner_colour(s.owner) : fmt::format("url(#{}-np)", clip_id);
      html::rect(
          o, sc.x(s.start_us), y, sc.w(s.start_us, s.end_us), kRowH - 2, fill, title,
          fmt::format(" class=\"{}\" data-owner=\"{}\" data-start-us=\"{}\" data-end-us=\"{}\"{}",
                      s.processed ? "po" : "np", markup_escape(owner), s.start_us, s.end_us,
                      sc.min_width_attrs(s.start_us, s.end_us)));
    }
    fmt::format_to(o, "</g></g></g></g>");
  }
  open_plot(o, clip_id);
  cursor_line(o, height);
  fmt::format_to(o, "</g></g></g></svg>");
}

void render_aggregate_view(html::Out o, const Timeline& tl, const std::vector<PartitionRow>& rows,
                           const html::Scale& sc, const std::string& clip_id) {
  static constexpr std::array<const char*, 6> kinds{"waiting", "revoking", "callback",
                                                    "stalled", "paused",   "crashed"};
  std::array<std::map<std::int64_t, int>, kinds.size()> delta;
  for (const auto& lane : tl.lanes)
    for (const auto& s : lane.spans)
      for (std::size_t k = 0; k < kinds.size(); ++k)
        if (s.kind == kinds[k] && s.end_us > s.start_us) {
          ++delta[k][s.start_us];
          --delta[k][s.end_us];
        }
  // Members owning partitions and processing: the lanes' ownership stretches.
  std::map<std::int64_t, int> owning;
  for (const auto& lane : tl.lanes)
    for (const auto& own : lane.owned)
      if (own.end_us > own.start_us && !own.partitions.empty()) {
        ++owning[own.start_us];
        --owning[own.end_us];
      }
  auto steps_of = [](const std::map<std::int64_t, int>& d) {
    std::vector<std::pair<std::int64_t, int>> out{{0, 0}};
    int n = 0;
    for (const auto& [t, v] : d) {
      n += v;
      if (out.back().first == t)
        out.back().second = n;
      else
        out.emplace_back(t, n);
    }
    return out;
  };
  const int top = static_cast<int>(tl.lanes.size());
  const double height = 2 * kChartH + 16;
  const double width = html::kLabelWidth + html::kPlotWidth + 10;
  fmt::format_to(o,
                 "<svg class=\"pview agg\" data-variant=\"{}\" data-consumers=\"{}\" viewBox=\"0 0 "
                 "{} {:.0f}\" xmlns=\"http://www.w3.org/2000/svg\">"
                 "<defs><clipPath id=\"{}\"><rect x=\"0\" y=\"0\" width=\"{}\" "
                 "height=\"100000\"/></clipPath></defs>",
                 markup_escape(tl.protocol), tl.lanes.size(), width, height, clip_id,
                 html::kPlotWidth);
  fmt::format_to(o,
                 "<text class=\"lbl\" x=\"{0:.1f}\" y=\"16\">members per state</text><text "
                 "class=\"lbl small\" x=\"{0:.1f}\" y=\"30\">of {1} consumers</text>",
                 html::kLabelWidth - 6, top);
  const auto np = not_processed_steps(rows);
  int np_top = 0;
  for (const auto& [t, v] : np) np_top = std::max(np_top, v);
  fmt::format_to(o,
                 "<text class=\"lbl\" x=\"{0:.1f}\" y=\"{1:.0f}\">partitions not</text><text "
                 "class=\"lbl\" x=\"{0:.1f}\" y=\"{2:.0f}\">processed</text>"
                 "<text class=\"lbl small\" x=\"{0:.1f}\" y=\"{3:.0f}\">max {4} of {5}</text>",
                 html::kLabelWidth - 6, kChartH + 26, kChartH + 40, kChartH + 54, np_top,
                 rows.size());
  open_plot(o, clip_id);
  fmt::format_to(o,
                 "<rect class=\"lanebg\" x=\"0\" y=\"2\" width=\"{0}\" height=\"{1}\"/><rect "
                 "class=\"lanebg\" x=\"0\" y=\"{2}\" width=\"{0}\" height=\"{1}\"/>",
                 html::kPlotWidth, kChartH, kChartH + 10);
  step_line(o, steps_of(owning), sc, 2, kChartH, top, "#2a9d2a", "members owning partitions",
            "members owning");
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (delta[k].empty()) continue;
    step_line(o, steps_of(delta[k]), sc, 2, kChartH, top, html::span_colour(kinds[k]),
              fmt::format("members {}", kinds[k]), fmt::format("members {}", kinds[k]));
  }
  step_line(o, np, sc, kChartH + 10, kChartH, np_top, "#d62728",
            fmt::format("partitions not processed (max {} of {})", np_top, rows.size()),
            "np-count");
  cursor_line(o, height);
  fmt::format_to(o, "</g></g></g></svg>");
}

}  // namespace reports::lesson
