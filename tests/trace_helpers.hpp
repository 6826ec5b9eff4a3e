// Helpers for tests that read a run's trace: parse lines, find events, get their times in ms.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/summary.hpp"

namespace testing {

/// A trace bus that also keeps every event as a trace.jsonl line (unit tests of one model).
struct RecordedTracer : rsim::Tracer {
  explicit RecordedTracer(const sim::Kernel& kernel) : rsim::Tracer(kernel) { attach(sink); }
  const std::vector<std::string>& lines() const { return sink.lines(); }
  rsim::trace::JsonlLinesSink sink;
};

inline std::vector<nlohmann::json> parse_trace(const std::vector<std::string>& lines) {
  std::vector<nlohmann::json> out;
  out.reserve(lines.size());
  for (const auto& l : lines) out.push_back(nlohmann::json::parse(l));
  return out;
}

/// The idealized machine of the unit tests: the timing texture's knobs that a scenario left at
/// their Kafka-like defaults (cluster.request_handling_ms, cluster.write_latency_ms,
/// cluster.purgatory_lateness_ms, each consumer's heartbeat_wakeup_lateness_ms,
/// connection_setup_ms, poll_return_lateness_ms and reconciliation_ms; docs/fidelity.md, "Timing
/// texture") become 0,
/// so that only Kafka's timers
/// and the network take time and a test can derive every time by hand from Kafka's rules. A knob
/// the scenario sets stays as set. The scenario files' own `expect` blocks (ctest "scenario") and
/// tests/models/timing_texture_test.cpp run with the defaults.
inline bool is_default(const sim::Distribution& d, const sim::Distribution& def) {
  return d.kind == def.kind && d.median == def.median && d.sigma == def.sigma &&
         d.value == def.value;
}
inline rsim::ScenarioSpec ideal_machine(rsim::ScenarioSpec spec) {
  const auto zero = sim::Distribution::constant(0);
  if (is_default(spec.cluster.request_handling, rsim::kDefaultRequestHandling))
    spec.cluster.request_handling = zero;
  if (is_default(spec.cluster.write_latency, rsim::kDefaultWriteLatency))
    spec.cluster.write_latency = zero;
  if (is_default(spec.cluster.purgatory_lateness, rsim::kDefaultPurgatoryLateness))
    spec.cluster.purgatory_lateness = zero;
  for (auto& c : spec.consumers)
    if (is_default(c.heartbeat_wakeup_lateness, rsim::kDefaultHeartbeatWakeupLateness))
      c.heartbeat_wakeup_lateness = zero;
  for (auto& c : spec.consumers)
    if (is_default(c.connection_setup, rsim::kDefaultConnectionSetup)) c.connection_setup = zero;
  for (auto& c : spec.consumers)
    if (c.poll_return_lateness == rsim::kDefaultPollReturnLateness)
      c.poll_return_lateness = sim::SimTime::zero();
  for (auto& c : spec.consumers)
    if (is_default(c.reconciliation, rsim::kDefaultReconciliation)) c.reconciliation = zero;
  return spec;
}
inline rsim::ScenarioSpec ideal_machine(const nlohmann::json& doc,
                                        const std::string& path = "test.json") {
  return ideal_machine(rsim::parse_scenario(doc, path));
}
inline rsim::ScenarioSpec load_ideal(const std::string& scenario_path) {
  return ideal_machine(
      rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + scenario_path));
}

/// A scenario file's run on the idealized machine (ideal_machine).
inline std::vector<nlohmann::json> run_trace(const std::string& scenario_path,
                                             const std::string& variant, std::uint64_t seed = 0) {
  const auto spec = load_ideal(scenario_path);
  return parse_trace(rsim::run_scenario(spec, variant, seed == 0 ? spec.seed : seed).trace_lines);
}

/// Times (ms, fractional) of `callback` start events of one consumer, in order.
inline std::vector<double> callback_starts(const std::vector<nlohmann::json>& trace,
                                           const std::string& consumer,
                                           const std::string& callback) {
  std::vector<double> out;
  for (const auto& e : trace) {
    if (e["type"] == "callback" && e["consumer"] == consumer && e["callback"] == callback &&
        e["phase"] == "start")
      out.push_back(e["t_us"].get<double>() / 1000.0);
  }
  return out;
}

/// Partitions of the n-th `callback` start of one consumer.
inline std::vector<std::string> callback_partitions(const std::vector<nlohmann::json>& trace,
                                                    const std::string& consumer,
                                                    const std::string& callback, std::size_t n) {
  std::size_t i = 0;
  for (const auto& e : trace) {
    if (e["type"] == "callback" && e["consumer"] == consumer && e["callback"] == callback &&
        e["phase"] == "start") {
      if (i++ == n) return e["partitions"].get<std::vector<std::string>>();
    }
  }
  return {};
}

/// Times (ms) of responses of `api` received by `consumer` with `error`.
inline std::vector<double> responses(const std::vector<nlohmann::json>& trace,
                                     const std::string& consumer, const std::string& api,
                                     const std::string& error) {
  std::vector<double> out;
  for (const auto& e : trace) {
    if (e["type"] == "rpc" && e["dir"] == "recv" && e["to"] == consumer && e["api"] == api &&
        e["error"] == error)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  }
  return out;
}

/// Events of one type, in order.
inline std::vector<nlohmann::json> events(const std::vector<nlohmann::json>& trace,
                                          const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace)
    if (e["type"] == type) out.push_back(e);
  return out;
}

/// Times (ms) of events of `type` whose `key` equals `value`.
inline std::vector<double> times(const std::vector<nlohmann::json>& trace, const std::string& type,
                                 const std::string& key, const nlohmann::json& value) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == type && e.contains(key) && e[key] == value)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}

/// Time (ms) of the first such event, -1 if there is none.
inline double first_time(const std::vector<nlohmann::json>& trace, const std::string& type,
                         const std::string& key, const nlohmann::json& value) {
  const auto t = times(trace, type, key, value);
  return t.empty() ? -1 : t.front();
}

/// Time (ms) of the last request of one of `apis` that `consumer` sent before `before_ms`, -1 if
/// none.
inline double last_send_before(const std::vector<nlohmann::json>& trace,
                               const std::string& consumer, const std::set<std::string>& apis,
                               double before_ms) {
  double last = -1;
  for (const auto& e : trace) {
    const double t = e["t_us"].get<double>() / 1000.0;
    if (t >= before_ms) break;
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == consumer &&
        apis.count(e["api"].get<std::string>()) > 0)
      last = t;
  }
  return last;
}

/// (time ms, log end offset, position, lag) of every periodic `lag` sample.
inline std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> lag_samples(
    const std::vector<nlohmann::json>& trace) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> out;
  for (const auto& l : events(trace, "lag")) {
    if (l["reason"] != "sample") continue;
    out.emplace_back(l["t_us"].get<std::int64_t>() / 1000, l["log_end_offset"].get<std::int64_t>(),
                     l["offset"].get<std::int64_t>(), l["lag"].get<std::int64_t>());
  }
  return out;
}

/// summary.json of a trace.
inline nlohmann::json summary_of(const std::vector<std::string>& lines) {
  reports::SummaryInputs in;
  return nlohmann::json::parse(reports::summarize(lines, in).dump());
}

/// summary.json of a scenario's run under `variant` with the scenario's seed, on the idealized
/// machine (ideal_machine).
inline nlohmann::json summary_of(const std::string& scenario_path, const std::string& variant) {
  const auto spec = load_ideal(scenario_path);
  reports::SummaryInputs in;
  in.scenario = spec.name;
  in.protocol = variant;
  in.seed = spec.seed;
  return nlohmann::json::parse(
      reports::summarize(rsim::run_scenario(spec, variant, spec.seed).trace_lines, in).dump());
}

}  // namespace testing
