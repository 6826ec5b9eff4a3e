// KEDA's Apache Kafka scaler and the Horizontal Pod Autoscaler it feeds, as pure arithmetic (the
// loop that runs them inside a simulation is fleet.hpp). Rules from KEDA's kafka scaler and
// Kubernetes' HPA controller (docs/model.md, "Fleets", cites the files and functions).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/spec/fleet_spec.hpp"
#include "sim/time.hpp"

namespace rsim::fleet {

/// One partition as the scaler reads it: the group's committed offset (none: no valid offset)
/// and the partition's latest offset.
struct PartitionOffsets {
  std::optional<std::int64_t> committed;
  std::int64_t latest = 0;
};

/// What the scaler reports: `lag` is the metric the HPA gets (capped unless allowIdleConsumers),
/// `raw_lag` the sum before the cap (activation compares it with activationLagThreshold).
struct KafkaLag {
  std::int64_t lag = 0;
  std::int64_t raw_lag = 0;
  std::int64_t partitions = 0;
  std::int64_t partitions_with_lag = 0;
  bool capped = false;
};

/// A partition's lag as KEDA's getLagForPartition computes it: no committed offset gives 1
/// (offsetResetPolicy latest; 0 with scaleToZeroOnInvalidOffset) or the whole log (earliest).
std::int64_t partition_lag(const AutoscalerSpec& a, const PartitionOffsets& p);
/// The total (getTotalLag): summed lag, capped at lagThreshold x the partitions (or x the
/// partitions with lag, limitToPartitionsWithLag) unless allowIdleConsumers.
KafkaLag total_lag(const AutoscalerSpec& a, const std::vector<PartitionOffsets>& partitions);
/// The scaler is active when the lag exceeds activationLagThreshold (GetMetricsAndActivity).
inline bool active(const AutoscalerSpec& a, const KafkaLag& l) {
  return l.raw_lag > a.activation_lag_threshold;
}

/// The HPA's replica count for an external metric with an AverageValue target
/// (GetExternalPerPodMetricReplicas): unchanged while usage / (target x replicas) is within the
/// tolerance of 1, else ceil(usage / target).
std::int32_t external_metric_replicas(std::int64_t usage, std::int64_t target,
                                      std::int32_t replicas, double tolerance);

/// Why the HPA's count differs from its metric's proposal ("" when it does not).
struct HpaDecision {
  std::int32_t proposal = 0;    // from the metric
  std::int32_t stabilized = 0;  // after the stabilization windows
  std::int32_t desired = 0;     // after the policies and min/max
  std::string limit;  // ScaleUpStabilized, ScaleDownStabilized, ScaleUpLimit, ScaleDownLimit,
                      // TooManyReplicas, TooFewReplicas
};

/// The HPA's memory between syncs: recommendations for the stabilization windows and scale
/// events for the policies' periods (normalizeDesiredReplicasWithBehaviors).
class Hpa {
 public:
  Hpa(std::int32_t min_replicas, std::int32_t max_replicas, HpaRules up, HpaRules down)
      : min_(min_replicas), max_(max_replicas), up_(std::move(up)), down_(std::move(down)) {}
  /// The desired count at `now` for `current` replicas and the metric's `proposal`.
  HpaDecision decide(sim::SimTime now, std::int32_t current, std::int32_t proposal);
  /// The scale that the decision led to (storeScaleEvent).
  void record_scale(sim::SimTime now, std::int32_t from, std::int32_t to);

 private:
  struct Recommendation {
    sim::SimTime at;
    std::int32_t replicas;
  };
  struct ScaleEvent {
    sim::SimTime at;
    std::int32_t change;
  };
  static std::int32_t change_in_period(sim::SimTime now, sim::SimTime period,
                                       const std::vector<ScaleEvent>& events);
  std::int32_t min_, max_;
  HpaRules up_, down_;
  bool initialized_ = false;
  std::vector<Recommendation> recommendations_;
  std::vector<ScaleEvent> up_events_, down_events_;
};

}  // namespace rsim::fleet
