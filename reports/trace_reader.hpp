// The one reader of trace.jsonl for the reports and the analyses (timeline, csv, compare,
// describe, dump-log): each non-empty line as its typed event (rsim::trace::Event, read by the
// field lists of models/trace/trace_events.hpp), with its time and line number. A reader
// dispatches on the event's type (std::visit, std::get_if), never on the `type` string. The
// line's JSON object stays at hand for the few readers that show a line's fields as written (the
// CSV's detail column) or read what only a recording writes (compare's `incarnation`). A
// `group.epoch` line reads as a `full` trace writes it, whatever the level: its `members` (carried
// forward over a `standard` trace's `joined` / `left`), sorted by name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_jsonl.hpp"

namespace reports {

/// The lines of a trace read from a stream in blocks (memory: one block plus the longest line).
/// A line is a view into the reader's buffer, valid until the next call of next().
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}
  bool next(std::string_view& line);

 private:
  std::istream& in_;
  std::string buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
};

/// Reads trace.jsonl line by line (never holding the whole trace) into typed events.
class TraceReader {
 public:
  /// `where` begins every error message: "trace.jsonl " gives "trace.jsonl line 3: ...",
  /// "recording.jsonl: " gives "recording.jsonl: line 3: ...".
  explicit TraceReader(std::istream& in, std::string where = "trace.jsonl ");
  explicit TraceReader(std::string_view text, std::string where = "trace.jsonl ");
  /// The lines of an in-process trace (trace::JsonlLinesSink), one line each.
  explicit TraceReader(const std::vector<std::string>& lines, std::string where = "trace.jsonl ");

  /// Reads the next non-empty line; false at the end. Throws std::runtime_error naming the
  /// line: not valid JSON, not an object with an integer `t_us` and a string `type`, or a field
  /// of a type its kind does not have (a kind this build does not know is read as
  /// sim::RawTraceEvent, its fields unchecked).
  bool next();

  std::int64_t t_us() const { return t_us_; }
  const rsim::trace::Event& event() const { return event_; }
  /// The line as its JSON object (`t_us` and `type` included), as written.
  const nlohmann::ordered_json& line() const { return storage_.line; }
  /// 1-based, counting empty lines.
  std::size_t line_no() const { return line_no_; }
  /// The line's text (a view valid until the next call of next()).
  std::string_view text() const { return text_; }
  /// "trace.jsonl line 3: " + what, as the errors of next() read.
  std::string error(std::string_view what) const;

 private:
  bool next_text();
  std::string where_;
  std::optional<LineReader> stream_;
  std::string_view whole_;
  std::size_t pos_ = 0;
  const std::vector<std::string>* lines_ = nullptr;
  std::string_view text_;
  std::size_t line_no_ = 0;
  std::int64_t t_us_ = 0;
  rsim::trace::ReadStorage storage_;
  rsim::trace::Event event_;
  rsim::trace::GroupMembers members_;
};

/// The typed event of a trace line already parsed (an object with a string `type`): views into
/// `line` and `storage`. Throws nlohmann::json::exception on a field of the wrong type.
rsim::trace::Event typed_event(const nlohmann::ordered_json& line,
                               rsim::trace::ReadStorage& storage);

namespace detail {
template <class E, class V>
struct KindIndex;
template <class E, class... Ts>
struct KindIndex<E, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<E, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
      if (same[i]) return i;
    return sizeof...(Ts);
  }();
  static_assert(value < sizeof...(Ts), "not a kind of rsim::trace::Event");
};
}  // namespace detail

/// The kind E as its index in rsim::trace::Event (what kind_of() returns).
template <class E>
inline constexpr std::size_t kKind = detail::KindIndex<E, rsim::trace::Event>::value;

/// The kind of event trace.jsonl names `type`, as its index in rsim::trace::Event
/// (kKind<sim::RawTraceEvent> for a kind this build does not know), without reading the line's
/// fields: for a reader that reads some lines from their text (the timeline's scan).
std::size_t kind_of(std::string_view type);

/// "orders-3", as trace.jsonl writes a partition.
std::string partition_name(const rsim::TopicPartition& tp);
/// Each of `ps` as partition_name() writes it.
std::vector<std::string> partition_names(rsim::trace::Partitions ps);

}  // namespace reports
