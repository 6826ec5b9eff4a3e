#include "models/broker/broker.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "models/protocol/variant.hpp"

namespace rsim {

ErrorCode fetch_error(const ClusterMetadata& cluster, std::int32_t broker,
                      const TopicPartition& tp) {
  return cluster.data_leader(tp) == broker ? ErrorCode::NONE : ErrorCode::NOT_LEADER_OR_FOLLOWER;
}

ListOffsetsResponse list_offsets(Workload& workload, const ListOffsetsRequest& request) {
  ListOffsetsResponse r;
  for (const auto& tp : request.partitions)
    r.partitions.push_back({tp, request.timestamp == -2 ? workload.log_start_offset(tp)
                                                        : workload.log_end_offset(tp)});
  return r;
}

OffsetsForLeaderEpochResponse offsets_for_leader_epoch(
    Workload& workload, const OffsetsForLeaderEpochRequest& request) {
  OffsetsForLeaderEpochResponse r;
  for (const auto& q : request.partitions) {
    EpochEndOffset out{q.partition};
    if (q.leader_epoch >= kDataLeaderEpoch) {
      out.leader_epoch = kDataLeaderEpoch;
      out.end_offset = workload.log_end_offset(q.partition);
    }
    r.partitions.push_back(out);
  }
  return r;
}

FindCoordinatorResponse find_coordinator(const ClusterMetadata& cluster, const std::string& key) {
  const std::int32_t leader = cluster.leader_of_offsets_partition(
      coordinator_partition(key, cluster.offsets_topic_num_partitions));
  return leader < 0 ? FindCoordinatorResponse{ErrorCode::COORDINATOR_NOT_AVAILABLE, -1}
                    : FindCoordinatorResponse{ErrorCode::NONE, leader};
}

std::vector<std::int32_t> offsets_partitions_led_by(const ClusterMetadata& cluster,
                                                    std::int32_t broker) {
  std::vector<std::int32_t> led;
  for (std::int32_t q = 0; q < cluster.offsets_topic_num_partitions; ++q)
    if (cluster.leader_of_offsets_partition(q) == broker) led.push_back(q);
  return led;
}

std::int32_t next_eligible_leader(const ClusterMetadata& cluster,
                                  const std::vector<std::int32_t>& replicas, std::int32_t failed) {
  for (const std::int32_t r : replicas)
    if (r != failed && cluster.eligible_leader(r)) return r;
  return -1;
}

LeaderMoves move_data_leaders(ClusterMetadata& cluster, std::int32_t broker) {
  LeaderMoves moved;
  for (const auto& [topic, n] : cluster.partitions_per_topic)
    for (std::int32_t p = 0; p < n; ++p) {
      TopicPartition tp{topic, p};
      if (cluster.data_leader(tp) != broker) continue;
      const std::int32_t next = next_eligible_leader(cluster, cluster.data_replicas(tp), broker);
      cluster.data_leaders[tp] = next;
      moved.push_back({std::move(tp), next < 0 ? std::nullopt : std::optional(next)});
    }
  return moved;
}

LeaderMoves adopt_leaderless(ClusterMetadata& cluster, std::int32_t broker) {
  LeaderMoves moved;
  for (auto& [tp, leader] : cluster.data_leaders) {
    if (leader >= 0) continue;
    const auto replicas = cluster.data_replicas(tp);
    if (std::find(replicas.begin(), replicas.end(), broker) == replicas.end()) continue;
    leader = broker;
    moved.push_back({tp, broker});
  }
  return moved;
}

Broker::Broker(std::int32_t id, sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
               const ClusterMetadata& cluster, const BrokerConfig& config,
               const CoordinatorLoadSpec& load, OffsetsLog& log, std::uint64_t seed,
               Workload& workload, LagMonitor& lag, const InjectedBugs& bugs)
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
  consumer_coordinator_->set_downgrader(
      [this](const ClassicGroupImage& image, const std::string& reason) {
        coordinator_->adopt_group(image, reason);
      });
}

void Broker::fail(const std::vector<std::int32_t>& led_partitions) {
  ++incarnation_;
  loading_.clear();
  for (const std::int32_t p : led_partitions) {
    auto dropped = coordinator_->unload_partition(p);
    for (auto& g : consumer_coordinator_->unload_partition(p)) dropped.push_back(std::move(g));
    if (!dropped.empty())
      tracer_.publish(
          trace::CoordinatorUnloaded{.broker = id_, .partition = p, .groups = &dropped});
  }
}

void Broker::load(std::int32_t partition) {
  log_.truncate_uncommitted(partition, kernel_.now());
  // Loading reads the whole log, records the cleaner has since compacted away included.
  const std::int64_t records = log_.committed_count(partition, kernel_.now());
  const sim::SimTime duration =
      sim::ms(load_.base_ms) + sim::SimTime{load_.us_per_record * records};
  loading_.insert(partition);
  tracer_.publish(trace::CoordinatorLoad{.broker = id_,
                                         .partition = partition,
                                         .records = static_cast<std::uint64_t>(records),
                                         .load_ms = sim::to_ms(duration)});
  kernel_.schedule_closure_after(duration, [this, partition, inc = incarnation_] {
    if (inc != incarnation_ || loading_.count(partition) == 0) return;
    // Consumer (KIP-848) groups are rebuilt by their own coordinator, from all their records
    // (their offsets included); the classic coordinator gets the other groups' records.
    // A group's type is that of its last GroupMetadata / ConsumerGroupMetadata record (an
    // online migration writes the other type's tombstones first).
    std::set<std::string> consumer_groups;
    std::vector<records::GroupRecord> classic_records;
    const auto committed = log_.committed_records(partition, kernel_.now());
    for (const auto& r : committed) {
      if (const auto* c = std::get_if<records::ConsumerGroupMetadata>(&r))
        consumer_groups.insert(c->group);
      else if (const auto* g = std::get_if<records::GroupMetadata>(&r))
        consumer_groups.erase(g->group);
    }
    for (const auto& r : committed)
      if (consumer_groups.count(records::group_of(r)) == 0) classic_records.push_back(r);
    auto loaded = coordinator_->load_partition(partition, classic_records);
    for (auto& g : consumer_coordinator_->load_partition(partition, committed))
      loaded.push_back(std::move(g));
    loading_.erase(partition);
    tracer_.publish(
        trace::CoordinatorLoaded{.broker = id_, .partition = partition, .groups = &loaded});
  });
}

void Broker::on_message(sim::NodeId from, Envelope&& e) {
  if (cluster_.broker_down.at(static_cast<std::size_t>(id_))) return;  // nobody listens
  if (const auto* list = std::get_if<ListOffsetsRequest>(&e.message)) {
    net_.send(node_, from, Envelope{e.correlation_id, list_offsets(workload_, *list)});
    return;
  }
  if (const auto* epochs = std::get_if<OffsetsForLeaderEpochRequest>(&e.message)) {
    net_.send(node_, from,
              Envelope{e.correlation_id, offsets_for_leader_epoch(workload_, *epochs)});
    return;
  }
  if (const auto* find = std::get_if<FindCoordinatorRequest>(&e.message)) {
    net_.send(node_, from, Envelope{e.correlation_id, find_coordinator(cluster_, find->key)});
    return;
  }
  const std::string group = std::visit(
      [](const auto& m) -> std::string {
        if constexpr (requires { m.group_id; })
          return m.group_id;
        else
          return "";
      },
      e.message);
  const std::int32_t partition =
      coordinator_partition(group, cluster_.offsets_topic_num_partitions);
  if (cluster_.leader_of_offsets_partition(partition) != id_) {
    net_.send(node_, from,
              Envelope{e.correlation_id, refusal(e.message, ErrorCode::NOT_COORDINATOR)});
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
    if (coordinator_->group(hb->group_id) != nullptr &&
        !upgrade_classic_group(from, e.correlation_id, *hb))
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
    coordinator_->adopt_offsets(join->group_id, std::move(image.offsets),
                                std::move(image.offset_epochs));
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
bool Broker::upgrade_classic_group(sim::NodeId from, std::int32_t correlation_id,
                                   const ConsumerGroupHeartbeatRequest& hb) {
  const ClassicGroup& g = *coordinator_->group(hb.group_id);
  if (g.members.empty()) {
    ClassicGroupImage image = coordinator_->release_group(
        hb.group_id, "the empty classic group is replaced by a consumer group");
    consumer_coordinator_->adopt_offsets(hb.group_id, std::move(image.offsets),
                                         std::move(image.offset_epochs));
    return true;
  }
  std::string refusal = hb.member_epoch == 0 ? coordinator_->upgrade_refusal(hb.group_id)
                                             : std::string("the group is not a consumer group");
  if (!refusal.empty()) {
    tracer_.publish(trace::GroupMigration{
        .group = hb.group_id, .from = "classic", .to = "consumer", .refused = refusal});
    net_.send(node_, from,
              Envelope{correlation_id,
                       ConsumerGroupHeartbeatResponse{.error = ErrorCode::GROUP_ID_NOT_FOUND,
                                                      .member_id = hb.member_id,
                                                      .member_epoch = hb.member_epoch}});
    return false;
  }
  const std::string reason =
      fmt::format("member {} joined with the consumer protocol", net_.name(from));
  consumer_coordinator_->adopt_classic(
      coordinator_->release_group(hb.group_id, "converted to a consumer group"), reason);
  return true;
}

Message Broker::refusal(const Message& request, ErrorCode error) {
  if (std::holds_alternative<JoinGroupRequest>(request)) return JoinGroupResponse{.error = error};
  if (std::holds_alternative<SyncGroupRequest>(request)) return SyncGroupResponse{.error = error};
  if (std::holds_alternative<HeartbeatRequest>(request)) return HeartbeatResponse{error};
  if (std::holds_alternative<LeaveGroupRequest>(request)) return LeaveGroupResponse{.error = error};
  if (std::holds_alternative<OffsetFetchRequest>(request)) return OffsetFetchResponse{error, {}};
  if (const auto* hb = std::get_if<ConsumerGroupHeartbeatRequest>(&request))
    return ConsumerGroupHeartbeatResponse{.error = error, .member_id = hb->member_id};
  return OffsetCommitResponse{error};
}

}  // namespace rsim
