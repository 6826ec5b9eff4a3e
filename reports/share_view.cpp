#include "reports/share_view.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/escape.hpp"
#include "reports/timeline.hpp"
#include "reports/trace_reader.hpp"

namespace reports {

namespace {

namespace tr = rsim::trace;

constexpr double kLabel = 150;   // left margin, as the timelines
constexpr double kWidth = 1100;  // plot width
constexpr double kPanel = 70;    // height of each of the two panels
constexpr double kGap = 16;

std::string esc(std::string_view s) {
  return markup_escape(s);
}

/// Keeps the last point of every pixel column (and the first point), so a series has at most
/// about kWidth points whatever the run's length.
template <class Point>
void thin(std::vector<Point>& points, std::int64_t duration_us) {
  if (points.size() <= static_cast<std::size_t>(kWidth) || duration_us <= 0) return;
  std::vector<Point> out;
  out.reserve(static_cast<std::size_t>(kWidth) + 2);
  const auto column = [&](std::int64_t t) {
    return static_cast<std::int64_t>(kWidth * static_cast<double>(t) /
                                     static_cast<double>(duration_us));
  };
  out.push_back(points.front());
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (i + 1 < points.size() && column(points[i].t_us) == column(points[i + 1].t_us)) continue;
    out.push_back(points[i]);
  }
  points = std::move(out);
}

struct Counts {
  std::int64_t available = 0, acquired = 0, acknowledged = 0, archived = 0;
  std::int64_t* of(std::string_view state) {
    if (state == "AVAILABLE") return &available;
    if (state == "ACQUIRED") return &acquired;
    if (state == "ACKNOWLEDGED") return &acknowledged;
    if (state == "ARCHIVED" || state == "ARCHIVING") return &archived;
    return nullptr;
  }
};

/// A step line through (t, value) points over [0, duration].
std::string step_path(const std::vector<std::pair<std::int64_t, double>>& pts,
                      std::int64_t duration_us, double y0, double height, double top) {
  if (pts.empty() || top <= 0) return {};
  const auto x = [&](std::int64_t t) {
    return kWidth * static_cast<double>(t) / static_cast<double>(duration_us);
  };
  const auto y = [&](double v) { return y0 + height - height * v / top; };
  std::string d = fmt::format("M{:.1f},{:.1f}", x(pts.front().first), y(pts.front().second));
  for (std::size_t i = 1; i < pts.size(); ++i) {
    d += fmt::format("H{:.1f}V{:.1f}", x(pts[i].first), y(pts[i].second));
  }
  d += fmt::format("H{:.1f}", kWidth);
  return d;
}

void render_partition(std::string& o, const ShareView& v, const SharePartitionSeries& s) {
  const std::int64_t duration = std::max<std::int64_t>(1, v.duration_us);
  const double height = 2 * kPanel + kGap + 18;
  fmt::format_to(
      std::back_inserter(o),
      "<svg class=\"share-window\" data-variant=\"{}\" data-group=\"{}\" data-partition=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">",
      esc(v.protocol), esc(s.group), esc(s.partition), kLabel + kWidth + 10, height,
      kLabel + kWidth + 10, height);
  fmt::format_to(std::back_inserter(o), "<text x=\"4\" y=\"14\" class=\"sv-title\">{}</text>",
                 esc(s.partition));
  fmt::format_to(std::back_inserter(o), "<text x=\"4\" y=\"30\" class=\"sv-sub\">group {}</text>",
                 esc(s.group));
  fmt::format_to(std::back_inserter(o),
                 "<text x=\"4\" y=\"{}\" class=\"sv-sub\">in-flight window</text>",
                 kPanel / 2 + 10);
  fmt::format_to(std::back_inserter(o),
                 "<text x=\"4\" y=\"{}\" class=\"sv-sub\">records by state</text>",
                 kPanel + kGap + kPanel / 2 + 10);
  fmt::format_to(std::back_inserter(o), "<g transform=\"translate({},4)\">", kLabel);
  // Panel 1: SPSO and SPEO (offsets), the window between them shaded.
  std::int64_t lo = 0, hi = 0;
  if (!s.window.empty()) {
    lo = s.window.front().spso;
    hi = s.window.front().speo;
    for (const auto& p : s.window) {
      lo = std::min(lo, p.spso);
      hi = std::max(hi, p.speo);
    }
  }
  const double span = static_cast<double>(std::max<std::int64_t>(1, hi - lo));
  fmt::format_to(std::back_inserter(o),
                 "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" class=\"sv-bg\"/>", kWidth,
                 kPanel);
  std::vector<std::pair<std::int64_t, double>> spso, speo;
  std::int64_t max_in_flight = 0;
  for (const auto& p : s.window) {
    spso.emplace_back(p.t_us, static_cast<double>(p.spso - lo));
    speo.emplace_back(p.t_us, static_cast<double>(p.speo - lo));
    max_in_flight = std::max(max_in_flight, p.in_flight);
  }
  for (std::size_t i = 0; i < s.window.size(); ++i) {
    const auto& p = s.window[i];
    const std::int64_t end = i + 1 < s.window.size() ? s.window[i + 1].t_us : duration;
    const double x0 = kWidth * static_cast<double>(p.t_us) / static_cast<double>(duration);
    const double x1 = kWidth * static_cast<double>(end) / static_cast<double>(duration);
    const double y_top = kPanel - kPanel * static_cast<double>(p.speo - lo) / span;
    const double y_bot = kPanel - kPanel * static_cast<double>(p.spso - lo) / span;
    if (x1 - x0 < 0.05 || y_bot - y_top < 0.05) continue;
    fmt::format_to(std::back_inserter(o),
                   "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                   "class=\"sv-win\"><title>{}: SPSO {}, "
                   "SPEO {}, {} in flight</title></rect>",
                   x0, y_top, x1 - x0, y_bot - y_top, seconds(p.t_us), p.spso, p.speo, p.in_flight);
  }
  fmt::format_to(
      std::back_inserter(o), "<path d=\"{}\" class=\"sv-spso\"/><path d=\"{}\" class=\"sv-speo\"/>",
      step_path(spso, duration, 0, kPanel, span), step_path(speo, duration, 0, kPanel, span));
  fmt::format_to(std::back_inserter(o),
                 "<text x=\"{}\" y=\"10\" class=\"sv-axis\" text-anchor=\"end\">offset {}</text>"
                 "<text x=\"{}\" y=\"{}\" class=\"sv-axis\" text-anchor=\"end\">offset {} · max in "
                 "flight {}</text>",
                 kWidth - 2, hi, kWidth - 2, kPanel - 2, lo, max_in_flight);
  // Panel 2: records by state.
  const double y2 = kPanel + kGap;
  fmt::format_to(std::back_inserter(o),
                 "<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"sv-bg\"/>", y2, kWidth,
                 kPanel);
  std::int64_t top = 1;
  for (const auto& p : s.states)
    top = std::max({top, p.available, p.acquired, p.acknowledged, p.archived});
  const auto series = [&](auto member) {
    std::vector<std::pair<std::int64_t, double>> pts;
    pts.emplace_back(0, 0.0);
    for (const auto& p : s.states) pts.emplace_back(p.t_us, static_cast<double>(p.*member));
    return step_path(pts, duration, y2, kPanel, static_cast<double>(top));
  };
  const ShareStatePoint last = s.states.empty() ? ShareStatePoint{} : s.states.back();
  fmt::format_to(
      std::back_inserter(o),
      "<path d=\"{}\" class=\"sv-acked\"><title>ACKNOWLEDGED (total): {} at the end</title></path>"
      "<path d=\"{}\" class=\"sv-archived\"><title>ARCHIVED (total): {} at the end</title></path>"
      "<path d=\"{}\" class=\"sv-available\"><title>AVAILABLE (in the window): {} at the "
      "end</title></path>"
      "<path d=\"{}\" class=\"sv-acquired\"><title>ACQUIRED (in the window): {} at the "
      "end</title></path>",
      series(&ShareStatePoint::acknowledged), last.acknowledged, series(&ShareStatePoint::archived),
      last.archived, series(&ShareStatePoint::available), last.available,
      series(&ShareStatePoint::acquired), last.acquired);
  fmt::format_to(std::back_inserter(o),
                 "<text x=\"{}\" y=\"{}\" class=\"sv-axis\" text-anchor=\"end\">{} records</text>",
                 kWidth - 2, y2 + 10, top);
  fmt::format_to(std::back_inserter(o),
                 "<text x=\"0\" y=\"{}\" class=\"sv-axis\">0 s</text>"
                 "<text x=\"{}\" y=\"{}\" class=\"sv-axis\" text-anchor=\"end\">{}</text>",
                 y2 + kPanel + 12, kWidth, y2 + kPanel + 12, seconds(duration));
  o += "</g></svg>\n";
}

}  // namespace

ShareView build_share_view(std::string_view trace_jsonl, const std::string& protocol) {
  ShareView view;
  view.protocol = protocol;
  std::map<std::pair<std::string, std::string>, SharePartitionSeries> by_key;
  std::map<std::pair<std::string, std::string>, Counts> counts;
  const auto key_of = [](std::string_view group, const rsim::TopicPartition* tp) {
    return std::pair<std::string, std::string>(group,
                                               tp != nullptr ? partition_name(*tp) : std::string());
  };
  const auto series_of = [&](std::string_view group,
                             const rsim::TopicPartition* tp) -> SharePartitionSeries& {
    const auto key = key_of(group, tp);
    SharePartitionSeries& s = by_key[key];
    s.group = key.first;
    s.partition = key.second;
    return s;
  };
  const auto on_records = [&](std::int64_t t, const tr::ShareRecords& r) {
    SharePartitionSeries& s = series_of(r.group, r.partition);
    Counts& c = counts[key_of(r.group, r.partition)];
    // A first delivery acquires records past SPEO: they were in no state of the window before.
    const bool fresh = r.cause == "fetch" && r.delivery_count == 1;
    if (std::int64_t* f = c.of(r.from); f != nullptr && !fresh) *f -= r.records;
    if (std::int64_t* d = c.of(r.to); d != nullptr) *d += r.records;
    if (!s.states.empty() && s.states.back().t_us == t) s.states.pop_back();
    s.states.push_back({t, c.available, c.acquired, c.acknowledged, c.archived});
  };
  // Only the kinds this view reads are read field by field; the duration is the run's, or its
  // last share event's time when that is later.
  KindSet kinds;
  kinds.set(kKind<tr::RunStart>).set(kKind<tr::ShareWindow>).set(kKind<tr::ShareRecords>);
  KindSet share_kinds = kinds;
  share_kinds.set(kKind<tr::ShareConfig>)
      .set(kKind<tr::SharePartitionInit>)
      .set(kKind<tr::SharePartitionEnd>)
      .set(kKind<tr::ShareAckError>)
      .set(kKind<tr::ShareProcess>)
      .set(kKind<tr::ShareAssignorError>)
      .set(kKind<tr::ShareSession>);
  share_kinds.reset(kKind<tr::RunStart>);
  TraceReader reader(trace_jsonl);
  reader.read_only(kinds);
  while (reader.next()) {
    const std::int64_t t = reader.t_us();
    const tr::Event& e = reader.event();
    if (const auto* run = std::get_if<tr::RunStart>(&e)) {
      view.duration_us = std::max({view.duration_us, t, run->duration_ms * 1000});
      continue;
    }
    if (!share_kinds[reader.kind()]) continue;
    view.duration_us = std::max(view.duration_us, t);
    if (const auto* w = std::get_if<tr::ShareWindow>(&e)) {
      series_of(w->group, w->partition).window.push_back({t, w->spso, w->speo, w->in_flight});
    } else if (const auto* r = std::get_if<tr::ShareRecords>(&e)) {
      on_records(t, *r);
    }
  }
  for (auto& [key, s] : by_key) {
    thin(s.window, view.duration_us);
    thin(s.states, view.duration_us);
    view.partitions.push_back(std::move(s));
  }
  std::stable_sort(view.partitions.begin(), view.partitions.end(),
                   [](const auto& a, const auto& b) {
                     if (a.group != b.group) return a.group < b.group;
                     return partition_less(a.partition, b.partition);
                   });
  return view;
}

std::string render_share_section(const std::vector<ShareView>& views) {
  std::size_t partitions = 0;
  for (const auto& v : views) partitions += v.partitions.size();
  if (partitions == 0) return {};
  std::string o;
  o += "<section class=\"share-view\"><h2>Share groups</h2>"
       "<style>svg.share-window{display:block;max-width:100%;height:auto;font:11px "
       "sans-serif;margin:4px 0 10px}"
       ".sv-bg{fill:#f6f6f6}.sv-win{fill:rgba(69,123,157,.25)}.sv-spso,.sv-speo,.sv-acked,.sv-"
       "archived,.sv-available,"
       ".sv-acquired{fill:none;stroke-width:1.5;vector-effect:non-scaling-stroke}.sv-spso{stroke:#"
       "1d3557}"
       ".sv-speo{stroke:#457b9d;stroke-dasharray:4 "
       "2}.sv-acked{stroke:#2a9d8f}.sv-archived{stroke:#c1121f}"
       ".sv-available{stroke:#e9c46a}.sv-acquired{stroke:#f4a261}.sv-title{font-weight:bold}.sv-"
       "sub,.sv-axis{fill:#555}"
       ".share-legend i{display:inline-block;width:14px;height:3px;margin:0 4px 3px "
       "10px;vertical-align:middle}</style>"
       "<p>Each share-partition: its in-flight window between SPSO (solid) and SPEO (dashed), and "
       "its records by "
       "state: AVAILABLE and ACQUIRED records in the window now, ACKNOWLEDGED and ARCHIVED in "
       "total since the "
       "start.</p><div class=\"share-legend\"><i style=\"background:#1d3557\"></i>SPSO<i "
       "style=\"background:#457b9d\"></i>SPEO"
       "<i style=\"background:#e9c46a\"></i>AVAILABLE<i style=\"background:#f4a261\"></i>ACQUIRED"
       "<i style=\"background:#2a9d8f\"></i>ACKNOWLEDGED<i "
       "style=\"background:#c1121f\"></i>ARCHIVED</div>\n";
  for (const auto& v : views) {
    if (v.partitions.empty()) continue;
    fmt::format_to(std::back_inserter(o),
                   "<div class=\"share-variant\" data-variant=\"{}\"><h3>{}</h3>\n",
                   esc(v.protocol), esc(v.protocol));
    for (const auto& s : v.partitions) render_partition(o, v, s);
    o += "</div>\n";
  }
  fmt::format_to(std::back_inserter(o),
                 "<script>document.documentElement.dataset.sharePartitions="
                 "document.querySelectorAll('svg.share-window').length;</script></section>\n");
  return o;
}

}  // namespace reports
