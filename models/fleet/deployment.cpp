#include "models/fleet/deployment.hpp"

#include <algorithm>

namespace rsim::fleet {

std::int64_t scaled_value(IntOrPercent v, std::int64_t total, bool round_up) {
  if (!v.percent) return v.value;
  const std::int64_t product = v.value * total;
  return round_up ? (product + 99) / 100 : product / 100;
}

std::pair<std::int64_t, std::int64_t> resolve_fenceposts(IntOrPercent surge,
                                                         IntOrPercent unavailable,
                                                         std::int64_t desired) {
  const std::int64_t s = scaled_value(surge, desired, true);
  std::int64_t u = scaled_value(unavailable, desired, false);
  if (s == 0 && u == 0) u = 1;
  return {s, u};
}

bool rolling_update_pass(std::int64_t desired, IntOrPercent surge, IntOrPercent unavailable,
                         ReplicaSetCount& new_set, std::vector<ReplicaSetCount>& old_sets) {
  bool changed = false;
  const auto [max_surge, max_unavailable] = resolve_fenceposts(surge, unavailable, desired);
  const auto total = [&] {
    std::int64_t n = new_set.replicas;
    for (const auto& rs : old_sets) n += rs.replicas;
    return n;
  };
  // The new ReplicaSet: up to desired + maxSurge pods in all, never past desired.
  if (new_set.replicas > desired) {
    new_set.replicas = desired;
    changed = true;
  } else if (new_set.replicas < desired) {
    const std::int64_t room = desired + max_surge - total();
    if (room > 0) {
      new_set.replicas += std::min(room, desired - new_set.replicas);
      changed = true;
    }
  }
  std::int64_t old_count = 0;
  for (const auto& rs : old_sets) old_count += rs.replicas;
  if (old_count == 0) return changed;
  // The old ReplicaSets: keep desired - maxUnavailable available, counting the new set's
  // unavailable pods as already missing.
  const std::int64_t min_available = desired - max_unavailable;
  const std::int64_t new_unavailable = new_set.replicas - new_set.available;
  std::int64_t max_scaled_down = total() - min_available - new_unavailable;
  if (max_scaled_down <= 0) return changed;
  // Unhealthy old pods go first, oldest set first.
  for (auto& rs : old_sets) {
    if (max_scaled_down <= 0) break;
    const std::int64_t unhealthy = rs.replicas - rs.available;
    const std::int64_t n = std::min(max_scaled_down, unhealthy);
    if (n <= 0) continue;
    rs.replicas -= n;
    max_scaled_down -= n;
    changed = true;
  }
  // Then available old pods, as long as enough stay available.
  std::int64_t available = new_set.available;
  for (const auto& rs : old_sets) available += rs.available;
  if (available <= min_available) return changed;
  std::int64_t to_scale_down = available - min_available;
  for (auto& rs : old_sets) {
    if (to_scale_down <= 0) break;
    const std::int64_t n = std::min(rs.replicas, to_scale_down);
    if (n <= 0) continue;
    rs.replicas -= n;
    to_scale_down -= n;
    changed = true;
  }
  return changed;
}

std::int64_t disruptions_allowed(const DeploymentSpec& d, std::int64_t expected,
                                 std::int64_t healthy) {
  std::int64_t desired_healthy = 0;
  if (d.pdb_min_available) {
    desired_healthy = scaled_value(*d.pdb_min_available, expected, true);
  } else if (d.pdb_max_unavailable) {
    desired_healthy =
        std::max<std::int64_t>(0, expected - scaled_value(*d.pdb_max_unavailable, expected, true));
  } else {
    return healthy;  // no budget: every eviction goes through
  }
  return std::max<std::int64_t>(0, healthy - desired_healthy);
}

}  // namespace rsim::fleet
