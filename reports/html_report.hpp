// report.html: one self-contained page (inline SVG, CSS and a small script; no network fetch)
// for every variant of a run, on one shared time axis. A pure function of the timelines, so
// `run --out DIR` and `report DIR` write the same bytes.
#pragma once
#include <string>
#include <vector>

#include "reports/share_view.hpp"
#include "reports/timeline.hpp"

namespace reports {

/// `share`: the share views of the variants (reports/share_view.hpp); a "Share groups" section
/// is added when one has share-partitions.
std::string render_html_report(const std::vector<Timeline>& variants,
                               const std::vector<ShareView>& share = {});

/// Variants in the order every output lists them: classic-eager, classic-cooperative,
/// consumer, share, then any other name alphabetically.
bool variant_less(const std::string& a, const std::string& b);

}  // namespace reports
