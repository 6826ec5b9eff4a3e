#include "models/scenario/world.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>

#include <fmt/format.h>

#include "models/client/classic_consumer.hpp"
#include "models/protocol/cluster.hpp"
#include "models/client/async_consumer.hpp"
#include "models/protocol/config.hpp"
#include "models/spec/overloaded.hpp"
#include "models/protocol/variant.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/fleet/fleet.hpp"
#include "models/client/lag_monitor.hpp"
#include "models/scenario/script_network.hpp"
#include "models/scenario/share_world.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "models/trace/trace_events.hpp"

namespace rsim {

bool variant_supported(const std::string& variant) { return variant_named(variant).has_value(); }

std::vector<std::string> unsupported_features(const ScenarioSpec& spec, const std::string& variant) {
  std::vector<std::string> problems;
  if (variant_named(variant) == Variant::Share) {
    problems = share_unsupported_features(spec);
    if (!spec.deployments.empty())
      problems.push_back("/deployments: fleets (deployments, autoscalers) are not simulated under share yet; run "
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

class Broker {
 public:
  Broker(std::int32_t id, sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
         const ClusterMetadata& cluster, const BrokerConfig& config, const CoordinatorLoadSpec& load,
         OffsetsLog& log, std::uint64_t seed, Workload& workload, LagMonitor& lag,
         const InjectedBugs& bugs)
      : id_(id),
        kernel_(kernel),
        tracer_(tracer),
        net_(net),
        cluster_(cluster),
        load_(load),
        log_(log),
        workload_(workload) {
    node_ = net.add_node(fmt::format("broker-{}", id), nullptr,
                         [this](sim::NodeId from, Envelope&& e) { on_message(from, std::move(e)); });
    coordinator_ = std::make_unique<GroupCoordinator>(
        kernel, tracer, sim::Rng(seed, fmt::format("coordinator-{}", id)), config, log_,
        [this](sim::NodeId to, Envelope reply) { net_.send(node_, to, std::move(reply)); },
        [this](sim::NodeId n) { return net_.name(n); });
    coordinator_->set_offset_listener(
        [&lag](const std::string& group, const TopicPartition& tp, std::int64_t offset) {
          lag.on_committed(group, tp, offset);
        });
    consumer_coordinator_ = std::make_unique<ConsumerGroupCoordinator>(
        kernel, tracer, config, log_, cluster_,
        [this](sim::NodeId to, Envelope reply) { net_.send(node_, to, std::move(reply)); },
        [this](sim::NodeId n) { return net_.name(n); });
    consumer_coordinator_->set_injected_bugs(bugs);
    consumer_coordinator_->set_offset_listener(
        [&lag](const std::string& group, const TopicPartition& tp, std::int64_t offset) {
          lag.on_committed(group, tp, offset);
        });
    // Online downgrade: the consumer group's classic members become a classic group here.
    consumer_coordinator_->set_downgrader([this](const ClassicGroupImage& image, const std::string& reason) {
      coordinator_->adopt_group(image, reason);
    });
  }
  sim::NodeId node() const { return node_; }
  std::int32_t id() const { return id_; }

  /// The broker's process dies: every coordinator shard it ran is gone.
  void fail(const std::vector<std::int32_t>& led_partitions) {
    ++incarnation_;
    loading_.clear();
    for (const std::int32_t p : led_partitions) {
      auto dropped = coordinator_->unload_partition(p);
      for (auto& g : consumer_coordinator_->unload_partition(p)) dropped.push_back(std::move(g));
      if (!dropped.empty())
      {
        const nlohmann::ordered_json groups = dropped;
        tracer_.publish(trace::CoordinatorUnloaded{.broker = id_, .partition = p, .groups = &groups});
      }
    }
  }
  void recover() { ++incarnation_; }

  /// Elected leader of a __consumer_offsets partition: load it (COORDINATOR_LOAD_IN_PROGRESS
  /// meanwhile), then serve it.
  void load(std::int32_t partition) {
    log_.truncate_uncommitted(partition, kernel_.now());
    // Loading reads the whole log, records the cleaner has since compacted away included.
    const std::int64_t records = log_.committed_count(partition, kernel_.now());
    const sim::SimTime duration = sim::ms(load_.base_ms) + sim::SimTime{load_.us_per_record * records};
    loading_.insert(partition);
    tracer_.publish(trace::CoordinatorLoad{.broker = id_, .partition = partition,
                                           .records = static_cast<std::uint64_t>(records),
                                           .load_ms = sim::to_ms(duration)});
    kernel_.schedule_closure_after(duration, [this, partition, inc = incarnation_] {
      if (inc != incarnation_ || loading_.count(partition) == 0) return;
      // Consumer (KIP-848) groups are rebuilt by their own coordinator, from all their records
      // (their offsets included); the classic coordinator gets the other groups' records.
      // A group's type is that of its last GroupMetadata / ConsumerGroupMetadata record (an
      // online migration writes the other type's tombstones first).
      std::set<std::string> consumer_groups;
      std::vector<nlohmann::ordered_json> classic_records;
      const auto committed = log_.committed_records(partition, kernel_.now());
      for (const auto& r : committed) {
        const std::string type = r.at("record").get<std::string>();
        const bool tombstone = r.value("tombstone", false);
        if (type == "ConsumerGroupMetadata" && !tombstone) consumer_groups.insert(r.at("group"));
        else if (type == "GroupMetadata" && !tombstone) consumer_groups.erase(r.at("group").get<std::string>());
      }
      for (const auto& r : committed)
        if (consumer_groups.count(r.at("group").get<std::string>()) == 0) classic_records.push_back(r);
      auto loaded = coordinator_->load_partition(partition, classic_records);
      for (auto& g : consumer_coordinator_->load_partition(partition, committed)) loaded.push_back(std::move(g));
      loading_.erase(partition);
      const nlohmann::ordered_json groups = loaded;
      tracer_.publish(trace::CoordinatorLoaded{.broker = id_, .partition = partition, .groups = &groups});
    });
  }

 private:
  void on_message(sim::NodeId from, Envelope&& e) {
    if (cluster_.broker_down.at(static_cast<std::size_t>(id_))) return;  // nobody listens
    if (const auto* list = std::get_if<ListOffsetsRequest>(&e.message)) {
      // Any live broker answers for the partitions it is asked about (leadership of data
      // partitions is not modelled): latest = the log end offset now, earliest = the log start.
      ListOffsetsResponse r;
      for (const auto& tp : list->partitions) {
        r.partitions.push_back({tp, list->timestamp == -2 ? workload_.log_start_offset(tp)
                                                          : workload_.log_end_offset(tp)});
      }
      net_.send(node_, from, Envelope{e.correlation_id, std::move(r)});
      return;
    }
    if (const auto* epochs = std::get_if<OffsetsForLeaderEpochRequest>(&e.message)) {
      // The partition's leader answers a consumer's validation. Data partitions keep leader
      // epoch kDataLeaderEpoch (leader changes are not modelled), which ends at the log end
      // offset.
      OffsetsForLeaderEpochResponse r;
      for (const auto& q : epochs->partitions) {
        EpochEndOffset out{q.partition};
        if (q.leader_epoch >= kDataLeaderEpoch) {
          out.leader_epoch = kDataLeaderEpoch;
          out.end_offset = workload_.log_end_offset(q.partition);
        }
        r.partitions.push_back(out);
      }
      net_.send(node_, from, Envelope{e.correlation_id, std::move(r)});
      return;
    }
    if (const auto* find = std::get_if<FindCoordinatorRequest>(&e.message)) {
      // The current leader in the metadata cache, loaded or not (KafkaApis); none → not available.
      const std::int32_t partition =
          coordinator_partition(find->key, cluster_.offsets_topic_num_partitions);
      const std::int32_t leader = cluster_.leader_of_offsets_partition(partition);
      net_.send(node_, from,
                Envelope{e.correlation_id,
                         leader < 0 ? FindCoordinatorResponse{ErrorCode::COORDINATOR_NOT_AVAILABLE, -1}
                                    : FindCoordinatorResponse{ErrorCode::NONE, leader}});
      return;
    }
    const std::string group = std::visit(
        [](const auto& m) -> std::string {
          if constexpr (requires { m.group_id; }) return m.group_id;
          else return "";
        },
        e.message);
    const std::int32_t partition = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
    if (cluster_.leader_of_offsets_partition(partition) != id_) {
      net_.send(node_, from, Envelope{e.correlation_id, refusal(e.message, ErrorCode::NOT_COORDINATOR)});
      return;
    }
    if (loading_.count(partition) > 0) {
      // While loading, classic heartbeats are answered NONE (GCS:1517-1520); the rest must wait.
      const ErrorCode error = std::holds_alternative<HeartbeatRequest>(e.message)
                                  ? ErrorCode::NONE
                                  : ErrorCode::COORDINATOR_LOAD_IN_PROGRESS;
      net_.send(node_, from, Envelope{e.correlation_id, refusal(e.message, error)});
      return;
    }
    // KIP-848 consumer groups have their own coordinator; OffsetCommit and OffsetFetch go to the
    // group's.
    if (const auto* hb = std::get_if<ConsumerGroupHeartbeatRequest>(&e.message)) {
      if (coordinator_->group(hb->group_id) != nullptr && !upgrade_classic_group(from, e.correlation_id, *hb))
        return;
      consumer_coordinator_->on_heartbeat(from, e.correlation_id, *hb);
      return;
    }
    // Classic requests to a consumer group: its coordinator serves its classic members; an empty
    // consumer group a classic member joins becomes a classic group (GMM.classicGroupJoin).
    if (const auto* join = std::get_if<JoinGroupRequest>(&e.message);
        join != nullptr && consumer_coordinator_->has_group(join->group_id)) {
      if (!consumer_coordinator_->is_empty(join->group_id)) {
        consumer_coordinator_->on_classic_join(from, e.correlation_id, *join);
        return;
      }
      ClassicGroupImage image = consumer_coordinator_->release_empty_group(join->group_id);
      coordinator_->adopt_offsets(join->group_id, std::move(image.offsets), std::move(image.offset_epochs));
    }
    if (const auto* sync = std::get_if<SyncGroupRequest>(&e.message);
        sync != nullptr && consumer_coordinator_->has_group(sync->group_id)) {
      consumer_coordinator_->on_classic_sync(from, e.correlation_id, *sync);
      return;
    }
    if (const auto* beat = std::get_if<HeartbeatRequest>(&e.message);
        beat != nullptr && consumer_coordinator_->has_group(beat->group_id)) {
      consumer_coordinator_->on_classic_heartbeat(from, e.correlation_id, *beat);
      return;
    }
    if (const auto* leave = std::get_if<LeaveGroupRequest>(&e.message);
        leave != nullptr && consumer_coordinator_->has_group(leave->group_id)) {
      consumer_coordinator_->on_classic_leave(from, e.correlation_id, *leave);
      return;
    }
    if (const auto* oc = std::get_if<OffsetCommitRequest>(&e.message);
        oc != nullptr && consumer_coordinator_->has_group(oc->group_id)) {
      consumer_coordinator_->on_offset_commit(from, e.correlation_id, *oc);
      return;
    }
    if (const auto* of = std::get_if<OffsetFetchRequest>(&e.message);
        of != nullptr && consumer_coordinator_->has_group(of->group_id)) {
      consumer_coordinator_->on_offset_fetch(from, e.correlation_id, *of);
      return;
    }
    coordinator_->on_request(from, e);
  }
  /// A ConsumerGroupHeartbeat for a group the classic coordinator has
  /// (GMM.getOrMaybeCreateConsumerGroup): an empty classic group is deleted and its offsets move
  /// over; a joining member (epoch 0) upgrades a non-empty one when validateOnlineUpgrade allows,
  /// else the heartbeat fails with GROUP_ID_NOT_FOUND. True when the heartbeat goes on to the
  /// consumer-group coordinator.
  bool upgrade_classic_group(sim::NodeId from, std::int32_t correlation_id,
                             const ConsumerGroupHeartbeatRequest& hb) {
    const ClassicGroup& g = *coordinator_->group(hb.group_id);
    if (g.members.empty()) {
      ClassicGroupImage image = coordinator_->release_group(hb.group_id, "the empty classic group is replaced by a consumer group");
      consumer_coordinator_->adopt_offsets(hb.group_id, std::move(image.offsets), std::move(image.offset_epochs));
      return true;
    }
    std::string refusal = hb.member_epoch == 0 ? coordinator_->upgrade_refusal(hb.group_id)
                                               : std::string("the group is not a consumer group");
    if (!refusal.empty()) {
      tracer_.publish(trace::GroupMigration{.group = hb.group_id, .from = "classic", .to = "consumer",
                                            .refused = refusal});
      net_.send(node_, from,
                Envelope{correlation_id, ConsumerGroupHeartbeatResponse{.error = ErrorCode::GROUP_ID_NOT_FOUND,
                                                                        .member_id = hb.member_id,
                                                                        .member_epoch = hb.member_epoch}});
      return false;
    }
    const std::string reason = fmt::format("member {} joined with the consumer protocol", net_.name(from));
    consumer_coordinator_->adopt_classic(coordinator_->release_group(hb.group_id, "converted to a consumer group"),
                                         reason);
    return true;
  }

  static Message refusal(const Message& request, ErrorCode error) {
    if (std::holds_alternative<JoinGroupRequest>(request)) return JoinGroupResponse{.error = error};
    if (std::holds_alternative<SyncGroupRequest>(request)) return SyncGroupResponse{.error = error};
    if (std::holds_alternative<HeartbeatRequest>(request)) return HeartbeatResponse{error};
    if (std::holds_alternative<LeaveGroupRequest>(request)) return LeaveGroupResponse{.error = error};
    if (std::holds_alternative<OffsetFetchRequest>(request)) return OffsetFetchResponse{error, {}};
    if (const auto* hb = std::get_if<ConsumerGroupHeartbeatRequest>(&request))
      return ConsumerGroupHeartbeatResponse{.error = error, .member_id = hb->member_id};
    return OffsetCommitResponse{error};
  }

  std::int32_t id_;
  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Network<Envelope>& net_;
  const ClusterMetadata& cluster_;
  CoordinatorLoadSpec load_;
  OffsetsLog& log_;
  Workload& workload_;
  sim::NodeId node_ = 0;
  std::unique_ptr<GroupCoordinator> coordinator_;
  std::unique_ptr<ConsumerGroupCoordinator> consumer_coordinator_;
  std::set<std::int32_t> loading_;
  std::uint64_t incarnation_ = 0;
};

class World {
 public:
  World(const ScenarioSpec& spec, Variant variant, std::uint64_t seed,
        const sim::WatchdogLimits& limits, const ModelOptions& options)
      : spec_(spec),
        options_(options),
        variant_(variant),
        seed_(seed),
        tracer_(kernel_),
        network_(kernel_, sim::Rng(seed, "net"), link_defaults(spec.network),
                 [this](sim::NodeId from, sim::NodeId to, bool cut) {
                   tracer_.publish(trace::NetDrop{.from = network_.name(from), .to = network_.name(to),
                                                  .reason = cut ? "cut" : "loss"});
                 }),
        broker_config_(resolve_broker_config(spec.cluster)),
        log_(kernel_, tracer_, sim::Rng(seed, "offsets-log"), spec.cluster.write_latency,
             broker_config_.offsets_topic_num_partitions),
        workload_(kernel_, tracer_, spec.topics, seed),
        lag_(kernel_, tracer_, workload_, spec.lag_sample) {
    kernel_.set_watchdog(limits);
    cluster_.offsets_topic_num_partitions = broker_config_.offsets_topic_num_partitions;
    cluster_.purgatory_lateness_ms = spec.cluster.purgatory_lateness.expected_ms();
    cluster_.offsets_topic_replication_factor = broker_config_.offsets_topic_replication_factor;
    for (const auto& t : spec.topics) cluster_.partitions_per_topic[t.name] = t.partitions;
    for (std::int32_t b = 0; b < spec.cluster.brokers; ++b) {
      brokers_.push_back(std::make_unique<Broker>(b, kernel_, tracer_, network_, cluster_, broker_config_,
                                                  spec.cluster.coordinator_load, log_, seed, workload_, lag_,
                                                  options_.bugs));
      cluster_.broker_nodes.push_back(brokers_.back()->node());
      network_.set_handling(brokers_.back()->node(), spec.cluster.request_handling,
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

  const ModelCounters& counters() const { return counters_; }

  std::uint64_t run(const std::vector<TraceSink*>& sinks, trace::Detail detail) {
    tracer_.set_detail(static_cast<int>(detail));
    for (auto* s : sinks) tracer_.attach(*s);
    tracer_.publish(trace::RunStart{.scenario = spec_.name, .protocol = variant_name(variant_), .seed = seed_,
                                    .duration_ms = sim::to_ms(spec_.duration)});
    for (const auto& t : spec_.topics) {
      tracer_.publish(trace::TopicPartitionCount{.topic = t.name, .partitions = t.partitions});
      // The production each partition starts with (what describe and the lag checks need).
      trace::Produce f{.topic = t.name, .initial_records = t.initial_records};
      std::string gap;
      if (!t.produce_gap) f.records_per_sec = std::int64_t{0};
      else if (t.produce_gap->is_constant()) f.records_per_sec = t.records_per_sec > 0 ? t.records_per_sec : 1000.0 / t.produce_gap->value;
      else f.gap_ms = gap = t.produce_gap->describe();
      tracer_.publish(f);
    }
    for (const auto& e : spec_.events) {
      kernel_.schedule_closure_after(e.at, [this, &e] { apply(e); });
    }
    lag_.start();
    if (fleet_) {
      tracer_.attach(*fleet_);
      fleet_->start();
    }
    kernel_.run(spec_.duration);
    // Every partition's log end offset at the end of the run.
    for (const auto& [topic, n] : cluster_.partitions_per_topic) {
      for (std::int32_t p = 0; p < n; ++p) {
        const TopicPartition tp{topic, p};
        tracer_.publish(trace::LogEndOffset{.partition = &tp,
                                            .log_end_offset = workload_.log_end_offset_at(tp, spec_.duration)});
      }
    }
    tracer_.publish(trace::RunEnd{.events = kernel_.fired()});
    for (auto* s : sinks) tracer_.detach(*s);
    if (fleet_) tracer_.detach(*fleet_);
    return kernel_.fired();
  }

 private:
  static sim::LinkSpec link_defaults(const NetworkSpec& n) {
    sim::LinkSpec l;
    l.latency = n.latency;
    l.drop_ppm = static_cast<std::uint32_t>(n.drop_rate * 1'000'000.0 + 0.5);
    return l;
  }

  std::unique_ptr<ConsumerModel> make_consumer(const ConsumerSpec& c, ConsumerConfig config,
                                               std::uint64_t seed) {
    if (config.group_protocol == "consumer") {
      auto consumer = std::make_unique<AsyncConsumer>(kernel_, tracer_, network_, cluster_, c,
                                                      std::move(config), seed, workload_, &lag_);
      consumer->check_quiet_passes(options_.check_quiet_passes);
      consumer->count_into(&counters_);
      return consumer;
    }
    return std::make_unique<ClassicConsumer>(kernel_, tracer_, network_, cluster_, c, std::move(config),
                                             seed, workload_, &lag_);
  }

  ConsumerModel& consumer(const std::string& name) { return *consumers_.at(name); }

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
      auto next = make_consumer(*spec, resolve_consumer_config(*spec, variant_name(variant), 1), seed);
      if (const auto it = consumers_.find(c.name); it != consumers_.end()) retired_consumers_.push_back(std::move(it->second));
      consumers_[c.name] = std::move(next);
      return *consumers_[c.name];
    };
    host.committed = [this](const std::string& group, const TopicPartition& tp) { return lag_.committed(group, tp); };
    host.log_end_offset = [this](const TopicPartition& tp) { return workload_.log_end_offset(tp); };
    host.partitions = [this](const std::string& topic) {
      const auto it = cluster_.partitions_per_topic.find(topic);
      return it == cluster_.partitions_per_topic.end() ? 0 : it->second;
    };
    fleet_ = std::make_unique<Fleet>(kernel_, tracer_, spec_, seed_, std::move(host));
  }

  /// Nodes named by one endpoint of `between`.
  std::vector<sim::NodeId> resolve(const std::string& endpoint, const std::string& other) {
    if (endpoint == "*") {
      std::vector<sim::NodeId> all;
      for (sim::NodeId n = 0; n < network_.size(); ++n) all.push_back(n);
      return all;
    }
    if (endpoint == "coordinator") {
      // The coordinator of the other endpoint's group (or of the first consumer's group).
      const ConsumerSpec* c = spec_.consumer(other);
      if (c == nullptr && !spec_.consumers.empty()) c = &spec_.consumers.front();
      const std::string group = c != nullptr ? c->group : "";
      const std::int32_t p = coordinator_partition(group, cluster_.offsets_topic_num_partitions);
      const std::int32_t leader = cluster_.leader_of_offsets_partition(p);
      if (leader < 0) return {};
      return {cluster_.broker_nodes.at(static_cast<std::size_t>(leader))};
    }
    if (endpoint.rfind("broker-", 0) == 0) {
      return {cluster_.broker_nodes.at(std::stoul(endpoint.substr(7)))};
    }
    return {consumer(endpoint).node()};
  }

  /// The variant of a new incarnation whose configs set `group.protocol`: the run's own when it
  /// is the run's protocol, else the other protocol with Kafka's default assignors (back to
  /// classic under the consumer variant: range first).
  Variant incarnation_variant(const std::string& protocol) const {
    if (protocol == group_protocol_name(group_protocol(variant_))) return variant_;
    return protocol == group_protocol_name(GroupProtocol::Consumer) ? Variant::Consumer : Variant::ClassicEager;
  }

  /// A start/restart `config`: merged over the consumer's earlier event configs.
  void merge_overrides(const std::string& name, const EventConfig& config) {
    auto& ov = overrides_[name];
    for (const auto& [k, v] : config) ov[k] = v;
  }

  /// The consumer's next incarnation, a new process: the scenario's consumer with every
  /// start/restart config so far merged over its configs, as the client of its group.protocol.
  /// The old client object is kept (the kernel may still hold its timers), its node goes quiet.
  void replace_consumer(const std::string& name) {
    const ConsumerSpec& base = *spec_.consumer(name);
    ConsumerSpec& s = incarnation_specs_.emplace_back(base);
    s.topics = consumer(name).topics();
    const auto& ov = overrides_[name];
    Variant variant = variant_;
    if (const auto gp = ov.find("group.protocol"); gp != ov.end()) variant = incarnation_variant(gp->second.get<std::string>());
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
    tracer_.publish(trace::ConsumerConfig{.consumer = name, .protocol = protocol, .incarnation = n + 1, .config = &shown});
    retired_consumers_.push_back(std::move(consumers_.at(name)));
    consumers_[name] = std::move(next);
  }

  /// Carries out one verb of the script; a verb not handled here does not compile.
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
              tracer_.publish(trace::TopicPartitionCount{.topic = v.topic, .partitions = v.partitions});
              for (auto& [name, c] : consumers_) c->on_metadata_change();
            },
            [this](const verb::Produce& v) { workload_.set_production(v.topic, v.produce_gap, v.records_per_sec); },
            [this](const verb::Network& v) { apply_network_event(kernel_, tracer_, network_, v, resolver()); },
            [this](const verb::PartitionNetwork& v) {
              apply_network_event(kernel_, tracer_, network_, v, resolver());
            },
            [this](const verb::FailCoordinator& v) { fail_coordinator(v); },
            [this](const verb::StopBroker& v) { stop_broker(v.broker); },
            [this](const verb::CrashBroker& v) { crash_broker(v.broker); },
            [this](const verb::StartBroker& v) { start_broker(v.broker); },
            [this](const verb::Rollout& v) { fleet_->apply(v); },
            [this](const verb::DrainNode& v) { fleet_->apply(v); },
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

  EndpointResolver resolver() {
    return [this](const std::string& a, const std::string& b) { return resolve(a, b); };
  }

  /// The group's coordinator broker dies. Its connections reset at once; the controller fences it
  /// after broker.session.timeout.ms and elects, for every __consumer_offsets partition it led,
  /// the next live replica, which loads the partition. With down_ms it comes back (a follower).
  void fail_coordinator(const verb::FailCoordinator& e) {
    const std::int32_t p = coordinator_partition(e.group, cluster_.offsets_topic_num_partitions);
    const std::int32_t b = cluster_.leader_of_offsets_partition(p);
    if (b < 0 || cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerFail{.group = e.group, .reason = "no live coordinator"});
      return;
    }
    std::vector<std::int32_t> led;
    for (std::int32_t q = 0; q < cluster_.offsets_topic_num_partitions; ++q)
      if (cluster_.leader_of_offsets_partition(q) == b) led.push_back(q);
    const sim::NodeId node = cluster_.broker_nodes[static_cast<std::size_t>(b)];
    cluster_.broker_down[static_cast<std::size_t>(b)] = true;
    for (sim::NodeId n = 0; n < network_.size(); ++n)
      if (n != node) {
        network_.set_cut(node, n, true);
        network_.set_cut(n, node, true);
      }
    tracer_.publish(trace::BrokerFail{.group = e.group, .broker = {b}, .partition = p,
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
      if (broker_failures_[b] != failure || !cluster_.broker_down[static_cast<std::size_t>(b)]) return;
      elect_after_failure(b, led);
    });
    if (e.has_down) {
      kernel_.schedule_closure_after(e.down, [this, b, node, led] {
        cluster_.broker_down[static_cast<std::size_t>(b)] = false;
        for (sim::NodeId n = 0; n < network_.size(); ++n)
          if (n != node) {
            network_.set_cut(node, n, false);
            network_.set_cut(n, node, false);
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
    std::vector<std::int32_t> led;
    for (std::int32_t q = 0; q < cluster_.offsets_topic_num_partitions; ++q)
      if (cluster_.leader_of_offsets_partition(q) == broker) led.push_back(q);
    return led;
  }

  /// Every data partition `broker` leads gets its next eligible replica as leader (-1: none);
  /// one `partition.leaders` event lists them, and the consumers are told.
  void move_data_leaders(std::int32_t broker, const char* reason) {
    nlohmann::ordered_json moved = nlohmann::ordered_json::object();
    for (const auto& [topic, n] : cluster_.partitions_per_topic)
      for (std::int32_t p = 0; p < n; ++p) {
        const TopicPartition tp{topic, p};
        if (cluster_.data_leader(tp) != broker) continue;
        std::int32_t next = -1;
        for (const std::int32_t r : cluster_.data_replicas(tp))
          if (r != broker && cluster_.eligible_leader(r)) {
            next = r;
            break;
          }
        cluster_.data_leaders[tp] = next;
        moved[tp.str()] = next < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(next);
      }
    if (moved.empty()) return;
    tracer_.publish(trace::PartitionLeaders{.leaders = &moved, .reason = reason});
    for (auto& [name, c] : consumers_) c->on_leaders_changed();
  }

  /// Data partitions left without a leader get `broker` back when it is one of their replicas.
  void adopt_leaderless(std::int32_t broker) {
    nlohmann::ordered_json moved = nlohmann::ordered_json::object();
    for (auto& [tp, leader] : cluster_.data_leaders) {
      if (leader >= 0) continue;
      const auto replicas = cluster_.data_replicas(tp);
      if (std::find(replicas.begin(), replicas.end(), broker) == replicas.end()) continue;
      leader = broker;
      moved[tp.str()] = broker;
    }
    if (moved.empty()) return;
    tracer_.publish(trace::PartitionLeaders{.leaders = &moved, .reason = "leader registered"});
    for (auto& [name, c] : consumers_) c->on_leaders_changed();
  }

  /// The broker's process is gone: connections reset, its coordinator shards unloaded.
  void take_down(std::int32_t b, const std::vector<std::int32_t>& led) {
    const sim::NodeId node = cluster_.broker_nodes[static_cast<std::size_t>(b)];
    cluster_.broker_down[static_cast<std::size_t>(b)] = true;
    ++broker_epoch_[static_cast<std::size_t>(b)];
    for (sim::NodeId n = 0; n < network_.size(); ++n)
      if (n != node) {
        network_.set_cut(node, n, true);
        network_.set_cut(n, node, true);
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
  void stop_broker(std::int32_t b, std::function<void()> then = {}) {
    if (cluster_.broker_down[static_cast<std::size_t>(b)] || cluster_.broker_fenced[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerStop{.broker = b, .graceful = true, .reason = "already down or shutting down"});
      return;
    }
    tracer_.publish(trace::BrokerStop{.broker = b, .graceful = true});
    const auto led = offsets_partitions_led_by(b);
    cluster_.broker_fenced[static_cast<std::size_t>(b)] = true;  // no longer eligible as leader
    move_data_leaders(b, "controlled shutdown");
    brokers_[static_cast<std::size_t>(b)]->fail(led);  // resigns its coordinator shards
    for (const std::int32_t q : led) {
      std::int32_t next = -1;
      for (const std::int32_t r : cluster_.offsets_replicas(q))
        if (r != b && cluster_.eligible_leader(r)) {
          next = r;
          break;
        }
      elect(q, next);
    }
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
  void crash_broker(std::int32_t b) {
    if (cluster_.broker_down[static_cast<std::size_t>(b)]) {
      tracer_.publish(trace::BrokerCrash{.broker = b, .reason = "already down"});
      return;
    }
    tracer_.publish(trace::BrokerCrash{.broker = b});
    const auto led = offsets_partitions_led_by(b);
    take_down(b, led);
    kernel_.schedule_closure_after(sim::ms(broker_config_.broker_session_timeout_ms),
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
  void start_broker(std::int32_t b) {
    const auto i = static_cast<std::size_t>(b);
    if (!cluster_.broker_down[i]) {
      tracer_.publish(trace::BrokerStart{
          .broker = b, .reason = cluster_.broker_fenced[i] ? "still shutting down" : "already running"});
      return;
    }
    if (const auto it = pending_fence_.find(b); it != pending_fence_.end()) fence(b, it->second);
    const sim::NodeId node = cluster_.broker_nodes[i];
    cluster_.broker_down[i] = false;
    cluster_.broker_fenced[i] = false;
    ++broker_epoch_[i];
    for (sim::NodeId n = 0; n < network_.size(); ++n)
      if (n != node) {
        network_.set_cut(node, n, false);
        network_.set_cut(n, node, false);
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
      if (coordinator_partition(c.group, cluster_.offsets_topic_num_partitions) == partition) return partition;
    return -1;
  }

  const ScenarioSpec& spec_;
  ModelOptions options_;
  ModelCounters counters_;  // the models count into it (ModelOptions and counters: no globals)
  Variant variant_;
  std::uint64_t seed_;
  sim::Kernel kernel_;
  Tracer tracer_;
  sim::Network<Envelope> network_;
  BrokerConfig broker_config_;
  OffsetsLog log_;
  Workload workload_;
  LagMonitor lag_;
  ClusterMetadata cluster_;
  std::vector<std::unique_ptr<Broker>> brokers_;
  std::vector<std::uint64_t> broker_epoch_;  // by broker id: bumped at every stop and start
  std::map<std::int32_t, std::vector<std::int32_t>> pending_fence_;  // crashed, not yet fenced
  std::map<std::string, std::unique_ptr<ConsumerModel>> consumers_;
  std::map<std::int32_t, std::uint64_t> broker_failures_;  // failures so far, by broker
  // Incarnations with their own configs (start/restart `config`).
  std::map<std::string, std::map<std::string, nlohmann::json>> overrides_;  // consumer -> configs
  std::map<std::string, int> incarnations_;  // consumer -> replacements so far
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
  r.events_fired = run_scenario(spec, variant, seed, {&lines}, trace::Detail::Full, limits, options, &r.counters);
  r.trace_lines = lines.take();
  return r;
}

RunResult run_scenario(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed) {
  return run_scenario(spec, variant, seed, sim::WatchdogLimits{});
}

}  // namespace rsim
