// What every client and broker may ask of the cluster: topic metadata (partition counts) and
// which broker leads each __consumer_offsets partition. Metadata propagation delays are not
// modelled: a client's metadata request sees the current counts.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/network.hpp"

namespace rsim {

struct ClusterMetadata {
  std::map<std::string, std::int32_t> partitions_per_topic;
  std::vector<sim::NodeId> broker_nodes;  // broker-N is broker_nodes[N]
  std::int32_t offsets_topic_num_partitions = 50;

  std::int32_t partitions(const std::string& topic) const {
    const auto it = partitions_per_topic.find(topic);
    return it == partitions_per_topic.end() ? 0 : it->second;
  }
  /// The broker leading a __consumer_offsets partition (replica placement: partition mod brokers).
  std::int32_t leader_of_offsets_partition(std::int32_t partition) const {
    return partition % static_cast<std::int32_t>(broker_nodes.size());
  }
};

}  // namespace rsim
