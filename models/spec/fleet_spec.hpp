// Fleets (issue 38): the `deployments` and `autoscalers` of a scenario after validation. A
// deployment is a Kubernetes Deployment or StatefulSet whose pods each run one consumer built from
// its `template`; an autoscaler is KEDA's Apache Kafka scaler feeding a Horizontal Pod Autoscaler
// that scales one deployment. Keys are spelled as Kubernetes and KEDA spell them; times the
// simulator adds (pod start, preStop) are distributions in milliseconds like the other knobs.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace rsim {

struct ConsumerSpec;

/// Kubernetes' IntOrString for maxSurge, maxUnavailable, minAvailable: 3 or "25%".
struct IntOrPercent {
  std::int64_t value = 0;
  bool percent = false;
};

enum class WorkloadKind { Deployment, StatefulSet };

struct DeploymentSpec {
  std::string name;
  WorkloadKind kind = WorkloadKind::Deployment;
  std::int32_t replicas = 1;
  /// The pod template's consumer (its `name` is the deployment's; each pod's consumer is named
  /// after its pod). A `group.instance.id` of "$(POD_NAME)" becomes the pod's name, as a
  /// Kubernetes env var from `fieldRef: metadata.name` would.
  std::shared_ptr<const ConsumerSpec> consumer;
  /// strategy.rollingUpdate (Deployment): Kubernetes' defaults 25% / 25%.
  IntOrPercent max_surge{25, true};
  IntOrPercent max_unavailable{25, true};
  /// podManagementPolicy (StatefulSet): OrderedReady (default) or Parallel.
  bool parallel = false;
  sim::SimTime min_ready{0};  // minReadySeconds
  /// readinessProbe.initialDelaySeconds from the container's start; absent: the pod is ready at
  /// its consumer's first assignment (an application that reports ready once it joined).
  std::optional<sim::SimTime> probe_delay;
  /// terminationGracePeriodSeconds (default 30 s) and the preStop hook's duration.
  sim::SimTime termination_grace = sim::ms(30000);
  sim::Distribution pre_stop = sim::Distribution::constant(0);
  /// pod_start: scheduling (pod created -> bound to a node), image pull, JVM start (container
  /// started -> the application's main()); the consumer's own start_latency_ms comes after.
  sim::Distribution scheduling = sim::Distribution::constant(0);
  sim::Distribution image_pull = sim::Distribution::constant(0);
  sim::Distribution jvm_start = sim::Distribution::constant(0);
  /// Nodes the pods are spread over (node-0 .. node-(nodes-1)): the node with the fewest pods.
  std::int32_t nodes = 1;
  /// podDisruptionBudget: at most one of them.
  std::optional<IntOrPercent> pdb_min_available;
  std::optional<IntOrPercent> pdb_max_unavailable;
};

enum class SelectPolicy { Max, Min, Disabled };

struct HpaPolicy {
  bool percent = false;  // type: Percent | Pods
  std::int32_t value = 0;
  sim::SimTime period{0};  // periodSeconds
};

/// One direction of an HPA's `behavior` (scaleUp or scaleDown).
struct HpaRules {
  sim::SimTime stabilization_window{0};  // stabilizationWindowSeconds
  SelectPolicy select = SelectPolicy::Max;
  std::vector<HpaPolicy> policies;
};

/// Kubernetes' defaults (autoscaling/v2 HorizontalPodAutoscalerBehavior): scale up by the larger
/// of 100% and 4 pods per 15 s without stabilization; scale down by up to 100% per 15 s after a
/// 300 s stabilization window.
HpaRules default_scale_up();
HpaRules default_scale_down();

struct AutoscalerSpec {
  std::string name;
  std::string deployment;  // scaleTargetRef.name
  // KEDA ScaledObject
  std::int32_t min_replicas = 0;                   // minReplicaCount
  std::int32_t max_replicas = 100;                 // maxReplicaCount
  sim::SimTime polling_interval = sim::ms(30000);  // pollingInterval (s)
  sim::SimTime cooldown = sim::ms(300000);         // cooldownPeriod (s)
  // KEDA's kafka trigger
  std::string group;                // consumerGroup (default: the deployment's group)
  std::string topic;                // topic ("" = every topic the group has committed offsets for)
  std::int64_t lag_threshold = 10;  // lagThreshold
  std::int64_t activation_lag_threshold = 0;     // activationLagThreshold
  bool allow_idle_consumers = false;             // allowIdleConsumers
  bool limit_to_partitions_with_lag = false;     // limitToPartitionsWithLag
  bool offset_reset_latest = true;               // offsetResetPolicy: latest | earliest
  bool scale_to_zero_on_invalid_offset = false;  // scaleToZeroOnInvalidOffset
  // The HPA KEDA creates
  sim::SimTime sync_period =
      sim::ms(15000);      // the controller manager's --horizontal-pod-autoscaler-sync-period
  double tolerance = 0.1;  // --horizontal-pod-autoscaler-tolerance
  HpaRules scale_up = default_scale_up();
  HpaRules scale_down = default_scale_down();
};

}  // namespace rsim
