// Benchmarks (not tests): the kernel's event rate against a bare binary-heap event loop.
#pragma once
#include <cstdint>
#include <string>

namespace rsim::cli {

struct KernelBenchResult {
  std::uint64_t events = 0;
  double kernel_events_per_sec = 0;
  double bare_events_per_sec = 0;
  double ratio() const { return kernel_events_per_sec / bare_events_per_sec; }
};

/// Fires `events` no-op timer events through the kernel (timers re-armed as heartbeats are)
/// and the same number through a plain std::push_heap/pop_heap loop; best of `rounds`.
KernelBenchResult run_kernel_bench(std::uint64_t events, int rounds);

}  // namespace rsim::cli
