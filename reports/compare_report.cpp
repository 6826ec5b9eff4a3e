#include "reports/compare_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "reports/html_parts.hpp"

namespace reports {

namespace {

using namespace html;

constexpr double kConsumerGap = 8;  // between one consumer's lanes and the next consumer's
constexpr double kPinRow = 14;      // rebalance labels above the lanes
constexpr std::size_t kStripeBudget = 6000;

const char* kSimColour = "#1f77b4";
const char* kRealColour = "#222";
const char* kWithinColour = "#2a9d2a";
const char* kBeyondColour = "#d62728";
const char* kOnlyColour = "#c2185b";

std::string dev_ms(std::int64_t us) {
  return fmt::format("{:+.0f}", static_cast<double>(us) / 1000.0);
}
std::string at_ms(std::optional<std::int64_t> us) {
  return us ? fmt::format("{:.0f}", static_cast<double>(*us) / 1000.0) : std::string("-");
}

/// The real runs' partitions indexed like the simulator's (the same partition, the same colour):
/// every timeline of the variant gets the simulator's list with the others' extra names after it.
struct Aligned {
  Timeline sim;
  std::vector<Timeline> real;
};

Aligned align(const SideBySideVariant& v) {
  Aligned a{v.sim, v.real};
  std::vector<std::string> names = v.sim.partitions;
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < names.size(); ++i) index[names[i]] = static_cast<int>(i);
  for (const auto& r : v.real)
    for (const auto& p : r.partitions)
      if (index.emplace(p, static_cast<int>(names.size())).second) names.push_back(p);
  a.sim.partitions = names;
  for (auto& r : a.real) {
    for (auto& lane : r.lanes)
      for (auto& own : lane.owned)
        for (int& p : own.partitions) p = index.at(r.partitions[static_cast<std::size_t>(p)]);
    r.partitions = names;
  }
  return a;
}

const Lane* lane_of(const Timeline& t, const std::string& consumer) {
  for (const auto& l : t.lanes)
    if (l.consumer == consumer) return &l;
  return nullptr;
}

std::string run_name(std::size_t k) {
  return fmt::format("real {}", k + 1);
}

void marker(Out o, double x, double y, double h, const char* cls, const char* colour,
            std::string_view title, std::string_view extra = "") {
  fmt::format_to(o,
                 "<line class=\"cbm {}\" x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                 "stroke=\"{}\"{}><title>{}</title></line>",
                 cls, x, x, y, y + h, colour, extra, esc(title));
}

void render_pair_timeline(Out o, const SideBySideVariant& v, const Scale& sc,
                          const std::string& clip_id) {
  const Aligned a = align(v);
  const std::size_t runs = a.real.size();
  std::vector<std::string> consumers;
  for (const auto& l : a.sim.lanes) consumers.push_back(l.consumer);
  for (const auto& r : a.real)
    for (const auto& l : r.lanes)
      if (std::find(consumers.begin(), consumers.end(), l.consumer) == consumers.end())
        consumers.push_back(l.consumer);
  std::size_t stripes = 0;
  const auto count_stripes = [&stripes](const Timeline& t) {
    for (const auto& l : t.lanes)
      for (const auto& own : l.owned) stripes += own.partitions.size();
  };
  count_stripes(a.sim);
  for (const auto& r : a.real) count_stripes(r);
  const bool per_partition = stripes <= kStripeBudget;
  const std::size_t lanes = consumers.size() * (1 + runs);
  const double lane_h = lanes <= 24 ? 28 : lanes <= 80 ? 16 : 8;
  const double top = kAxisHeight + 4 + kPinRow;
  // y of each consumer's lanes: [consumer][0] the simulator's, [consumer][k + 1] real run k's
  std::vector<std::vector<double>> y(consumers.size(), std::vector<double>(1 + runs));
  double cursor = top;
  for (std::size_t c = 0; c < consumers.size(); ++c) {
    for (std::size_t s = 0; s <= runs; ++s, cursor += lane_h) y[c][s] = cursor;
    cursor += kConsumerGap;
  }
  const double height = cursor + 4;
  const double width = kLabelWidth + kPlotWidth + 10;
  fmt::format_to(o,
                 "<svg class=\"timeline pair\" data-variant=\"{}\" data-consumers=\"{}\" "
                 "data-runs=\"{}\" width=\"{}\" height=\"{:.0f}\" "
                 "viewBox=\"0 0 {} {:.0f}\" xmlns=\"http://www.w3.org/2000/svg\">",
                 esc(v.variant), consumers.size(), runs, width, height, width, height);
  // The simulator's rebalance windows, behind every lane (the real runs have no summary.json).
  plot_preamble(o, clip_id, height);
  for (const auto& r : a.sim.rebalances)
    rect(o, sc.x(r.start_us), top, sc.w(r.start_us, r.end_us, 1.0), cursor - top - kConsumerGap,
         "rgba(230,57,70,0.10)",
         fmt::format("the simulator's rebalance {} of {}: {} ({}), {} to {}", r.index, r.group,
                     r.trigger, r.epoch_label, seconds(r.start_us), seconds(r.end_us)),
         fmt::format(" class=\"rb\" data-rebalance=\"{}\" data-variant=\"{}\" data-start-us=\"{}\" "
                     "data-end-us=\"{}\"",
                     r.index, esc(v.variant), r.start_us, r.end_us));
  fmt::format_to(o, "</g></g>");
  for (const auto& r : a.sim.rebalances)
    fmt::format_to(o,
                   "<text class=\"pin rbl\" data-x=\"{:.2f}\" x=\"2\" y=\"{:.1f}\" "
                   "transform=\"translate({:.2f},0)\">R{}</text>",
                   sc.x(r.start_us), top - 3, sc.x(r.start_us), r.index);
  fmt::format_to(o, "</g>");
  // The lanes: per consumer the simulator's, then each real run's.
  for (std::size_t c = 0; c < consumers.size(); ++c) {
    for (std::size_t s = 0; s <= runs; ++s) {
      const Timeline& t = s == 0 ? a.sim : a.real[s - 1];
      const Lane* found = lane_of(t, consumers[c]);
      const Lane empty{consumers[c], {}, {}, {}, {}};
      const std::string label =
          fmt::format("{} · {}", consumers[c], s == 0 ? std::string("sim") : run_name(s - 1));
      fmt::format_to(o, "<g class=\"side {}\" data-side=\"{}\">", s == 0 ? "sim" : "real",
                     s == 0 ? std::string("sim") : fmt::format("real-{}", s));
      render_lane(o, t, found != nullptr ? *found : empty, sc, y[c][s], lane_h - 1, per_partition,
                  clip_id, label);
      fmt::format_to(o, "</g>");
    }
  }
  // The callbacks: markers, links and deviation labels, over the lanes.
  const auto index_of = [&](const std::string& consumer) {
    return static_cast<std::size_t>(std::find(consumers.begin(), consumers.end(), consumer) -
                                    consumers.begin());
  };
  std::string pins;
  Out po(pins);
  fmt::format_to(o,
                 "<g class=\"matches\" transform=\"translate({},0)\"><g clip-path=\"url(#{})\"><g "
                 "class=\"z\">",
                 kLabelWidth, clip_id);
  const double mh = lane_h - 1;
  for (const auto& m : v.callbacks) {
    const std::size_t c = index_of(m.consumer);
    if (c >= consumers.size()) continue;
    const std::string what = fmt::format("{} {}{}", m.consumer, m.callback, m.partitions);
    if (m.sim_us) {
      marker(o, sc.x(*m.sim_us), y[c][0], mh, "sim", kSimColour,
             fmt::format("{} in the simulator at {}", what, seconds(*m.sim_us)));
    }
    for (std::size_t k = 0; k < runs && k < m.real_us.size(); ++k) {
      const auto& r = m.real_us[k];
      if (r && m.sim_us) {
        const std::int64_t dev = *r - *m.sim_us;
        const bool beyond = std::llabs(dev) > v.tolerance_ms * 1000;
        const std::string title =
            fmt::format("{}: {} at {}, the simulator at {}: deviation {} ms ({} ±{} ms)", what,
                        run_name(k), seconds(*r), seconds(*m.sim_us), dev_ms(dev),
                        beyond ? "beyond" : "within", v.tolerance_ms);
        const double xs = sc.x(*m.sim_us), xr = sc.x(*r);
        fmt::format_to(o,
                       "<line class=\"link {}\" data-deviation=\"{}\" data-run=\"{}\" "
                       "data-dev-us=\"{}\" x1=\"{:.2f}\" x2=\"{:.2f}\" "
                       "y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"><title>{}</title></line>",
                       beyond ? "out" : "in", beyond ? "out" : "in", k + 1, dev, xs, xr,
                       y[c][0] + mh / 2, y[c][k + 1] + mh / 2,
                       beyond ? kBeyondColour : kWithinColour, esc(title));
        marker(o, xr, y[c][k + 1], mh, beyond ? "real out" : "real in",
               beyond ? kBeyondColour : kRealColour, title);
        if (beyond)
          fmt::format_to(po,
                         "<text class=\"pin devl\" data-x=\"{:.2f}\" x=\"3\" y=\"{:.1f}\" "
                         "transform=\"translate({:.2f},0)\">{} ms</text>",
                         xr, y[c][k + 1] + 9, xr, dev_ms(dev));
      } else if (r) {
        marker(
            o, sc.x(*r), y[c][k + 1], mh, "only", kOnlyColour,
            fmt::format(
                "{} at {} only in {} (no such callback of the simulator within the match window)",
                what, seconds(*r), run_name(k)),
            fmt::format(" data-only=\"real\" data-run=\"{}\"", k + 1));
      } else if (m.sim_us) {
        marker(o, sc.x(*m.sim_us), y[c][0], mh, "only", kOnlyColour,
               fmt::format("{} of the simulator at {}: not in {}", what, seconds(*m.sim_us),
                           run_name(k)),
               fmt::format(" data-only=\"sim\" data-run=\"{}\"", k + 1));
      }
    }
  }
  fmt::format_to(o, "</g></g>{}</g>", pins);
  fmt::format_to(o, "</svg>");
}

void render_table(Out o, const SideBySideVariant& v) {
  const std::size_t runs = v.real.size();
  fmt::format_to(o,
                 "<table class=\"cmp\" "
                 "data-variant=\"{}\"><tr><th>CONSUMER</th><th>CALLBACK</th><th>PARTITIONS</"
                 "th><th>SIM-MS</th>",
                 esc(v.variant));
  for (std::size_t k = 0; k < runs; ++k)
    fmt::format_to(o, "<th>REAL{}-MS</th><th>DEV-MS</th>", k + 1);
  fmt::format_to(o, "<th>RESULT</th></tr>");
  for (const auto& m : v.callbacks) {
    const std::string result = !m.race.empty() ? m.race
                               : m.within      ? "ok"
                               : !m.sim_us     ? "only in real"
                                               : "DIFFERS";
    fmt::format_to(o, "<tr class=\"cbrow {}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                   !m.race.empty() ? "ok race"
                   : m.within      ? "ok"
                   : !m.sim_us     ? "only"
                                   : "differs",
                   esc(m.consumer), esc(m.callback), esc(m.partitions), at_ms(m.sim_us));
    for (std::size_t k = 0; k < runs; ++k) {
      const auto r = k < m.real_us.size() ? m.real_us[k] : std::nullopt;
      if (r && m.sim_us) {
        const std::int64_t dev = *r - *m.sim_us;
        const bool beyond = std::llabs(dev) > v.tolerance_ms * 1000;
        fmt::format_to(o, "<td>{}</td><td class=\"{}\">{}</td>", at_ms(r), beyond ? "out" : "in",
                       dev_ms(dev));
      } else {
        fmt::format_to(o, "<td{}>{}</td><td>-</td>", !r ? " class=\"missing\"" : "", at_ms(r));
      }
    }
    fmt::format_to(o, "<td>{}</td></tr>", result);
  }
  fmt::format_to(o, "</table><ul class=\"cmpsum\">");
  for (std::size_t i = 0; i < v.summary.size(); ++i)
    fmt::format_to(o, "<li{}>{}</li>",
                   i + 1 == v.summary.size()
                       ? (v.passed ? " class=\"verdict ok\"" : " class=\"verdict differs\"")
                       : "",
                   esc(v.summary[i]));
  fmt::format_to(o,
                 "</ul><details><summary>the table as <code>compare</code> prints it</summary><pre "
                 "class=\"cmptext\">{}</pre></details>",
                 esc(v.table_text));
}

const char* kPairStyle = R"CSS(
svg.pair line.cbm{stroke-width:3;vector-effect:non-scaling-stroke}
svg.pair line.cbm.only{stroke-dasharray:3 2;stroke-width:3}
svg.pair line.link{stroke-width:1.2;vector-effect:non-scaling-stroke;opacity:.8}
svg.pair line.link.out{stroke-width:2.4;opacity:1}
svg.pair .devl{font-size:9px;fill:#b00020;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg.pair g.side.real .lanebg{fill:#eef1f5}
table.cmp td.out{background:#fde2e2;color:#b00020;font-weight:600}
table.cmp td.missing{background:#fce4ec}
table.cmp tr.only td{background:#fce4ec}
ul.cmpsum{margin:4px 0;padding-left:18px}ul.cmpsum li{font-size:12px}
li.verdict{font-weight:600}li.verdict.ok{color:#2a7d2a}li.verdict.differs{color:#b00020}
pre.cmptext{font:11px/1.3 ui-monospace,Menlo,Consolas,monospace;background:#fff;border:1px solid #ddd;padding:6px;overflow:auto}
)CSS";

// The counts the browser test reads back from the DOM after the page's script ran.
const char* kPairScript = R"JS(
(function(){
'use strict';
var d=document.documentElement.dataset;
d.deviationsOut=document.querySelectorAll('line.link[data-deviation="out"]').length;
d.deviationsIn=document.querySelectorAll('line.link[data-deviation="in"]').length;
d.onlySim=document.querySelectorAll('line.cbm[data-only="sim"]').length;
d.onlyReal=document.querySelectorAll('line.cbm[data-only="real"]').length;
d.pairReady='1';
})();
)JS";

}  // namespace

std::string render_side_by_side(const std::string& scenario,
                                const std::vector<SideBySideVariant>& variants) {
  std::string html;
  html.reserve(1 << 20);
  Out o(html);
  Scale sc;
  std::size_t runs = 0;
  for (const auto& v : variants) {
    sc.duration_us = std::max(sc.duration_us, v.sim.duration_us);
    for (const auto& r : v.real) sc.duration_us = std::max(sc.duration_us, r.duration_us);
    runs = std::max(runs, v.real.size());
  }
  fmt::format_to(
      o,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<title>rebalance-sim compare: {}</title><style>{}{}</style>"
      "<script>window.__errors=[];window.addEventListener('error',function(e){{window.__errors."
      "push(String(e.message));"
      "document.documentElement.dataset.errors=window.__errors.join(' | ');}});</script></head>\n",
      esc(scenario), kStyle, kPairStyle);
  fmt::format_to(o, "<body data-duration-us=\"{}\" data-plot-width=\"{}\" data-label-width=\"{}\">",
                 sc.duration_us, kPlotWidth, kLabelWidth);
  std::size_t passed = 0;
  for (const auto& v : variants) passed += v.passed ? 1 : 0;
  fmt::format_to(o,
                 "<header><h1>{}: the simulator against real Kafka</h1><p>{} variant{} · {} real "
                 "run{} each · {} agree{} · one time axis ({})</p></header><main>\n",
                 esc(scenario), variants.size(), variants.size() == 1 ? "" : "s", runs,
                 runs == 1 ? "" : "s", passed, passed == 1 ? "s" : "", seconds(sc.duration_us));
  fmt::format_to(
      o,
      "<h2>Timelines</h2><div class=\"controls\"><button id=\"zoom-in\">zoom in</button><button "
      "id=\"zoom-out\">zoom out</button>"
      "<button id=\"zoom-reset\">reset</button> <span id=\"zoomlevel\"></span> · wheel to zoom, "
      "drag to pan, "
      "click for details, double-click a shaded rebalance (the simulator's) to zoom to it</div>\n");
  fmt::format_to(o, "<div class=\"legend\">");
  fmt::format_to(o,
                 "<span><i style=\"background:{};width:3px\"></i>callback in the simulator</span>",
                 kSimColour);
  fmt::format_to(o,
                 "<span><i style=\"background:{};width:3px\"></i>the same callback in a real run, "
                 "within the tolerance</span>",
                 kRealColour);
  fmt::format_to(o,
                 "<span><i style=\"background:{};height:2px\"></i>link within the tolerance</span>",
                 kWithinColour);
  fmt::format_to(o,
                 "<span><i style=\"background:{};height:3px\"></i>deviation beyond the tolerance "
                 "(labelled)</span>",
                 kBeyondColour);
  fmt::format_to(o,
                 "<span><i style=\"background:{};width:3px\"></i>callback on one side only</span>",
                 kOnlyColour);
  for (const char* k : {"revoking", "waiting", "callback", "processing", "crashed"})
    fmt::format_to(o, "<span><i style=\"background:{}\"></i>{}</span>", span_colour(k),
                   std::string_view(k) == "waiting" ? "waiting for assignment" : k);
  fmt::format_to(
      o, "<span>ownership bars: one colour per partition, the same in every lane</span></div>\n");
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const auto& v = variants[vi];
    std::size_t beyond = 0, deviations = 0;
    for (const auto& m : v.callbacks)
      for (const auto& r : m.real_us)
        if (r && m.sim_us) {
          ++deviations;
          beyond += std::llabs(*r - *m.sim_us) > v.tolerance_ms * 1000 ? 1 : 0;
        }
    fmt::format_to(o,
                   "<div class=\"variant\" data-variant=\"{}\"><h3>{} — {} · {} of {} callback "
                   "deviations beyond ±{} ms</h3>",
                   esc(v.variant), esc(v.variant), v.passed ? "agrees" : "differs", beyond,
                   deviations, v.tolerance_ms);
    fmt::format_to(o, "<p class=\"small\">");
    for (std::size_t k = 0; k < v.real_names.size(); ++k)
      fmt::format_to(o, "{}{}: {}", k == 0 ? "" : " · ", run_name(k), esc(v.real_names[k]));
    fmt::format_to(o, "</p>");
    render_pair_timeline(o, v, sc, fmt::format("clip-{}", vi));
    render_table(o, v);
    fmt::format_to(o, "</div>\n");
  }
  fmt::format_to(o,
                 "</main><pre id=\"details\">Click a shape for its "
                 "details.</pre><script>{}</script><script>{}</script></body></html>\n",
                 kScript, kPairScript);
  return html;
}

}  // namespace reports
