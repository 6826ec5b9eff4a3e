// libFuzzer target: the one trace reader (reports::TraceReader) and the timeline built on it
// (what `report DIR` does with a trace.jsonl it is given). The input is trace text.
// 1. Line by line, the reader's two ways agree: a line read from its text and the same line read
//    through the JSON parse (TraceReader::set_text_scan(false)) are both refused with the same
//    message, or both give the same time, kind and typed event (the event written back by the
//    trace writer: the same bytes).
// 2. The timeline of the text and of the same text with a space after each line's opening brace
//    (which a parse ignores and the text read refuses, so that every line goes through the parse)
//    are the same, or both refused.
// A crash, a sanitizer report or a difference is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "models/trace/trace_jsonl.hpp"
#include "reports/timeline.hpp"
#include "reports/trace_reader.hpp"

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

// What the reader makes of its next line: the error, or the time, kind and event written back.
std::string outcome(reports::TraceReader& r, bool& more) {
  try {
    more = r.next();
    if (!more) return "end";
    std::string out = std::to_string(r.t_us()) + " " + std::to_string(r.kind()) + " ";
    rsim::trace::append_jsonl(out, sim::SimTime{r.t_us()}, r.event());
    return out;
  } catch (const std::exception& e) {
    more = true;
    return std::string("!") + e.what();
  }
}

void same_lines(std::string_view text) {
  reports::TraceReader scanned(text), parsed(text);
  parsed.set_text_scan(false);
  for (bool more = true; more;) {
    bool more_parsed = true;
    if (outcome(scanned, more) != outcome(parsed, more_parsed) || more != more_parsed)
      __builtin_trap();
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
  same_lines(text);
  if (read(text) != read(spaced)) __builtin_trap();
  return 0;
}
