// Kafka's RangeAssignor (classic protocol, client side) as a pure function: per topic, the
// subscribed members in MemberInfo order each take a contiguous range, the first ones one extra.
// Rack-aware when member and replica racks are known (KIP-881). Not the broker's `range`.
#pragma once
#include "models/assignors/client_assignor.hpp"

namespace rsim::assignors {

ClientAssignment assign_range(const ClientAssignorInput& input);

}  // namespace rsim::assignors
