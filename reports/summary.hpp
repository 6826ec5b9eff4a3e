// summary.json, computed from the trace alone: the rebalances (start, end, trigger, partitions
// revoked and assigned) and the metrics. A pure function of trace lines; knows no model class.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reports {

struct SummaryInputs {
  std::string scenario;
  std::string protocol;
  std::uint64_t seed = 0;
  nlohmann::ordered_json produced_by;  // simulator version, commit, scenario SHA-256
};

nlohmann::ordered_json summarize(const std::vector<std::string>& trace_lines,
                                 const SummaryInputs& inputs);

}  // namespace reports
