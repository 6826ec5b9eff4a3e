// Benchmark of the server-side assignors at Kafka's published scale (1,000 members, 1,000
// topics, 50,000 partitions; Kafka reports 15-20 ms) and a scale-out to 10,000 members. Builds
// seeded inputs, times assign_server() alone, and returns a text report. Wall-clock timing:
// for `rebalance-sim bench assignors` only, never for the simulation.
#pragma once
#include <string>

namespace rsim::assignors {

/// Runs every scenario a few times and reports the best and median time of each.
std::string run_server_assignor_bench();

}  // namespace rsim::assignors
