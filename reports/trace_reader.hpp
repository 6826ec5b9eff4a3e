// The one reader of trace.jsonl for the reports and the analyses (timeline, share view, csv,
// compare, describe, dump-log): each non-empty line as its typed event (rsim::trace::Event, read by
// the field lists of models/trace/trace_events.hpp), with its time and line number. A reader
// dispatches on the event's type (std::visit, std::get_if), never on the `type` string. The
// line's JSON object stays at hand for the few readers that show a line's fields as written (the
// CSV's detail column) or read what only a recording writes (compare's `incarnation`). A
// `group.epoch` line reads as a `full` trace writes it, whatever the level: its `members` (carried
// forward over a `standard` trace's `joined` / `left`), sorted by name.
#pragma once
#include <bitset>
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

/// The kinds a reader reads field by field (bit kKind<E>; see TraceReader::read_only()).
using KindSet = std::bitset<std::variant_size_v<rsim::trace::Event>>;

/// Reads trace.jsonl line by line (never holding the whole trace) into typed events.
///
/// A line in the compact form the trace writer produces (no whitespace, no escapes in the strings
/// read, integers of at most 18 digits) is read from its text, field by field as the kind's
/// fields() list names them; any other line through a JSON parse (nlohmann) and the same list.
/// Both give the same event, or both refuse the line with the same message: the text read only
/// takes a line it can read exactly as the parse would, and leaves every doubt to the parse
/// (tests/fuzz/fuzz_trace_reader.cpp checks it).
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

  /// From now on only the kinds in `kinds` are read field by field: a line of any other kind
  /// comes back as its kind with every field at its default (kind() and t_us() are right, the
  /// fields are not read, so they cannot be wrong either). For a reader that passes over most
  /// kinds (the timeline). Every line is still checked to be JSON with a `t_us` and a `type`.
  void read_only(const KindSet& kinds) { kinds_ = kinds; }
  void read_all() { kinds_.set(); }
  /// Off: every line goes through the JSON parse (the fuzz target compares the two ways).
  void set_text_scan(bool on) { scan_on_ = on; }

  std::int64_t t_us() const { return t_us_; }
  const rsim::trace::Event& event() const { return event_; }
  /// The event's kind, as its index in rsim::trace::Event (kKind<E>).
  std::size_t kind() const { return event_.index(); }
  /// Whether the line has the member `key` (a field's absence and its default told apart).
  bool has(std::string_view key) const;
  /// The line as its JSON object (`t_us` and `type` included), as written (parsed on first use
  /// for a line read from its text).
  const nlohmann::ordered_json& line() const;
  /// Whether the last line was read from its text (else through the JSON parse).
  bool scanned() const { return scanned_; }
  /// 1-based, counting empty lines.
  std::size_t line_no() const { return line_no_; }
  /// The line's text (a view valid until the next call of next()).
  std::string_view text() const { return text_; }
  /// "trace.jsonl line 3: " + what, as the errors of next() read.
  std::string error(std::string_view what) const;

  /// A member of the line read from its text (key and value, as written).
  struct Member {
    std::string_view key, value;
  };

 private:
  bool next_text();
  bool read_scanned();
  void read_parsed();
  std::string where_;
  std::optional<LineReader> stream_;
  std::string_view whole_;
  std::size_t pos_ = 0;
  const std::vector<std::string>* lines_ = nullptr;
  std::string_view text_;
  std::size_t line_no_ = 0;
  std::int64_t t_us_ = 0;
  KindSet kinds_ = KindSet().set();
  bool scan_on_ = true;
  bool scanned_ = false;
  mutable bool parsed_ = false;  // storage_.line holds the line
  std::vector<Member> members_;  // the scanned line's members
  std::vector<Member> nested_;   // scratch: the members of a nested object
  mutable rsim::trace::ReadStorage storage_;
  rsim::trace::Event event_;
  rsim::trace::GroupMembers group_members_;  // carried over a `standard` trace's joined / left
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
/// fields.
std::size_t kind_of(std::string_view type);

/// "orders-3", as trace.jsonl writes a partition.
std::string partition_name(const rsim::TopicPartition& tp);
/// Each of `ps` as partition_name() writes it.
std::vector<std::string> partition_names(rsim::trace::Partitions ps);

}  // namespace reports
