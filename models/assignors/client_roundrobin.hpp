// Kafka's RoundRobinAssignor (classic protocol, client side) as a pure function: all subscribed
// partitions in (topic, partition) order are dealt to members in MemberInfo order, skipping
// members not subscribed to the partition's topic.
#pragma once
#include "models/assignors/client_assignor.hpp"

namespace rsim::assignors {

ClientAssignment assign_roundrobin(const ClientAssignorInput& input);

}  // namespace rsim::assignors
