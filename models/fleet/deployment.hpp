// The Kubernetes controllers' arithmetic that decides which pods a Deployment or StatefulSet
// starts and stops: pure functions, so that tests can check rollout timelines by hand. The
// runtime that carries them out on simulated pods is fleet.hpp. Rules from Kubernetes
// (docs/model.md, "Fleets", cites the files and functions).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "models/spec/fleet_spec.hpp"

namespace rsim::fleet {

/// An int-or-percent of `total`: a percentage rounded up or down (Kubernetes'
/// GetScaledValueFromIntOrPercent); a plain int as it is.
std::int64_t scaled_value(IntOrPercent v, std::int64_t total, bool round_up);

/// maxSurge (rounded up) and maxUnavailable (rounded down) of a rolling update of `desired`
/// replicas; when both come out 0, maxUnavailable is 1 (ResolveFenceposts).
std::pair<std::int64_t, std::int64_t> resolve_fenceposts(IntOrPercent surge,
                                                         IntOrPercent unavailable,
                                                         std::int64_t desired);

/// A ReplicaSet as the Deployment controller sees it: its spec.replicas and how many of its pods
/// are available (ready for minReadySeconds, not terminating).
struct ReplicaSetCount {
  std::int64_t replicas = 0;
  std::int64_t available = 0;
};

/// One pass of the Deployment controller's RollingUpdate (reconcileNewReplicaSet, then
/// reconcileOldReplicaSets: cleanupUnhealthyReplicas and scaleDownOldReplicaSetsForRollingUpdate).
/// `old_sets` oldest first. Changes the replicas in place; true when any changed. The controller
/// syncs again at every change of a ReplicaSet, so the caller repeats it until it changes nothing.
bool rolling_update_pass(std::int64_t desired, IntOrPercent surge, IntOrPercent unavailable,
                         ReplicaSetCount& new_set, std::vector<ReplicaSetCount>& old_sets);

/// A PodDisruptionBudget's disruptionsAllowed: healthy pods minus the desired healthy count
/// (minAvailable, rounded up, or expected - maxUnavailable, rounded up), never below 0
/// (the disruption controller's getExpectedPodCount and updatePdbStatus).
std::int64_t disruptions_allowed(const DeploymentSpec& d, std::int64_t expected,
                                 std::int64_t healthy);

}  // namespace rsim::fleet
