// The world of a `share` run (KIP-932): brokers that are, at once, the share group's
// coordinator (ShareGroupCoordinator over __consumer_offsets), the leaders of the data
// partitions with their share-partitions (SharePartition, ShareFetch / ShareAcknowledge with the
// delayed-fetch wait), and share coordinators persisting share-partition state in
// __share_group_state; the share consumers; and the scenario's script. Like wire() + run() for
// the other variants, the result is the trace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "sim/kernel.hpp"

namespace rsim {

/// Problems that keep `spec` from running under `share` (scenario features the share world does
/// not model), as "JSON path: what" strings.
std::vector<std::string> share_unsupported_features(const ScenarioSpec& spec);

/// Runs the `share` variant of `spec` under the kernel watchdog's `limits`, publishing its trace to
/// `sinks`; returns the number of kernel events fired.
std::uint64_t run_share_scenario(const ScenarioSpec& spec, std::uint64_t seed,
                                 const std::vector<TraceSink*>& sinks, trace::Detail detail,
                                 const sim::WatchdogLimits& limits = {});

}  // namespace rsim
