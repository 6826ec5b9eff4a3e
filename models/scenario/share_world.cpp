#include "models/scenario/share_world.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "models/broker/share_partition_manager.hpp"
#include "models/client/share_consumer.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/coordinator/share_group_coordinator.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/spec/overloaded.hpp"
#include "models/protocol/variant.hpp"
#include "models/scenario/script_network.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/trace.hpp"

namespace rsim {

std::vector<std::string> share_unsupported_features(const ScenarioSpec& spec) {
  std::vector<std::string> problems;
  for (const auto& e : spec.events) {
    if (e.as<verb::FailCoordinator>() != nullptr) {
      problems.push_back(fmt::format("/events/{}: fail-coordinator is not simulated for share groups by this "
                                     "version yet",
                                     e.index));
    }
  }
  return problems;
}

namespace {

using ojson = nlohmann::ordered_json;

class ShareWorld {
 public:
  ShareWorld(const ScenarioSpec& spec, std::uint64_t seed, const sim::WatchdogLimits& limits)
      : spec_(spec),
        seed_(seed),
        tracer_(kernel_),
        net_(kernel_, sim::Rng(seed, "net"), link_defaults(spec.network),
             [this](sim::NodeId from, sim::NodeId to, bool cut) {
               tracer_.publish(trace::NetDrop{.from = net_.name(from), .to = net_.name(to),
                                              .reason = cut ? "cut" : "loss"});
             }),
        config_(resolve_broker_config(spec.cluster)),
        offsets_log_(kernel_, tracer_, sim::Rng(seed, "offsets-log"), spec.cluster.write_latency,
                     config_.offsets_topic_num_partitions),
        workload_(kernel_, tracer_, spec.topics, seed),
        // Each group's configs: the broker's group.share.* values, then the group's own (`groups`).
        overrides_(group_overrides(spec, config_)),
        share_brokers_(kernel_, tracer_, net_, cluster_, config_, workload_, overrides_, spec.cluster.write_latency,
                       spec.network.latency, seed, [this](sim::NodeId n) { return consumer_of(n); }) {
    kernel_.set_watchdog(limits);
    cluster_.offsets_topic_num_partitions = config_.offsets_topic_num_partitions;
    cluster_.offsets_topic_replication_factor = config_.offsets_topic_replication_factor;
    for (const auto& t : spec.topics) cluster_.partitions_per_topic[t.name] = t.partitions;
    for (std::int32_t b = 0; b < spec.cluster.brokers; ++b) {
      const sim::NodeId node = net_.add_node(fmt::format("broker-{}", b), nullptr,
                                             [this, b](sim::NodeId from, ShareEnvelope&& e) {
                                               share_brokers_.on_message(b, from, std::move(e));
                                             });
      cluster_.broker_nodes.push_back(node);
      net_.set_handling(node, spec.cluster.request_handling, sim::Rng(seed, fmt::format("request-handling-{}", b)));
      cluster_.broker_down.push_back(false);
    }
    group_coordinator_ = std::make_unique<ShareGroupCoordinator>(
        kernel_, tracer_, config_, offsets_log_, cluster_,
        [this](const std::string& group, const TopicPartitions& partitions, std::int32_t state_epoch,
               std::int64_t start, std::function<void()> done) {
          share_brokers_.initialize_state(group, partitions, state_epoch, start, std::move(done));
        },
        overrides_);
    share_brokers_.set_group_coordinator(group_coordinator_.get());
    int sequence = 0;
    for (const auto& c : spec.consumers) {
      ConsumerConfig config = resolve_consumer_config(c, variant_name(Variant::Share), ++sequence);
      consumers_.emplace(c.name, std::make_unique<ShareConsumer>(
                                     kernel_, tracer_, net_, c, std::move(config), seed,
                                     [this](const TopicPartition& tp) { return leader_node(tp); },
                                     [this, group = c.group] { return coordinator_node(group); }));
      consumer_by_node_[consumers_.at(c.name)->node()] = c.name;
    }
  }

  std::uint64_t run(const std::vector<TraceSink*>& sinks, trace::Detail detail) {
    tracer_.set_detail(static_cast<int>(detail));
    for (auto* s : sinks) tracer_.attach(*s);
    tracer_.publish(trace::RunStart{.scenario = spec_.name, .protocol = "share", .seed = seed_,
                                    .duration_ms = sim::to_ms(spec_.duration)});
    for (const auto& t : spec_.topics) {
      tracer_.publish(trace::TopicPartitionCount{.topic = t.name, .partitions = t.partitions});
      trace::Produce f{.topic = t.name, .initial_records = t.initial_records};
      std::string gap;
      if (!t.produce_gap) f.records_per_sec = std::int64_t{0};
      else if (t.produce_gap->is_constant()) f.records_per_sec = t.records_per_sec > 0 ? t.records_per_sec : 1000.0 / t.produce_gap->value;
      else f.gap_ms = gap = t.produce_gap->describe();
      tracer_.publish(f);
    }
    ojson groups = ojson::object();
    for (const auto& [group, c] : share_brokers_.group_configs()) {
      // The effective values of a group with its own configs, as describe-configs shows them.
      groups[group] = {{"share.session.timeout.ms", c.session_timeout_ms},
                       {"share.heartbeat.interval.ms", c.heartbeat_interval_ms},
                       {"share.assignment.interval.ms", c.assignment_interval_ms},
                       {"share.record.lock.duration.ms", c.record_lock_duration_ms},
                       {"share.delivery.count.limit", c.delivery_count_limit},
                       {"share.partition.max.record.locks", c.partition_max_record_locks},
                       {"share.auto.offset.reset", SharePartitionManager::auto_offset_reset_text(c)},
                       {"share.isolation.level", c.isolation_level},
                       {"share.renew.acknowledge.enable", c.renew_acknowledge_enable}};
    }
    tracer_.publish(trace::ShareConfig{
        .record_lock_duration_ms = config_.group_share_record_lock_duration_ms,
        .delivery_count_limit = config_.group_share_delivery_count_limit,
        .partition_max_record_locks = config_.group_share_partition_max_record_locks,
        .heartbeat_interval_ms = config_.group_share_heartbeat_interval_ms,
        .session_timeout_ms = config_.group_share_session_timeout_ms,
        .groups = &groups});
    for (const auto& e : spec_.events) kernel_.schedule_closure_after(e.at, [this, &e] { apply(e); });
    kernel_.run(spec_.duration);
    for (const auto& [topic, n] : cluster_.partitions_per_topic) {
      for (std::int32_t p = 0; p < n; ++p) {
        const TopicPartition tp{topic, p};
        tracer_.publish(trace::LogEndOffset{.partition = &tp,
                                            .log_end_offset = workload_.log_end_offset_at(tp, spec_.duration)});
      }
    }
    share_brokers_.publish_end();
    tracer_.publish(trace::RunEnd{.events = kernel_.fired()});
    for (auto* s : sinks) tracer_.detach(*s);
    return kernel_.fired();
  }

 private:
  static std::map<std::string, ShareGroupConfig> group_overrides(const ScenarioSpec& spec, const BrokerConfig& config) {
    std::map<std::string, ShareGroupConfig> overrides;
    for (const auto& [group, c] : spec.group_configs) overrides.emplace(group, resolve_share_group_config(config, c));
    return overrides;
  }

  static sim::LinkSpec link_defaults(const NetworkSpec& n) {
    sim::LinkSpec l;
    l.latency = n.latency;
    l.drop_ppm = static_cast<std::uint32_t>(n.drop_rate * 1'000'000.0 + 0.5);
    return l;
  }

  sim::NodeId leader_node(const TopicPartition& tp) const {
    return cluster_.broker_nodes.at(static_cast<std::size_t>(share_brokers_.leader_broker(tp)));
  }
  sim::NodeId coordinator_node(const std::string& group) const {
    const std::int32_t p = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
    return cluster_.broker_nodes.at(static_cast<std::size_t>(cluster_.leader_of_offsets_partition(p)));
  }
  std::string consumer_of(sim::NodeId node) const {
    const auto it = consumer_by_node_.find(node);
    return it == consumer_by_node_.end() ? net_.name(node) : it->second;
  }

  ShareConsumer& consumer(const std::string& name) { return *consumers_.at(name); }

  std::vector<sim::NodeId> resolve(const std::string& endpoint, const std::string& other) {
    if (endpoint == "*") {
      std::vector<sim::NodeId> all;
      for (sim::NodeId n = 0; n < net_.size(); ++n) all.push_back(n);
      return all;
    }
    if (endpoint == "coordinator") {
      const ConsumerSpec* c = spec_.consumer(other);
      if (c == nullptr && !spec_.consumers.empty()) c = &spec_.consumers.front();
      return {coordinator_node(c != nullptr ? c->group : "")};
    }
    if (endpoint.rfind("broker-", 0) == 0) return {cluster_.broker_nodes.at(std::stoul(endpoint.substr(7)))};
    return {consumer(endpoint).node()};
  }

  /// Carries out one verb of the script; a verb not handled here does not compile. The verbs a
  /// share run does not simulate are refused before the run (share_unsupported_features).
  void apply(const EventSpec& e) {
    const auto not_simulated = [&e] { SIM_ASSERT_MSG(false, std::string("event kind not handled in a share run: ") + e.kind()); };
    std::visit(
        Overloaded{
            [this](const verb::Start& v) { consumer(v.consumer).start(); },
            [this](const verb::Stop& v) { consumer(v.consumer).request_stop(); },
            [this](const verb::Crash& v) { consumer(v.consumer).crash(); },
            [this](const verb::Restart& v) { consumer(v.consumer).restart(v.after, v.graceful); },
            [this](const verb::Stall& v) { consumer(v.consumer).stall(v.for_); },
            [this](const verb::Pause& v) { consumer(v.consumer).pause(v.for_); },
            [this](const verb::Subscribe& v) {
              tracer_.publish(trace::ConsumerSubscribe{.consumer = v.consumer, .topics = v.topics});
              consumer(v.consumer).subscribe(v.topics);
            },
            [this](const verb::AddPartitions& v) {
              cluster_.partitions_per_topic[v.topic] = v.partitions;
              workload_.set_partition_count(v.topic, v.partitions);
              tracer_.publish(trace::TopicPartitionCount{.topic = v.topic, .partitions = v.partitions});
            },
            [this](const verb::Produce& v) { workload_.set_production(v.topic, v.produce_gap, v.records_per_sec); },
            [this](const verb::Network& v) { apply_network_event(kernel_, tracer_, net_, v, resolver()); },
            [this](const verb::PartitionNetwork& v) { apply_network_event(kernel_, tracer_, net_, v, resolver()); },
            [&](const verb::FailCoordinator&) { not_simulated(); },
            [&](const verb::StopBroker&) { not_simulated(); },
            [&](const verb::CrashBroker&) { not_simulated(); },
            [&](const verb::StartBroker&) { not_simulated(); },
            [&](const verb::RestartBroker&) { not_simulated(); },
            [&](const verb::Rollout&) { not_simulated(); },
            [&](const verb::DrainNode&) { not_simulated(); },
        },
        e.verb);
  }

  EndpointResolver resolver() {
    return [this](const std::string& a, const std::string& b) { return resolve(a, b); };
  }

  const ScenarioSpec& spec_;
  std::uint64_t seed_;
  sim::Kernel kernel_;
  Tracer tracer_;
  sim::Network<ShareEnvelope> net_;
  BrokerConfig config_;
  OffsetsLog offsets_log_;
  Workload workload_;
  ClusterMetadata cluster_;
  std::map<std::string, ShareGroupConfig> overrides_;  // groups with their own configs
  SharePartitionManager share_brokers_;  // the brokers' share-partitions (models/broker)
  std::unique_ptr<ShareGroupCoordinator> group_coordinator_;
  std::map<std::string, std::unique_ptr<ShareConsumer>> consumers_;
  std::map<sim::NodeId, std::string> consumer_by_node_;
};

}  // namespace

std::uint64_t run_share_scenario(const ScenarioSpec& spec, std::uint64_t seed, const std::vector<TraceSink*>& sinks,
                                 trace::Detail detail, const sim::WatchdogLimits& limits) {
  ShareWorld world(spec, seed, limits);
  return world.run(sinks, detail);
}

}  // namespace rsim
