// libFuzzer target: the timeline's trace reader (what `report DIR` does with a trace.jsonl it is
// given). The input is trace text. The reader reads most lines from their text without a json
// parse; the same text with a space after each line's opening brace (which a parse ignores)
// makes every line go through the full parse. Both must reject the text, or both give the same
// timeline. A crash, a sanitizer report or a difference is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "reports/timeline.hpp"

namespace {

std::string fingerprint(const reports::Timeline& t) {
  std::string out =
      fmt::format("{} {} {} {}\n", t.scenario, t.protocol, t.duration_us, t.lag_series);
  for (const auto& p : t.partitions) out += p + ",";
  for (const auto& l : t.lanes) {
    out += fmt::format("\nlane {} {}", l.consumer, l.group);
    for (const auto& o : l.owned)
      out += fmt::format(" own {} {} {}", o.start_us, o.end_us, o.partitions.size());
    for (const auto& s : l.spans)
      out += fmt::format(" span {} {} {} {}", s.start_us, s.end_us, s.kind, s.label);
    for (const auto& i : l.instants)
      out += fmt::format(" instant {} {} {}", i.t_us, i.kind, i.label);
  }
  for (const auto& g : t.groups) {
    out += "\ngroup " + g.group;
    for (const auto& s : g.segments)
      out += fmt::format(" seg {} {} {}", s.start_us, s.end_us, s.label);
    for (const auto& e : g.epochs) out += fmt::format(" epoch {} {}", e.t_us, e.label);
  }
  for (const auto& m : t.messages)
    out += fmt::format("\nmsg {} {} {} {} {} {}", m.send_us, m.recv_us, m.client, m.api, m.error,
                       m.detail);
  for (std::size_t p = 0; p < t.lag.size(); ++p)
    for (const auto& pt : t.lag[p]) out += fmt::format("\nlag {} {} {}", p, pt.t_us, pt.lag);
  for (const auto& pt : t.total_lag) out += fmt::format("\ntotal {} {}", pt.t_us, pt.lag);
  return out;
}

// "!" and the line number when the reader rejects the text, else the timeline's fingerprint.
std::string read(std::string_view text) {
  try {
    return fingerprint(reports::build_timeline(text, nlohmann::ordered_json::object()));
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    return "!" + what.substr(0, what.find(':'));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string spaced;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.front() == '{')
      spaced.append("{ ").append(line.substr(1));
    else
      spaced.append(line);
    if (end < text.size()) spaced += '\n';
    pos = end + 1;
  }
  if (read(text) != read(spaced)) __builtin_trap();
  return 0;
}
