// Why each rebalance took as long as it did: the run's happens-before graph (Boost.Graph, kept
// inside this module) and, per rebalance, its critical path from the trigger to the last
// member's assignment with its time split into named causes. A pure function of the trace: it is
// fed typed trace events (online, or read back from trace.jsonl) and reads only events that the
// standard trace level keeps (docs/report.md, "Critical paths").
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_events.hpp"

namespace reports {

/// The causes a rebalance's time is split into, in the order summary.json writes them.
enum class Cause : std::uint8_t {
  HeartbeatWait,
  PollWait,
  SessionTimeout,
  RebalanceTimeout,
  InitialDelay,
  AssignmentInterval,
  Network,
  Broker,
  Callback,
  Other,
};
inline constexpr std::size_t kCauseCount = 10;
/// "heartbeat_wait_ms", ...: the keys of `critical_path.causes`.
const std::array<std::string_view, kCauseCount>& cause_names();

/// One event of a critical path and the edge that led to it.
struct PathStep {
  std::size_t node = 0;  // the graph's vertex
  std::int64_t t_us = 0;
  std::string actor;  // a consumer, or "coordinator" (of the rebalance's group)
  std::string event;  // the trace type: rpc, callback, group.state, ...
  std::string what;   // "JoinGroup request", "onPartitionsRevoked end", "PreparingRebalance", ...
  /// The part of the rebalance the edge into this step covers, by cause (none on the first
  /// step): one cause, or two when this step waited for a request that a timer sent
  /// (`waited_for`): the wait, then the request's way.
  std::vector<std::pair<Cause, std::int64_t>> causes;
  std::optional<std::size_t> waited_for;  // a vertex: the request this step waited for
  std::int64_t waited_for_t_us = 0;
  std::string waited_for_actor, waited_for_what;
};

struct CriticalPath {
  std::vector<PathStep> steps;
  std::array<std::int64_t, kCauseCount> causes_us{};  // sums to end_us - start_us
  /// Steps already left out of `steps` (a remembered path keeps only those kept_steps() keeps).
  std::size_t steps_elided = 0;
};

/// summary.json's `steps` of one path hold at most this many steps: the first, the last and the
/// steps that carry the most time; the others are counted in `steps_elided`.
inline constexpr std::size_t kMaxPathSteps = 200;
/// Which steps of a path summary.json keeps (all of them up to kMaxPathSteps): the first and the
/// last, then those with the most time on them (ties: the earlier), none without time.
std::vector<bool> kept_steps(const std::vector<PathStep>& steps);

/// The happens-before graph of one run, built as the events come.
class CriticalPaths {
 public:
  CriticalPaths();
  ~CriticalPaths();
  CriticalPaths(const CriticalPaths&) = delete;
  CriticalPaths& operator=(const CriticalPaths&) = delete;

  void on_event(std::int64_t t_us, const rsim::trace::Event& e);
  /// The broker's group.consumer.assignment.interval.ms (summary.json's `config`), given before
  /// the first event: a KIP-848 target assignment deferred by it then splits into the interval's
  /// wait (to the previous target's assignment_timestamp + the interval) and the wait for the
  /// heartbeat that computed it. Unknown: the whole gap is assignment_interval_ms.
  void set_assignment_interval_ms(std::optional<std::int64_t> ms);

  /// The critical path of the rebalance of `group` that ran from start_us to end_us.
  CriticalPath find(const std::string& group, std::int64_t start_us, std::int64_t end_us) const;
  /// Finds the path now and keeps it (compactly) for to_json(), whatever prune() drops later.
  void remember(const std::string& group, std::int64_t start_us, std::int64_t end_us);
  /// The same as summary.json's `critical_path`: {"causes": {...}, "steps": [...]}; a
  /// remembered path as it was found.
  nlohmann::ordered_json to_json(const std::string& group, std::int64_t start_us,
                                 std::int64_t end_us) const;

  /// Drops what no later find() can read, and renumbers the vertices kept (in their order: ties
  /// on time break the same way). The caller promises that every later find() is of a
  /// rebalance open now, which started at one of `open_starts_us` and ends now or later, or of
  /// one that starts now or later (now: the last event fed). Kept: the vertices the actors and
  /// groups point at (last events, requests in flight, the open rebalance's arm: later events
  /// get edges from them only), each group's last end, and for each open start, the walks back
  /// from those (with the in-edges they read), found by one walk back to the earliest open
  /// start that follows both of a vertex's candidate predecessors where a later start's walk
  /// could take the other (so it may keep a branch no start takes); nothing else.
  void prune(const std::vector<std::int64_t>& open_starts_us);
  /// Whether the graph has grown enough since the last prune() for another to pay off: twice
  /// what the last one kept, plus kPruneSlack (so pruning costs O(1) per vertex, amortized).
  bool prune_due() const;
  static constexpr std::size_t kPruneSlack = 1024;

  /// The graph, for tests: its size and whether it has the edge a -> b.
  std::size_t vertices() const;
  std::size_t edges() const;
  bool has_edge(std::size_t a, std::size_t b) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reports
