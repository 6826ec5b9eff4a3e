// Helpers for tests that read a run's trace: parse lines, find events, get their times in ms.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/world.hpp"

namespace testing {

inline std::vector<nlohmann::json> parse_trace(const std::vector<std::string>& lines) {
  std::vector<nlohmann::json> out;
  out.reserve(lines.size());
  for (const auto& l : lines) out.push_back(nlohmann::json::parse(l));
  return out;
}

inline std::vector<nlohmann::json> run_trace(const std::string& scenario_path, const std::string& variant,
                                             std::uint64_t seed = 0) {
  const auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + scenario_path);
  return parse_trace(rsim::run_scenario(spec, variant, seed == 0 ? spec.seed : seed).trace_lines);
}

/// Times (ms, fractional) of `callback` start events of one consumer, in order.
inline std::vector<double> callback_starts(const std::vector<nlohmann::json>& trace,
                                           const std::string& consumer, const std::string& callback) {
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
inline std::vector<double> responses(const std::vector<nlohmann::json>& trace, const std::string& consumer,
                                     const std::string& api, const std::string& error) {
  std::vector<double> out;
  for (const auto& e : trace) {
    if (e["type"] == "rpc" && e["dir"] == "recv" && e["to"] == consumer && e["api"] == api &&
        e["error"] == error)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  }
  return out;
}

}  // namespace testing
