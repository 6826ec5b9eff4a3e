// What one coordinator hands the other in an online migration between the group protocols
// (Kafka 4.x, group.consumer.migration.policy): a classic group as ConsumerGroup.fromClassicGroup
// reads it (upgrade), or the classic group ClassicGroup.fromConsumerGroup builds from a consumer
// group whose last consumer-protocol member left (downgrade). The records of the conversion are
// written by the coordinators; this is the state that crosses over, offsets included (Kafka keeps
// them in one OffsetMetadataManager for every group type).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/protocol/messages.hpp"
#include "models/protocol/topic_partition.hpp"

namespace rsim {

struct ClassicGroupImage {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string client_id;
    std::string consumer;  // the scenario's name of the client
    std::int32_t rebalance_timeout_ms = 0;
    std::int32_t session_timeout_ms = 0;
    std::vector<JoinGroupProtocol> protocols;  // in the member's preference order
    TopicPartitions assignment;
  };
  std::string group_id;
  std::int32_t generation_id = 0;
  std::string protocol_type = "consumer";
  std::optional<std::string> protocol_name;
  std::vector<Member> members;  // ordered by member id
  std::map<TopicPartition, std::int64_t> offsets;
  std::map<TopicPartition, std::int32_t> offset_epochs;
};

}  // namespace rsim
