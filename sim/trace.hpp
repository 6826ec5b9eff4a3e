// The tracer: every observable fact of a run, one JSON object per line, in processing order.
// trace.jsonl is the single source of truth; summaries and reports are computed from it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/kernel.hpp"

namespace sim {

class Tracer {
 public:
  explicit Tracer(const Kernel& kernel) : kernel_(kernel) {}
  /// Appends {"t_us": now, "type": type, ...fields} (fields in the order given).
  void emit(std::string_view type, const nlohmann::ordered_json& fields);
  const std::vector<std::string>& lines() const { return lines_; }
  std::string jsonl() const;
  /// When off, emit() does nothing (benchmarks).
  void set_enabled(bool on) { enabled_ = on; }
  /// The watchdog's bound on the trace: emit() throws WatchdogTripped past it.
  void set_max_bytes(std::uint64_t max) { max_bytes_ = max; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  const Kernel& kernel_;
  std::vector<std::string> lines_;
  bool enabled_ = true;
  std::uint64_t bytes_ = 0;
  std::uint64_t max_bytes_ = WatchdogLimits{}.max_trace_bytes;
};

}  // namespace sim
