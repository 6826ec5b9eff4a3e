#include "tools/bench/bench.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "sim/kernel.hpp"
#include "sim/rng.hpp"

namespace rsim::cli {

namespace {

// Wall-clock time is read only here, around a benchmark, never inside a simulation.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

constexpr int kTimers = 1024;

double kernel_rate(std::uint64_t events) {
  sim::Kernel kernel;
  sim::Rng rng(1, "bench");
  std::uint64_t fired = 0;
  std::vector<std::unique_ptr<sim::Timer>> timers;
  timers.reserve(kTimers);
  // Each timer re-arms itself, as a heartbeat timer does: one O(log n) push per event.
  for (std::size_t i = 0; i < kTimers; ++i) {
    timers.push_back(std::make_unique<sim::Timer>(kernel, [&timers, i, &fired, &rng] {
      ++fired;
      timers[i]->arm(sim::SimTime{1 + static_cast<std::int64_t>(rng.next() & 1023)});
    }));
  }
  for (auto& t : timers) t->arm(sim::SimTime{static_cast<std::int64_t>(rng.next() & 1023)});
  const auto start = std::chrono::steady_clock::now();
  kernel.run(sim::kNever - sim::SimTime{1}, events);
  return static_cast<double>(events) / seconds_since(start);
}

double bare_rate(std::uint64_t events) {
  struct E {
    std::int64_t at;
    std::uint64_t seq;
  };
  auto later = [](const E& a, const E& b) { return a.at != b.at ? a.at > b.at : a.seq > b.seq; };
  std::vector<E> heap;
  heap.reserve(kTimers);
  sim::Rng rng(1, "bench");
  std::uint64_t seq = 0;
  for (int i = 0; i < kTimers; ++i) {
    heap.push_back({static_cast<std::int64_t>(rng.next() & 1023), seq++});
    std::push_heap(heap.begin(), heap.end(), later);
  }
  std::uint64_t fired = 0;
  const auto start = std::chrono::steady_clock::now();
  while (fired < events) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const E e = heap.back();
    heap.pop_back();
    ++fired;
    heap.push_back({e.at + 1 + static_cast<std::int64_t>(rng.next() & 1023), seq++});
    std::push_heap(heap.begin(), heap.end(), later);
  }
  return static_cast<double>(events) / seconds_since(start);
}

}  // namespace

KernelBenchResult run_kernel_bench(std::uint64_t events, int rounds) {
  KernelBenchResult r;
  r.events = events;
  for (int i = 0; i < rounds; ++i) {
    r.kernel_events_per_sec = std::max(r.kernel_events_per_sec, kernel_rate(events));
    r.bare_events_per_sec = std::max(r.bare_events_per_sec, bare_rate(events));
  }
  return r;
}

}  // namespace rsim::cli
