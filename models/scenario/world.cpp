// One World for every protocol variant (issue 33, "one world"): classic-eager,
// classic-cooperative, consumer (KIP-848) and share (KIP-932). It owns what every run has, the
// kernel, the trace bus, one network (sim::Network<Envelope>, whose payload is the one closed
// variant of every request and response, models/protocol/messages.hpp), the broker configs, the
// __consumer_offsets log, the producers (Workload), the cluster metadata and the consumers by
// name behind the common ConsumerModel interface; and it carries out every verb of the script, in
// one place (World::apply, a visit with no catch-all).
//
// What differs by variant is what runs on the brokers, chosen once at construction:
// - GroupRoom (classic and consumer variants): one Broker per broker id (models/broker: the data
//   plane with its GroupCoordinator and ConsumerGroupCoordinator) and the lag monitor their
//   commits feed;
// - ShareRoom (share): the brokers' share-partitions (SharePartitionManager, models/broker) and the
//   ShareGroupCoordinator.
// What a share run does not simulate (fail-coordinator, the broker lifecycle, fleets, a new
// incarnation's configs) is refused before the run (unsupported_features); reaching it in a share
// world is a model bug (SIM_ASSERT).
//
// Construction order gives the nodes their ids and the kernel's events their sequence numbers:
// brokers first (node ids 0..brokers-1), then the consumers in the scenario's order.
#include "models/scenario/world.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "models/broker/broker.hpp"
#include "models/broker/controller_quorum.hpp"
#include "models/broker/replication.hpp"
#include "models/broker/share_partition_manager.hpp"
#include "models/client/async_consumer.hpp"
#include "models/client/classic_consumer.hpp"
#include "models/client/consumer_model.hpp"
#include "models/client/lag_monitor.hpp"
#include "models/client/share_consumer.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/coordinator/share_group_coordinator.hpp"
#include "models/fleet/fleet.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/member_id_replay.hpp"
#include "models/protocol/messages.hpp"
#include "models/protocol/variant.hpp"
#include "models/scenario/script_network.hpp"
#include "models/spec/events.hpp"
#include "models/spec/overloaded.hpp"
#include "models/spec/scenario_spec.hpp"
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

std::vector<std::string> share_unsupported_features(const ScenarioSpec& spec) {
  std::vector<std::string> problems;
  for (const auto& e : spec.events) {
    // The coordinator's failure and the brokers' lifecycle: the share brokers have no leadership
    // moves yet (their World has no GroupRoom).
    if (e.as<verb::FailCoordinator>() != nullptr || e.as<verb::StopBroker>() != nullptr ||
        e.as<verb::CrashBroker>() != nullptr || e.as<verb::StartBroker>() != nullptr ||
        e.as<verb::RestartBroker>() != nullptr) {
      problems.push_back(
          fmt::format("/events/{}: {} is not simulated for share groups by this version yet",
                      e.index, e.kind()));
    }
  }
  return problems;
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

using ojson = nlohmann::ordered_json;

/// The followers' fetch loops of __consumer_offsets: the scenario's network and write latencies,
/// the broker's replica.* configs.
ReplicationTiming replication_timing(const ScenarioSpec& spec, const BrokerConfig& config) {
  return ReplicationTiming{.network_latency = spec.network.latency,
                           .follower_write = spec.cluster.write_latency,
                           .fetch_wait_max = sim::ms(config.replica_fetch_wait_max_ms),
                           .lag_time_max = sim::ms(config.replica_lag_time_max_ms)};
}

/// The scenario's `network`: every link's latency and loss, unless a network verb changes it.
sim::LinkSpec link_defaults(const NetworkSpec& n) {
  sim::LinkSpec l;
  l.latency = n.latency;
  l.drop_ppm = static_cast<std::uint32_t>(n.drop_rate * 1'000'000.0 + 0.5);
  return l;
}

class World {
 public:
  World(const ScenarioSpec& spec, Variant variant, std::uint64_t seed,
        const sim::WatchdogLimits& limits, const ModelOptions& options)
      : spec_(spec),
        seed_(seed),
        options_(options),
        variant_(variant),
        tracer_(kernel_),
        net_(kernel_, sim::Rng(seed, "net"), link_defaults(spec.network),
             [this](sim::NodeId from, sim::NodeId to, bool cut) {
               tracer_.publish(trace::NetDrop{
                   .from = net_.name(from), .to = net_.name(to), .reason = cut ? "cut" : "loss"});
             }),
        broker_config_(resolve_broker_config(spec.cluster)),
        log_(kernel_, tracer_, sim::Rng(seed, "offsets-log"), spec.cluster.write_latency,
             broker_config_.offsets_topic_num_partitions),
        workload_(kernel_, tracer_, spec.topics, seed),
        quorum_(broker_config_, spec.cluster.brokers, seed),
        commit_rng_(seed, "kraft-commit"),
        replication_(replication_timing(spec, broker_config_), sim::Rng(seed, "replication"),
                     spec.cluster.brokers),
        member_ids_(member_id_replay(spec)) {
    kernel_.set_watchdog(limits);
    cluster_.offsets_topic_num_partitions = broker_config_.offsets_topic_num_partitions;
    cluster_.offsets_topic_replication_factor = broker_config_.offsets_topic_replication_factor;
    for (const auto& t : spec.topics) cluster_.partitions_per_topic[t.name] = t.partitions;
    cluster_.purgatory_lateness_ms = spec.cluster.purgatory_lateness.expected_ms();
    if (spec.cluster.brokers > 1 && cluster_.offsets_topic_replication_factor > 1)
      log_.set_replication([this](std::int32_t p, sim::SimTime written) {
        return replication_.committed_at(
            cluster_.leader_of_offsets_partition(p), p % cluster_.brokers(),
            std::min(cluster_.offsets_topic_replication_factor, cluster_.brokers()), written);
      });
    if (variant == Variant::Share)
      share_.emplace(*this);
    else
      group_.emplace(*this);
    for (std::int32_t b = 0; b < spec.cluster.brokers; ++b) add_broker(b);
    if (share_) share_->make_coordinator(*this);
    // Each consumer is its own process (JVM), whose first KafkaConsumer takes number 1 of the
    // process's client-id sequence (ConsumerConfig's CONSUMER_CLIENT_ID_SEQUENCE starts at 1). The
    // share consumers are numbered 1, 2, ... in the scenario's order instead, as one sequence.
    int sequence = 0;
    for (const auto& c : spec.consumers) {
      const int client_sequence = share_ ? ++sequence : 1;
      ConsumerConfig config = resolve_consumer_config(c, variant_name(variant), client_sequence);
      consumers_.emplace(c.name, make_consumer(c, std::move(config), seed_));
      consumer_by_node_[consumers_.at(c.name)->node()] = c.name;
    }
    if (!spec.deployments.empty()) make_fleet();
  }
  /// The clients go first (before the brokers, the coordinators and the lag monitor they point to).
  ~World() {
    fleet_.reset();
    retired_consumers_.clear();
    consumers_.clear();
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const ModelCounters& counters() const { return counters_; }

  std::uint64_t run(const std::vector<TraceSink*>& sinks, trace::Detail detail) {
    tracer_.set_detail(static_cast<int>(detail));
    for (auto* s : sinks) tracer_.attach(*s);
    publish_start();
    if (share_) publish_share_config();
    schedule_script();
    if (group_) group_->lag.start();
    if (fleet_) {
      tracer_.attach(*fleet_);
      fleet_->start();
    }
    kernel_.run(spec_.duration);
    publish_log_end_offsets();
    if (share_) share_->partitions.publish_end();
    tracer_.publish(trace::RunEnd{.events = kernel_.fired()});
    for (auto* s : sinks) tracer_.detach(*s);
    if (fleet_) tracer_.detach(*fleet_);
    return kernel_.fired();
  }

 private:
  // ---- What runs on the brokers, by variant (one of the two, chosen at construction) ----

  /// classic-eager, classic-cooperative, consumer: per broker id a Broker (Fetch, ListOffsets,
  /// Metadata, its GroupCoordinator and ConsumerGroupCoordinator), and the lag monitor that their
  /// commits feed.
  struct GroupRoom {
    explicit GroupRoom(World& w) : lag(w.kernel_, w.tracer_, w.workload_, w.spec_.lag_sample) {}
    LagMonitor lag;
    std::vector<std::unique_ptr<Broker>> brokers;  // by broker id
  };

  /// share: the brokers' share-partitions (ShareFetch, ShareAcknowledge, persistence in
  /// __share_group_state, lock expiry) and the share group coordinator over __consumer_offsets.
  struct ShareRoom {
    explicit ShareRoom(World& w)
        // Each group's configs: the broker's group.share.* values, then the group's own (`groups`).
        : group_configs(group_overrides(w.spec_, w.broker_config_)),
          partitions(w.kernel_, w.tracer_, w.net_, w.cluster_, w.broker_config_, w.workload_,
                     group_configs, w.spec_.cluster.write_latency, w.spec_.network.latency, w.seed_,
                     [&w](sim::NodeId n) { return w.consumer_of(n); }) {}
    /// After the brokers' nodes: the coordinator, which asks the share-partitions' leaders to
    /// initialize their state.
    void make_coordinator(World& w) {
      coordinator = std::make_unique<ShareGroupCoordinator>(
          w.kernel_, w.tracer_, w.broker_config_, w.log_, w.cluster_,
          [this](const std::string& group, const TopicPartitions& tps, std::int32_t state_epoch,
                 std::int64_t start, std::function<void()> done) {
            partitions.initialize_state(group, tps, state_epoch, start, std::move(done));
          },
          group_configs);
      partitions.set_group_coordinator(coordinator.get());
    }
    static std::map<std::string, ShareGroupConfig> group_overrides(const ScenarioSpec& spec,
                                                                   const BrokerConfig& config) {
      std::map<std::string, ShareGroupConfig> overrides;
      for (const auto& [group, c] : spec.group_configs)
        overrides.emplace(group, resolve_share_group_config(config, c));
      return overrides;
    }
    std::map<std::string, ShareGroupConfig> group_configs;  // groups with their own configs
    SharePartitionManager partitions;
    std::unique_ptr<ShareGroupCoordinator> coordinator;
  };

  /// Broker `b`'s process: its node on the network (broker-b), with the scenario's request
  /// handling time.
  void add_broker(std::int32_t b) {
    sim::NodeId node = 0;
    if (share_) {
      node = net_.add_node(fmt::format("broker-{}", b), nullptr,
                           [this, b](sim::NodeId from, Envelope&& e) {
                             share_->partitions.on_message(b, from, std::move(e));
                           });
    } else {
      group_->brokers.push_back(std::make_unique<Broker>(
          b, kernel_, tracer_, net_, cluster_, broker_config_, spec_.cluster.coordinator_load, log_,
          seed_, workload_, group_->lag, options_.bugs));
      group_->brokers.back()->set_member_id_replay(member_ids_.get());
      node = group_->brokers.back()->node();
    }
    cluster_.broker_nodes.push_back(node);
    net_.set_handling(node, spec_.cluster.request_handling,
                      sim::Rng(seed_, fmt::format("request-handling-{}", b)));
    cluster_.broker_down.push_back(false);
    cluster_.broker_fenced.push_back(false);
    broker_epoch_.push_back(0);
  }

  /// What a share run does not simulate is refused before the run (unsupported_features):
  /// reaching it in a share world is a model bug.
  void require_group_brokers(const char* verb) const {
    SIM_ASSERT_MSG(group_.has_value(), std::string("verb not simulated in a share run: ") + verb);
  }
  Broker& broker(std::int32_t b) { return *group_->brokers.at(static_cast<std::size_t>(b)); }

  // ---- The consumers ----

  /// A new client process of `config.group_protocol`: a ClassicConsumer, an AsyncConsumer
  /// (KIP-848) or a ShareConsumer (KIP-932).
  std::unique_ptr<ConsumerModel> make_consumer(const ConsumerSpec& c, ConsumerConfig config,
                                               std::uint64_t seed) {
    if (config.group_protocol == group_protocol_name(GroupProtocol::Share)) {
      auto consumer = std::make_unique<ShareConsumer>(
          kernel_, tracer_, net_, c, std::move(config), seed,
          [this](const TopicPartition& tp) { return share_leader_node(tp); },
          [this, group = c.group] { return coordinator_node(group); },
          cluster_.broker_nodes.front());
      consumer->set_member_id_replay(member_ids_.get());
      return consumer;
    }
    if (config.group_protocol == group_protocol_name(GroupProtocol::Consumer)) {
      auto consumer = std::make_unique<AsyncConsumer>(
          kernel_, tracer_, net_, cluster_, c, std::move(config), seed, workload_, &group_->lag);
      consumer->check_quiet_passes(options_.check_quiet_passes);
      consumer->quiet_chains(options_.quiet_chains);
      consumer->count_into(&counters_);
      consumer->set_member_id_replay(member_ids_.get());
      return consumer;
    }
    auto consumer = std::make_unique<ClassicConsumer>(
        kernel_, tracer_, net_, cluster_, c, std::move(config), seed, workload_, &group_->lag);
    consumer->check_quiet_passes(options_.check_quiet_passes);
    consumer->quiet_chains(options_.quiet_chains);
    consumer->count_into(&counters_);
    return consumer;
  }

  ConsumerModel& consumer(const std::string& name) { return *consumers_.at(name); }

  /// The scenario's name of the consumer at `node` (the share brokers name members by it).
  std::string consumer_of(sim::NodeId node) const {
    const auto it = consumer_by_node_.find(node);
    return it == consumer_by_node_.end() ? net_.name(node) : it->second;
  }
  /// The node of the broker leading `tp`'s share-partition.
  sim::NodeId share_leader_node(const TopicPartition& tp) const {
    return cluster_.broker_nodes.at(static_cast<std::size_t>(share_->partitions.leader_broker(tp)));
  }
  /// The node of the broker leading `group`'s __consumer_offsets partition.
  sim::NodeId coordinator_node(const std::string& group) const {
    const std::int32_t p = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
    return cluster_.broker_nodes.at(
        static_cast<std::size_t>(cluster_.leader_of_offsets_partition(p)));
  }

  /// The deployments' pods and autoscalers (models/fleet): each pod's consumer is one more process
  /// of this world, registered under the pod's name.
  void make_fleet() {
    require_group_brokers("deployments");
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
      return group_->lag.committed(group, tp);
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
  void merge_overrides(const std::string& name, const EventConfig& config) {
    require_group_brokers("start/restart config");
    auto& ov = overrides_[name];
    for (const auto& [k, v] : config) ov[k] = v;
  }

  /// The consumer's next incarnation, a new process: the scenario's consumer with every
  /// start/restart config so far merged over its configs, as the client of its group.protocol.
  /// The old client object is kept (the kernel may still hold its timers), its node goes quiet.
  void replace_consumer(const std::string& name) {
    require_group_brokers("start/restart config");
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
    // The processes so far (of every client object of this consumer) had the first replayed
    // start latencies, one each.
    std::size_t& started = process_starts_[name];
    started += consumer(name).process_starts();
    s.start_latencies.erase(s.start_latencies.begin(),
                            s.start_latencies.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                            started, s.start_latencies.size())));
    const std::uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(n));
    auto next = make_consumer(s, resolve_consumer_config(s, variant_name(variant), 1), seed);
    const std::string protocol = variant_name(variant);
    tracer_.publish(trace::ConsumerConfig{
        .consumer = name, .protocol = protocol, .incarnation = n + 1, .config = &shown});
    retired_consumers_.push_back(std::move(consumers_.at(name)));
    consumers_[name] = std::move(next);
  }

  // ---- The run's frame ----

  /// run.start, then each topic's partition count and the production it starts with (what
  /// describe and the lag checks need).
  void publish_start() {
    tracer_.publish(trace::RunStart{.scenario = spec_.name,
                                    .protocol = variant_name(variant_),
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

  /// share.config: the brokers' group.share.* values and each group with its own configs.
  void publish_share_config() {
    ojson groups = ojson::object();
    for (const auto& [group, c] : share_->partitions.group_configs()) {
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

  /// Carries out one verb of the script: the one place where each verb is done, for every
  /// variant. A verb not handled here does not compile.
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
            [this](const verb::AddPartitions& v) { add_partitions(v); },
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
            [this](const verb::Rollout& v) { fleet(verb::Rollout::kDo).apply(v); },
            [this](const verb::DrainNode& v) { fleet(verb::DrainNode::kDo).apply(v); },
        },
        e.verb);
  }

  /// The fleet of a rollout or drain-node (the parser refuses them without deployments).
  Fleet& fleet(const char* verb) {
    require_group_brokers(verb);
    SIM_ASSERT(fleet_ != nullptr);
    return *fleet_;
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

  // ---- The brokers' lifecycle (classic and consumer variants) ----

  /// The group's coordinator broker dies. Its connections reset at once; the controller fences it
  /// after broker.session.timeout.ms and elects, for every __consumer_offsets partition it led,
  /// the next live replica, which loads the partition. With down_ms it comes back (a follower).
  /// `add-partitions`, as Kafka's CreatePartitions: the admin's request reaches a broker, which
  /// forwards it to the active controller (ControllerApis), whose batch accumulator waits
  /// controller.quorum.append.linger.ms for more records before it appends and flushes the batch
  /// (raft BatchAccumulator). At the commit the brokers' metadata loaders publish the new image:
  /// the group coordinators (GroupMetadataManager.onMetadataUpdate asks each subscribed group for
  /// a metadata refresh, done at the group's next heartbeat), the partition leaders and the
  /// producer's rates. Commits keep the order of their requests (one controller event queue).
  void add_partitions(const verb::AddPartitions& v) {
    const sim::SimTime hops =
        spec_.network.latency.sample(commit_rng_) + spec_.network.latency.sample(commit_rng_);
    const sim::SimTime flush = spec_.cluster.write_latency.sample(commit_rng_);
    const sim::SimTime at = std::max(
        last_partition_commit_,
        kernel_.now() + hops + sim::ms(broker_config_.controller_quorum_append_linger_ms) + flush);
    last_partition_commit_ = at;
    kernel_.schedule_closure_after(at - kernel_.now(), [this, topic = v.topic, n = v.partitions] {
      cluster_.partitions_per_topic[topic] = n;
      workload_.set_partition_count(topic, n);
      tracer_.publish(trace::TopicPartitionCount{.topic = topic, .partitions = n});
      for (auto& [name, c] : consumers_) c->on_metadata_change();
    });
  }

  void fail_coordinator(const verb::FailCoordinator& e) {
    require_group_brokers(verb::FailCoordinator::kDo);
    const std::int32_t p = coordinator_partition(e.group, cluster_.offsets_topic_num_partitions);
    const std::int32_t b = cluster_.leader_of_offsets_partition(p);
    if (b < 0 || cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerFail{.group = e.group, .reason = "no live coordinator"});
      return;
    }
    const std::vector<std::int32_t> led = offsets_partitions_led_by(b);
    const sim::NodeId node = cluster_.broker_nodes[static_cast<std::size_t>(b)];
    cluster_.broker_down[static_cast<std::size_t>(b)] = true;
    replication_.broker_down(b, kernel_.now());
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, true);
        net_.set_cut(n, node, true);
      }
    tracer_.publish(trace::BrokerFail{.group = e.group,
                                      .broker = {b},
                                      .partition = p,
                                      .down_ms = e.has_down ? sim::to_ms(e.down) : -1});
    broker(b).fail(led);
    for (auto& [name, c] : consumers_) c->on_broker_down(node);
    // Its data partitions move at once (the controller's fencing delay is modelled only for
    // crash-broker).
    move_data_leaders(b, "leader failed");
    // The controller fences the broker when the quorum's rules say (controller_quorum.hpp), if it
    // is still down from this very failure: a broker back (and registered again) before keeps its
    // leadership until it registers.
    await_fence(b, {.led = led, .moves_data = false});
    if (e.has_down) {
      kernel_.schedule_closure_after(e.down, [this, b, node, led] {
        fence_due_.erase(b);
        quorum_.broker_up(b, kernel_.now());
        schedule_fences();
        cluster_.broker_down[static_cast<std::size_t>(b)] = false;
        replication_.broker_up(b, kernel_.now());
        for (sim::NodeId n = 0; n < net_.size(); ++n)
          if (n != node) {
            net_.set_cut(node, n, false);
            net_.set_cut(n, node, false);
          }
        broker(b).recover();
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
    replication_.broker_down(b, kernel_.now());
    ++broker_epoch_[static_cast<std::size_t>(b)];
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, true);
        net_.set_cut(n, node, true);
      }
    broker(b).fail(led);
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
  void stop_broker(std::int32_t b, std::function<void()> then) {
    require_group_brokers(verb::StopBroker::kDo);
    if (cluster_.broker_down[static_cast<std::size_t>(b)] ||
        cluster_.broker_fenced[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerStop{
          .broker = b, .graceful = true, .reason = "already down or shutting down"});
      return;
    }
    tracer_.publish(trace::BrokerStop{.broker = b, .graceful = true});
    const auto led = offsets_partitions_led_by(b);
    cluster_.broker_fenced[static_cast<std::size_t>(b)] = true;  // no longer eligible as leader
    replication_.out_of_isr(b);  // the controller takes it out of every ISR at once
    move_data_leaders(b, "controlled shutdown");
    broker(b).fail(led);  // resigns its coordinator shards
    for (const std::int32_t q : led)
      elect(q, next_eligible_leader(cluster_, cluster_.offsets_replicas(q), b));
    kernel_.schedule_closure_after(
        sim::ms(kControlledShutdownMs),
        [this, b, then = std::move(then), epoch = broker_epoch_[static_cast<std::size_t>(b)]] {
          if (broker_epoch_[static_cast<std::size_t>(b)] != epoch) return;
          take_down(b, {});
          quorum_.broker_down(b, kernel_.now(), /*graceful=*/true);
          schedule_fences();
          if (then) then();
        });
  }

  /// `crash-broker`: the process dies; the controller fences it when its session expires
  /// (controller_quorum.hpp) and only then moves its leadership (data partitions included).
  void crash_broker(std::int32_t b) {
    require_group_brokers(verb::CrashBroker::kDo);
    if (cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerCrash{.broker = b, .reason = "already down"});
      return;
    }
    tracer_.publish(trace::BrokerCrash{.broker = b});
    const auto led = offsets_partitions_led_by(b);
    take_down(b, led);
    await_fence(b, {.led = led, .moves_data = true});
  }

  // ---- The KRaft controller's fence (issue 40) ----

  /// A broker down and not fenced yet: what its fence moves.
  struct PendingFence {
    std::vector<std::int32_t> led;  // the __consumer_offsets partitions it led
    bool moves_data = true;         // false: fail-coordinator moved its data partitions already
    std::uint64_t generation = 0;   // the scheduled fence that is still valid
  };

  /// Broker b died now: the quorum learns it (a dead active controller is succeeded) and the
  /// fence of every broker still waiting for one is (re)scheduled.
  void await_fence(std::int32_t b, PendingFence pending) {
    quorum_.broker_down(b, kernel_.now(), /*graceful=*/false);
    pending.generation = fence_due_.contains(b) ? fence_due_.at(b).generation : 0;
    fence_due_[b] = std::move(pending);
    schedule_fences();
  }

  /// Schedules the fence of every broker in fence_due_ at the time the quorum gives now (a new
  /// active controller moves them); none without an active controller.
  void schedule_fences() {
    for (auto& [b, pending] : fence_due_) {
      const std::uint64_t generation = ++pending.generation;
      const sim::SimTime at = quorum_.fence_time(b);
      replication_.expect_fence(b, at);
      if (at == sim::kNever) continue;
      const sim::SimTime delay = std::max(sim::SimTime{0}, at - kernel_.now());
      kernel_.schedule_closure_after(delay, [this, b = b, generation] {
        const auto it = fence_due_.find(b);
        if (it == fence_due_.end() || it->second.generation != generation) return;
        fence(b);
      });
    }
  }

  /// The active controller fences broker b: its leadership moves to the next live replicas.
  void fence(std::int32_t b) {
    const auto it = fence_due_.find(b);
    if (it == fence_due_.end()) return;
    const PendingFence pending = std::move(it->second);
    fence_due_.erase(it);
    trace::BrokerFenced fenced{.broker = b};
    if (quorum_.active() >= 0) {  // (a new incarnation registering: fenced even without one)
      fenced.controller = quorum_.active();
      fenced.last_contact_us = quorum_.last_contact(b).count();
    }
    tracer_.publish(fenced);
    replication_.out_of_isr(b);
    if (pending.moves_data) {
      cluster_.broker_fenced[static_cast<std::size_t>(b)] = true;
      move_data_leaders(b, "leader fenced");
    }
    elect_after_failure(b, pending.led);
  }

  /// `start-broker`: the process starts and registers again, as a follower of everything (the
  /// preferred-leader election of auto.leader.rebalance.enable is not modelled); partitions left
  /// without a leader elect it. A crashed broker not fenced yet is fenced first (the controller
  /// sees a new incarnation).
  void start_broker(std::int32_t b) {
    require_group_brokers(verb::StartBroker::kDo);
    const auto i = static_cast<std::size_t>(b);
    if (!cluster_.broker_down[i]) {
      tracer_.publish(trace::BrokerStart{
          .broker = b,
          .reason = cluster_.broker_fenced[i] ? "still shutting down" : "already running"});
      return;
    }
    if (fence_due_.contains(b)) fence(b);  // a new incarnation: the old one is fenced at once
    quorum_.broker_up(b, kernel_.now());
    schedule_fences();
    const sim::NodeId node = cluster_.broker_nodes[i];
    cluster_.broker_down[i] = false;
    cluster_.broker_fenced[i] = false;
    replication_.broker_up(b, kernel_.now());
    ++broker_epoch_[i];
    for (sim::NodeId n = 0; n < net_.size(); ++n)
      if (n != node) {
        net_.set_cut(node, n, false);
        net_.set_cut(n, node, false);
      }
    broker(b).recover();
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
    if (leader >= 0) broker(leader).load(partition);
  }

  std::int32_t coordinator_partition_of_any_group(std::int32_t partition) const {
    for (const auto& c : spec_.consumers)
      if (coordinator_partition(c.group, cluster_.offsets_topic_num_partitions) == partition)
        return partition;
    return -1;
  }

  const ScenarioSpec& spec_;
  std::uint64_t seed_;
  ModelOptions options_;
  ModelCounters counters_;  // the models count into it (ModelOptions and counters: no globals)
  Variant variant_;
  sim::Kernel kernel_;
  Tracer tracer_;
  sim::Network<Envelope> net_;
  BrokerConfig broker_config_;
  OffsetsLog log_;
  Workload workload_;
  ClusterMetadata cluster_;
  // What runs on the brokers: exactly one of the two.
  std::optional<GroupRoom> group_;           // classic-eager, classic-cooperative, consumer
  std::optional<ShareRoom> share_;           // share
  std::vector<std::uint64_t> broker_epoch_;  // by broker id: bumped at every stop and start

  ControllerQuorum quorum_;  // the KRaft voters and the active controller
  sim::Rng commit_rng_;      // the controller's commits of add-partitions (stream "kraft-commit")
  sim::SimTime last_partition_commit_{0};
  ReplicatedWrites
      replication_;  // the followers' fetches of __consumer_offsets (stream "replication")
  std::map<std::int32_t, PendingFence> fence_due_;  // down, not fenced yet (by broker id)

  std::map<std::string, std::unique_ptr<ConsumerModel>> consumers_;  // the current incarnations
  std::map<sim::NodeId, std::string> consumer_by_node_;  // the scenario's consumers, by node
  // Incarnations with their own configs (start/restart `config`).
  std::map<std::string, ConfigMap> overrides_;         // consumer -> configs
  std::map<std::string, int> incarnations_;            // consumer -> replacements so far
  std::map<std::string, std::size_t> process_starts_;  // consumer -> starts of replaced clients
  std::deque<ConsumerSpec> incarnation_specs_;
  std::vector<std::unique_ptr<ConsumerModel>> retired_consumers_;
  std::unique_ptr<Fleet> fleet_;  // with deployments only
  /// The consumers' replayed member ids (ConsumerSpec::member_ids); null when none has any.
  std::unique_ptr<MemberIdReplay> member_ids_;

  static std::unique_ptr<MemberIdReplay> member_id_replay(const ScenarioSpec& spec) {
    std::map<std::string, std::vector<std::string>> ids;
    for (const auto& c : spec.consumers)
      if (!c.member_ids.empty()) ids[c.name] = c.member_ids;
    return ids.empty() ? nullptr : std::make_unique<MemberIdReplay>(std::move(ids));
  }
};

}  // namespace

std::uint64_t run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed,
                           const std::vector<TraceSink*>& sinks, trace::Detail detail,
                           const sim::WatchdogLimits& limits, const ModelOptions& options,
                           ModelCounters* counters) {
  const std::optional<Variant> v = variant_named(variant);
  SIM_ASSERT(v.has_value());
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
