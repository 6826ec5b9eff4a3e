// Safety and liveness properties checked on a run's trace (issue 11). A pure function of the trace
// and a few facts of the scenario (which consumers commit at least once, when the last fault ends,
// the liveness bound): a sink fed the typed trace events one at a time (issue 33), on the trace bus
// while the run goes (`run --check-invariants`, `explore`: nothing of the trace is held but the
// last few lines of the window a violation prints), or from a trace.jsonl read back through the
// one trace reader (rsim::trace::parse_jsonl). It includes no model class.
//
// Line numbers: each event the checker is fed is one line (0-based), in the order fed. On the bus
// that is every event the bus carries (InvariantSink without a level: at `--trace full` the lines
// of trace.jsonl; at `standard` and `none`, the lines a `full` writer would write of the events a
// standard bus carries, which trace.jsonl does not all hold), or, with a level, the lines that
// level writes (the lines of trace.jsonl).
//
// Safety, at the end of every instant:
//  - exclusive-ownership (not for share groups, whose partitions are shared by design): no
//  partition owned by two live members of one group that the coordinator
//    counts as members (KIP-848: the latest group.epoch's members; classic: the members of the
//    current generation). Zombies (members the coordinator removed) are reported, not counted.
//  - monotonic-epochs: a group's epoch or generation and a member's epoch never decrease, except
//    where Kafka allows it: a member removed (member.leave) starts again at 0, and a group reloaded
//    by a new coordinator (coordinator.loaded) resumes from its committed records.
//  - monotonic-commits: a group's committed offset of a partition never decreases, except where
//    Kafka allows it: a commit of a lower offset by a member after it lost or was newly assigned
//    the partition (a new owner, or a reset), and a coordinator reload (uncommitted records lost).
//    Precisely: an offset may go back only in a commit by a different consumer than the last, or
//    after coordinator.loaded.
//  - no-record-lost: for consumers that commit at least once (commit "sync"/"async", or classic
//    auto-commit), no committed offset passes a record the group never processed (records before
//    the first fetch position of a partition, chosen by auto.offset.reset, do not count).
// Liveness, at the end of the run, when it ends at least `liveness_bound` after the last fault:
//  - partitions-owned: every partition of a topic a live member subscribes to is owned by a live
//    member of the group.
//  - lag-drains: no owned partition ends with more lag than `max_final_lag`.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/trace/trace_jsonl.hpp"

namespace reports {

struct InvariantContext {
  /// Consumers whose commits are at least once (their group's commits are checked for loss).
  std::set<std::string> at_least_once;
  /// When the last fault of the script ends (us), and how long after it liveness must hold.
  std::int64_t last_fault_end_us = 0;
  std::int64_t liveness_bound_us = 0;
  /// Share groups (KIP-932): a partition may be assigned to several members at once by design, so
  /// exclusive-ownership does not apply; their records are acknowledged, not committed, so the
  /// commit properties have nothing to check (at_least_once is empty).
  bool shared_ownership = false;
  /// The largest lag a partition may end the run with.
  std::int64_t max_final_lag = 10'000;
};

struct Violation {
  std::string property;  // exclusive-ownership, monotonic-epochs, ...
  std::int64_t t_us = 0;
  std::string detail;
  std::size_t first_line = 0;  // the trace window (0-based line numbers) that shows it
  std::size_t last_line = 0;
  /// The lines that show it, as the checker was fed them: at most the last 12 of the window
  /// (lines max(first_line, last_line - 11) .. last_line), each cut at 300 bytes. Empty when the
  /// checker was fed no line text, or for a finding without a window (model-invariant, watchdog).
  std::vector<std::string> window;
};

class InvariantChecker {
 public:
  explicit InvariantChecker(InvariantContext context);
  ~InvariantChecker();
  InvariantChecker(const InvariantChecker&) = delete;
  InvariantChecker& operator=(const InvariantChecker&) = delete;
  /// Feeds the next event (in trace order) as the next line; `line` is its text, kept for the
  /// window a violation prints (empty: no window text).
  void on_event(std::int64_t t_us, const rsim::trace::Event& e, std::string_view line = {});
  /// Feeds the next trace.jsonl line, read through the trace reader.
  void on_line(const std::string& line);
  /// Ends the trace: the last instant's checks and liveness. Returns every violation found.
  const std::vector<Violation>& finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The checker on the trace bus: every event it is given is checked as the next line, its text
/// formatted (into a few reused buffers) for the windows.
class InvariantSink final : public rsim::TraceSink {
 public:
  /// `written`: number and check only the events that level writes, as trace.jsonl writes them
  /// (run.start with its trace_level); nullopt: every event the bus carries, as a writer without a
  /// level writes them. `max_bytes` bounds those lines' bytes as the trace sinks do
  /// (sim::WatchdogTripped past it).
  InvariantSink(InvariantContext context, std::optional<rsim::trace::Detail> written,
                std::uint64_t max_bytes = sim::WatchdogLimits{}.max_trace_bytes);
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override;
  /// The end of the run: every violation found.
  const std::vector<Violation>& finish() { return checker_.finish(); }

 private:
  InvariantChecker checker_;
  std::optional<rsim::trace::LevelFilter> filter_;
  rsim::trace::TraceByteBound bound_;
  rsim::trace::ReadStorage raw_;
  std::string line_;
};

/// All of it at once over a whole trace.jsonl (read through the trace reader).
std::vector<Violation> check_invariants(const std::vector<std::string>& lines,
                                        const InvariantContext& context);

}  // namespace reports
