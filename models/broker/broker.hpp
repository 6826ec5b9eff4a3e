// The broker as a model of its own (issue 33): what one Kafka broker answers on the data plane
// and which broker leads what. A classic/consumer world has one Broker per broker id: it answers
// ListOffsets, OffsetsForLeaderEpoch and FindCoordinator from any live broker, routes group
// requests to the group coordinators it runs (classic GroupCoordinator and KIP-848
// ConsumerGroupCoordinator, one shard per __consumer_offsets partition it leads), and loads and
// unloads those shards as leadership moves. Fetch itself is modelled inside the consumer (records
// are read from the Workload's logs); who may answer a Fetch is `fetch_error`.
//
// Leadership (the controller's part, applied by the world): every partition, data or
// __consumer_offsets, has replicas p, p+1, ... (mod brokers); its leader moves to the next
// eligible replica. The functions below are pure functions of the ClusterMetadata (the metadata
// every client's Metadata request returns), so they can be checked on their own.
// The share-group side of the broker (ShareFetch, ShareAcknowledge, share-partition persistence,
// lock expiry) is models/broker/share_partition_manager.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/client/lag_monitor.hpp"
#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/group_snapshots.hpp"
#include "models/protocol/messages.hpp"
#include "models/protocol/model_options.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "models/workload/workload.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

// ---- Data plane: what a broker answers (pure functions of the metadata and the logs) ----

/// The error of a Fetch for `tp` sent to broker `broker`: NONE from the partition's leader,
/// NOT_LEADER_OR_FOLLOWER from any other live broker (ReplicaManager: only the leader serves a
/// consumer's Fetch; follower fetching, KIP-392, is not modelled). A broker that is down answers
/// nothing (the client sees the disconnect), which is not an error code: callers check
/// `cluster.broker_down` first.
ErrorCode fetch_error(const ClusterMetadata& cluster, std::int32_t broker,
                      const TopicPartition& tp);

/// ListOffsets: timestamp -2 (EARLIEST_TIMESTAMP) answers the log start offset, anything else
/// (-1, LATEST_TIMESTAMP) the log end offset now. Any live broker answers (leadership of data
/// partitions is not checked here).
ListOffsetsResponse list_offsets(Workload& workload, const ListOffsetsRequest& request);

/// OffsetsForLeaderEpoch: data partitions keep leader epoch kDataLeaderEpoch (leader changes do
/// not bump it), which ends at the log end offset; an epoch the leader never had (below it) is
/// unknown (-1/-1, UNDEFINED_EPOCH_OFFSET).
OffsetsForLeaderEpochResponse offsets_for_leader_epoch(Workload& workload,
                                                       const OffsetsForLeaderEpochRequest& request);

/// FindCoordinator(key): the current leader of the key's __consumer_offsets partition in the
/// metadata cache, loaded or not (KafkaApis); no leader: COORDINATOR_NOT_AVAILABLE.
FindCoordinatorResponse find_coordinator(const ClusterMetadata& cluster, const std::string& key);

// ---- Leadership (what the controller decides; the world applies it) ----

/// The __consumer_offsets partitions `broker` leads, in partition order.
std::vector<std::int32_t> offsets_partitions_led_by(const ClusterMetadata& cluster,
                                                    std::int32_t broker);

/// The first replica of `replicas` other than `failed` that may lead (alive, not fenced, not
/// shutting down); -1 when none.
std::int32_t next_eligible_leader(const ClusterMetadata& cluster,
                                  const std::vector<std::int32_t>& replicas, std::int32_t failed);

/// Every data partition `broker` leads gets its next eligible replica as leader (-1: none).
/// Returns the moves (partition -> new leader or none), empty when `broker` led none.
LeaderMoves move_data_leaders(ClusterMetadata& cluster, std::int32_t broker);

/// Data partitions left without a leader get `broker` back when it is one of their replicas.
/// Returns the moves, as move_data_leaders.
LeaderMoves adopt_leaderless(ClusterMetadata& cluster, std::int32_t broker);

// ---- One broker of a classic/consumer world ----

class Broker {
 public:
  Broker(std::int32_t id, sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
         const ClusterMetadata& cluster, const BrokerConfig& config,
         const CoordinatorLoadSpec& load, OffsetsLog& log, std::uint64_t seed, Workload& workload,
         LagMonitor& lag, const InjectedBugs& bugs);
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  sim::NodeId node() const { return node_; }
  std::int32_t id() const { return id_; }

  /// The broker's process dies: every coordinator shard it ran (`led_partitions`) is gone.
  void fail(const std::vector<std::int32_t>& led_partitions);
  /// The process is back (a new incarnation: loads scheduled before are void).
  void recover() { ++incarnation_; }
  /// Elected leader of a __consumer_offsets partition: load it (COORDINATOR_LOAD_IN_PROGRESS
  /// meanwhile), then serve it.
  void load(std::int32_t partition);
  /// A recording's member ids, handed out by this broker's coordinators in place of their seeded
  /// draws (the World's, shared by every broker; may be null).
  void set_member_id_replay(MemberIdReplay* replay) {
    coordinator_->set_member_id_replay(replay);
    consumer_coordinator_->set_member_id_replay(replay);
  }

 private:
  void on_message(sim::NodeId from, Envelope&& e);
  bool upgrade_classic_group(sim::NodeId from, std::int32_t correlation_id,
                             const ConsumerGroupHeartbeatRequest& hb);
  static Message refusal(const Message& request, ErrorCode error);

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

}  // namespace rsim
