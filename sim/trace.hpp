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

 private:
  const Kernel& kernel_;
  std::vector<std::string> lines_;
  bool enabled_ = true;
};

}  // namespace sim
