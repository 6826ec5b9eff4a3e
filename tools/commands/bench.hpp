// `rebalance-sim bench kernel|assignors|scale`: benchmarks (not tests), printed on stdout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rsim::cli {

struct ScaleArgs {
  std::vector<std::string> protocols{"consumer"};
  std::string sizes = "100x1000,1000x10000";
  std::int64_t virtual_ms = 120000;
  std::string trace = "standard";
  bool no_critical_paths = false;
  bool print_scenario = false;
};

/// kOk; a bad benchmark name or scale option throws BadInput (exit 2).
int cmd_bench(const std::string& what, std::uint64_t events, const ScaleArgs& scale);

}  // namespace rsim::cli
