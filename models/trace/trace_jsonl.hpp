// trace.jsonl, both ways: the sinks that write typed trace events as JSON lines (streamed to a
// file through a bounded buffer, or kept as lines for tests and in-process readers), and the
// reader that turns a line back into the typed event, so that a sink fed from a trace.jsonl
// read back sees what it saw online.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_events.hpp"

namespace rsim::trace {

/// Appends `e` as one JSON object (no newline): {"t_us":..,"type":..,fields...}.
void append_jsonl(std::string& out, sim::SimTime t, const Event& e);

/// `e` as the JSON object of its trace.jsonl line (for sinks that match events by their fields:
/// order checks, the share accounting).
nlohmann::ordered_json to_json(sim::SimTime t, const Event& e);

/// The watchdog's bound on a trace's bytes: add() each line written (with its newline); past the
/// bound it throws sim::WatchdogTripped naming the time and the line.
class TraceByteBound {
 public:
  explicit TraceByteBound(std::uint64_t max_bytes = sim::WatchdogLimits{}.max_trace_bytes)
      : max_(max_bytes) {}
  void set_max(std::uint64_t max_bytes) { max_ = max_bytes; }
  void add(sim::SimTime t, std::string_view line, std::size_t newline = 0) {
    bytes_ += line.size() + newline;
    if (bytes_ > max_) trip(t, line);
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  [[noreturn]] void trip(sim::SimTime t, std::string_view line) const;
  std::uint64_t max_;
  std::uint64_t bytes_ = 0;
};

/// What trace.jsonl writes at a `--trace` level (docs/writing-scenarios.md, "Trace levels").
/// `full`: every event the bus carries. `standard`: a `lag` line only when the partition's lag
/// differs from the last value written for it or its owner changes; no `records.fetched` /
/// `records.processed` lines, no OffsetCommit `record` lines, no quiet heartbeats (Rpc::quiet),
/// no `commit` line of phase `completed` for an auto-commit answered `NONE`; a `group.epoch`
/// line lists the change (`joined`, `left`) since its group's previous line instead of
/// `members` (the group's first line lists `members`). Both say their level in `run.start`
/// (`trace_level`). The sinks on the bus (the summary, the expectations) see every event
/// whatever is written; this filter is the writer's alone.
class LevelFilter {
 public:
  explicit LevelFilter(Detail level) : standard_(level == Detail::Standard) {}
  /// "full" | "standard".
  std::string_view name() const { return standard_ ? "standard" : "full"; }
  bool standard() const { return standard_; }
  /// Whether `e` is written at this level; a `lag` line let through is remembered.
  bool keep(const Event& e);

  /// A `group.epoch` line's change of members since its group's previous line: sorted lists
  /// (multisets: a classic group may hold two incarnations of one consumer).
  struct MembersDelta {
    std::vector<std::string> joined, left;
  };
  /// At `standard`, what `e`'s line writes instead of `members` (remembering `e.members`);
  /// nullptr for its group's first line (written with `members`) and at `full`.
  const MembersDelta* members_delta(const GroupEpoch& e);

 private:
  struct LastLag {
    std::int64_t lag = 0;
    std::string owner;
    bool owned = false;
    bool written = false;
  };
  bool keep_lag(const Lag& l);
  bool standard_;
  std::vector<LastLag> last_lag_;  // by Lag::slot
  // By group: the members of its last group.epoch line, in the event's order.
  std::map<std::string, std::vector<std::string>, std::less<>> members_;
  MembersDelta delta_;
};

/// Reading a trace: each group's members carried forward over its `group.epoch` lines (a line
/// with `members` sets them, a `standard` line's `joined` / `left` change them), kept sorted by
/// name, so that a reader sees the same members in a `standard` trace as in a `full` one.
class GroupMembers {
 public:
  /// Reads `e`'s line (`line`, its JSON object): `e.members` then views the group's members,
  /// sorted (valid until the group's next line). With `rewrite`, `line` is made to read as a
  /// `full` line would, sorted: `members` in place of `joined` and `left`.
  void read(nlohmann::ordered_json& line, GroupEpoch& e, bool rewrite);
  /// The members of `group` after a line with `members` / with `joined` and `left`.
  const std::vector<std::string>& set(std::string_view group, Names members);
  const std::vector<std::string>& change(std::string_view group, Names joined, Names left);

 private:
  struct Group {
    std::vector<std::string> listed;  // the last `members` as written (what the next is to)
    bool has_listed = false;
    std::vector<std::string> sorted;
  };
  Group& group(std::string_view name);
  static void apply(std::vector<std::string>& sorted, Names joined, Names left);
  std::map<std::string, Group, std::less<>> groups_;
  std::vector<std::string> joined_, left_;
};

/// Appends the line of `e` as `filter`'s level writes it (run.start with its `trace_level`);
/// false, and nothing appended, when the level leaves it out.
bool append_jsonl_at(std::string& out, sim::SimTime t, const Event& e, LevelFilter& filter);

/// Streams every event to a file, one line each, through sim::BufferedFile; with set_level(),
/// as that level writes it.
class JsonlFileSink final : public TraceSink {
 public:
  explicit JsonlFileSink(const std::string& path,
                         std::size_t buffer = sim::BufferedFile::kDefaultCapacity)
      : file_(path, buffer) {}
  void set_level(Detail level) { level_.emplace(level); }
  void on_event(sim::SimTime t, const Event& e) override;
  void close() { file_.close(); }
  const sim::BufferedFile& file() const { return file_; }

 private:
  sim::BufferedFile file_;
  std::optional<LevelFilter> level_;
};

/// Keeps every line in memory: for tests and short in-process runs (describe, dump-log); with
/// set_level(), as that level writes them.
class JsonlLinesSink final : public TraceSink {
 public:
  void set_level(Detail level) { level_.emplace(level); }
  void on_event(sim::SimTime t, const Event& e) override;
  const std::vector<std::string>& lines() const { return lines_; }
  std::vector<std::string> take() { return std::move(lines_); }
  /// The watchdog's bound on the lines' bytes (sim::WatchdogTripped past it).
  void set_max_bytes(std::uint64_t max) { bound_.set_max(max); }
  std::uint64_t bytes() const { return bound_.bytes(); }

 private:
  std::vector<std::string> lines_;
  TraceByteBound bound_;
  std::optional<LevelFilter> level_;
};

/// Owns what the views of events read back point into; valid until the next parse.
struct ReadStorage {
  nlohmann::ordered_json line;
  std::deque<TopicPartition> partition;
  std::deque<std::vector<TopicPartition>> partitions;
  std::deque<std::vector<std::string>> names;
  std::deque<std::vector<FetchedRange>> ranges;
  std::deque<std::vector<CommittedOffset>> offsets;
  std::deque<std::vector<ShareStateBatch>> share_batches;
  std::deque<nlohmann::ordered_json> json;
  void clear();
};

/// A line of trace.jsonl as its typed event (kinds this build does not know come back as
/// sim::RawTraceEvent), with its time. Throws nlohmann::json::exception on malformed lines.
Event parse_jsonl(const std::string& line, ReadStorage& storage, sim::SimTime& t);

/// The typed event of kind `type` read from a JSON object of its fields (a line, or the fields
/// of a sim::RawTraceEvent: how sinks read events still published the untyped way).
Event parse_fields(std::string_view type, const nlohmann::ordered_json& fields,
                   ReadStorage& storage);

/// Reads a trace.jsonl stream line by line into `sink` (never holding the whole file).
void read_jsonl(std::istream& in, TraceSink& sink);
void read_jsonl(const std::vector<std::string>& lines, TraceSink& sink);

/// "orders-3" as a TopicPartition.
TopicPartition parse_partition(std::string_view s);

}  // namespace rsim::trace
