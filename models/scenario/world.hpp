// run_scenario(): builds one simulated world (kernel, network, brokers with their coordinators,
// consumers) for one scenario, protocol variant and seed, queues the scenario's script, and runs it
// to duration_ms. One World (world.cpp) wires every variant, classic, consumer and share, and
// carries out every verb of the script. The result is the trace; everything else derives from it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/protocol/model_options.hpp"
#include "models/scenario/scenario.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"

namespace rsim {

struct RunResult {
  std::string protocol;
  std::uint64_t seed = 0;
  std::vector<std::string> trace_lines;  // trace.jsonl, one JSON object per line
  std::uint64_t events_fired = 0;
  ModelCounters counters;
};

/// Protocol variants this build can simulate.
bool variant_supported(const std::string& variant);
/// Problems that make a scenario unrunnable under `variant` with this build (features that
/// arrive in later versions), as "JSON path: what" strings; empty when it can run.
std::vector<std::string> unsupported_features(const ScenarioSpec& spec, const std::string& variant);
/// Problems that keep `spec` from running under `share` (scenario features the share variant does
/// not model), as "JSON path: what" strings (part of unsupported_features(spec, "share")).
std::vector<std::string> share_unsupported_features(const ScenarioSpec& spec);

/// Runs one variant under the kernel watchdog's `limits`, publishing its trace to `sinks` as it
/// goes (nothing of it is kept here). Returns the number of kernel events fired. `options` are
/// the test-only injected bugs and developer checks; `counters`, if given, receives the world's.
/// Throws sim::InvariantViolation if the model breaks an invariant and sim::WatchdogTripped if the
/// run passes one of `limits` (the trace's byte bound is the trace sinks' to keep).
std::uint64_t run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed,
                           const std::vector<TraceSink*>& sinks,
                           trace::Detail detail = trace::Detail::Full,
                           const sim::WatchdogLimits& limits = {}, const ModelOptions& options = {},
                           ModelCounters* counters = nullptr);
/// Runs one variant and keeps its whole trace as lines (tests, short in-process runs); the lines
/// stop at `limits.max_trace_bytes` (sim::WatchdogTripped).
RunResult run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed,
                       const sim::WatchdogLimits& limits, const ModelOptions& options = {});
RunResult run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed);

}  // namespace rsim
