// `rebalance-sim bench scale`: the simulator on one group of N consumers and P partitions (1
// record/s per partition, 1 % of the members crash and restart, a rolling restart of 10 % near
// the end), each size in a forked child: events, CPU seconds, virtual seconds per CPU second,
// peak RSS, trace bytes (standard detail, written to a temporary file), and the growth exponent
// of CPU time in members between consecutive sizes. A benchmark, not a test.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rsim::cli {

struct ScaleSize {
  std::int64_t consumers = 0;
  std::int64_t partitions = 0;
};

/// "100x1000,1000x10000" as sizes; throws std::invalid_argument on anything else.
std::vector<ScaleSize> parse_scale_sizes(const std::string& text);

/// The scenario of one size (what the bench runs), its `protocols` those given: `bench scale
/// --print-scenario` prints it, to `run` the bench's shape with every output (tools/pgo/train.sh).
nlohmann::json scale_scenario(const ScaleSize& size, const std::vector<std::string>& protocols,
                              std::int64_t virtual_ms);

/// Runs every size and returns the table.
/// `critical_paths` false: the summary leaves out the rebalances' critical paths (their cost is
/// the difference).
std::string run_scale_bench(const std::vector<ScaleSize>& sizes, const std::string& protocol,
                            std::int64_t virtual_ms, const std::string& trace_level = "standard",
                            bool critical_paths = true);

}  // namespace rsim::cli
