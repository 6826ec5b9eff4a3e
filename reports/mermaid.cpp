#include "reports/mermaid.hpp"

#include <map>

#include <fmt/format.h>

#include "reports/sequence.hpp"

namespace reports {

namespace {

constexpr std::size_t kMaxRows = 400;

// Mermaid ends a statement at ';' and reads '#' as the start of an entity code.
std::string text(std::string s) {
  for (auto& c : s) {
    if (c == ';') c = ',';
    if (c == '#') c = ' ';
    if (c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

std::string render_mermaid(const Timeline& tl, const MermaidWindow& window) {
  std::int64_t from = 0, to = tl.duration_us;
  std::string group, title;
  if (window.from_us || window.to_us) {
    from = window.from_us.value_or(0);
    to = window.to_us.value_or(tl.duration_us);
    title = fmt::format("from {} to {}", seconds(from), seconds(to));
  } else if (!tl.rebalances.empty()) {
    const Rebalance* chosen = &tl.rebalances.front();
    if (window.rebalance) {
      chosen = &tl.rebalances.at(static_cast<std::size_t>(*window.rebalance - 1));
    } else {
      for (const auto& r : tl.rebalances)
        if (r.end_us - r.start_us > chosen->end_us - chosen->start_us) chosen = &r;
    }
    std::tie(from, to) = rebalance_window(tl, *chosen);
    group = chosen->group;
    title = fmt::format("rebalance R{} of group {} ({}), trigger \"{}\", {} to {}", chosen->index,
                        chosen->group, chosen->epoch_label, chosen->trigger,
                        seconds(chosen->start_us), seconds(chosen->end_us));
  } else {
    title = "the whole run (no rebalance)";
  }
  const Sequence seq = sequence_between(tl, group, from, to, kMaxRows);
  std::map<std::string, std::string> id;
  std::string out = "sequenceDiagram\n";
  out += fmt::format("    %% rebalance-sim {} [{}]: {}\n", text(tl.scenario), tl.protocol,
                     text(title));
  for (std::size_t i = 0; i < seq.participants.size(); ++i) {
    const auto& p = seq.participants[i];
    id[p] = fmt::format("P{}", i);
    out += fmt::format("    participant P{} as {}\n", i,
                       text(p.rfind("broker-", 0) == 0 ? p + " (coordinator)" : p));
  }
  for (const auto& row : seq.rows) {
    const std::string when = seconds(row.t_us);
    switch (row.kind) {
      case SequenceRow::Kind::Request:
        out += fmt::format("    {}->>{}: {} {}\n", id[row.from], id[row.to], when, text(row.text));
        break;
      case SequenceRow::Kind::Response:
        out += fmt::format("    {}-->>{}: {} {}\n", id[row.from], id[row.to], when, text(row.text));
        break;
      case SequenceRow::Kind::Note:
        out += fmt::format("    Note over {}: {} {}\n", id[row.from], when, text(row.text));
        break;
    }
  }
  if (seq.omitted)
    out += fmt::format("    %% {} more rows left out; narrow the window with --from/--to\n",
                       seq.omitted);
  return out;
}

}  // namespace reports
