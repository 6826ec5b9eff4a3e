// What every client and broker may ask of the cluster: topic metadata (partition counts) and
// which broker leads each __consumer_offsets partition and each data partition (and which
// brokers are down or fenced). Metadata propagation delays are not modelled: a client's metadata
// request sees the current state; what a client believes until it asks again is its own copy
// (ConsumerClient's leader cache).
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/protocol/topic_partition.hpp"
#include "sim/network.hpp"

namespace rsim {

struct ClusterMetadata {
  std::map<std::string, std::int32_t> partitions_per_topic;
  std::vector<sim::NodeId> broker_nodes;  // broker-N is broker_nodes[N]
  std::int32_t offsets_topic_num_partitions = 50;
  /// The mean of `cluster.purgatory_lateness_ms`: how much later than fetch.max.wait.ms a broker
  /// answers a Fetch that found no records.
  double purgatory_lateness_ms = 0;

  std::int32_t partitions(const std::string& topic) const {
    const auto it = partitions_per_topic.find(topic);
    return it == partitions_per_topic.end() ? 0 : it->second;
  }
  std::int32_t offsets_topic_replication_factor = 3;
  /// Leaders elected after a broker failure (partition -> broker id, -1 = no leader); partitions
  /// not listed keep their initial leader.
  std::map<std::int32_t, std::int32_t> elected_leaders;
  std::vector<bool> broker_down;  // by broker id
  /// By broker id: not eligible as a partition leader (shut down in a controlled way, or fenced
  /// by the controller after broker.session.timeout.ms without heartbeats).
  std::vector<bool> broker_fenced;
  /// Data partitions whose leader moved away from their first replica (-1 = no leader).
  std::map<TopicPartition, std::int32_t> data_leaders;

  std::int32_t brokers() const { return static_cast<std::int32_t>(broker_nodes.size()); }
  /// Replica k of a __consumer_offsets partition: brokers partition, partition+1, ... (mod
  /// brokers), as many as min(replication factor, brokers); replica 0 is the initial leader.
  std::vector<std::int32_t> offsets_replicas(std::int32_t partition) const {
    std::vector<std::int32_t> r;
    const std::int32_t n = std::min(offsets_topic_replication_factor, brokers());
    for (std::int32_t k = 0; k < n; ++k) r.push_back((partition + k) % brokers());
    return r;
  }
  /// The broker leading a __consumer_offsets partition in the cluster's metadata; -1 when the
  /// partition has no leader (every replica is down).
  std::int32_t leader_of_offsets_partition(std::int32_t partition) const {
    const auto it = elected_leaders.find(partition);
    return it != elected_leaders.end() ? it->second : partition % brokers();
  }
  /// Replicas of a data partition, as of __consumer_offsets: brokers p, p+1, ... (mod brokers),
  /// min(offsets.topic.replication.factor, brokers) of them; the first is the initial leader.
  std::vector<std::int32_t> data_replicas(const TopicPartition& tp) const {
    return offsets_replicas(tp.partition);
  }
  /// The data partition's leader in the cluster's metadata; -1 when it has none.
  std::int32_t data_leader(const TopicPartition& tp) const {
    if (data_leaders.empty()) return tp.partition % brokers();  // asked per partition per poll pass
    const auto it = data_leaders.find(tp);
    return it != data_leaders.end() ? it->second : tp.partition % brokers();
  }
  /// A broker that may lead: alive and neither fenced nor shutting down.
  bool eligible_leader(std::int32_t broker) const {
    const auto b = static_cast<std::size_t>(broker);
    return !(b < broker_down.size() && broker_down[b]) &&
           !(b < broker_fenced.size() && broker_fenced[b]);
  }
  bool is_down(sim::NodeId node) const {
    for (std::size_t b = 0; b < broker_nodes.size(); ++b)
      if (broker_nodes[b] == node) return b < broker_down.size() && broker_down[b];
    return false;
  }
};

}  // namespace rsim
