// Benchmark of the client-side assignors (not a test): times each assignor on large equal-
// subscription groups, fresh and then with one member leaving (owned partitions carried over,
// so the sticky paths run), plus the sticky assignors' general (unequal subscriptions) path.
// Wired into the CLI as `rebalance-sim bench assignors`.
#pragma once
#include <string>
#include <vector>

namespace rsim::assignors {

struct ClientBenchOptions {
  /// Assignors to time; empty = all four.
  std::vector<std::string> assignors;
  /// Group sizes as (members, topics, partitions per topic); empty = 100x10x100 and 1000x10x1000.
  struct Size {
    int members = 0;
    int topics = 0;
    int partitions_per_topic = 0;
  };
  std::vector<Size> sizes;
  /// Each call is timed this many times; the report gives the median.
  int repeats = 3;
  /// Also time the sticky assignors' general path: the last member subscribes to one topic only.
  bool unequal_subscriptions = true;
};

/// Runs the benchmark and returns a plain-text report, one line per assignor, size and phase;
/// each measurement runs in a child process (bench_child.hpp). Throws sim::InvariantViolation,
/// report included, if any result is not a correct assignment.
/// Timing uses std::chrono::steady_clock: benchmark only, nothing here reaches a simulation.
std::string run_client_assignor_bench(const ClientBenchOptions& options);
std::string run_client_assignor_bench();

}  // namespace rsim::assignors
