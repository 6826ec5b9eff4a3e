#include "reports/share_summary.hpp"

#include "models/trace/trace_jsonl.hpp"
#include "reports/trace_reader.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace reports {
namespace {

using ojson = nlohmann::ordered_json;
namespace tr = rsim::trace;

/// Disjoint closed offset ranges; add() returns how many of the added offsets were already in.
class OffsetSet {
 public:
  std::int64_t add(std::int64_t first, std::int64_t last) {
    std::int64_t overlap = 0;
    auto it = ranges_.upper_bound(first);
    if (it != ranges_.begin()) --it;
    while (it != ranges_.end() && it->first <= last + 1) {
      if (it->second < first - 1) {
        ++it;
        continue;
      }
      const std::int64_t lo = std::max(first, it->first);
      const std::int64_t hi = std::min(last, it->second);
      if (lo <= hi) overlap += hi - lo + 1;
      first = std::min(first, it->first);
      last = std::max(last, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(first, last);
    return overlap;
  }

 private:
  std::map<std::int64_t, std::int64_t> ranges_;  // first -> last
};

/// A share group's assignment change: from a group epoch bump until the target is computed
/// for it and every member has reached the target epoch (share members jump there directly).
struct Change {
  std::int64_t start_us = 0;
  std::string trigger;
  std::map<std::string, std::set<std::string>> owned_before;
};

struct Window {
  std::vector<std::array<std::int64_t, 3>> points;  // t_ms, spso, speo; one per second at most
  std::int64_t max_in_flight = 0;
};

/// The share metrics' state, fed one typed event at a time.
struct ShareAccounting {
  bool share = false;
  std::int64_t acknowledged = 0, archived = 0, archived_rejected = 0, archived_limit = 0,
               redelivered = 0, delivered = 0, lock_timeouts = 0, released = 0,
               released_on_disconnect = 0, acknowledged_twice = 0, ack_errors = 0, duplicates = 0,
               processed_total = 0, end_us = 0;
  std::map<std::string, std::int64_t> deliveries_by_count;
  std::map<std::string, OffsetSet> acked;
  std::map<std::string, OffsetSet> processed_offsets;
  std::map<std::string, std::int64_t> processed;
  std::map<std::string, std::int64_t> active_us;
  std::map<std::string, std::int64_t> started_at;
  std::map<std::string, Window> windows;
  std::int64_t unfinished = 0;
  std::map<std::string, std::int64_t> log_end;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> final_state;  // spso, complete

  // Rebalances of share groups (the generic accounting waits for consumer-protocol states).
  std::map<std::string, std::int64_t> group_epoch, assignment_epoch;
  std::map<std::string, std::map<std::string, std::int64_t>>
      member_epochs;                                   // group -> consumer -> epoch
  std::map<std::string, std::set<std::string>> owned;  // consumer -> partitions
  std::map<std::string, std::string> group_of;
  std::map<std::string, Change> open;
  ojson rebalances = ojson::array();
  std::int64_t total_rebalance_us = 0, max_rebalance_us = 0;
  void maybe_close(const std::string& g, std::int64_t t) {
    const auto it = open.find(g);
    if (it == open.end() || assignment_epoch[g] < group_epoch[g]) return;
    for (const auto& [c, epoch] : member_epochs[g])
      if (epoch != assignment_epoch[g]) return;
    ojson revoked = ojson::object(), assigned = ojson::object();
    std::set<std::string> names;
    for (const auto& [c, ps] : it->second.owned_before) names.insert(c);
    for (const auto& [c, gg] : group_of)
      if (gg == g) names.insert(c);
    for (const auto& c : names) {
      const auto& before = it->second.owned_before[c];
      const auto& after = owned[c];
      ojson r = ojson::array(), a = ojson::array();
      for (const auto& p : before)
        if (after.count(p) == 0) r.push_back(p);
      for (const auto& p : after)
        if (before.count(p) == 0) a.push_back(p);
      if (!r.empty()) revoked[c] = r;
      if (!a.empty()) assigned[c] = a;
    }
    const std::int64_t d = t - it->second.start_us;
    total_rebalance_us += d;
    max_rebalance_us = std::max(max_rebalance_us, d);
    rebalances.push_back({{"group", g},
                          {"start_us", it->second.start_us},
                          {"end_us", t},
                          {"duration_ms", static_cast<double>(d) / 1000.0},
                          {"trigger", it->second.trigger},
                          {"revoked", revoked},
                          {"assigned", assigned}});
    open.erase(it);
  }

  void stop_clock(const std::string& c, std::int64_t t) {
    const auto it = started_at.find(c);
    if (it == started_at.end()) return;
    active_us[c] += t - it->second;
    started_at.erase(it);
  }

  void on(std::int64_t t, const tr::Event& ev) {
    end_us = std::max(end_us, t);
    if (const auto* records = std::get_if<tr::ShareRecords>(&ev)) {
      on_records(*records);
    } else if (const auto* process = std::get_if<tr::ShareProcess>(&ev)) {
      const std::string c(process->consumer);
      processed[c] += process->records;
      processed_total += process->records;
      duplicates += processed_offsets[name(process->partition)].add(process->first_offset,
                                                                    process->last_offset);
    } else if (std::holds_alternative<tr::ShareAckError>(ev)) {
      ++ack_errors;
    } else if (const auto* window = std::get_if<tr::ShareWindow>(&ev)) {
      on_window(t, *window);
    } else if (const auto* end = std::get_if<tr::SharePartitionEnd>(&ev)) {
      final_state[name(end->partition)] = {end->spso, end->delivery_complete_count};
    } else if (const auto* leo = std::get_if<tr::LogEndOffset>(&ev)) {
      log_end[name(leo->partition)] = leo->log_end_offset;
    } else if (const auto* ge = std::get_if<tr::GroupEpoch>(&ev)) {
      if (ge->epoch) on_group_epoch(t, *ge);
    } else if (const auto* me = std::get_if<tr::MemberEpoch>(&ev)) {
      const std::string g(me->group);
      member_epochs[g][std::string(me->consumer)] = me->epoch;
      maybe_close(g, t);
    } else if (const auto* leave = std::get_if<tr::MemberLeave>(&ev)) {
      const std::string g(leave->group);
      member_epochs[g].erase(std::string(leave->consumer));
      maybe_close(g, t);
    } else if (const auto* a = std::get_if<tr::Assignment>(&ev)) {
      auto& set = owned[std::string(a->consumer)];
      set.clear();
      for (const auto& p : a->owned) set.insert(partition_name(p));
    } else if (const auto* start = std::get_if<tr::ConsumerStart>(&ev)) {
      const std::string c(start->consumer);
      started_at[c] = t;
      group_of[c] = start->group;
      processed[c] += 0;  // a consumer that never got a record counts
    } else if (const auto* crash = std::get_if<tr::ConsumerCrash>(&ev)) {
      stop_clock(std::string(crash->consumer), t);
    } else if (const auto* closed = std::get_if<tr::ConsumerClosed>(&ev)) {
      stop_clock(std::string(closed->consumer), t);
    }
  }
  static std::string name(const rsim::TopicPartition* tp) {
    return tp != nullptr ? partition_name(*tp) : std::string();
  }
  void on_records(const tr::ShareRecords& e) {
    share = true;
    const std::int64_t n = e.records;
    const std::string p = std::string(e.group) + "/" + name(e.partition);
    if (e.cause == "fetch") {
      delivered += n;
      deliveries_by_count[std::to_string(e.delivery_count)] += n;
      if (e.delivery_count > 1) redelivered += n;
    }
    if (e.cause == "lock_timeout") lock_timeouts += n;
    if (e.cause == "RELEASE" || e.cause == "session_close" || e.cause == "disconnect")
      released += n;
    if (e.cause == "disconnect") released_on_disconnect += n;
    if (e.to == "ACKNOWLEDGED") {
      acknowledged += n;
      acknowledged_twice += acked[p].add(e.first_offset, e.last_offset);
    }
    if (e.to == "ARCHIVED") {
      archived += n;
      (e.cause == "REJECT" ? archived_rejected : archived_limit) += n;
    }
  }
  void on_window(std::int64_t t, const tr::ShareWindow& e) {
    share = true;
    Window& w = windows[name(e.partition)];
    w.max_in_flight = std::max(w.max_in_flight, e.in_flight);
    const std::int64_t t_ms = t / 1000;
    if (!w.points.empty() && w.points.back()[0] / 1000 == t_ms / 1000) {
      w.points.back() = {t_ms, e.spso, e.speo};
    } else {
      w.points.push_back({t_ms, e.spso, e.speo});
    }
  }
  void on_group_epoch(std::int64_t t, const tr::GroupEpoch& e) {
    const std::string g(e.group);
    const std::int64_t epoch = *e.epoch;
    if (epoch > group_epoch[g] && open.count(g) == 0) {
      Change c;
      c.start_us = t;
      c.trigger = e.reason ? std::string(*e.reason) : "group epoch " + std::to_string(epoch);
      for (const auto& [member, gg] : group_of)
        if (gg == g) c.owned_before[member] = owned[member];
      open[g] = c;
    }
    group_epoch[g] = std::max(group_epoch[g], epoch);
    if (e.assignment_epoch) assignment_epoch[g] = *e.assignment_epoch;
    maybe_close(g, t);
  }

  void finish(ojson& summary) {
    if (!share) return;
    std::vector<std::string> running;
    for (const auto& [c, since] : started_at) running.push_back(c);
    for (const auto& c : running) stop_clock(c, end_us);
    for (const auto& [p, s] : final_state) {
      const auto it = log_end.find(p);
      if (it != log_end.end()) unfinished += it->second - s.first - s.second;
    }

    for (const auto& [g, c] : open) {
      rebalances.push_back({{"group", g},
                            {"start_us", c.start_us},
                            {"end_us", nullptr},
                            {"duration_ms", nullptr},
                            {"trigger", c.trigger},
                            {"revoked", ojson::object()},
                            {"assigned", ojson::object()}});
    }
    summary["rebalances"] = rebalances;
    ojson& m = summary["metrics"];
    // Share groups rebalance without a revocation phase: from the epoch bump until every member
    // is at the target epoch.
    m["rebalance_count"] = rebalances.size();
    m["max_rebalance_ms"] = static_cast<double>(max_rebalance_us) / 1000.0;
    m["total_rebalance_ms"] = static_cast<double>(total_rebalance_us) / 1000.0;
    m["records_delivered"] = delivered;
    m["records_processed"] = processed_total;
    m["duplicates"] = duplicates;
    m["acknowledged"] = acknowledged;
    m["redelivered"] = redelivered;
    m["archived"] = archived;
    m["archived_rejected"] = archived_rejected;
    m["archived_delivery_limit"] = archived_limit;
    // A record is lost to the application when it is archived without having been accepted.
    m["lost"] = archived;
    m["lock_timeouts"] = lock_timeouts;
    m["released"] = released;
    m["released_on_disconnect"] = released_on_disconnect;
    m["acknowledged_twice"] = acknowledged_twice;
    m["acknowledge_errors"] = ack_errors;
    m["unacknowledged_at_end"] = unfinished;
    ojson by_count = ojson::object();
    std::vector<std::pair<std::int64_t, std::int64_t>> counts;
    for (const auto& [k, n] : deliveries_by_count) counts.emplace_back(std::stoll(k), n);
    std::sort(counts.begin(), counts.end());
    for (const auto& [k, n] : counts) by_count[std::to_string(k)] = n;
    m["deliveries_by_delivery_count"] = by_count;
    ojson by_consumer = ojson::object();
    ojson throughput = ojson::object();
    for (const auto& [c, n] : processed) {
      by_consumer[c] = n;
      const std::int64_t us = active_us[c];
      throughput[c] = us > 0 ? static_cast<double>(n) * 1e6 / static_cast<double>(us) : 0.0;
    }
    m["records_processed_by_consumer"] = by_consumer;
    std::int64_t least = processed.empty() ? 0 : INT64_MAX;
    for (const auto& [c, n] : processed) least = std::min(least, n);
    m["min_records_processed_by_consumer"] = least;
    m["throughput_by_consumer"] = throughput;
    ojson spso = ojson::object();
    for (const auto& [p, w] : windows) {
      ojson points = ojson::array();
      for (const auto& pt : w.points) points.push_back({pt[0], pt[1], pt[2]});
      spso[p] = {{"max_in_flight", w.max_in_flight}, {"t_ms_spso_speo", points}};
    }
    m["share_window_by_partition"] = spso;
  }
};

}  // namespace

struct ShareSummarySink::State {
  ShareAccounting acc;
};

ShareSummarySink::ShareSummarySink() : s_(std::make_unique<State>()) {}
ShareSummarySink::~ShareSummarySink() = default;

void ShareSummarySink::on_event(sim::SimTime t, const rsim::trace::Event& e) {
  s_->acc.on(t.count(), e);
}

void ShareSummarySink::finish(ojson& summary) {
  s_->acc.finish(summary);
}

void add_share_metrics(const std::vector<std::string>& trace_lines, ojson& summary) {
  ShareAccounting acc;
  TraceReader reader(trace_lines);
  while (reader.next()) acc.on(reader.t_us(), reader.event());
  acc.finish(summary);
}

}  // namespace reports
