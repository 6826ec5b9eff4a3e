// What every simulated world has in common, whatever the protocol variant (issue 33, "one
// world"): the kernel, the trace bus, the network, the broker configs, the __consumer_offsets
// log, the producers (Workload), the cluster metadata and the consumers by name, each behind the
// common ConsumerModel interface; and the scenario's script. Every verb of the script is carried
// out here, once, in `apply`: a verb that acts on a consumer, a topic or the network is done the
// same way in every variant; a verb that acts on brokers or fleets calls the world's hook for it
// (World: models/scenario/world.cpp). A variant that does not simulate a verb refuses it before
// the run (unsupported_features), so its hook is never reached.
//
// One network carries every variant's messages: sim::Network<Envelope>, whose Message is one
// closed variant of the classic, KIP-848 and KIP-932 requests and responses
// (models/protocol/messages.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/client/consumer_model.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/messages.hpp"
#include "models/scenario/script_network.hpp"
#include "models/spec/events.hpp"
#include "models/spec/overloaded.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "models/workload/workload.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

/// The scenario's `network`: every link's latency and loss, unless a network verb changes it.
inline sim::LinkSpec link_defaults(const NetworkSpec& n) {
  sim::LinkSpec l;
  l.latency = n.latency;
  l.drop_ppm = static_cast<std::uint32_t>(n.drop_rate * 1'000'000.0 + 0.5);
  return l;
}

class WorldBase {
 public:
  WorldBase(const WorldBase&) = delete;
  WorldBase& operator=(const WorldBase&) = delete;
  virtual ~WorldBase() = default;

 protected:
  WorldBase(const ScenarioSpec& spec, std::uint64_t seed, const sim::WatchdogLimits& limits)
      : spec_(spec),
        seed_(seed),
        tracer_(kernel_),
        net_(kernel_, sim::Rng(seed, "net"), link_defaults(spec.network),
             [this](sim::NodeId from, sim::NodeId to, bool cut) {
               tracer_.publish(trace::NetDrop{
                   .from = net_.name(from), .to = net_.name(to), .reason = cut ? "cut" : "loss"});
             }),
        broker_config_(resolve_broker_config(spec.cluster)),
        log_(kernel_, tracer_, sim::Rng(seed, "offsets-log"), spec.cluster.write_latency,
             broker_config_.offsets_topic_num_partitions),
        workload_(kernel_, tracer_, spec.topics, seed) {
    kernel_.set_watchdog(limits);
    cluster_.offsets_topic_num_partitions = broker_config_.offsets_topic_num_partitions;
    cluster_.offsets_topic_replication_factor = broker_config_.offsets_topic_replication_factor;
    for (const auto& t : spec.topics) cluster_.partitions_per_topic[t.name] = t.partitions;
  }

  // ---- The run's frame ----

  /// run.start, then each topic's partition count and the production it starts with (what
  /// describe and the lag checks need).
  void publish_start(std::string_view protocol) {
    tracer_.publish(trace::RunStart{.scenario = spec_.name,
                                    .protocol = protocol,
                                    .seed = seed_,
                                    .duration_ms = sim::to_ms(spec_.duration)});
    for (const auto& t : spec_.topics) {
      tracer_.publish(trace::TopicPartitionCount{.topic = t.name, .partitions = t.partitions});
      trace::Produce f{.topic = t.name, .initial_records = t.initial_records};
      std::string gap;
      if (!t.produce_gap)
        f.records_per_sec = std::int64_t{0};
      else if (t.produce_gap->is_constant())
        f.records_per_sec =
            t.records_per_sec > 0 ? t.records_per_sec : 1000.0 / t.produce_gap->value;
      else
        f.gap_ms = gap = t.produce_gap->describe();
      tracer_.publish(f);
    }
  }
  /// Queues every verb of the script at its time.
  void schedule_script() {
    for (const auto& e : spec_.events)
      kernel_.schedule_closure_after(e.at, [this, &e] { apply(e); });
  }
  /// Every partition's log end offset at the end of the run.
  void publish_log_end_offsets() {
    for (const auto& [topic, n] : cluster_.partitions_per_topic) {
      for (std::int32_t p = 0; p < n; ++p) {
        const TopicPartition tp{topic, p};
        tracer_.publish(trace::LogEndOffset{
            .partition = &tp, .log_end_offset = workload_.log_end_offset_at(tp, spec_.duration)});
      }
    }
  }

  // ---- The script ----

  ConsumerModel& consumer(const std::string& name) { return *consumers_.at(name); }

  /// Carries out one verb of the script: the one place where each verb is done. A verb not
  /// handled here does not compile.
  void apply(const EventSpec& e) {
    std::visit(
        Overloaded{
            [this](const verb::Start& v) {
              if (v.has_config && !consumer(v.consumer).running()) {
                merge_overrides(v.consumer, v.config);
                replace_consumer(v.consumer);
              }
              consumer(v.consumer).start();
            },
            [this](const verb::Stop& v) { consumer(v.consumer).request_stop(); },
            [this](const verb::Crash& v) { consumer(v.consumer).crash(); },
            [this](const verb::Restart& v) {
              if (!v.has_config) {
                consumer(v.consumer).restart(v.after, v.graceful);
                return;
              }
              merge_overrides(v.consumer, v.config);
              consumer(v.consumer).restart(v.after, v.graceful, [this, name = v.consumer] {
                replace_consumer(name);
                consumer(name).start();
              });
            },
            [this](const verb::Stall& v) { consumer(v.consumer).stall(v.for_); },
            [this](const verb::Pause& v) { consumer(v.consumer).pause(v.for_); },
            [this](const verb::Subscribe& v) {
              tracer_.publish(trace::ConsumerSubscribe{.consumer = v.consumer, .topics = v.topics});
              consumer(v.consumer).subscribe(v.topics);
            },
            [this](const verb::AddPartitions& v) {
              cluster_.partitions_per_topic[v.topic] = v.partitions;
              workload_.set_partition_count(v.topic, v.partitions);
              tracer_.publish(
                  trace::TopicPartitionCount{.topic = v.topic, .partitions = v.partitions});
              for (auto& [name, c] : consumers_) c->on_metadata_change();
            },
            [this](const verb::Produce& v) {
              workload_.set_production(v.topic, v.produce_gap, v.records_per_sec);
            },
            [this](const verb::Network& v) {
              apply_network_event(kernel_, tracer_, net_, v, resolver());
            },
            [this](const verb::PartitionNetwork& v) {
              apply_network_event(kernel_, tracer_, net_, v, resolver());
            },
            [this](const verb::FailCoordinator& v) { fail_coordinator(v); },
            [this](const verb::StopBroker& v) { stop_broker(v.broker, {}); },
            [this](const verb::CrashBroker& v) { crash_broker(v.broker); },
            [this](const verb::StartBroker& v) { start_broker(v.broker); },
            [this](const verb::Rollout& v) { fleet_verb(v); },
            [this](const verb::DrainNode& v) { fleet_verb(v); },
            [this](const verb::RestartBroker& v) {
              // The start comes after_ms after the process stopped.
              const auto start_later = [this, b = v.broker, after = v.after] {
                kernel_.schedule_closure_after(after, [this, b] { start_broker(b); });
              };
              if (v.graceful) {
                stop_broker(v.broker, start_later);
              } else {
                crash_broker(v.broker);
                start_later();
              }
            },
        },
        e.verb);
  }

  /// Nodes named by one endpoint of a network verb's `between`: "*" (every node), "coordinator"
  /// (the coordinator of the other endpoint's group, or of the first consumer's group; none while
  /// its __consumer_offsets partition has no leader), "broker-N", or a consumer.
  std::vector<sim::NodeId> resolve(const std::string& endpoint, const std::string& other) {
    if (endpoint == "*") {
      std::vector<sim::NodeId> all;
      for (sim::NodeId n = 0; n < net_.size(); ++n) all.push_back(n);
      return all;
    }
    if (endpoint == "coordinator") {
      const ConsumerSpec* c = spec_.consumer(other);
      if (c == nullptr && !spec_.consumers.empty()) c = &spec_.consumers.front();
      const std::string group = c != nullptr ? c->group : "";
      const std::int32_t p = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
      const std::int32_t leader = cluster_.leader_of_offsets_partition(p);
      if (leader < 0) return {};
      return {cluster_.broker_nodes.at(static_cast<std::size_t>(leader))};
    }
    if (endpoint.rfind("broker-", 0) == 0)
      return {cluster_.broker_nodes.at(std::stoul(endpoint.substr(7)))};
    return {consumer(endpoint).node()};
  }
  EndpointResolver resolver() {
    return [this](const std::string& a, const std::string& b) { return resolve(a, b); };
  }

  // ---- Hooks: what only some variants simulate (the others refuse the verb before the run) ----

  /// A start/restart `config`: merged over the consumer's earlier event configs.
  virtual void merge_overrides(const std::string& name, const EventConfig& config) = 0;
  /// The consumer's next incarnation, a new process with the merged configs.
  virtual void replace_consumer(const std::string& name) = 0;
  virtual void fail_coordinator(const verb::FailCoordinator& v) = 0;
  /// Controlled shutdown of broker `b`; `then` runs when its process has stopped.
  virtual void stop_broker(std::int32_t b, std::function<void()> then) = 0;
  virtual void crash_broker(std::int32_t b) = 0;
  virtual void start_broker(std::int32_t b) = 0;
  virtual void fleet_verb(const verb::Rollout& v) = 0;
  virtual void fleet_verb(const verb::DrainNode& v) = 0;

  const ScenarioSpec& spec_;
  std::uint64_t seed_;
  sim::Kernel kernel_;
  Tracer tracer_;
  sim::Network<Envelope> net_;
  BrokerConfig broker_config_;
  OffsetsLog log_;
  Workload workload_;
  ClusterMetadata cluster_;
  std::map<std::string, std::unique_ptr<ConsumerModel>> consumers_;
};

}  // namespace rsim
