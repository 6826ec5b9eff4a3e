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
#include "models/protocol/variant.hpp"
#include "models/scenario/script_network.hpp"
#include "models/scenario/world_base.hpp"
#include "models/spec/overloaded.hpp"
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
      problems.push_back(
          fmt::format("/events/{}: fail-coordinator is not simulated for share groups by this "
                      "version yet",
                      e.index));
    }
  }
  return problems;
}

namespace {

using ojson = nlohmann::ordered_json;

class ShareWorld final : public WorldBase {
 public:
  ShareWorld(const ScenarioSpec& spec, std::uint64_t seed, const sim::WatchdogLimits& limits)
      : WorldBase(spec, seed, limits),
        // Each group's configs: the broker's group.share.* values, then the group's own (`groups`).
        overrides_(group_overrides(spec, broker_config_)),
        share_brokers_(kernel_, tracer_, net_, cluster_, broker_config_, workload_, overrides_,
                       spec.cluster.write_latency, spec.network.latency, seed,
                       [this](sim::NodeId n) { return consumer_of(n); }) {
    for (std::int32_t b = 0; b < spec.cluster.brokers; ++b) {
      const sim::NodeId node = net_.add_node(fmt::format("broker-{}", b), nullptr,
                                             [this, b](sim::NodeId from, Envelope&& e) {
                                               share_brokers_.on_message(b, from, std::move(e));
                                             });
      cluster_.broker_nodes.push_back(node);
      net_.set_handling(node, spec.cluster.request_handling,
                        sim::Rng(seed, fmt::format("request-handling-{}", b)));
      cluster_.broker_down.push_back(false);
    }
    group_coordinator_ = std::make_unique<ShareGroupCoordinator>(
        kernel_, tracer_, broker_config_, log_, cluster_,
        [this](const std::string& group, const TopicPartitions& partitions,
               std::int32_t state_epoch, std::int64_t start, std::function<void()> done) {
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
  /// The clients go first (before the share-partition leaders and the coordinator).
  ~ShareWorld() override { consumers_.clear(); }

  std::uint64_t run(const std::vector<TraceSink*>& sinks, trace::Detail detail) {
    tracer_.set_detail(static_cast<int>(detail));
    for (auto* s : sinks) tracer_.attach(*s);
    publish_start(variant_name(Variant::Share));
    ojson groups = ojson::object();
    for (const auto& [group, c] : share_brokers_.group_configs()) {
      // The effective values of a group with its own configs, as describe-configs shows them.
      groups[group] = {
          {"share.session.timeout.ms", c.session_timeout_ms},
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
        .record_lock_duration_ms = broker_config_.group_share_record_lock_duration_ms,
        .delivery_count_limit = broker_config_.group_share_delivery_count_limit,
        .partition_max_record_locks = broker_config_.group_share_partition_max_record_locks,
        .heartbeat_interval_ms = broker_config_.group_share_heartbeat_interval_ms,
        .session_timeout_ms = broker_config_.group_share_session_timeout_ms,
        .groups = &groups});
    schedule_script();
    kernel_.run(spec_.duration);
    publish_log_end_offsets();
    share_brokers_.publish_end();
    tracer_.publish(trace::RunEnd{.events = kernel_.fired()});
    for (auto* s : sinks) tracer_.detach(*s);
    return kernel_.fired();
  }

 private:
  static std::map<std::string, ShareGroupConfig> group_overrides(const ScenarioSpec& spec,
                                                                 const BrokerConfig& config) {
    std::map<std::string, ShareGroupConfig> overrides;
    for (const auto& [group, c] : spec.group_configs)
      overrides.emplace(group, resolve_share_group_config(config, c));
    return overrides;
  }

  sim::NodeId leader_node(const TopicPartition& tp) const {
    return cluster_.broker_nodes.at(static_cast<std::size_t>(share_brokers_.leader_broker(tp)));
  }
  sim::NodeId coordinator_node(const std::string& group) const {
    const std::int32_t p = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
    return cluster_.broker_nodes.at(
        static_cast<std::size_t>(cluster_.leader_of_offsets_partition(p)));
  }
  std::string consumer_of(sim::NodeId node) const {
    const auto it = consumer_by_node_.find(node);
    return it == consumer_by_node_.end() ? net_.name(node) : it->second;
  }

  /// What a share run does not simulate is refused before the run (unsupported_features):
  /// these hooks of the common script are never reached.
  static void not_simulated(const char* verb) {
    SIM_ASSERT_MSG(false, std::string("verb not simulated in a share run: ") + verb);
  }
  void merge_overrides(const std::string&, const EventConfig&) override {
    not_simulated("start/restart config");
  }
  void replace_consumer(const std::string&) override { not_simulated("start/restart config"); }
  void fail_coordinator(const verb::FailCoordinator&) override {
    not_simulated(verb::FailCoordinator::kDo);
  }
  void stop_broker(std::int32_t, std::function<void()>) override {
    not_simulated(verb::StopBroker::kDo);
  }
  void crash_broker(std::int32_t) override { not_simulated(verb::CrashBroker::kDo); }
  void start_broker(std::int32_t) override { not_simulated(verb::StartBroker::kDo); }
  void fleet_verb(const verb::Rollout&) override { not_simulated(verb::Rollout::kDo); }
  void fleet_verb(const verb::DrainNode&) override { not_simulated(verb::DrainNode::kDo); }

  std::map<std::string, ShareGroupConfig> overrides_;  // groups with their own configs
  SharePartitionManager share_brokers_;  // the brokers' share-partitions (models/broker)
  std::unique_ptr<ShareGroupCoordinator> group_coordinator_;
  std::map<sim::NodeId, std::string> consumer_by_node_;
};

}  // namespace

std::uint64_t run_share_scenario(const ScenarioSpec& spec, std::uint64_t seed,
                                 const std::vector<TraceSink*>& sinks, trace::Detail detail,
                                 const sim::WatchdogLimits& limits) {
  ShareWorld world(spec, seed, limits);
  return world.run(sinks, detail);
}

}  // namespace rsim
