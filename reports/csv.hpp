// timeline.csv (one row per trace event but the lag samples: time in ms, type, consumer, group,
// partitions, epoch or generation, detail) and lag.csv (one row per lag sample, and the total of
// the group's partitions after every sampling instant). Pure functions of trace.jsonl text.
#pragma once
#include <iosfwd>
#include <string>
#include <string_view>

namespace reports {

std::string render_timeline_csv(std::string_view trace_jsonl);
std::string render_lag_csv(std::string_view trace_jsonl);
/// The same, reading the trace one line at a time from a stream (a field of the wrong type is
/// a std::runtime_error naming the line).
std::string render_timeline_csv(std::istream& trace_jsonl);
std::string render_lag_csv(std::istream& trace_jsonl);

}  // namespace reports
