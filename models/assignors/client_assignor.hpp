// Client-side (classic protocol) partition assignors as pure functions: range, roundrobin,
// sticky, cooperative-sticky. The group leader runs one of them inside a rebalance; tests and
// `rebalance-sim assign` call them directly. No kernel access, no global state.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/protocol/topic_partition.hpp"

namespace rsim::assignors {

/// One member's subscription as the leader decodes it from the JoinGroup metadata.
struct ClientMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<std::string> topics;         // subscribed topic names
  TopicPartitions owned_partitions;        // in the order the member reports them
  std::optional<std::int32_t> generation;  // generation of `owned_partitions`; nullopt = none
  std::optional<std::string> rack;         // client.rack
};

struct ClientAssignorInput {
  /// Cluster metadata as the leader sees it: topic -> partition count.
  std::map<std::string, std::int32_t> partitions_per_topic;
  /// Optional: topic -> per partition, the sorted distinct racks of its replicas.
  std::map<std::string, std::vector<std::vector<std::string>>> partition_racks;
  std::vector<ClientMember> members;
  /// Test-only switch of Kafka's client assignors: take the rack-aware path whenever consumer
  /// and partition racks overlap, even if every partition has a replica on every rack.
  bool prefer_rack_aware_logic = false;
};

/// member id -> assigned partitions (in the assignor's output order). Every input member is a key.
using ClientAssignment = std::map<std::string, TopicPartitions>;

/// Kafka's rebalance protocols, in Kafka's order of ids (EAGER=0, COOPERATIVE=1).
enum class RebalanceProtocol { Eager = 0, Cooperative = 1 };

/// True for range, roundrobin, sticky, cooperative-sticky (short names only).
bool is_client_assignor(const std::string& name);
/// The protocols an assignor supports (cooperative-sticky: both; the others: eager only).
std::vector<RebalanceProtocol> supported_protocols(const std::string& name);
/// Runs the named assignor. Throws std::invalid_argument for an unknown name.
ClientAssignment assign_client(const std::string& name, const ClientAssignorInput& input);

}  // namespace rsim::assignors
