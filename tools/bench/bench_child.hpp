// Helpers shared by the assignor benchmarks (not tests, not the simulation): each measurement
// runs in a forked child process, so that the child's peak resident set size (getrusage
// ru_maxrss, read by the parent through wait4) belongs to that one measurement alone, and the
// checks that every benchmarked result is a correct assignment.
#pragma once
#include <functional>
#include <string>

namespace rsim::assignors::bench {

struct ChildOutcome {
  std::string output;     // what `work` returned (or "error: ..." if it threw)
  long peak_rss_kib = 0;  // the child's ru_maxrss (KiB on Linux)
  bool failed = false;    // the child threw, crashed or could not be started
};

/// Runs `work` in a forked child and returns its result and peak RSS. The child starts as a
/// copy of this process, so its peak is at least this process's resident size at the fork;
/// baseline_rss_kib() measures that floor with an empty `work`.
ChildOutcome run_in_child(const std::function<std::string()>& work);

/// This process's peak RSS so far (getrusage RUSAGE_SELF); in a child, read after building the
/// input, it separates the input's memory from the assignor's.
long self_peak_rss_kib();

/// Peak RSS of a child that does nothing: the floor under every figure of run_in_child().
long baseline_rss_kib();

}  // namespace rsim::assignors::bench
