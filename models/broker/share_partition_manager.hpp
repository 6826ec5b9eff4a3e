// The share-group side of the brokers (KIP-932), as a model of its own (issue 33): each broker
// leads the share-partitions of the data partitions it leads (SharePartition: SPSO/SPEO window,
// acquisition locks, delivery counts), answers ShareFetch (with the delayed-fetch wait of
// MaxWaitMs) and ShareAcknowledge, keeps the share sessions of its connections, persists every
// change through the share coordinator in __share_group_state (ShareStateLog: ShareUpdate
// records, a ShareSnapshot every share.coordinator.snapshot.update.records.per.snapshot), and
// releases a record whose acquisition lock outlives group.share.record.lock.duration.ms (or the
// group's share.record.lock.duration.ms). ShareGroupHeartbeat goes to the share group
// coordinator the world gives it.
//
// Kafka runs one SharePartitionManager per broker; this object holds the share-partitions of
// every broker of the world, keyed by the broker that leads them (data partition p's leader is
// broker p mod brokers: leadership does not move in a share run).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/messages.hpp"
#include "models/trace/trace_events.hpp"
#include "models/workload/workload.hpp"
#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

class ShareGroupCoordinator;

class SharePartitionManager {
 public:
  /// `group_configs`: the groups with their own configs (resolved over the broker's
  /// group.share.* values); `write_latency` / `network_latency`: one write of __share_group_state
  /// and one hop between brokers; `name_of`: how the trace names a client node (the scenario's
  /// consumer name).
  SharePartitionManager(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
                        const ClusterMetadata& cluster, const BrokerConfig& config,
                        Workload& workload, std::map<std::string, ShareGroupConfig> group_configs,
                        sim::Distribution write_latency, sim::Distribution network_latency,
                        std::uint64_t seed, std::function<std::string(sim::NodeId)> name_of);
  ~SharePartitionManager();
  SharePartitionManager(const SharePartitionManager&) = delete;
  SharePartitionManager& operator=(const SharePartitionManager&) = delete;

  /// Where ShareGroupHeartbeat requests go (the coordinator needs initialize_state, so it is
  /// made after this object).
  void set_group_coordinator(ShareGroupCoordinator* coordinator);

  /// A request that reached broker `broker` from `from` (ShareGroupHeartbeat, ShareFetch,
  /// ShareAcknowledge, or the client's connection closing).
  void on_message(std::int32_t broker, sim::NodeId from, Envelope&& e);

  /// InitializeShareGroupState from the group coordinator to each share coordinator: after the
  /// slowest write, every share-partition of `partitions` starts at `start`; then `done`.
  void initialize_state(const std::string& group, const TopicPartitions& partitions,
                        std::int32_t state_epoch, std::int64_t start, std::function<void()> done);

  /// The broker leading data partition `tp` (and its share-partitions).
  std::int32_t leader_broker(const TopicPartition& tp) const;
  /// The configs of `group`: its own, else the broker's group.share.* values.
  const ShareGroupConfig& group_config(const std::string& group) const;
  /// The groups with their own configs.
  const std::map<std::string, ShareGroupConfig>& group_configs() const;
  /// share.auto.offset.reset as describe-configs shows it ("by_duration:<d>ms" for a duration).
  static std::string auto_offset_reset_text(const ShareGroupConfig& c);

  /// One share-partition.end event per share-partition ever initialized, in (group, partition)
  /// order: the end of the run.
  void publish_end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rsim
