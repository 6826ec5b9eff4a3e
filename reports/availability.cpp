// The verdict of one variant: a plain sentence computed from summary.json's metrics (the steady
// window's when there is one), the stops and the decisive moments.
#include "reports/summary.hpp"

#include <set>
#include <string>

#include <fmt/format.h>

namespace reports {

namespace {

using ojson = nlohmann::ordered_json;

std::string plural(std::int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string duration_text(double ms) {
  if (ms < 1000.0) return fmt::format("{:.0f} ms", ms);
  if (ms < 100000.0) return fmt::format("{:.1f} s", ms / 1000.0);
  return fmt::format("{:.0f} s", ms / 1000.0);
}

std::string verdict_of(const nlohmann::ordered_json& summary) {
  const ojson& whole = summary.at("metrics");
  const ojson* steady = nullptr;
  std::int64_t from_us = 0;
  std::string when = "Over the whole run";
  if (const auto s = summary.find("steady"); s != summary.end() && s->is_object()) {
    if (s->at("from_us").is_null()) {
      when = "The group never settled after start-up; over the whole run";
    } else {
      from_us = s->at("from_us").get<std::int64_t>();
      steady = &s->at("metrics");
      when = fmt::format("After start-up (from {})",
                         duration_text(static_cast<double>(from_us) / 1000.0));
    }
  }
  const ojson& m = steady != nullptr ? *steady : whole;
  std::vector<std::string> parts;
  // Fatal errors first: nothing else matters as much.
  std::set<std::string> fatal;
  if (const auto ms = summary.find("moments"); ms != summary.end())
    for (const auto& x : *ms)
      if (x.value("kind", "") == "fatal_error" && x.at("t_us").get<std::int64_t>() >= from_us)
        fatal.insert(x.value("consumer", "?"));
  if (const auto f = m.find("fatal_errors"); f != m.end() && f->get<std::int64_t>() > 0) {
    std::string who;
    for (const auto& c : fatal) who += (who.empty() ? "" : ", ") + c;
    parts.push_back(fmt::format("{} stopped by a fatal error ({})",
                                plural(f->get<std::int64_t>(), "consumer", "consumers"),
                                who.empty() ? std::string("see the moments") : who));
  }
  parts.push_back(plural(m.value("rebalance_count", std::int64_t{0}), "rebalance", "rebalances"));
  // The whole group stopped: the stops inside the window.
  std::int64_t stops = 0;
  if (const auto st = summary.find("stops"); st != summary.end())
    for (const auto& x : *st)
      if (x.at("start_us").get<std::int64_t>() >= from_us) ++stops;
  const double max_stop = m.value("max_group_stopped_ms", 0.0);
  if (max_stop > 0)
    parts.push_back(fmt::format("the whole group stopped {} ({} at most)",
                                plural(stops, "time", "times"), duration_text(max_stop)));
  else
    parts.push_back("the group never stopped as a whole");
  // The partitions: how many were not processed, for how long, and how many never stopped.
  std::set<std::string> partitions;
  if (const auto fa = whole.find("final_assignment"); fa != whole.end() && fa->is_object())
    for (const auto& [c, ps] : fa->items())
      for (const auto& p : ps) partitions.insert(p.get<std::string>());
  if (const auto np = whole.find("not_processed_ms_by_partition"); np != whole.end())
    for (const auto& [p, v] : np->items()) partitions.insert(p);
  std::int64_t stopped = 0;
  if (const auto np = m.find("not_processed_ms_by_partition"); np != m.end())
    for (const auto& [p, v] : np->items())
      if (v.get<double>() > 0) ++stopped;
  const auto total = static_cast<std::int64_t>(partitions.size());
  if (stopped == 0) {
    parts.push_back(total > 0 ? fmt::format("all {} partitions were processed throughout", total)
                              : std::string("no partition was processed"));
  } else {
    std::string p = fmt::format("{} of {} partitions were not processed for {} in all ({} at most)",
                                stopped, std::max(total, stopped),
                                duration_text(m.value("not_processed_partition_ms", 0.0)),
                                duration_text(m.value("max_not_processed_ms", 0.0)));
    if (total > stopped) p += fmt::format(", the other {} never stopped", total - stopped);
    parts.push_back(p);
  }
  const std::int64_t dups = m.value("duplicates", std::int64_t{0});
  if (dups > 0)
    parts.push_back(fmt::format("{} delivered again", plural(dups, "record", "records")));
  const std::int64_t lost = whole.value("lost", std::int64_t{0});
  if (lost > 0)
    parts.push_back(
        fmt::format("{} committed but never processed", plural(lost, "record", "records")));
  std::string out = when + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : "; ") + parts[i];
  return out + ".";
}

}  // namespace reports

namespace reports {

namespace {
std::string num(const nlohmann::ordered_json& v) {
  if (v.is_number_float()) {
    // Shortest text that reads back as the same double, never float noise beyond 3 decimals.
    std::string s = fmt::format("{:.3f}", v.get<double>());
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  return v.dump();
}
}  // namespace

std::string headline_of(const nlohmann::ordered_json& summary) {
  const nlohmann::ordered_json* m = &summary.at("metrics");
  std::string when = "whole run";
  if (const auto s = summary.find("steady"); s != summary.end() && s->is_object()) {
    if (s->at("from_us").is_null()) {
      when = "whole run (never steady)";
    } else {
      m = &s->at("metrics");
      when = "steady from " + duration_text(s->at("from_us").get<double>() / 1000.0);
    }
  }
  const auto get = [&](const char* k) { return m->contains(k) ? num(m->at(k)) : std::string("0"); };
  return fmt::format(
      "{}: {} rebalances, max {} ms, stop-the-world {} ms, not processed {} partition-ms (longest "
      "{} ms), "
      "unavailable {} partition-ms, {} duplicates, {} lost, {} fatal errors",
      when, get("rebalance_count"), get("max_rebalance_ms"), get("stop_the_world_ms"),
      get("not_processed_partition_ms"), get("max_not_processed_ms"),
      get("unavailable_partition_ms"), get("duplicates"),
      num(summary.at("metrics").value("lost", nlohmann::ordered_json(0))), get("fatal_errors"));
}

std::vector<std::string> moment_lines(const nlohmann::ordered_json& summary) {
  std::vector<std::string> out;
  const auto ms = summary.find("moments");
  if (ms == summary.end()) return out;
  for (const auto& x : *ms) {
    const std::string who =
        x.contains("consumer") ? x.at("consumer").get<std::string>() + ": " : std::string();
    out.push_back(fmt::format("at {} ms: {}{}",
                              num(nlohmann::ordered_json(x.at("t_us").get<double>() / 1000.0)), who,
                              x.at("text").get<std::string>()));
  }
  return out;
}

}  // namespace reports
