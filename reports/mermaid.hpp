// sequence.mmd: a Mermaid sequenceDiagram of the messages of one rebalance, or of a time window,
// between the consumers and their coordinator. Renders on GitHub; a pure function of the timeline.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "reports/timeline.hpp"

namespace reports {

struct MermaidWindow {
  std::optional<int> rebalance;         // 1-based; default: the longest rebalance
  std::optional<std::int64_t> from_us;  // a window instead of a rebalance (both or either)
  std::optional<std::int64_t> to_us;
};

std::string render_mermaid(const Timeline& timeline, const MermaidWindow& window);

}  // namespace reports
