// Safety and liveness properties checked on a run's trace (issue 11). A pure function of the trace
// lines and a few facts of the scenario (which consumers commit at least once, when the last fault
// ends, the liveness bound): a sink fed one trace line at a time, as `run --check-invariants` and
// `explore` use it. It includes no model class.
//
// Safety, at the end of every instant:
//  - exclusive-ownership (not for share groups, whose partitions are shared by design): no partition owned by two live members of one group that the coordinator
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
#include <set>
#include <string>
#include <vector>

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
};

class InvariantChecker {
 public:
  explicit InvariantChecker(InvariantContext context);
  ~InvariantChecker();
  InvariantChecker(const InvariantChecker&) = delete;
  InvariantChecker& operator=(const InvariantChecker&) = delete;
  /// Feeds the next trace line (in trace order).
  void on_line(const std::string& line);
  /// Ends the trace: the last instant's checks and liveness. Returns every violation found.
  const std::vector<Violation>& finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// All of it at once over a whole trace.
std::vector<Violation> check_invariants(const std::vector<std::string>& lines, const InvariantContext& context);

}  // namespace reports
