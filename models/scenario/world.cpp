#include "models/scenario/world.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "models/broker/broker.hpp"
#include "models/client/async_consumer.hpp"
#include "models/client/classic_consumer.hpp"
#include "models/client/lag_monitor.hpp"
#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/fleet/fleet.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/variant.hpp"
#include "models/scenario/script_network.hpp"
#include "models/scenario/share_world.hpp"
#include "models/scenario/world_base.hpp"
#include "models/spec/overloaded.hpp"
#include "models/trace/trace_events.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

bool variant_supported(const std::string& variant) {
  return variant_named(variant).has_value();
}

std::vector<std::string> unsupported_features(const ScenarioSpec& spec,
                                              const std::string& variant) {
  std::vector<std::string> problems;
  if (variant_named(variant) == Variant::Share) {
    problems = share_unsupported_features(spec);
    if (!spec.deployments.empty())
      problems.push_back(
          "/deployments: fleets (deployments, autoscalers) are not simulated under share yet; run "
          "the classic or consumer variants");
    for (const auto& e : spec.events)
      if (verb_config(e.verb) != nullptr)
        problems.push_back(fmt::format(
            "/events/{}/config: a start/restart config (a new incarnation's configs) is not "
            "simulated under share yet; run the classic or consumer variants",
            e.index));
    return problems;
  }
  if (!variant_supported(variant)) {
    problems.push_back(fmt::format(
        "/protocols: variant \"{}\" is not simulated by this version yet; run with --protocol "
        "classic-eager, classic-cooperative, consumer or share",
        variant));
  }
  return problems;
}

namespace {

class World final : public WorldBase {
 public:
  World(const ScenarioSpec& spec, Variant variant, std::uint64_t seed,
        const sim::WatchdogLimits& limits, const ModelOptions& options)
      : WorldBase(spec, seed, limits),
        options_(options),
        variant_(variant),
        lag_(kernel_, tracer_, workload_, spec.lag_sample) {
    cluster_.purgatory_lateness_ms = spec.cluster.purgatory_lateness.expected_ms();
    for (std::int32_t b = 0; b < spec.cluster.brokers; ++b) {
      brokers_.push_back(std::make_unique<Broker>(b, kernel_, tracer_, net_, cluster_,
                                                  broker_config_, spec.cluster.coordinator_load,
                                                  log_, seed, workload_, lag_, options_.bugs));
      cluster_.broker_nodes.push_back(brokers_.back()->node());
      net_.set_handling(brokers_.back()->node(), spec.cluster.request_handling,
                        sim::Rng(seed, fmt::format("request-handling-{}", b)));
      cluster_.broker_down.push_back(false);
      cluster_.broker_fenced.push_back(false);
      broker_epoch_.push_back(0);
    }
    // Each consumer is its own process (JVM), whose first KafkaConsumer takes number 1 of the
    // process's client-id sequence (ConsumerConfig's CONSUMER_CLIENT_ID_SEQUENCE starts at 1).
    for (const auto& c : spec.consumers) {
      ConsumerConfig config = resolve_consumer_config(c, variant_name(variant), 1);
      consumers_.emplace(c.name, make_consumer(c, std::move(config), seed_));
    }
    if (!spec.deployments.empty()) make_fleet();
  }
  /// The clients go first (before the brokers and the lag monitor they point to).
  ~World() override {
    fleet_.reset();
    retired_consumers_.clear();
    consumers_.clear();
  }

  const ModelCounters& counters() const { return counters_; }

  std::uint64_t run(const std::vector<TraceSink*>& sinks, trace::Detail detail) {
    tracer_.set_detail(static_cast<int>(detail));
    for (auto* s : sinks) tracer_.attach(*s);
    publish_start(variant_name(variant_));
    schedule_script();
    lag_.start();
    if (fleet_) {
      tracer_.attach(*fleet_);
      fleet_->start();
    }
    kernel_.run(spec_.duration);
    publish_log_end_offsets();
    tracer_.publish(trace::RunEnd{.events = kernel_.fired()});
    for (auto* s : sinks) tracer_.detach(*s);
    if (fleet_) tracer_.detach(*fleet_);
    return kernel_.fired();
  }

 private:
  std::unique_ptr<ConsumerModel> make_consumer(const ConsumerSpec& c, ConsumerConfig config,
                                               std::uint64_t seed) {
    if (config.group_protocol == "consumer") {
      auto consumer = std::make_unique<AsyncConsumer>(kernel_, tracer_, net_, cluster_, c,
                                                      std::move(config), seed, workload_, &lag_);
      consumer->check_quiet_passes(options_.check_quiet_passes);
      consumer->count_into(&counters_);
      return consumer;
    }
    return std::make_unique<ClassicConsumer>(kernel_, tracer_, net_, cluster_, c, std::move(config),
                                             seed, workload_, &lag_);
  }

  /// The deployments' pods and autoscalers (models/fleet): each pod's consumer is one more process
  /// of this world, registered under the pod's name.
  void make_fleet() {
    FleetHost host;
    host.spawn = [this](const ConsumerSpec& c, std::uint64_t seed) -> ConsumerModel& {
      // A pod template with its own group.protocol (a rollout that migrates the group) runs that
      // protocol's client, as a restart with that config does.
      Variant variant = variant_;
      const ConsumerSpec* spec = &c;
      if (const auto gp = c.config.find("group.protocol"); gp != c.config.end()) {
        variant = incarnation_variant(gp->second.get<std::string>());
        ConsumerSpec& s = incarnation_specs_.emplace_back(c);
        s.config.erase("group.protocol");
        spec = &s;
      }
      auto next =
          make_consumer(*spec, resolve_consumer_config(*spec, variant_name(variant), 1), seed);
      if (const auto it = consumers_.find(c.name); it != consumers_.end())
        retired_consumers_.push_back(std::move(it->second));
      consumers_[c.name] = std::move(next);
      return *consumers_[c.name];
    };
    host.committed = [this](const std::string& group, const TopicPartition& tp) {
      return lag_.committed(group, tp);
    };
    host.log_end_offset = [this](const TopicPartition& tp) { return workload_.log_end_offset(tp); };
    host.partitions = [this](const std::string& topic) {
      const auto it = cluster_.partitions_per_topic.find(topic);
      return it == cluster_.partitions_per_topic.end() ? 0 : it->second;
    };
    fleet_ = std::make_unique<Fleet>(kernel_, tracer_, spec_, seed_, std::move(host));
  }

  /// The variant of a new incarnation whose configs set `group.protocol`: the run's own when it
  /// is the run's protocol, else the other protocol with Kafka's default assignors (back to
  /// classic under the consumer variant: range first).
  Variant incarnation_variant(const std::string& protocol) const {
    if (protocol == group_protocol_name(group_protocol(variant_))) return variant_;
    return protocol == group_protocol_name(GroupProtocol::Consumer) ? Variant::Consumer
                                                                    : Variant::ClassicEager;
  }

  /// A start/restart `config`: merged over the consumer's earlier event configs.
  void merge_overrides(const std::string& name, const EventConfig& config) override {
    auto& ov = overrides_[name];
    for (const auto& [k, v] : config) ov[k] = v;
  }

  /// The consumer's next incarnation, a new process: the scenario's consumer with every
  /// start/restart config so far merged over its configs, as the client of its group.protocol.
  /// The old client object is kept (the kernel may still hold its timers), its node goes quiet.
  void replace_consumer(const std::string& name) override {
    const ConsumerSpec& base = *spec_.consumer(name);
    ConsumerSpec& s = incarnation_specs_.emplace_back(base);
    s.topics = consumer(name).topics();
    const auto& ov = overrides_[name];
    Variant variant = variant_;
    if (const auto gp = ov.find("group.protocol"); gp != ov.end())
      variant = incarnation_variant(gp->second.get<std::string>());
    nlohmann::ordered_json shown = nlohmann::ordered_json::object();
    for (const auto& [k, v] : ov) {
      shown[k] = v;
      if (k == "group.protocol") continue;
      s.config[k] = v;
      for (auto& [gp, cfg] : s.config_by_protocol) cfg.erase(k);
    }
    // A new process draws new random ids (a KIP-848 member id is the client's own UUID).
    const int n = ++incarnations_[name];
    const std::uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(n));
    auto next = make_consumer(s, resolve_consumer_config(s, variant_name(variant), 1), seed);
    const std::string protocol = variant_name(variant);
    tracer_.publish(trace::ConsumerConfig{
        .consumer = name, .protocol = protocol, .incarnation = n + 1, .config = &shown});
    retired_consumers_.push_back(std::move(consumers_.at(name)));
    consumers_[name] = std::move(next);
  }

  void fleet_verb(const verb::Rollout& v) override { fleet_->apply(v); }
  void fleet_verb(const verb::DrainNode& v) override { fleet_->apply(v); }

  /// The group's coordinator broker dies. Its connections reset at once; the controller fences it
  /// after broker.session.timeout.ms and elects, for every __consumer_offsets partition it led,
  /// the next live replica, which loads the partition. With down_ms it comes back (a follower).
  void fail_coordinator(const verb::FailCoordinator& e) override {
    const std::int32_t p = coordinator_partition(e.group, cluster_.offsets_topic_num_partitions);
    const std::int32_t b = cluster_.leader_of_offsets_partition(p);
    if (b < 0 || cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerFail{.group = e.group, .reason = "no live coordinator"});
      return;
    }
    const std::vector<std::int32_t> led = offsets_partitions_led_by(b);
    const sim::NodeId node = cluster_.broker_nodes[static_cast<std::size_t>(b)];
    cluster_.broker_down[static_cast<std::size_t>(b)] = true;
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, true);
        net_.set_cut(n, node, true);
      }
    tracer_.publish(trace::BrokerFail{.group = e.group,
                                      .broker = {b},
                                      .partition = p,
                                      .down_ms = e.has_down ? sim::to_ms(e.down) : -1});
    brokers_[static_cast<std::size_t>(b)]->fail(led);
    for (auto& [name, c] : consumers_) c->on_broker_down(node);
    // Its data partitions move at once (the controller's fencing delay is modelled only for
    // crash-broker).
    move_data_leaders(b, "leader failed");
    // The controller fences the broker only if it is still down from this very failure: a broker
    // back (and registered again) before broker.session.timeout.ms keeps its leadership.
    const std::uint64_t failure = ++broker_failures_[b];
    const auto fence = sim::ms(broker_config_.broker_session_timeout_ms);
    kernel_.schedule_closure_after(fence, [this, b, led, failure] {
      if (broker_failures_[b] != failure || !cluster_.broker_down[static_cast<std::size_t>(b)])
        return;
      elect_after_failure(b, led);
    });
    if (e.has_down) {
      kernel_.schedule_closure_after(e.down, [this, b, node, led] {
        cluster_.broker_down[static_cast<std::size_t>(b)] = false;
        for (sim::NodeId n = 0; n < net_.size(); ++n)
          if (n != node) {
            net_.set_cut(node, n, false);
            net_.set_cut(n, node, false);
          }
        brokers_[static_cast<std::size_t>(b)]->recover();
        tracer_.publish(trace::BrokerRecover{.broker = b});
        // A restarted broker registers again: leadership it still held moves now; partitions left
        // without a leader come back to it.
        elect_after_failure(b, led);
        for (const std::int32_t q : led)
          if (cluster_.leader_of_offsets_partition(q) < 0) elect(q, b);
        adopt_leaderless(b);
      });
    }
  }

  /// The __consumer_offsets partitions `broker` leads.
  std::vector<std::int32_t> offsets_partitions_led_by(std::int32_t broker) const {
    return rsim::offsets_partitions_led_by(cluster_, broker);
  }

  /// Every data partition `broker` leads gets its next eligible replica as leader (-1: none);
  /// one `partition.leaders` event lists them, and the consumers are told.
  void move_data_leaders(std::int32_t broker, const char* reason) {
    const LeaderMoves moved = rsim::move_data_leaders(cluster_, broker);
    if (moved.empty()) return;
    tracer_.publish(trace::PartitionLeaders{.leaders = &moved, .reason = reason});
    for (auto& [name, c] : consumers_) c->on_leaders_changed();
  }

  /// Data partitions left without a leader get `broker` back when it is one of their replicas.
  void adopt_leaderless(std::int32_t broker) {
    const LeaderMoves moved = rsim::adopt_leaderless(cluster_, broker);
    if (moved.empty()) return;
    tracer_.publish(trace::PartitionLeaders{.leaders = &moved, .reason = "leader registered"});
    for (auto& [name, c] : consumers_) c->on_leaders_changed();
  }

  /// The broker's process is gone: connections reset, its coordinator shards unloaded.
  void take_down(std::int32_t b, const std::vector<std::int32_t>& led) {
    const sim::NodeId node = cluster_.broker_nodes[static_cast<std::size_t>(b)];
    cluster_.broker_down[static_cast<std::size_t>(b)] = true;
    ++broker_epoch_[static_cast<std::size_t>(b)];
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, true);
        net_.set_cut(n, node, true);
      }
    brokers_[static_cast<std::size_t>(b)]->fail(led);
    for (auto& [name, c] : consumers_) c->on_broker_down(node);
  }

  /// How long a broker in controlled shutdown keeps running after the controller moved its
  /// leadership: BrokerLifecycleManager sends its first heartbeat with WantShutDown at once, the
  /// controller moves the leaders and answers ShouldShutDown=false, and the next heartbeat, 50 ms
  /// later, is answered ShouldShutDown=true (BrokerLifecycleManager's PENDING_CONTROLLED_SHUTDOWN
  /// case); the process then stops. Local round trips to the controller are left out.
  static constexpr std::int64_t kControlledShutdownMs = 50;

  /// Controlled shutdown (`stop-broker`): the controller first moves the leadership of every
  /// partition the broker leads, data and __consumer_offsets ones, to the next live replica
  /// (the old coordinator resigns its shards, the new one loads them); the broker goes on
  /// answering (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR) for kControlledShutdownMs, then its
  /// process stops. `then` runs when it has stopped.
  void stop_broker(std::int32_t b, std::function<void()> then) override {
    if (cluster_.broker_down[static_cast<std::size_t>(b)] ||
        cluster_.broker_fenced[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerStop{
          .broker = b, .graceful = true, .reason = "already down or shutting down"});
      return;
    }
    tracer_.publish(trace::BrokerStop{.broker = b, .graceful = true});
    const auto led = offsets_partitions_led_by(b);
    cluster_.broker_fenced[static_cast<std::size_t>(b)] = true;  // no longer eligible as leader
    move_data_leaders(b, "controlled shutdown");
    brokers_[static_cast<std::size_t>(b)]->fail(led);  // resigns its coordinator shards
    for (const std::int32_t q : led)
      elect(q, next_eligible_leader(cluster_, cluster_.offsets_replicas(q), b));
    kernel_.schedule_closure_after(
        sim::ms(kControlledShutdownMs),
        [this, b, then = std::move(then), epoch = broker_epoch_[static_cast<std::size_t>(b)]] {
          if (broker_epoch_[static_cast<std::size_t>(b)] != epoch) return;
          take_down(b, {});
          if (then) then();
        });
  }

  /// `crash-broker`: the process dies; the controller fences it after broker.session.timeout.ms
  /// and only then moves its leadership (data partitions included).
  void crash_broker(std::int32_t b) override {
    if (cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerCrash{.broker = b, .reason = "already down"});
      return;
    }
    tracer_.publish(trace::BrokerCrash{.broker = b});
    const auto led = offsets_partitions_led_by(b);
    take_down(b, led);
    kernel_.schedule_closure_after(
        sim::ms(broker_config_.broker_session_timeout_ms),
        [this, b, led, epoch = broker_epoch_[static_cast<std::size_t>(b)]] {
          if (broker_epoch_[static_cast<std::size_t>(b)] == epoch) fence(b, led);
        });
    pending_fence_[b] = led;
  }

  /// The controller fences a crashed broker: its leadership moves to the next live replicas.
  void fence(std::int32_t b, const std::vector<std::int32_t>& led) {
    pending_fence_.erase(b);
    cluster_.broker_fenced[static_cast<std::size_t>(b)] = true;
    tracer_.publish(trace::BrokerFenced{.broker = b});
    move_data_leaders(b, "leader fenced");
    elect_after_failure(b, led);
  }

  /// `start-broker`: the process starts and registers again, as a follower of everything (the
  /// preferred-leader election of auto.leader.rebalance.enable is not modelled); partitions left
  /// without a leader elect it. A crashed broker not fenced yet is fenced first (the controller
  /// sees a new incarnation).
  void start_broker(std::int32_t b) override {
    const auto i = static_cast<std::size_t>(b);
    if (!cluster_.broker_down[i]) {
      tracer_.publish(trace::BrokerStart{
          .broker = b,
          .reason = cluster_.broker_fenced[i] ? "still shutting down" : "already running"});
      return;
    }
    if (const auto it = pending_fence_.find(b); it != pending_fence_.end()) fence(b, it->second);
    const sim::NodeId node = cluster_.broker_nodes[i];
    cluster_.broker_down[i] = false;
    cluster_.broker_fenced[i] = false;
    ++broker_epoch_[i];
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, false);
        net_.set_cut(n, node, false);
      }
    brokers_[i]->recover();
    tracer_.publish(trace::BrokerStart{.broker = b});
    for (std::int32_t q = 0; q < cluster_.offsets_topic_num_partitions; ++q) {
      if (cluster_.leader_of_offsets_partition(q) >= 0) continue;
      const auto replicas = cluster_.offsets_replicas(q);
      if (std::find(replicas.begin(), replicas.end(), b) != replicas.end()) elect(q, b);
    }
    adopt_leaderless(b);
  }

  void elect_after_failure(std::int32_t failed, const std::vector<std::int32_t>& led) {
    for (const std::int32_t q : led) {
      if (cluster_.leader_of_offsets_partition(q) != failed) continue;  // already moved
      std::int32_t next = -1;
      for (const std::int32_t r : cluster_.offsets_replicas(q))
        if (r != failed && !cluster_.broker_down[static_cast<std::size_t>(r)]) {
          next = r;
          break;
        }
      elect(q, next);
    }
  }

  void elect(std::int32_t partition, std::int32_t leader) {
    cluster_.elected_leaders[partition] = leader;
    if (log_.committed_count(partition, kernel_.now()) == 0 &&
        partition != coordinator_partition_of_any_group(partition))
      return;  // nothing to say about partitions no group uses
    trace::CoordinatorElected elected{.partition = partition};
    if (leader >= 0) elected.broker.value = leader;
    tracer_.publish(elected);
    if (leader >= 0) brokers_[static_cast<std::size_t>(leader)]->load(partition);
  }

  std::int32_t coordinator_partition_of_any_group(std::int32_t partition) const {
    for (const auto& c : spec_.consumers)
      if (coordinator_partition(c.group, cluster_.offsets_topic_num_partitions) == partition)
        return partition;
    return -1;
  }

  ModelOptions options_;
  ModelCounters counters_;  // the models count into it (ModelOptions and counters: no globals)
  Variant variant_;
  LagMonitor lag_;
  std::vector<std::unique_ptr<Broker>> brokers_;
  std::vector<std::uint64_t> broker_epoch_;  // by broker id: bumped at every stop and start
  std::map<std::int32_t, std::vector<std::int32_t>> pending_fence_;  // crashed, not yet fenced
  std::map<std::int32_t, std::uint64_t> broker_failures_;            // failures so far, by broker
  // Incarnations with their own configs (start/restart `config`).
  std::map<std::string, ConfigMap> overrides_;  // consumer -> configs
  std::map<std::string, int> incarnations_;     // consumer -> replacements so far
  std::deque<ConsumerSpec> incarnation_specs_;
  std::vector<std::unique_ptr<ConsumerModel>> retired_consumers_;
  std::unique_ptr<Fleet> fleet_;  // with deployments only
};

}  // namespace

std::uint64_t run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed,
                           const std::vector<TraceSink*>& sinks, trace::Detail detail,
                           const sim::WatchdogLimits& limits, const ModelOptions& options,
                           ModelCounters* counters) {
  const std::optional<Variant> v = variant_named(variant);
  SIM_ASSERT(v.has_value());
  if (*v == Variant::Share) return run_share_scenario(spec, seed, sinks, detail, limits);
  World world(spec, *v, seed, limits, options);
  const std::uint64_t fired = world.run(sinks, detail);
  if (counters != nullptr) *counters = world.counters();
  return fired;
}

RunResult run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed,
                       const sim::WatchdogLimits& limits, const ModelOptions& options) {
  trace::JsonlLinesSink lines;
  lines.set_max_bytes(limits.max_trace_bytes);
  RunResult r;
  r.protocol = variant;
  r.seed = seed;
  r.events_fired = run_scenario(spec, variant, seed, {&lines}, trace::Detail::Full, limits, options,
                                &r.counters);
  r.trace_lines = lines.take();
  return r;
}

RunResult run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed) {
  return run_scenario(spec, variant, seed, sim::WatchdogLimits{});
}

}  // namespace rsim
