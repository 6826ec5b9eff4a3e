// The plain-words story of each rebalance ("B joined at 3.121 s; A learned of it from its
// heartbeat at 6.048 s and revoked orders-0..5; ..."), told from the timeline model alone.
// Used by `rebalance-sim explain` and by report.html.
#pragma once
#include <string>
#include <vector>

#include "reports/timeline.hpp"

namespace reports {

/// One paragraph per rebalance, in the order of summary.json's `rebalances`.
std::vector<std::string> narrate(const Timeline& timeline);

/// Why rebalance `index` (1-based) took as long as it did, from its summary.json entry's
/// `critical_path`: "R2 took 2,009 ms: 2,001 ms A waiting for its next heartbeat
/// (heartbeat.interval.ms), 8 ms network." The dominant cause first, with the config that
/// governs it; "" without a critical path.
std::string critical_path_sentence(const nlohmann::ordered_json& rebalance, int index);

/// The text `explain` prints for one variant: a heading line and the paragraphs.
std::string explain_text(const Timeline& timeline);

}  // namespace reports
