#include "reports/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "models/trace/trace_events.hpp"
#include "reports/escape.hpp"
#include "reports/html_parts.hpp"
#include "reports/lesson_view.hpp"
#include "reports/narrative.hpp"
#include "reports/sequence.hpp"
#include "reports/summary.hpp"

namespace reports {

// The drawing helpers are shared with the side-by-side page of `compare --out`
// (reports/compare_report.cpp) through reports/html_parts.hpp.
namespace html {

using json = nlohmann::ordered_json;

constexpr double kBandHeight = 16;
constexpr double kLagHeight = 90;
constexpr double kFleetHeight = 36;          // a deployment's band: its ready pods over time
constexpr std::size_t kStripeBudget = 6000;  // per-partition stripes per variant before aggregating
constexpr std::size_t kMaxStripesPerInterval = 32;
constexpr std::size_t kMaxSequenceViews = 40;  // per variant
constexpr std::size_t kMaxSequenceRows = 160;
constexpr std::size_t kMaxSeries = 24;  // per-partition lag lines drawn before only the total
static_assert(kMaxSeries <= kLagSeriesKept, "a Timeline keeps the lag series report.html draws");

std::string esc(std::string_view s) {
  return markup_escape(s);
}

std::string clip(std::string s, std::size_t max) {
  if (s.size() > max) s = s.substr(0, max) + "…";
  return s;
}

std::string ms(std::int64_t us) {
  std::string s = milliseconds(us);
  return s.substr(0, s.size() - 3);
}

// A stable, well-spread colour per partition index (the golden angle around the hue circle).
std::string partition_colour(int index) {
  const int hue = static_cast<int>((static_cast<long long>(index) * 137508 / 1000) % 360);
  return fmt::format("hsl({},62%,{}%)", hue, 48 + (index % 3) * 8);
}

const char* span_colour(const std::string& kind) {
  if (kind == "revoking") return "#d62728";
  if (kind == "waiting") return "#ff9f1c";
  if (kind == "processing") return "#8fd18f";
  if (kind == "stalled") return "#8c564b";
  if (kind == "paused") return "#9467bd";
  if (kind == "crashed") return "#444";
  if (kind == "callback") return "#1f77b4";
  return "#999";
}

const char* instant_colour(const std::string& kind) {
  if (kind == "start") return "#2a9d2a";
  if (kind == "stop") return "#555";
  if (kind == "crash") return "#d62728";
  if (kind == "heartbeat") return "#e76f00";
  if (kind == "join") return "#3366cc";
  if (kind == "sync") return "#00a0b0";
  if (kind == "epoch") return "#7b3fa0";
  if (kind == "leave") return "#777";
  if (kind == "fenced") return "#b00020";
  return "#333";
}

// Classic and KIP-848 group states in colours of their own (reconciling is not
// CompletingRebalance).
const char* state_colour(const std::string& state) {
  if (state == "Empty") return "#e0e0e0";
  if (state == "PreparingRebalance") return "#f4a261";
  if (state == "CompletingRebalance") return "#e9c46a";
  if (state == "Stable") return "#90be6d";
  if (state == "Dead" || state == "dead") return "#666";
  if (state == "empty") return "#d5d9e0";
  if (state == "assigning") return "#b392f0";
  if (state == "reconciling") return "#5bc0de";
  if (state == "stable") return "#3f9f6a";
  return "#bbb";
}

std::string Scale::min_width_attrs(std::int64_t from, std::int64_t to, double min) const {
  const double real = x(to) - x(from);
  if (real >= min) return "";
  return fmt::format(" data-w=\"{:.6f}\" data-minw=\"{}\"", std::max(0.0, real), min);
}

void plot_preamble(Out o, const std::string& clip_id, double height) {
  fmt::format_to(o,
                 "<defs><clipPath id=\"{}\"><rect x=\"0\" y=\"0\" width=\"{}\" "
                 "height=\"100000\"/></clipPath></defs>",
                 clip_id, kPlotWidth);
  fmt::format_to(o, "<g class=\"axis\" transform=\"translate({},0)\" data-height=\"{:.0f}\"></g>",
                 kLabelWidth, height);
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 kLabelWidth, clip_id);
}

void rect(Out o, double x, double y, double w, double h, std::string_view fill,
          std::string_view title, std::string_view extra) {
  fmt::format_to(o,
                 "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
                 "fill=\"{}\"{}><title>{}</title></rect>",
                 x, y, w, h, fill, extra, esc(clip(std::string(title), 300)));
}

std::vector<Span> merged_spans(const std::vector<Span>& spans, const Scale& sc) {
  // Processing batches less than three pixels apart merge into one shape, so that a busy consumer
  // stays a handful of rectangles rather than thousands.
  std::vector<Span> out;
  const std::int64_t gap =
      std::max<std::int64_t>(1, sc.duration_us * 3 / static_cast<std::int64_t>(kPlotWidth));
  std::size_t batches = 0;
  for (const auto& s : spans) {
    if (s.kind != "processing") {
      out.push_back(s);
      continue;
    }
    Span* last = nullptr;
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->kind == "processing") {
        last = &*it;
        break;
      }
    if (last != nullptr && s.start_us - last->end_us <= gap) {
      last->end_us = std::max(last->end_us, s.end_us);
      ++batches;
      last->label = fmt::format("processing: {} batches", batches);
    } else {
      out.push_back(s);
      batches = 1;
    }
  }
  return out;
}

void render_lane(Out o, const Timeline& tl, const Lane& lane, const Scale& sc, double y, double h,
                 bool stripes, const std::string& clip_id, std::string_view label) {
  fmt::format_to(o, "<g class=\"lane\" data-consumer=\"{}\" data-group=\"{}\">", esc(lane.consumer),
                 esc(lane.group));
  fmt::format_to(o, "<text class=\"lbl\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", kLabelWidth - 6,
                 y + h * 0.62, esc(label.empty() ? std::string_view(lane.consumer) : label));
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 kLabelWidth, clip_id);
  fmt::format_to(o, "<rect class=\"lanebg\" x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\"/>",
                 y, kPlotWidth, h);
  const double oy = y + 1, oh = h * 0.55, sy = oy + oh + 1, sh = std::max(1.0, h * 0.32);
  for (const auto& own : lane.owned) {
    std::vector<std::string> names;
    for (const int p : own.partitions) names.push_back(tl.partitions[static_cast<std::size_t>(p)]);
    const std::string title =
        fmt::format("{} owns {} ({} partition{}) from {} to {}", lane.consumer,
                    clip(compress_partitions(names)), names.size(), names.size() == 1 ? "" : "s",
                    seconds(own.start_us), seconds(own.end_us));
    const double x = sc.x(own.start_us), w = sc.w(own.start_us, own.end_us);
    if (stripes && own.partitions.size() <= kMaxStripesPerInterval) {
      const double ph = oh / static_cast<double>(own.partitions.size());
      for (std::size_t k = 0; k < own.partitions.size(); ++k)
        rect(o, x, oy + ph * static_cast<double>(k), w, ph, partition_colour(own.partitions[k]),
             fmt::format("{}: {}", tl.partitions[static_cast<std::size_t>(own.partitions[k])],
                         title),
             " class=\"own\"" + sc.min_width_attrs(own.start_us, own.end_us));
    } else {
      // Aggregated: one bar coloured after the middle of the partitions it holds.
      rect(o, x, oy, w, oh, partition_colour(own.partitions[own.partitions.size() / 2]), title,
           fmt::format(" class=\"own agg\" data-count=\"{}\"{}", own.partitions.size(),
                       sc.min_width_attrs(own.start_us, own.end_us)));
    }
  }
  for (const auto& s : merged_spans(lane.spans, sc)) {
    const bool cb = s.kind == "callback";
    rect(o, sc.x(s.start_us), cb ? sy - 1 : sy, sc.w(s.start_us, s.end_us, cb ? 1.2 : 0.6),
         cb ? sh + 2 : sh, span_colour(s.kind),
         fmt::format("{}: {} ({} to {})", lane.consumer, s.label, seconds(s.start_us),
                     seconds(s.end_us)),
         fmt::format(" class=\"span {}\"{}", s.kind,
                     sc.min_width_attrs(s.start_us, s.end_us, cb ? 1.2 : 0.6)));
  }
  // Instants of one kind closer than half a pixel share one tick.
  std::map<std::pair<long long, std::string>, std::pair<std::int64_t, std::string>> ticks;
  for (const auto& i : lane.instants) {
    const auto key = std::make_pair(static_cast<long long>(sc.x(i.t_us) * 2), i.kind);
    auto& slot = ticks[key];
    if (slot.second.empty())
      slot = {i.t_us, fmt::format("{} at {}: {}", lane.consumer, seconds(i.t_us), i.label)};
    else if (slot.second.size() < 600)
      slot.second += fmt::format("\n{}: {}", seconds(i.t_us), i.label);
  }
  std::vector<std::tuple<std::int64_t, std::string, std::string>> ordered;
  for (const auto& [key, v] : ticks) ordered.emplace_back(v.first, key.second, v.second);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [t, kind, title] : ordered) {
    const double x = sc.x(t);
    fmt::format_to(o,
                   "<line class=\"inst {}\" x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.1f}\" "
                   "y2=\"{:.1f}\" stroke=\"{}\"><title>{}</title></line>",
                   kind, x, x, y, y + h, instant_colour(kind), esc(title));
  }
  fmt::format_to(o, "</g></g></g></g>");
}

std::vector<LagPoint> downsample(const std::vector<LagPoint>& points, const Scale& sc) {
  // At most two points per pixel: the first and the largest of each, so peaks survive.
  std::vector<LagPoint> out;
  long long bucket = -1;
  std::size_t peak = 0;
  for (const auto& p : points) {
    const long long b = static_cast<long long>(sc.x(p.t_us) * 2);
    if (b != bucket) {
      bucket = b;
      out.push_back(p);
      peak = out.size() - 1;
    } else if (p.lag > out[peak].lag) {
      out.push_back(p);
      if (out.size() >= 2 && out[out.size() - 2].t_us == p.t_us) out.erase(out.end() - 2);
      peak = out.size() - 1;
    }
  }
  return out;
}

void render_lag(Out o, const Timeline& tl, const Scale& sc, double y, std::int64_t max_lag,
                const std::string& clip_id) {
  fmt::format_to(o, "<g class=\"lag\" data-max-lag=\"{}\">", max_lag);
  fmt::format_to(o, "<text class=\"lbl\" x=\"{:.1f}\" y=\"{:.1f}\">lag (records)</text>",
                 kLabelWidth - 6, y + 14);
  fmt::format_to(o, "<text class=\"lbl small\" x=\"{:.1f}\" y=\"{:.1f}\">max {}</text>",
                 kLabelWidth - 6, y + 28, max_lag);
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 kLabelWidth, clip_id);
  fmt::format_to(o, "<rect class=\"lanebg\" x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\"/>",
                 y, kPlotWidth, kLagHeight);
  const double denom = static_cast<double>(std::max<std::int64_t>(1, max_lag));
  auto polyline = [&](const std::vector<LagPoint>& pts, std::string_view colour, double width,
                      std::string_view title) {
    if (pts.empty()) return;
    fmt::format_to(o,
                   "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" "
                   "vector-effect=\"non-scaling-stroke\" points=\"",
                   colour, width);
    double last_y = -1;
    for (const auto& p : downsample(pts, sc)) {
      const double py = y + kLagHeight - 2 - (kLagHeight - 6) * static_cast<double>(p.lag) / denom;
      if (last_y >= 0)
        fmt::format_to(o, "{:.2f},{:.1f} ", sc.x(p.t_us),
                       last_y);  // a step: lag holds until the next sample
      fmt::format_to(o, "{:.2f},{:.1f} ", sc.x(p.t_us), py);
      last_y = py;
    }
    fmt::format_to(o, "{:.2f},{:.1f}\"><title>{}</title></polyline>", sc.x(tl.duration_us), last_y,
                   esc(title));
  };
  std::size_t series = 0;
  for (const auto& l : tl.lag) series += l.empty() ? 0 : 1;
  series = std::max(series, tl.lag_series);  // a built timeline keeps only the first series
  for (std::size_t p = 0; p < tl.lag.size() && series <= kMaxSeries; ++p) {
    if (tl.lag[p].empty()) continue;
    std::int64_t peak = 0;
    for (const auto& pt : tl.lag[p]) peak = std::max(peak, pt.lag);
    polyline(tl.lag[p], partition_colour(static_cast<int>(p)), 1,
             fmt::format("lag of {} (max {})", tl.partitions[p], peak));
  }
  std::int64_t peak = 0;
  for (const auto& pt : tl.total_lag) peak = std::max(peak, pt.lag);
  polyline(tl.total_lag, "#111", 2, fmt::format("total lag (max {})", peak));
  fmt::format_to(o, "</g></g></g></g>");
}

std::string owned_summary(const json& final_assignment) {
  std::string out;
  if (!final_assignment.is_object()) return esc(final_assignment.dump());
  for (const auto& [consumer, parts] : final_assignment.items()) {
    std::vector<std::string> names;
    if (parts.is_array())
      for (const auto& p : parts)
        if (p.is_string()) names.push_back(p.get<std::string>());
    out += fmt::format("<div><b>{}</b>: {}</div>", esc(consumer),
                       esc(clip(compress_partitions(names), 300)));
  }
  return out.empty() ? "none" : out;
}

std::string partitions_of(const json& by_consumer) {
  std::string out;
  if (!by_consumer.is_object()) return out;
  for (const auto& [consumer, parts] : by_consumer.items()) {
    std::vector<std::string> names;
    if (parts.is_array())
      for (const auto& p : parts)
        if (p.is_string()) names.push_back(p.get<std::string>());
    if (!out.empty()) out += "; ";
    out += consumer + ": " + clip(compress_partitions(names), 200);
  }
  return out;
}

std::string metric(const json& summary, const char* key) {
  if (!summary.contains("metrics") || !summary["metrics"].contains(key)) return "–";
  const auto& v = summary["metrics"][key];
  return esc(v.is_string() ? v.get<std::string>() : v.dump());
}

/// Each rebalance's critical path (summary.json's `critical_path`) over the lanes: a line from
/// step to step, on the lane of the consumer that took it (the group band for the coordinator),
/// with a dot per step (`<g class="critical-path" data-path="N">`, N the rebalance's number).
void render_critical_paths(Out o, const Timeline& tl, const Scale& sc, double band_top,
                           double lanes_top, double lane_h, const std::string& clip_id) {
  if (!tl.summary.contains("rebalances") || !tl.summary["rebalances"].is_array()) return;
  std::map<std::string, double> lane_y;
  for (std::size_t l = 0; l < tl.lanes.size(); ++l)
    lane_y.emplace(tl.lanes[l].consumer, lanes_top + lane_h * (static_cast<double>(l) + 0.5));
  std::map<std::string, double> band_y;
  for (std::size_t g = 0; g < tl.groups.size(); ++g)
    band_y.emplace(tl.groups[g].group, band_top + kBandHeight * (static_cast<double>(g) + 0.5));
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 kLabelWidth, clip_id);
  const ConfigValues config = config_values_of(tl.summary);
  const auto& rbs = tl.summary["rebalances"];
  for (std::size_t i = 0; i < rbs.size() && i < tl.rebalances.size(); ++i) {
    const auto& r = rbs[i];
    if (!r.contains("critical_path") || !r["critical_path"].contains("steps")) continue;
    const std::string group = r.value("group", "");
    std::string points, dots;
    std::size_t k = 0;
    for (const auto& step : r["critical_path"]["steps"]) {
      const std::string actor = step.value("actor", "");
      const auto ly = lane_y.find(actor);
      const auto by = band_y.find(group);
      const double y = ly != lane_y.end() ? ly->second : by != band_y.end() ? by->second : band_top;
      const std::int64_t t =
          std::max(step.value("t_us", std::int64_t{0}), tl.rebalances[i].start_us);
      fmt::format_to(std::back_inserter(points), "{:.2f},{:.1f} ", sc.x(t), y);
      // data-step: the step's index in `critical_path.steps`; data-t-us: its time.
      fmt::format_to(std::back_inserter(dots),
                     "<circle data-step=\"{}\" data-t-us=\"{}\" cx=\"{:.2f}\" cy=\"{:.1f}\" "
                     "r=\"2\" fill=\"#7b2cbf\"><title>{}</title></circle>",
                     k++, step.value("t_us", std::int64_t{0}), sc.x(t), y,
                     esc(fmt::format("{} {}: {} ({})", seconds(step.value("t_us", std::int64_t{0})),
                                     actor, step.value("what", ""), step.value("event", ""))));
    }
    fmt::format_to(o,
                   "<g class=\"critical-path\" data-path=\"{}\" data-variant=\"{}\"><polyline "
                   "fill=\"none\" stroke=\"#7b2cbf\" "
                   "stroke-width=\"2\" vector-effect=\"non-scaling-stroke\" "
                   "points=\"{}\"><title>{}</title></polyline>{}</g>",
                   tl.rebalances[i].index, esc(tl.protocol), points,
                   esc(critical_path_sentence(r, tl.rebalances[i].index, &config)), dots);
  }
  fmt::format_to(o, "</g></g></g>");
}

/// A deployment's band (fleets): its ready pods over time as a stepped area, one
/// `<rect class="replicas" data-ready="N">` per step (the count from that step to the next), and
/// a marker per autoscaler decision (`<line class="inst scaling" data-scaling="K">`, K from 1).
/// `max_ready` is the top of the scale, shared by the variants.
void render_fleet(Out o, const DeploymentBand& band, const Scale& sc, double y, int max_ready,
                  const std::string& clip_id) {
  fmt::format_to(o,
                 "<g class=\"fleet\" data-deployment=\"{}\" data-steps=\"{}\" "
                 "data-decisions=\"{}\" data-max-ready=\"{}\">",
                 esc(band.deployment), band.ready.size(), band.decisions.size(), band.max_ready);
  fmt::format_to(o, "<text class=\"lbl\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", kLabelWidth - 6,
                 y + 14, esc(band.deployment));
  fmt::format_to(o,
                 "<text class=\"lbl small\" x=\"{:.1f}\" y=\"{:.1f}\">ready pods (max {})</text>",
                 kLabelWidth - 6, y + 27, band.max_ready);
  fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                 kLabelWidth, clip_id);
  fmt::format_to(o, "<rect class=\"lanebg\" x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\"/>",
                 y, kPlotWidth, kFleetHeight - 2);
  const double base = y + kFleetHeight - 3, room = kFleetHeight - 6;
  const double denom = static_cast<double>(std::max(1, max_ready));
  std::string outline;
  for (std::size_t i = 0; i < band.ready.size(); ++i) {
    const auto& s = band.ready[i];
    const std::int64_t end = i + 1 < band.ready.size() ? band.ready[i + 1].t_us : sc.duration_us;
    const double h = room * static_cast<double>(s.ready) / denom;
    rect(o, sc.x(s.t_us), base - h, sc.w(s.t_us, end), h, "#a8c5e6",
         fmt::format("{}: {} ready pod{} from {} to {}", band.deployment, s.ready,
                     s.ready == 1 ? "" : "s", seconds(s.t_us), seconds(end)),
         fmt::format(" class=\"replicas\" data-ready=\"{}\" data-start-us=\"{}\"{}", s.ready,
                     s.t_us, sc.min_width_attrs(s.t_us, end)));
    if (i == 0)
      fmt::format_to(std::back_inserter(outline), "{:.2f},{:.1f} ", sc.x(s.t_us), base);
    else
      fmt::format_to(std::back_inserter(outline), "{:.2f},{:.1f} ", sc.x(s.t_us),
                     base - room * static_cast<double>(band.ready[i - 1].ready) / denom);
    fmt::format_to(std::back_inserter(outline), "{:.2f},{:.1f} ", sc.x(s.t_us), base - h);
    if (i + 1 == band.ready.size())
      fmt::format_to(std::back_inserter(outline), "{:.2f},{:.1f}", sc.x(end), base - h);
  }
  if (!outline.empty())
    fmt::format_to(
        o,
        "<polyline class=\"replica-line\" fill=\"none\" stroke=\"#1f5f9e\" stroke-width=\"1.5\" "
        "vector-effect=\"non-scaling-stroke\" points=\"{}\"><title>{}: ready pods (max "
        "{})</title></polyline>",
        outline, esc(band.deployment), band.max_ready);
  for (std::size_t k = 0; k < band.decisions.size(); ++k) {
    const auto& d = band.decisions[k];
    const double x = sc.x(d.t_us);
    fmt::format_to(o,
                   "<line class=\"inst scaling\" data-scaling=\"{}\" data-from=\"{}\" "
                   "data-to=\"{}\" data-t-us=\"{}\" "
                   "x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                   "stroke-width=\"2\"><title>{}</title></line>",
                   k + 1, d.from, d.to, d.t_us, x, x, y, y + kFleetHeight - 2,
                   d.to >= d.from ? "#2a9d2a" : "#e76f00",
                   esc(clip(fmt::format("{}: {} {} -> {} replicas: {}", seconds(d.t_us),
                                        band.deployment, d.from, d.to, d.reason),
                            300)));
  }
  fmt::format_to(o, "</g></g></g></g>");
}

void render_timeline(Out o, const Timeline& tl, const Scale& sc, std::int64_t max_lag,
                     int max_ready, const std::string& clip_id) {
  std::size_t stripes = 0;
  for (const auto& l : tl.lanes)
    for (const auto& own : l.owned) stripes += own.partitions.size();
  const bool per_partition = stripes <= kStripeBudget;
  const std::size_t n = tl.lanes.size();
  const double lane_h = n <= 12 ? 30 : n <= 40 ? 22 : n <= 150 ? 12 : n <= 400 ? 5 : 3;
  // Labels at least 11 px apart: a large group names every k-th lane only (none overprint).
  const std::size_t label_every = static_cast<std::size_t>(std::ceil(11.0 / lane_h));
  const double band_top = kAxisHeight + 4;
  const double fleet_top = band_top + kBandHeight * static_cast<double>(tl.groups.size());
  const double lanes_top =
      fleet_top + kFleetHeight * static_cast<double>(tl.deployments.size()) + 6;
  const double lag_top = lanes_top + lane_h * static_cast<double>(n) + 8;
  const double height = lag_top + kLagHeight + 4;
  const double width = kLabelWidth + kPlotWidth + 10;
  fmt::format_to(o,
                 "<svg class=\"timeline\" data-variant=\"{}\" data-consumers=\"{}\" "
                 "data-ownership=\"{}\" width=\"{}\" height=\"{:.0f}\" viewBox=\"0 0 {} {:.0f}\" "
                 "xmlns=\"http://www.w3.org/2000/svg\">",
                 esc(tl.protocol), n, per_partition ? "per-partition" : "aggregated", width, height,
                 width, height);
  // Rebalance windows: shaded behind everything, across the band and every lane.
  plot_preamble(o, clip_id, height);
  for (const auto& r : tl.rebalances) {
    rect(o, sc.x(r.start_us), band_top, sc.w(r.start_us, r.end_us, 1.0), lag_top - band_top - 4,
         "rgba(230,57,70,0.13)",
         fmt::format("rebalance {} of {}: {} ({}), {} to {}, {} ms", r.index, r.group, r.trigger,
                     r.epoch_label, seconds(r.start_us), seconds(r.end_us),
                     ms(r.end_us - r.start_us)),
         fmt::format(" class=\"rb\" data-rebalance=\"{}\" data-variant=\"{}\" data-trigger=\"{}\" "
                     "data-start-us=\"{}\" data-end-us=\"{}\"{}",
                     r.index, esc(tl.protocol), esc(r.trigger), r.start_us, r.end_us,
                     sc.min_width_attrs(r.start_us, r.end_us, 1.0)));
  }
  // The decisive moments (summary.json's `moments`): a dashed line across the band and lanes.
  if (const auto ms = tl.summary.find("moments"); ms != tl.summary.end() && ms->is_array()) {
    const auto lines = moment_lines(tl.summary);
    for (std::size_t i = 0; i < ms->size() && i < lines.size() && i < 200; ++i) {
      const auto& m = (*ms)[i];
      const double x = sc.x(m.at("t_us").get<std::int64_t>());
      fmt::format_to(o,
                     "<line class=\"inst moment\" data-moment=\"{}\" x1=\"{:.2f}\" x2=\"{:.2f}\" "
                     "y1=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#8b0000\" stroke-dasharray=\"4 3\"><title>{}</title></line>",
                     esc(m.value("kind", std::string())), x, x, band_top, lag_top - 4,
                     esc(lines[i]));
    }
  }
  fmt::format_to(o,
                 "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                 "style=\"display:none\"/>",
                 band_top, lag_top - 4);
  fmt::format_to(o, "</g></g>");
  for (const auto& r : tl.rebalances)
    fmt::format_to(o,
                   "<text class=\"pin rbl\" data-x=\"{:.2f}\" x=\"2\" y=\"{:.1f}\" "
                   "transform=\"translate({:.2f},0)\">R{}</text>",
                   sc.x(r.start_us), band_top - 1, sc.x(r.start_us), r.index);
  fmt::format_to(o, "</g>");
  // The group's band.
  for (std::size_t g = 0; g < tl.groups.size(); ++g) {
    const auto& band = tl.groups[g];
    const double y = band_top + kBandHeight * static_cast<double>(g);
    fmt::format_to(o,
                   "<g class=\"band\" data-group=\"{}\"><text class=\"lbl small\" x=\"{:.1f}\" "
                   "y=\"{:.1f}\">group {}</text>",
                   esc(band.group), kLabelWidth - 6, y + 11, esc(band.group));
    fmt::format_to(o, "<g transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g class=\"z\">",
                   kLabelWidth, clip_id);
    for (const auto& s : band.segments)
      rect(o, sc.x(s.start_us), y + 1, sc.w(s.start_us, s.end_us), kBandHeight - 2,
           state_colour(s.state),
           fmt::format("group {}: {} ({} to {})", band.group, s.label, seconds(s.start_us),
                       seconds(s.end_us)),
           fmt::format(" class=\"state\" data-state=\"{}\"{}", esc(s.state),
                       sc.min_width_attrs(s.start_us, s.end_us)));
    for (const auto& e : band.epochs) {
      const double x = sc.x(e.t_us);
      fmt::format_to(o,
                     "<line class=\"inst epoch\" x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.1f}\" "
                     "y2=\"{:.1f}\" stroke=\"#222\"><title>{}</title></line>",
                     x, x, y, y + kBandHeight,
                     esc(fmt::format("{}: {}", seconds(e.t_us), e.label)));
    }
    fmt::format_to(o, "</g></g></g></g>");
  }
  for (std::size_t d = 0; d < tl.deployments.size(); ++d)
    render_fleet(o, tl.deployments[d], sc, fleet_top + kFleetHeight * static_cast<double>(d),
                 max_ready, clip_id);
  for (std::size_t l = 0; l < n; ++l)
    render_lane(o, tl, tl.lanes[l], sc, lanes_top + lane_h * static_cast<double>(l),
                std::max(1.0, lane_h - 1), per_partition, clip_id,
                l % label_every == 0 ? std::string_view() : std::string_view(" "));
  render_critical_paths(o, tl, sc, band_top, lanes_top, lane_h, clip_id);
  render_lag(o, tl, sc, lag_top, max_lag, clip_id);
  fmt::format_to(o, "</svg>");
}

/// The critical path of rebalance i beside its sequence view: its steps, each with the time the
/// edge into it covers by cause (`<table class="critical-path" data-seq="N">`, shown with it).
void render_path_table(Out o, const Timeline& tl, std::size_t i, bool shown,
                       const ConfigValues& config) {
  if (!tl.summary.contains("rebalances") || i >= tl.summary["rebalances"].size()) return;
  const auto& r = tl.summary["rebalances"][i];
  if (!r.contains("critical_path") || !r["critical_path"].contains("steps")) return;
  fmt::format_to(
      o,
      "<table class=\"critical-path\" data-variant=\"{}\" data-seq=\"{}\"{}><caption>{}</caption>"
      "<tr><th>time</th><th>who</th><th>event</th><th>waited (ms)</th></tr>",
      esc(tl.protocol), tl.rebalances[i].index, shown ? "" : " style=\"display:none\"",
      esc(critical_path_sentence(r, tl.rebalances[i].index, &config)));
  for (const auto& step : r["critical_path"]["steps"]) {
    std::string waited;
    if (step.contains("causes"))
      for (auto it = step["causes"].begin(); it != step["causes"].end(); ++it)
        waited += fmt::format("{}{} {}", waited.empty() ? "" : ", ", it.value().dump(), it.key());
    if (step.contains("waited_for"))
      waited += fmt::format(" (for {}'s {})", step["waited_for"].value("actor", ""),
                            step["waited_for"].value("what", ""));
    fmt::format_to(o, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                   seconds(step.value("t_us", std::int64_t{0})), esc(step.value("actor", "")),
                   esc(step.value("what", "")), esc(waited));
  }
  fmt::format_to(o, "</table>");
}

/// The steps of the rebalance's critical path (summary.json's `critical_path.steps`, by index)
/// that a sequence row shows, "" for none: the same time and actor ("coordinator" for the
/// group's broker), a request or response of the same API for an rpc step, a note for any other
/// step ("4 5": a callback's start and end are one note).
std::string critical_steps(const SequenceRow& row, const json* steps,
                           const std::string& coordinator) {
  std::string out;
  if (steps == nullptr || !steps->is_array()) return out;
  const std::string over = row.kind == SequenceRow::Kind::Response ? row.to : row.from;
  for (std::size_t k = 0; k < steps->size(); ++k) {
    const auto& st = (*steps)[k];
    if (st.value("t_us", std::int64_t{-1}) != row.t_us) continue;
    const std::string actor = st.value("actor", ""), event = st.value("event", ""),
                      what = st.value("what", "");
    if (!(actor == over || (actor == "coordinator" && over == coordinator))) continue;
    // A step's `event` is the kind of the trace line it was read from.
    const bool rpc = event == rsim::trace::Rpc::kType;
    bool shown = row.kind == SequenceRow::Kind::Note && !rpc;
    if (rpc && row.kind != SequenceRow::Kind::Note) {
      const std::string api = row.text.substr(0, row.text.find(' '));
      const char* dir = row.kind == SequenceRow::Kind::Request ? " request" : " response";
      shown = what == api + dir;
    }
    if (shown) out += (out.empty() ? "" : " ") + std::to_string(k);
  }
  return out;
}

void render_sequence(Out o, const Timeline& tl, const Rebalance& r, std::size_t index, bool shown) {
  const auto [from, to] = rebalance_window(tl, r);
  const Sequence seq = sequence_between(tl, r.group, from, to, kMaxSequenceRows);
  const json* steps = nullptr;
  if (tl.summary.contains("rebalances") && index < tl.summary["rebalances"].size()) {
    const auto& rb = tl.summary["rebalances"][index];
    if (rb.contains("critical_path") && rb["critical_path"].contains("steps"))
      steps = &rb["critical_path"]["steps"];
  }
  std::string coordinator;
  for (const auto& p : seq.participants)
    if (p.rfind("broker-", 0) == 0) {
      coordinator = p;
      break;
    }
  const double col = seq.participants.size() > 8 ? 110 : 180, left = 90, row_h = 19, payload_h = 11,
               top = 34;
  std::size_t payloads = 0;
  for (const auto& row : seq.rows) payloads += row.payload.empty() ? 0 : 1;
  const double width =
      left + col * static_cast<double>(std::max<std::size_t>(1, seq.participants.size())) + 150;
  const double height = top + row_h * static_cast<double>(seq.rows.size() + 1) +
                        payload_h * static_cast<double>(payloads) + (seq.omitted ? 20 : 0);
  std::map<std::string, double> x_of;
  for (std::size_t i = 0; i < seq.participants.size(); ++i)
    x_of[seq.participants[i]] = left + col * (static_cast<double>(i) + 0.5);
  fmt::format_to(o,
                 "<svg class=\"seq\" data-variant=\"{}\" data-seq=\"{}\" data-rows=\"{}\" "
                 "data-start-us=\"{}\" data-end-us=\"{}\" "
                 "width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\"{} "
                 "xmlns=\"http://www.w3.org/2000/svg\">",
                 esc(tl.protocol), r.index, seq.rows.size(), r.start_us, r.end_us, width, height,
                 width, height, shown ? "" : " style=\"display:none\"");
  for (const auto& p : seq.participants) {
    const double x = x_of[p];
    fmt::format_to(o,
                   "<rect x=\"{:.1f}\" y=\"4\" width=\"{:.1f}\" height=\"20\" rx=\"3\" "
                   "class=\"actor\"/><text x=\"{:.1f}\" y=\"18\" class=\"actor-t\">{}</text>",
                   x - col * 0.42, col * 0.84, x,
                   esc(p == "broker-0" || p.rfind("broker-", 0) == 0 ? p + " (coordinator)" : p));
    fmt::format_to(o, "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"24\" y2=\"{:.0f}\" class=\"life\"/>",
                   x, x, height - 4);
  }
  double y = top;
  for (std::size_t k = 0; k < seq.rows.size(); ++k) {
    const auto& row = seq.rows[k];
    y += row_h;
    const std::string on_path = critical_steps(row, steps, coordinator);
    const bool crit = !on_path.empty();
    const std::string said = row.kind == SequenceRow::Kind::Note
                                 ? fmt::format("{}: {}", row.from, row.text)
                                 : fmt::format("{} → {}: {}", row.from, row.to, row.text);
    // Each row is a step of the step control: its time and what it says.
    // A row on the critical path: class "crit" and data-step, the indices of the steps it shows.
    fmt::format_to(o,
                   "<g class=\"row{}\" data-i=\"{}\" data-t-us=\"{}\"{} data-say=\"{}\"><rect "
                   "class=\"rowbg\" x=\"0\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\"/>",
                   crit ? " crit" : "", k, row.t_us,
                   crit ? fmt::format(" data-step=\"{}\"", on_path) : std::string(),
                   esc(clip(said, 300)), y - row_h + 6, width,
                   row_h + (row.payload.empty() ? 0 : payload_h));
    fmt::format_to(o, "<text x=\"4\" y=\"{:.1f}\" class=\"ts\">{}</text>", y + 4,
                   seconds(row.t_us));
    const double x1 = x_of.count(row.from) ? x_of[row.from] : left;
    if (row.kind == SequenceRow::Kind::Note) {
      const std::string note = clip(row.text, 48);
      const double nw = std::max(col * 0.9, 5.6 * static_cast<double>(note.size()) + 10);
      fmt::format_to(
          o,
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"15\" class=\"note\"/><text "
          "x=\"{:.1f}\" y=\"{:.1f}\" class=\"note-t\">{}</text></g>",
          x1 - nw / 2, y - 8, nw, x1, y + 3, esc(note));
      continue;
    }
    const double x2 = x_of.count(row.to) ? x_of[row.to] : left;
    const bool normal = row.kind == SequenceRow::Kind::Response && !row.error &&
                        row.text.find(" NONE") == std::string::npos;
    const char* cls = row.kind == SequenceRow::Kind::Request ? "req"
                      : row.error                            ? "resp err"
                      : normal                               ? "resp normal"
                                                             : "resp";
    const double head = x2 > x1 ? -7 : 7;
    const std::string head_text = row.text.substr(0, row.text.size() - row.payload.size());
    fmt::format_to(
        o,
        "<g class=\"msg {}{}\"><title>{}</title><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
        "y2=\"{:.1f}\"/><path d=\"M{:.1f},{:.1f} l{:.1f},-4 l0,8 z\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>",
        cls, crit ? " crit" : "",
        esc(fmt::format("{} {}{}", seconds(row.t_us), said, crit ? " (on the critical path)" : "")),
        x1, x2, y, y, x2, y, head, (x1 + x2) / 2, y - 3, esc(clip(head_text, 44)));
    if (!row.payload.empty()) {
      fmt::format_to(o, "<text class=\"payload\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
                     (x1 + x2) / 2, y + 10, esc(clip(row.payload, 70)));
      y += payload_h;
    }
    fmt::format_to(o, "</g></g>");
  }
  if (seq.omitted)
    fmt::format_to(o,
                   "<text x=\"4\" y=\"{:.1f}\" class=\"ts\">… {} more rows (see sequence.mmd with "
                   "--from/--to)</text>",
                   y + 26, seq.omitted);
  fmt::format_to(o, "</svg>");
}

/// The "watch for" notes of rebalance i (`<ol class="watch" data-seq="N">`, each note at its
/// time), shown with its sequence view and read by the step control.
void render_watch(Out o, const Timeline& tl, std::size_t i, bool shown,
                  const ConfigValues& config) {
  if (!tl.summary.contains("rebalances") || i >= tl.summary["rebalances"].size()) return;
  const auto notes =
      lesson::watch_notes(tl.summary["rebalances"][i],
                          tl.protocol == "consumer" || tl.protocol.ends_with("/consumer"), &config);
  if (notes.empty()) return;
  fmt::format_to(o, "<ol class=\"watch\" data-variant=\"{}\" data-seq=\"{}\"{}>", esc(tl.protocol),
                 tl.rebalances[i].index, shown ? "" : " style=\"display:none\"");
  for (const auto& n : notes)
    fmt::format_to(o, "<li data-t-us=\"{}\" data-cause=\"{}\"><b>Watch for</b> ({}): {}</li>",
                   n.t_us, esc(n.cause), seconds(n.t_us), lesson::glossed(n.text));
  fmt::format_to(o, "</ol>");
}

/// Per rebalance (the first kMaxSequenceViews), its watch notes, sequence view and critical-path
/// table; the one `chosen` shown.
void render_rebalance_views(Out o, const Timeline& tl, std::size_t chosen) {
  const ConfigValues config = config_values_of(tl.summary);  // the values the why-sentences quote
  for (std::size_t i = 0; i < tl.rebalances.size() && i < kMaxSequenceViews; ++i) {
    render_watch(o, tl, i, i == chosen, config);
    render_sequence(o, tl, tl.rebalances[i], i, i == chosen);
    render_path_table(o, tl, i, i == chosen, config);
  }
}

const char* kStyle = R"CSS(
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:10px 18px;background:#263238;color:#fff}
header h1{margin:0;font-size:18px}header p{margin:2px 0 0;color:#cfd8dc}
main{padding:8px 18px 120px}
h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ddd}
h3{font-size:14px;margin:14px 0 4px}
.controls{position:sticky;top:0;z-index:2;background:#fafafa;padding:6px 0;border-bottom:1px solid #eee}
.controls button{font:inherit;margin-right:4px}
.variant{margin:6px 0 14px}.variant h3{margin:4px 0}
svg.timeline{display:block;background:#fff;border:1px solid #e3e3e3;cursor:grab;user-select:none}
svg.timeline .lbl{text-anchor:end;font-size:12px;fill:#333}
svg.timeline .small{font-size:10px;fill:#666}
svg.timeline .lanebg{fill:#f6f7f9}
svg.timeline .axis text{font-size:10px;fill:#555;text-anchor:middle}
svg.timeline .axis line{stroke:#e6e6e6}
svg.timeline line.inst{stroke-width:1.3;vector-effect:non-scaling-stroke}
svg.timeline .rbl{font-size:10px;fill:#c1121f;font-weight:600}
svg.timeline rect.rb{stroke:rgba(193,18,31,.5);stroke-width:1;vector-effect:non-scaling-stroke;cursor:zoom-in}
svg.timeline .sel{outline:2px solid #000}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:-1px;border-radius:2px}
table{border-collapse:collapse;margin:4px 0 8px;background:#fff}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top;font-size:12px}
th{background:#f0f2f4}
tr.rbrow{cursor:pointer}tr.rbrow:hover{background:#fff3e0}
.narrative li{margin:3px 0}
svg.seq{background:#fff;border:1px solid #e3e3e3;display:block;margin-top:6px}
svg.seq .actor{fill:#eceff1;stroke:#90a4ae}
svg.seq .actor-t{text-anchor:middle;font-size:12px;font-weight:600}
svg.seq .life{stroke:#b0bec5;stroke-dasharray:3 3}
svg.seq .ts{font-size:10px;fill:#666}
svg.seq .msg line{stroke:#1f77b4;stroke-width:1.3}svg.seq .msg path{fill:#1f77b4}
svg.seq .msg.resp line{stroke:#2a9d2a;stroke-dasharray:5 3}svg.seq .msg.resp path{fill:#2a9d2a}
svg.seq .msg.err line{stroke:#d62728}svg.seq .msg.err path{fill:#d62728}
svg.seq .msg text{font-size:10px;text-anchor:middle;fill:#222}
svg.seq .note{fill:#fff8c5;stroke:#d4c36a}svg.seq .note-t{font-size:10px;text-anchor:middle}
svg.timeline,svg.pview{width:100%;height:auto}
svg.pview{display:block;background:#fff;border:1px solid #e3e3e3;margin-top:2px;user-select:none}
svg.pview .lbl{text-anchor:end;font-size:12px;fill:#333}svg.pview .small{font-size:10px;fill:#555}
svg.pview .lanebg{fill:#f6f7f9}
.variant h4{font-size:12px;font-weight:600;margin:8px 0 0;color:#444}
line.cursor{stroke:#000;stroke-width:2;vector-effect:non-scaling-stroke}
.lesson{font-size:15px;max-width:72em;background:#fffbe6;border-left:4px solid #f4a261;padding:8px 12px;margin:10px 0}
abbr.g{text-decoration:underline dotted #888;cursor:help}
.stepper{background:#eef4ff;border:1px solid #c5d5f0;padding:6px;margin:6px 0}
div.variant.docked{position:sticky;top:0;z-index:5;background:#fafafa;box-shadow:0 3px 8px rgba(0,0,0,.25);padding-bottom:4px}
.stepper button{font:inherit;margin-right:4px}
.st-now{font:12px ui-monospace,Menlo,Consolas,monospace;margin-top:4px}.st-watch{color:#6a1b9a;margin-top:2px;font-weight:600}
svg.seq{max-width:100%;height:auto}
svg.seq .rowbg{fill:transparent}svg.seq g.row.cur .rowbg{fill:#ffe08a}
svg.seq .msg.normal line{stroke:#6c757d}svg.seq .msg.normal path{fill:#6c757d}
svg.seq .msg.crit line{stroke:#7b2cbf;stroke-width:3}svg.seq .msg.crit path{fill:#7b2cbf}svg.seq .msg.crit text{font-weight:600}
svg.seq g.row.crit .note{stroke:#7b2cbf;stroke-width:2}
svg.seq .payload{font-size:9px;text-anchor:middle;fill:#555}
.narrative li.cur{background:#ffe08a}
ol.watch{color:#777}ol.watch li.seen{color:#222}ol.watch li.cur{background:#f3e8ff;color:#000}
dl.glossary dt{font-weight:600;margin-top:4px}dl.glossary dd{margin:0 0 0 18px}
#details{position:fixed;left:0;right:0;bottom:0;max-height:110px;overflow:auto;background:#263238;color:#eceff1;
 padding:6px 18px;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;margin:0}
)CSS";

// Zoom and pan on the one shared time axis, click details, the sequence-view chooser. Written
// as plain DOM code with no library; errors are collected for the browser tests.
const char* kScript = R"JS(
(function(){
'use strict';
var W=+document.body.dataset.plotWidth, DUR=+document.body.dataset.durationUs;
var v0=0,v1=W;
function fmtT(us,st){var s=us/1e6;
  // With a tick step: as many decimals as the step needs (zoomed ticks 21.9012, 21.9014 s differ).
  if(st){var d=Math.max(0,Math.min(6,Math.ceil(-Math.log10(st/1e6)-1e-9)));return s.toFixed(d)+' s';}
  return (Math.abs(s)>=100?s.toFixed(0):s>=10?s.toFixed(1):s.toFixed(3).replace(/0+$/,'').replace(/\.$/,''))+' s';}
function step(spanUs){var raw=spanUs/8,p=Math.pow(10,Math.floor(Math.log10(raw))),m=raw/p;return (m<1.5?1:m<3.5?2:m<7.5?5:10)*p;}
function axes(){
  var k=W/(v1-v0),t0=v0/W*DUR,t1=v1/W*DUR,st=step(t1-t0);
  document.querySelectorAll('svg.timeline .axis').forEach(function(g){
    var h=+g.dataset.height,html='';
    for(var t=Math.ceil(t0/st)*st;t<=t1+1e-6;t+=st){var x=(t/DUR*W-v0)*k;
      html+='<line x1="'+x.toFixed(1)+'" x2="'+x.toFixed(1)+'" y1="18" y2="'+h+'"></line><text x="'+x.toFixed(1)+'" y="13">'+fmtT(t,st)+'</text>';}
    g.innerHTML=html;});
}
function apply(){
  var k=W/(v1-v0),tr='translate('+(-v0*k).toFixed(3)+',0) scale('+k.toFixed(6)+',1)';
  document.querySelectorAll('svg.timeline g.z,svg.pview g.z').forEach(function(z){z.setAttribute('transform',tr);});
  // A minimum width is in screen pixels: the zoom must not widen a shape that is really narrower.
  document.querySelectorAll('svg g.z [data-minw]').forEach(function(r){
    r.setAttribute('width',Math.max(+r.dataset.w,+r.dataset.minw/k).toFixed(6));});
  document.querySelectorAll('svg.timeline .pin').forEach(function(p){var x=(+p.dataset.x-v0)*k;
    p.setAttribute('transform','translate('+x.toFixed(2)+',0)');p.style.display=(x<-1||x>W)?'none':'';p.dataset.at=x;});
  // Rebalance labels never print over each other: one that would start within 24 px of the last
  // one shown is hidden (zoom in to see it; its shaded window stays).
  document.querySelectorAll('svg.timeline').forEach(function(svg){
    var ps=Array.prototype.slice.call(svg.querySelectorAll('.pin.rbl')).filter(function(p){return p.style.display!=='none';});
    ps.sort(function(a,b){return +a.dataset.at - +b.dataset.at;});var last=-1e9;
    ps.forEach(function(p){if(+p.dataset.at-last<24)p.style.display='none';else last=+p.dataset.at;});});
  axes();
  var z=document.getElementById('zoomlevel');if(z)z.textContent=fmtT((v1-v0)/W*DUR)+' shown';
}
function zoomAt(px,f){var nw=Math.min(W,Math.max(W/200000,(v1-v0)*f));var c=v0+px/W*(v1-v0);
  v0=c-(c-v0)*nw/(v1-v0);v1=v0+nw;if(v0<0){v1-=v0;v0=0;}if(v1>W){v0-=v1-W;v1=W;}if(v0<0)v0=0;apply();}
function toPlot(svg,clientX){var r=svg.getBoundingClientRect();return (clientX-r.left)*(svg.viewBox.baseVal.width/r.width)-LBL;}
var LBL=+document.body.dataset.labelWidth;
document.querySelectorAll('svg.timeline').forEach(function(svg){
  svg.addEventListener('wheel',function(e){e.preventDefault();zoomAt(Math.max(0,Math.min(W,toPlot(svg,e.clientX))),e.deltaY<0?0.8:1.25);},{passive:false});
  var drag=null;
  svg.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:v0,v1:v1,moved:false};});
  window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();
    var d=(e.clientX-drag.x)*(svg.viewBox.baseVal.width/r.width)*(drag.v1-drag.v0)/W;if(Math.abs(d)>0.5)drag.moved=true;
    var w=drag.v1-drag.v0;v0=Math.max(0,Math.min(W-w,drag.v0-d));v1=v0+w;apply();});
  window.addEventListener('mouseup',function(){setTimeout(function(){drag=null;},0);});
  svg.addEventListener('click',function(e){if(drag&&drag.moved)return;var el=e.target.closest('[data-rebalance],rect,line,polyline');
    if(!el)return;var t=el.querySelector('title');show(t?t.textContent:'');});
  svg.addEventListener('dblclick',function(e){var el=e.target.closest('[data-rebalance]');if(el)focusRebalance(el);});
});
function show(text){var d=document.getElementById('details');if(d)d.textContent=text||'';}
function focusRebalance(el){var s=+el.dataset.startUs,e=+el.dataset.endUs,pad=Math.max((e-s)*0.25,DUR/2000);
  v0=Math.max(0,(s-pad)/DUR*W);v1=Math.min(W,Math.max(v0+W/200000,(e+pad)/DUR*W));apply();
  var sel=document.querySelector('select.seqpick[data-variant="'+el.dataset.variant+'"]');
  if(sel&&sel.querySelector('option[value="'+el.dataset.rebalance+'"]')){sel.value=el.dataset.rebalance;pick(sel);}
  show(el.querySelector('title').textContent);}
function pick(sel){document.querySelectorAll('svg.seq[data-variant="'+sel.dataset.variant+'"],table.critical-path[data-variant="'+sel.dataset.variant+'"],ol.watch[data-variant="'+sel.dataset.variant+'"]').forEach(function(s){
  s.style.display=s.dataset.seq===sel.value?'':'none';});reset(sel.dataset.variant);opened();}
// The rebalance each variant's step control walks, for tests and links: "VARIANT:N ...".
function opened(){document.documentElement.dataset.opened=q('select.seqpick').map(function(s){return s.dataset.variant+':'+s.value;}).join(' ');}
// Opens rebalance N (of VARIANT, else of every variant that has it): report.html#rebalance=N[,VARIANT],
// or the playground's ?rebalance=N through window.rsimOpenRebalance.
function openRebalance(n,v){q('select.seqpick').forEach(function(sel){if(v&&sel.dataset.variant!==v)return;
  if(sel.querySelector('option[value="'+n+'"]')){sel.value=String(n);pick(sel);}});}
window.rsimOpenRebalance=function(n,v){openRebalance(+n,v);return document.documentElement.dataset.opened;};
// The step control: one cursor, moved event by event through the shown rebalance's sequence
// view, drawn on the variant's timeline and partition view, the row and its narrative marked,
// and the "watch for" note of the critical path that applies.
var steps={},stepLink=false;
function q(sel){return Array.prototype.slice.call(document.querySelectorAll(sel));}
function attr(v){return '[data-variant="'+v.replace(/"/g,'\\"')+'"]';}
function shownSeq(v){var s=q('svg.seq'+attr(v)).filter(function(e){return e.style.display!=='none';});return s.length?s[0]:null;}
function reset(v){var st=steps[v];if(st&&st.timer){clearInterval(st.timer);}steps[v]={i:-1,timer:null};
  q('svg.seq'+attr(v)+' g.row.cur,ol.narrative'+attr(v)+' li.cur,ol.watch'+attr(v)+' li').forEach(function(e){e.classList.remove('cur');e.classList.remove('seen');});
  q('svg.timeline'+attr(v)+' line.cursor,svg.pview'+attr(v)+' line.cursor').forEach(function(l){l.style.display='none';});
  var bar=document.querySelector('.stepper'+attr(v));if(bar){bar.querySelector('.st-now').textContent='';bar.querySelector('.st-watch').textContent='';
    var pl=bar.querySelector('.st-play');if(pl)pl.textContent='\u25B6 play';}}
// While a rebalance is walked, its variant's timeline and partition view stay docked at the top
// of the window (when they take at most about half of it), so the cursor is seen on them, on the
// sequence view and on the narrative at once.
function dock(v){var tl=document.querySelector('svg.timeline'+attr(v));var box=tl?tl.closest('div.variant'):null;
  if(!box||box.classList.contains('docked'))return box;q('div.variant.docked').forEach(function(d){d.classList.remove('docked');});
  if(box.getBoundingClientRect().height>window.innerHeight*0.55)return null;box.classList.add('docked');
  document.documentElement.dataset.docked=v;return box;}
// The walk (step control, watch-for notes, sequence view) lifted right under the variant's
// timeline and partition view, so that the cursor is seen on all of them at once; true when
// it moved.
function lift(v){var walk=document.querySelector('div.walk'+attr(v)),tl=document.querySelector('svg.timeline'+attr(v));
  var box=tl?tl.closest('div.variant'):null;if(!walk||!box||box.nextElementSibling===walk)return false;
  box.parentNode.insertBefore(walk,box.nextSibling);document.documentElement.dataset.lifted=v;return true;}
// The step control brought back under the user's pointer after a lift (under the docked views).
function reveal(v){var bar=document.querySelector('.stepper'+attr(v));if(!bar)return;var box=dock(v);
  window.scrollTo(0,bar.getBoundingClientRect().top+window.pageYOffset-(box?box.getBoundingClientRect().height+6:0));}
function go(v,i){var svg=shownSeq(v);if(!svg)return false;var lifted=lift(v);dock(v);if(lifted&&!stepLink)reveal(v);var rows=q('svg.seq'+attr(v)+'[data-seq="'+svg.dataset.seq+'"] g.row');
  if(!rows.length)return false;if(!steps[v])reset(v);var st=steps[v];
  i=Math.max(0,Math.min(rows.length-1,i));var moved=i!==st.i;st.i=i;
  rows.forEach(function(r,k){r.classList.toggle('cur',k===i);});
  var row=rows[i],t=+row.dataset.tUs,x=(t/DUR*W).toFixed(3);
  q('svg.timeline'+attr(v)+' line.cursor,svg.pview'+attr(v)+' line.cursor').forEach(function(l){l.setAttribute('x1',x);l.setAttribute('x2',x);l.style.display='';});
  // The shared axis follows: zoomed on the rebalance when the cursor is outside the view.
  var lo=v0/W*DUR,hi=v1/W*DUR;
  if(t<lo||t>hi||(v1-v0)===W){var a=Math.min(+rows[0].dataset.tUs,+svg.dataset.startUs),b=Math.max(+rows[rows.length-1].dataset.tUs,+svg.dataset.endUs);
    var pad=Math.max((b-a)*0.08,DUR/4000);v0=Math.max(0,(a-pad)/DUR*W);v1=Math.min(W,Math.max(v0+W/200000,(b+pad)/DUR*W));apply();}
  q('ol.narrative'+attr(v)+' li').forEach(function(li){li.classList.toggle('cur',li.dataset.rb===svg.dataset.seq);});
  var note='';q('ol.watch'+attr(v)+'[data-seq="'+svg.dataset.seq+'"] li').forEach(function(li){var seen=+li.dataset.tUs<=t;
    li.classList.toggle('seen',seen);li.classList.remove('cur');if(seen)note=li;});
  if(note)note.classList.add('cur');
  var bar=document.querySelector('.stepper'+attr(v));
  if(bar){bar.querySelector('.st-pos').textContent='R'+svg.dataset.seq+': event '+(i+1)+' of '+rows.length+' at '+fmtT(t);
    bar.querySelector('.st-now').textContent=row.dataset.say+(row.classList.contains('crit')?'  (on the critical path)':'');
    bar.querySelector('.st-watch').textContent=note?note.textContent:'';}
  var d=document.documentElement.dataset;
  if(moved){d.stepLog=(d.stepLog?d.stepLog+',':'')+t;}
  d.cursorUs=t;d.cursorStep=i;d.cursorRows=rows.length;d.cursorSeq=svg.dataset.seq;d.cursorX=x;
  d.cursorOnPath=row.classList.contains('crit')?'1':'0';
  return i<rows.length-1;}
q('.stepper').forEach(function(bar){var v=bar.dataset.variant;
  bar.querySelector('.st-first').onclick=function(){reset(v);go(v,0);};
  bar.querySelector('.st-prev').onclick=function(){go(v,(steps[v]?steps[v].i:0)-1);};
  bar.querySelector('.st-next').onclick=function(){go(v,(steps[v]?steps[v].i:-1)+1);};
  bar.querySelector('.st-play').onclick=function(){if(!steps[v])reset(v);var st=steps[v],pl=this;
    if(st.timer){clearInterval(st.timer);st.timer=null;pl.textContent='\u25B6 play';return;}
    pl.textContent='\u25A0 pause';st.timer=setInterval(function(){if(!go(v,st.i+1)){clearInterval(st.timer);st.timer=null;pl.textContent='\u25B6 play';}},900);};});
document.querySelectorAll('select.seqpick').forEach(function(sel){sel.addEventListener('change',function(){pick(sel);});});
document.querySelectorAll('tr.rbrow').forEach(function(tr){tr.addEventListener('click',function(){
  var el=document.querySelector('svg.timeline[data-variant="'+tr.dataset.variant+'"] [data-rebalance="'+tr.dataset.row+'"]');
  if(el){focusRebalance(el);el.scrollIntoView({block:'center'});}});});
document.getElementById('zoom-in').onclick=function(){zoomAt(W/2,0.5);};
document.getElementById('zoom-out').onclick=function(){zoomAt(W/2,2);};
document.getElementById('zoom-reset').onclick=function(){v0=0;v1=W;apply();};
// A link's parameters, joined by '&': #zoom=..&rebalance=..&step=.. in any order.
function hashParam(name){var m=new RegExp('(?:^#|&)'+name+'=([^&]*)').exec(location.hash);return m?m[0].replace(/^[#&]/,''):'';}
// A link may open the page zoomed: report.html#zoom=FROM_US,TO_US (virtual microseconds).
var zm=/^zoom=(\d+),(\d+)$/.exec(hashParam('zoom'));
if(zm&&DUR>0&&+zm[2]>+zm[1]){v0=Math.max(0,+zm[1]/DUR*W);v1=Math.min(W,Math.max(v0+W/200000,+zm[2]/DUR*W));}
apply();
opened();
// A link may open another rebalance: report.html#rebalance=N or #rebalance=N,VARIANT.
var rm=/^rebalance=(\d+)(?:,(.+))?$/.exec(hashParam('rebalance'));
if(rm)openRebalance(+rm[1],rm[2]?decodeURIComponent(rm[2]):'');
// A link may open the page mid-step: report.html#step=N (the first variant) or #step=N,VARIANT:
// N events of the shown rebalance walked, as N presses of "step".
var sm=/^step=(\d+)(?:,(.+))?$/.exec(hashParam('step'));
if(sm){var bar0=sm[2]?document.querySelector('.stepper'+attr(decodeURIComponent(sm[2]))):document.querySelector('.stepper');
  if(bar0){var sv=bar0.dataset.variant;stepLink=true;for(var n=0;n<+sm[1];n++){if(!go(sv,(steps[sv]?steps[sv].i:-1)+1))break;}stepLink=false;}}
document.documentElement.dataset.lanes=document.querySelectorAll('[data-consumer]').length;
document.documentElement.dataset.rebalances=document.querySelectorAll('[data-rebalance]').length;
document.documentElement.dataset.ready='1';
})();
)JS";

}  // namespace html

using namespace html;

bool variant_less(const std::string& a, const std::string& b) {
  // Settings variants (<variant>/<protocol>): by variant name, then by protocol.
  const auto slash_a = a.rfind('/'), slash_b = b.rfind('/');
  if (slash_a != std::string::npos || slash_b != std::string::npos) {
    const std::string va = slash_a == std::string::npos ? "" : a.substr(0, slash_a);
    const std::string vb = slash_b == std::string::npos ? "" : b.substr(0, slash_b);
    if (va != vb) return va < vb;
    return variant_less(a.substr(slash_a == std::string::npos ? 0 : slash_a + 1),
                        b.substr(slash_b == std::string::npos ? 0 : slash_b + 1));
  }
  static const std::vector<std::string> order = {"classic-eager", "classic-cooperative", "consumer",
                                                 "share"};
  const auto ia = std::find(order.begin(), order.end(), a) - order.begin();
  const auto ib = std::find(order.begin(), order.end(), b) - order.begin();
  return ia != ib ? ia < ib : a < b;
}

namespace {

// The page up to its first section: <head>, the title, the run, the lesson.
void render_page_head(Out o, const std::vector<Timeline>& variants, const Scale& sc) {
  const std::string scenario = variants.empty() ? std::string() : variants.front().scenario;
  fmt::format_to(
      o,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<title>rebalance-sim: {}</title><style>{}</style>"
      "<script>window.__errors=[];window.addEventListener('error',function(e){{window.__errors."
      "push(String(e.message));"
      "document.documentElement.dataset.errors=window.__errors.join(' | ');}});</script></head>\n",
      esc(scenario), kStyle);
  fmt::format_to(o, "<body data-duration-us=\"{}\" data-plot-width=\"{}\" data-label-width=\"{}\">",
                 sc.duration_us, kPlotWidth, kLabelWidth);
  std::string description;
  if (!variants.empty() && variants.front().summary.contains("produced_by")) {
    const auto& pb = variants.front().summary["produced_by"];
    description =
        fmt::format("{} · seed {} · {} {}", pb.value("scenario_file", std::string()),
                    variants.front().summary.value("seed", 0), pb.value("simulator", std::string()),
                    pb.value("version", std::string()));
  }
  fmt::format_to(o,
                 "<header><h1>{}</h1><p>{} · {} variant{} on one time axis ({} of virtual "
                 "time)</p></header><main>\n",
                 esc(scenario), esc(description), variants.size(), variants.size() == 1 ? "" : "s",
                 seconds(sc.duration_us));
  // The lesson: the scenario's own description (summary.json's produced_by.scenario_description).
  if (!variants.empty() && variants.front().summary.contains("produced_by") &&
      variants.front().summary["produced_by"].is_object()) {
    const std::string lesson_text =
        variants.front().summary["produced_by"].value("scenario_description", std::string());
    if (!lesson_text.empty())
      fmt::format_to(o, "<p class=\"lesson\" id=\"description\">{}</p>\n",
                     lesson::glossed(lesson_text));
  }
}

// The verdict of each variant and its decisive moments.
void render_verdicts(Out o, const std::vector<Timeline>& variants) {
  // The verdict of each variant first: what the numbers say, in words (the steady window's).
  fmt::format_to(o, "<h2>Verdict</h2><div class=\"verdicts\">");
  for (const auto& v : variants) {
    if (!v.summary.is_object() || !v.summary.contains("metrics")) continue;
    fmt::format_to(
        o, "<p class=\"verdict\" data-variant=\"{}\"><b>{}</b>: {}<br><small>{}</small></p>",
        esc(v.protocol), esc(v.protocol), esc(v.summary.value("verdict", std::string())),
        esc(headline_of(v.summary)));
    const auto moments = moment_lines(v.summary);
    if (!moments.empty()) {
      fmt::format_to(o, "<ul class=\"moments\" data-variant=\"{}\">", esc(v.protocol));
      for (std::size_t i = 0; i < moments.size() && i < 50; ++i)
        fmt::format_to(o, "<li>{}</li>", esc(moments[i]));
      if (moments.size() > 50)
        fmt::format_to(o, "<li>… and {} more (summary.json's moments)</li>", moments.size() - 50);
      fmt::format_to(o, "</ul>");
    }
  }
  fmt::format_to(o, "</div>\n");
}

// The timelines' zoom controls and legends.
void render_legend(Out o, bool fleets) {
  // The variants side by side.
  fmt::format_to(o,
                 "<h2>Timelines</h2><div class=\"controls\"><button id=\"zoom-in\">zoom "
                 "in</button><button id=\"zoom-out\">zoom out</button>"
                 "<button id=\"zoom-reset\">reset</button> <span id=\"zoomlevel\"></span> · wheel "
                 "to zoom, drag to pan, "
                 "click for details, double-click a shaded rebalance to zoom to it</div>\n");
  fmt::format_to(o, "<div class=\"legend\">");
  for (const char* k :
       {"revoking", "waiting", "processing", "callback", "stalled", "paused", "crashed"})
    fmt::format_to(
        o, "<span><i style=\"background:{}\"></i>{}</span>", span_colour(k),
        lesson::abbr(k, std::string_view(k) == "waiting" ? "waiting for assignment" : k));
  for (const char* k : {"start", "stop", "crash", "heartbeat", "join", "sync", "epoch", "fenced"})
    fmt::format_to(o, "<span><i style=\"background:{};width:3px\"></i>{}</span>", instant_colour(k),
                   std::string_view(k) == "heartbeat" ? "heartbeat with news"
                   : std::string_view(k) == "join"    ? "JoinGroup"
                   : std::string_view(k) == "sync"    ? "SyncGroup"
                                                      : k);
  fmt::format_to(o,
                 "<span><i style=\"background:rgba(230,57,70,0.25)\"></i>rebalance window</span>");
  for (const char* k : {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"})
    fmt::format_to(o, "<span><i style=\"background:{}\"></i>{}</span>", state_colour(k),
                   lesson::abbr(k));
  fmt::format_to(o, "<span>KIP-848 (consumer protocol):</span>");
  for (const char* k : {"empty", "assigning", "reconciling", "stable"})
    fmt::format_to(o, "<span><i style=\"background:{}\"></i>{}</span>", state_colour(k),
                   lesson::abbr(k));
  fmt::format_to(o,
                 "<span><i style=\"background:#7b2cbf;height:3px\"></i>{}</span>"
                 "<span><i style=\"background:repeating-linear-gradient(90deg,#8b0000 0 "
                 "4px,transparent 4px 7px);height:3px\"></i>decisive moment</span>"
                 "<span><i style=\"background:#111;height:2px\"></i>total lag</span>"
                 "<span><i style=\"background:#000;width:2px\"></i>step cursor</span>"
                 "<span><i style=\"background:repeating-linear-gradient(45deg,#d62728 0 1.5px,#fff "
                 "1.5px 4px)\"></i>partition not processed</span>"
                 "<span><i style=\"background:{}\"></i><i style=\"background:{}\"></i>partition "
                 "view: one colour per owner</span>",
                 lesson::abbr("critical path"), lesson::owner_colour(0), lesson::owner_colour(1));
  if (fleets)
    fmt::format_to(o,
                   "<span><i style=\"background:#a8c5e6\"></i>ready pods of a deployment</span>"
                   "<span><i style=\"background:#2a9d2a;width:3px\"></i>scale up</span>"
                   "<span><i style=\"background:#e76f00;width:3px\"></i>scale down (autoscaler "
                   "decision)</span>");
  fmt::format_to(
      o,
      "<span>ownership bars: one colour per partition (one bar per consumer when there are "
      "many)</span></div>\n"
      "<div class=\"legend\">Sequence view: <span><i "
      "style=\"background:#1f77b4;height:2px\"></i>request</span>"
      "<span><i style=\"background:#2a9d2a;height:2px\"></i>response</span>"
      "<span><i style=\"background:#6c757d;height:2px\"></i>normal round trip ({})</span>"
      "<span><i style=\"background:#d62728;height:2px\"></i>error response</span>"
      "<span><i style=\"background:#7b2cbf;height:3px\"></i>on the critical path</span>"
      "<span><i style=\"background:#fff8c5;border:1px solid #d4c36a\"></i>note (state, callback, "
      "ownership)</span>"
      "<span><i style=\"background:#ffe08a\"></i>step cursor</span></div>\n",
      lesson::abbr("MEMBER_ID_REQUIRED"));
}

// The variants compared, one column each.
void render_summary_table(Out o, const std::vector<Timeline>& variants) {
  // The variants compared.
  // Each cell: the steady window's value (start-up excluded), the whole run's after it when it
  // differs.
  fmt::format_to(
      o,
      "<h2>Summary</h2><p>Steady window (from the moment the consumers started first hold a stable "
      "assignment); the whole run's value in parentheses where it differs.</p>"
      "<table class=\"compare\"><tr><th>metric</th>");
  for (const auto& v : variants) fmt::format_to(o, "<th>{}</th>", esc(v.protocol));
  fmt::format_to(o, "</tr><tr><td>{}</td>", lesson::abbr("steady from"));
  for (const auto& v : variants) {
    const auto st = v.summary.find("steady");
    fmt::format_to(o, "<td>{}</td>",
                   st == v.summary.end() || !st->is_object() ? std::string("–")
                   : st->at("from_us").is_null()             ? std::string("never")
                                                 : seconds(st->at("from_us").get<std::int64_t>()));
  }
  fmt::format_to(o, "</tr>");
  for (const char* key :
       {"rebalance_count", "max_rebalance_ms", "total_rebalance_ms", "stop_the_world_ms",
        "max_stop_the_world_ms", "not_processed_partition_ms", "max_not_processed_ms",
        "unavailable_partition_ms", "revocations", "duplicates", "lost", "max_lag", "max_group_lag",
        "records_processed", "overlap_partition_ms", "fatal_errors"}) {
    fmt::format_to(o, "<tr><td>{}</td>", lesson::abbr(key));
    for (const auto& v : variants) {
      const std::string whole = metric(v.summary, key);
      const auto st = v.summary.find("steady");
      if (st == v.summary.end() || !st->is_object() || !st->at("metrics").is_object() ||
          std::string_view(key) == "lost") {
        fmt::format_to(o, "<td>{}</td>", whole);
        continue;
      }
      const std::string steady = metric(json{{"metrics", st->at("metrics")}}, key);
      fmt::format_to(o, "<td>{}{}</td>", steady,
                     steady == whole ? std::string() : " <small>(" + whole + ")</small>");
    }
    fmt::format_to(o, "</tr>");
  }
  bool scaled = false;
  for (const auto& v : variants) scaled = scaled || v.summary.contains("scaling");
  if (scaled)
    for (const char* key : {"scaling_actions", "flaps"}) {
      fmt::format_to(o, "<tr><td>{}</td>", lesson::abbr(key));
      for (const auto& v : variants) fmt::format_to(o, "<td>{}</td>", metric(v.summary, key));
      fmt::format_to(o, "</tr>");
    }
  fmt::format_to(o, "<tr><td>{}</td>", lesson::abbr("final_assignment"));
  for (const auto& v : variants) {
    if (!v.summary.contains("metrics") || !v.summary["metrics"].contains("final_assignment")) {
      fmt::format_to(o, "<td>–</td>");
      continue;
    }
    const auto& fa = v.summary["metrics"]["final_assignment"];
    // A large group's final assignment is collapsed: its size and spread first.
    if (fa.is_object() && fa.size() > lesson::kAggregateAbove) {
      std::size_t least = SIZE_MAX, most = 0, total = 0;
      for (const auto& [c, parts] : fa.items()) {
        const std::size_t n = parts.is_array() ? parts.size() : 0;
        least = std::min(least, n);
        most = std::max(most, n);
        total += n;
      }
      fmt::format_to(o,
                     "<td><details class=\"final\"><summary>{} consumers own {} partitions ({} to "
                     "{} each)</summary>{}</details></td>",
                     fa.size(), total, least, most, owned_summary(fa));
    } else {
      fmt::format_to(o, "<td>{}</td>", owned_summary(fa));
    }
  }
  fmt::format_to(o, "</tr></table>\n");
}

// One variant's details: its rebalances, scaling, narrative and the messages of a rebalance.
void render_details(Out o, const Timeline& v) {
  fmt::format_to(o, "<section class=\"details\" data-variant=\"{}\"><h2>{}</h2>", esc(v.protocol),
                 esc(v.protocol));
  fmt::format_to(
      o,
      "<h3>Rebalances</h3><table><tr><th>#</th><th>group</th><th>trigger</th><th>{}</th><th>start</"
      "th><th>end</th>"
      "<th>duration (ms)</th><th>revoked</th><th>assigned</th></tr>",
      v.protocol == "consumer" || v.protocol.ends_with("/consumer") ? "epoch" : "generation");
  for (const auto& r : v.rebalances)
    fmt::format_to(o,
                   "<tr class=\"rbrow\" data-variant=\"{}\" "
                   "data-row=\"{}\"><td>R{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</"
                   "td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                   esc(v.protocol), r.index, r.index, esc(r.group), esc(r.trigger),
                   r.completed ? "" : " (not completed)", esc(r.epoch_label), seconds(r.start_us),
                   seconds(r.end_us), ms(r.end_us - r.start_us), esc(partitions_of(r.revoked)),
                   esc(partitions_of(r.assigned)));
  fmt::format_to(o, "</table>");
  // Fleets: each scaling decision with its reason, and what it caused (summary.json's `scaling`).
  if (v.summary.contains("scaling") && v.summary["scaling"].is_array() &&
      !v.summary["scaling"].empty()) {
    fmt::format_to(o,
                   "<h3>Scaling</h3><table "
                   "class=\"scaling\"><tr><th>at</th><th>deployment</th><th>replicas</th>"
                   "<th>reason</th><th>rebalances</th><th>unavailable partition-ms</th><th>records "
                   "redelivered</th>"
                   "<th>backlog drained after</th></tr>");
    for (const auto& a : v.summary["scaling"]) {
      const auto drain = a.find("drain_ms");
      fmt::format_to(o,
                     "<tr><td>{}</td><td>{}</td><td>{} &rarr; "
                     "{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                     seconds(static_cast<std::int64_t>(a.value("at_ms", 0.0) * 1000)),
                     esc(a.value("deployment", "")), a.value("from", 0), a.value("to", 0),
                     esc(a.value("reason", "")), a.value("rebalances", 0),
                     a.value("unavailable_partition_ms", 0.0), a.value("records_redelivered", 0),
                     drain != a.end() && drain->is_number()
                         ? seconds(static_cast<std::int64_t>(drain->get<double>() * 1000))
                         : std::string("&ndash;"));
    }
    fmt::format_to(o, "</table>");
  }
  fmt::format_to(o, "<h3>What happened</h3><ol class=\"narrative\" data-variant=\"{}\">",
                 esc(v.protocol));
  {
    const auto story = narrate(v);
    for (std::size_t i = 0; i < story.size(); ++i) {
      // Short sentences with readable times; a very long one (a join storm's member list) cut.
      fmt::format_to(o, "<li data-rb=\"{}\">",
                     i < v.rebalances.size() ? v.rebalances[i].index : static_cast<int>(i + 1));
      const auto sentences = lesson::short_sentences(story[i]);
      for (std::size_t k = 0; k < sentences.size() && k < 12; ++k)
        fmt::format_to(o, "<span class=\"s\">{}</span> ", lesson::glossed(clip(sentences[k], 400)));
      if (sentences.size() > 12)
        fmt::format_to(o, "<span class=\"s\">… {} more sentences (explain prints them all).</span>",
                       sentences.size() - 12);
      fmt::format_to(o, "</li>");
    }
  }
  fmt::format_to(o, "</ol>");
  if (!v.rebalances.empty()) {
    // Shown first: the lesson's rebalance, else the longest after start-up (a link's
    // #rebalance=N picks another).
    const std::size_t chosen = lesson::opened_rebalance(v, kMaxSequenceViews);
    fmt::format_to(o,
                   "<div class=\"walk\" data-variant=\"{0}\"><h3>Messages of a "
                   "rebalance</h3><label>rebalance <select class=\"seqpick\" data-variant=\"{0}\">",
                   esc(v.protocol));  // lifted by the step control
    for (std::size_t i = 0; i < v.rebalances.size() && i < kMaxSequenceViews; ++i)
      fmt::format_to(o, "<option value=\"{}\"{}>R{}: {} ({} ms)</option>", v.rebalances[i].index,
                     i == chosen ? " selected" : "", v.rebalances[i].index,
                     esc(v.rebalances[i].trigger),
                     ms(v.rebalances[i].end_us - v.rebalances[i].start_us));
    fmt::format_to(o, "</select></label>{}",
                   v.rebalances.size() > kMaxSequenceViews
                       ? fmt::format(" (the first {} rebalances)", kMaxSequenceViews)
                       : std::string());
    // The step control: one cursor over the timeline, partition view, sequence view and narrative.
    fmt::format_to(o,
                   "<div class=\"stepper\" data-variant=\"{}\"><button class=\"st-first\" "
                   "title=\"back to the start\">&#x25C0;&#x25C0;</button>"
                   "<button class=\"st-prev\" title=\"previous event\">&#x25C0; "
                   "step</button><button class=\"st-play\">&#x25B6; play</button>"
                   "<button class=\"st-next\" title=\"next event\">step &#x25B6;</button> <span "
                   "class=\"st-pos\">press step or play to walk "
                   "this rebalance event by event</span><div class=\"st-now\"></div><div "
                   "class=\"st-watch\"></div></div>",
                   esc(v.protocol));
    render_rebalance_views(o, v, chosen);
    fmt::format_to(o, "</div>");  // the walk
  }
  fmt::format_to(o, "</section>\n");
}

}  // namespace

std::string render_html_report(const std::vector<Timeline>& variants,
                               const std::vector<ShareView>& share) {
  std::string html;
  html.reserve(1 << 20);
  Out o(html);
  Scale sc;
  std::int64_t max_lag = 0;
  int max_ready = 0;  // the top of every deployment band's scale
  bool fleets = false;
  for (const auto& v : variants) {
    sc.duration_us = std::max(sc.duration_us, v.duration_us);
    for (const auto& p : v.total_lag) max_lag = std::max(max_lag, p.lag);
    for (const auto& d : v.deployments) max_ready = std::max(max_ready, d.max_ready);
    fleets = fleets || !v.deployments.empty();
  }
  render_page_head(o, variants, sc);

  render_verdicts(o, variants);

  render_legend(o, fleets);
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const auto& v = variants[vi];
    fmt::format_to(o, "<div class=\"variant\"><h3>{} — {} rebalance{}</h3>", esc(v.protocol),
                   v.rebalances.size(), v.rebalances.size() == 1 ? "" : "s");
    const auto rows = lesson::partition_rows(v);
    // A large group: the aggregated views first (members per state, partitions not processed).
    if (v.lanes.size() > lesson::kAggregateAbove) {
      fmt::format_to(o, "<h4>{} consumers, aggregated (their lanes below)</h4>", v.lanes.size());
      lesson::render_aggregate_view(o, v, rows, sc, fmt::format("clip-{}-agg", vi));
    }
    render_timeline(o, v, sc, max_lag, max_ready, fmt::format("clip-{}", vi));
    if (!rows.empty()) {
      fmt::format_to(
          o, "<h4>Partitions: who processes each one over time (hatched: not processed)</h4>");
      lesson::render_partition_view(o, v, rows, sc, fmt::format("clip-{}-p", vi));
    }
    fmt::format_to(o, "</div>\n");
  }

  html += render_share_section(share);  // share groups' in-flight windows and record states

  render_summary_table(o, variants);

  for (const auto& v : variants) render_details(o, v);
  // Fleets only (other pages keep their bytes): what the browser laid out of the deployment
  // bands, for the browser tests (ready-pod steps drawn with an area, decision markers).
  const char* fleet_script =
      fleets ? "<script>(function(){var n=0;document.querySelectorAll('svg.timeline g.fleet "
               "rect.replicas').forEach(function(e){"
               "var b=e.getBoundingClientRect();if(b.width>0&&b.height>0)n++;});var "
               "d=document.documentElement.dataset;"
               "d.replicaSteps=n;d.scalingMarkers=document.querySelectorAll('svg.timeline g.fleet "
               "[data-scaling]').length;})();</script>"
             : "";
  // The glossary behind every tooltip of the page.
  fmt::format_to(o, "<h2>Glossary</h2><dl class=\"glossary\">");
  for (const auto term : lesson::glossary_terms())
    fmt::format_to(o, "<dt>{}</dt><dd>{}</dd>", esc(term), esc(lesson::glossary(term)));
  fmt::format_to(o, "</dl>\n");
  fmt::format_to(o,
                 "</main><pre id=\"details\">Click a shape for its "
                 "details.</pre><script>{}</script>{}</body></html>\n",
                 kScript, fleet_script);
  return html;
}

}  // namespace reports
