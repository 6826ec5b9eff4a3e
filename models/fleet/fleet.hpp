// The fleet inside a run (issue 38): the pods of the scenario's deployments, each running one
// consumer, the controllers that create and delete them (a Deployment's ReplicaSets rolling update,
// a StatefulSet's ordered pods, node drains under a PodDisruptionBudget) and the autoscalers
// (KEDA's Kafka scaler and its HPA) that change the replicas from the lag they read. A sink of the
// run's trace: a pod learns that its consumer got its first assignment (readiness) or finished
// close() (termination) from the trace, as a probe or the kubelet would from the process.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/client/consumer_model.hpp"
#include "models/fleet/autoscaler.hpp"
#include "models/protocol/topic_partition.hpp"
#include "models/spec/fleet_spec.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"

namespace rsim {

/// What the fleet needs from the world it runs in.
struct FleetHost {
  /// Creates (and registers under its name, replacing an older incarnation) the consumer of a pod.
  std::function<ConsumerModel&(const ConsumerSpec&, std::uint64_t seed)> spawn;
  /// The group's committed offset of a partition, if any (what an OffsetFetch would answer).
  std::function<std::optional<std::int64_t>(const std::string& group, const TopicPartition&)>
      committed;
  /// A partition's latest offset now (ListOffsets latest).
  std::function<std::int64_t(const TopicPartition&)> log_end_offset;
  /// The partitions of a topic now.
  std::function<std::int32_t(const std::string& topic)> partitions;
};

class Fleet final : public TraceSink {
 public:
  Fleet(sim::Kernel& kernel, Tracer& tracer, const ScenarioSpec& spec, std::uint64_t seed,
        FleetHost host);
  ~Fleet() override;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  /// At the run's start: the deployments' first pods, the autoscalers' loops.
  void start();
  /// `rollout` and `drain-node` events.
  void apply(const verb::Rollout& e);
  void apply(const verb::DrainNode& e);
  void on_event(sim::SimTime t, const trace::Event& e) override;

 private:
  enum class Phase { Pending, Scheduled, Running, Gone };
  struct Pod {
    std::string name;
    std::size_t deployment = 0;
    std::int32_t revision = 1;
    std::int32_t ordinal = -1;  // StatefulSet pods
    std::int32_t node = -1;
    Phase phase = Phase::Pending;
    sim::SimTime created{0};
    bool ready = false;
    sim::SimTime ready_at{0};
    bool available = false;
    bool terminating = false;
    ConsumerModel* consumer = nullptr;
    const ConsumerSpec* consumer_spec = nullptr;
  };
  struct Deployment {
    const DeploymentSpec* spec = nullptr;
    std::int32_t replicas = 0;                                   // spec.replicas now
    std::int32_t revision = 1;                                   // the current (update) revision
    std::vector<std::shared_ptr<const ConsumerSpec>> templates;  // by revision - 1
    std::map<std::int32_t, std::int64_t>
        rs_replicas;  // Deployment: ReplicaSet revision -> spec.replicas
    std::map<std::int32_t, std::int32_t> next_index;  // Deployment: revision -> next pod number
    sim::Rng rng;
    Deployment(const DeploymentSpec* s, sim::Rng r) : spec(s), rng(std::move(r)) {}
  };
  struct Autoscaler {
    const AutoscalerSpec* spec = nullptr;
    std::size_t deployment = 0;
    std::vector<TopicPartition> partitions;  // filled at each read
    fleet::Hpa hpa;
    sim::SimTime last_active{0};
    Autoscaler(const AutoscalerSpec* s, std::size_t d, fleet::Hpa h)
        : spec(s), deployment(d), hpa(std::move(h)) {}
  };

  void reconcile(std::size_t d);
  void reconcile_deployment(std::size_t d);
  void reconcile_stateful_set(std::size_t d);
  std::size_t create_pod(std::size_t d, std::int32_t revision, std::int32_t ordinal);
  void schedule_pod(std::size_t p);
  void start_pod(std::size_t p);
  void mark_ready(std::size_t p, const char* by);
  void terminate(std::size_t p, const std::string& reason);
  void gone(std::size_t p, const char* how);
  std::int32_t pick_node() const;
  void drain(std::int32_t node);
  void keda_poll(std::size_t a);
  void hpa_sync(std::size_t a);
  fleet::KafkaLag read_lag(const Autoscaler& a);
  void scale(std::size_t a, std::int32_t to, const std::string& reason, std::int64_t lag);
  std::vector<std::size_t> live_pods(std::size_t d) const;  // not terminating, not gone

  sim::Kernel& kernel_;
  Tracer& tracer_;
  std::uint64_t seed_;
  FleetHost host_;
  std::vector<Deployment> deployments_;
  std::vector<Autoscaler> autoscalers_;
  std::deque<Pod> pods_;
  std::deque<ConsumerSpec> consumer_specs_;
  std::map<std::string, std::size_t, std::less<>> by_consumer_;  // consumer name -> its latest pod
  std::set<std::int32_t> cordoned_;
  std::map<std::string, int> incarnations_;
};

}  // namespace rsim
