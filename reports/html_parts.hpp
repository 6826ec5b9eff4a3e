// The drawing parts report.html is made of (reports/html_report.cpp), shared with the
// side-by-side page of `compare --out` (reports/compare_report.cpp): the geometry of a
// timeline, escaping, the colours, one consumer lane, and the page's style and script (zoom and
// pan on one shared time axis, click for details).
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "reports/timeline.hpp"

namespace reports::html {

constexpr double kLabelWidth = 150;
constexpr double kPlotWidth = 1100;
constexpr double kAxisHeight = 22;

using Out = std::back_insert_iterator<std::string>;

/// Virtual time to x in plot pixels (0 .. kPlotWidth) for a timeline of `duration_us`.
struct Scale {
  std::int64_t duration_us = 1;
  double x(std::int64_t t) const {
    return kPlotWidth * static_cast<double>(t) / static_cast<double>(duration_us);
  }
  double w(std::int64_t from, std::int64_t to, double min = 0.6) const {
    return std::max(min, x(to) - x(from));
  }
  /// For a shape inside the zoomed group whose width was raised to `min`: its true width and the
  /// minimum, so that the page keeps the minimum in screen pixels at every zoom (a 0 ms callback
  /// stays a thin mark, not 30 ms wide); "" when the true width is wider.
  std::string min_width_attrs(std::int64_t from, std::int64_t to, double min = 0.6) const;
};

std::string esc(std::string_view s);
std::string clip(std::string s, std::size_t max = 400);
std::string partition_colour(int index);
const char* span_colour(const std::string& kind);
const char* instant_colour(const std::string& kind);

/// What every timeline drawing writes after its <svg> tag: the plot's clip path, the axis group
/// (`height` tall) and the opening of the clipped plot's rebalance-window group (`<g class="z">`,
/// left open for the caller's shaded windows).
void plot_preamble(Out o, const std::string& clip_id, double height);

/// A rect with a hover title; `extra` is written verbatim into the tag (class, data-*).
void rect(Out o, double x, double y, double w, double h, std::string_view fill,
          std::string_view title, std::string_view extra = "");

/// One consumer's lane (`<g class="lane" data-consumer=...>`): ownership, spans, instants; its
/// label is `label` or, when empty, the consumer's name.
void render_lane(Out o, const Timeline& tl, const Lane& lane, const Scale& sc, double y, double h,
                 bool stripes, const std::string& clip_id, std::string_view label = {});

extern const char* kStyle;   // the page's CSS
extern const char* kScript;  // zoom, pan, details; needs #zoom-in, #zoom-out, #zoom-reset

}  // namespace reports::html
