#include "tools/commands/sweep_html.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "reports/escape.hpp"

namespace rsim::cli {

namespace {

std::string esc(const std::string& s) {
  return reports::markup_escape(s);
}

std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15)
    return fmt::format("{}", static_cast<std::int64_t>(v));
  return fmt::format("{:.6g}", v);
}

// White (lowest) to dark red (highest) through yellow: deterministic integer colours.
std::string colour(double v, double lo, double hi) {
  const double t = hi > lo ? (v - lo) / (hi - lo) : 0.0;
  int r, g, b;
  if (t < 0.5) {
    const double u = t / 0.5;
    r = 255;
    g = 255 - static_cast<int>(std::lround(40 * u));
    b = 255 - static_cast<int>(std::lround(200 * u));
  } else {
    const double u = (t - 0.5) / 0.5;
    r = 255 - static_cast<int>(std::lround(80 * u));
    g = 215 - static_cast<int>(std::lround(200 * u));
    b = 55 - static_cast<int>(std::lround(40 * u));
  }
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

}  // namespace

std::string render_phase_html(const PhaseInputs& in) {
  const std::size_t mi = static_cast<std::size_t>(
      std::find(in.metrics.begin(), in.metrics.end(), in.metric) - in.metrics.begin());
  double lo = 0, hi = 0;
  bool first = true;
  for (const auto& c : in.cells) {
    const double v = c.stats[mi].median;
    lo = first ? v : std::min(lo, v);
    hi = first ? v : std::max(hi, v);
    first = false;
  }
  // Facets: the series, then the values of the axes beyond the second, in grid order.
  std::vector<std::string> facets;
  std::map<std::string, std::vector<const PhaseCell*>> by_facet;
  const auto facet_of = [&](const PhaseCell& c) {
    std::string f = c.series;
    for (std::size_t i = 2; i < in.axes.size(); ++i)
      f += fmt::format(" · {}={}", in.axes[i].first, in.axes[i].second[c.coords[i]]);
    return f;
  };
  for (const auto& c : in.cells) {
    const std::string f = facet_of(c);
    if (!by_facet.count(f)) facets.push_back(f);
    by_facet[f].push_back(&c);
  }
  std::stable_sort(facets.begin(), facets.end(), [&](const std::string& a, const std::string& b) {
    // Series first (in the order they appear), then the further axes in grid order.
    const auto* ca = by_facet[a].front();
    const auto* cb = by_facet[b].front();
    if (ca->series != cb->series) {
      for (const auto& c : in.cells) {
        if (c.series == ca->series) return true;
        if (c.series == cb->series) return false;
      }
    }
    for (std::size_t i = 2; i < in.axes.size(); ++i)
      if (ca->coords[i] != cb->coords[i]) return ca->coords[i] < cb->coords[i];
    return false;
  });
  const std::string x_name = in.axes.empty() ? "" : in.axes[0].first;
  const std::vector<std::string> x_values =
      in.axes.empty() ? std::vector<std::string>{""} : in.axes[0].second;
  const bool has_y = in.axes.size() >= 2;
  const std::string y_name = has_y ? in.axes[1].first : "";
  const std::vector<std::string> y_values =
      has_y ? in.axes[1].second : std::vector<std::string>{""};

  std::size_t grid_points = 1;
  for (const auto& a : in.axes) grid_points *= a.second.size();
  std::string h;
  auto o = std::back_inserter(h);
  fmt::format_to(o, R"(<!DOCTYPE html>
<html lang="en" data-grid-points="{5}"><head><meta charset="utf-8"><title>{0}: phase diagram</title>
<style>
body{{font-family:system-ui,sans-serif;margin:1.5em;color:#222}}
table.heat{{border-collapse:collapse;margin:0.5em 0 1.5em}}
table.heat td,table.heat th{{border:1px solid #ccc;padding:0.35em 0.6em;text-align:right;font-size:0.9em}}
table.heat td.cell{{cursor:pointer;min-width:4em}}
table.heat td.cell a{{color:inherit;text-decoration:none;display:block}}
table.heat th.axis{{background:#f4f4f4;text-align:left}}
.legend span{{display:inline-block;width:2em;height:1em;vertical-align:middle}}
.facet h2{{font-size:1.05em;margin:1em 0 0.2em}}
</style></head><body>
<h1>{0}: phase diagram</h1>
<p>Median of <b>{1}</b> per cell over seeds {2} (nearest rank); colour from white (lowest, {3}) to dark red (highest, {4}).
A click on a cell opens the report of its worst seed (the largest {1}). Hover for median, p95 and max of every headline metric.</p>
<p class="legend">)",
                 esc(in.scenario), esc(in.metric), esc(in.seeds), number(lo), number(hi),
                 grid_points);
  for (int i = 0; i <= 4; ++i)
    fmt::format_to(o, "<span style=\"background:{}\"></span>",
                   colour(lo + (hi - lo) * i / 4.0, lo, hi));
  fmt::format_to(o, "</p>\n<p>x: <code>{}</code>{}</p>\n", esc(x_name),
                 has_y ? fmt::format("; y: <code>{}</code>", esc(y_name)) : std::string());
  for (const auto& f : facets) {
    fmt::format_to(o,
                   "<section class=\"facet\" data-facet=\"{0}\"><h2>{0}</h2>\n<table "
                   "class=\"heat\">\n<tr><th class=\"axis\">{1}</th>",
                   esc(f), has_y ? esc(y_name) + " \\ " + esc(x_name) : esc(x_name));
    for (const auto& x : x_values) fmt::format_to(o, "<th>{}</th>", esc(x));
    fmt::format_to(o, "</tr>\n");
    const auto& cells = by_facet[f];
    for (std::size_t yi = 0; yi < y_values.size(); ++yi) {
      fmt::format_to(o, "<tr><th>{}</th>", esc(y_values[yi]));
      for (std::size_t xi = 0; xi < x_values.size(); ++xi) {
        const PhaseCell* c = nullptr;
        for (const auto* p : cells)
          if ((in.axes.empty() || p->coords[0] == xi) && (!has_y || p->coords[1] == yi)) c = p;
        if (c == nullptr) {
          fmt::format_to(o, "<td class=\"empty\"></td>");
          continue;
        }
        std::string title =
            fmt::format("{} ({}), worst seed {}", c->cell, c->series, c->worst_seed);
        for (std::size_t m = 0; m < in.metrics.size(); ++m)
          title += fmt::format("\n{}: median {}, p95 {}, max {}", in.metrics[m],
                               number(c->stats[m].median), number(c->stats[m].p95),
                               number(c->stats[m].max));
        fmt::format_to(
            o,
            "<td class=\"cell\" data-cell=\"{}\" data-worst-seed=\"{}\" data-median=\"{}\" "
            "style=\"background:{}{}\" title=\"{}\" onclick=\"location.href=this.dataset.report\" "
            "data-report=\"{}\"><a href=\"{}\">{}</a></td>",
            esc(c->cell), c->worst_seed, number(c->stats[mi].median),
            colour(c->stats[mi].median, lo, hi),
            hi > lo && (c->stats[mi].median - lo) / (hi - lo) > 0.6 ? ";color:#fff" : "",
            esc(title), esc(c->report), esc(c->report), number(c->stats[mi].median));
      }
      fmt::format_to(o, "</tr>\n");
    }
    fmt::format_to(o, "</table></section>\n");
  }
  // The page counts what it drew (for tests and tools reading the DOM): cells, facets, links.
  fmt::format_to(
      o,
      "<script>\n(function(){{var "
      "d=document.documentElement,c=document.querySelectorAll('td.cell');"
      "var l=0;c.forEach(function(t){{if(t.querySelector('a[href]'))l++;}});"
      "d.dataset.cells=c.length;d.dataset.facets=document.querySelectorAll('section.facet').length;"
      "d.dataset.links=l;d.dataset.ready='1';}})();\n</script>\n</body></html>\n");
  return h;
}

}  // namespace rsim::cli
