// Helpers shared by the client-side assignors: member ordering as Kafka's
// AbstractPartitionAssignor.MemberInfo defines it, and the group's subscription map order.
// Internal to models/assignors; not part of the assignor interface.
#pragma once
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/assignors/client_assignor.hpp"

namespace rsim::assignors::detail {

/// MemberInfo order: static members first, by group.instance.id; then dynamic ones by member id.
bool member_info_less(const ClientMember& a, const ClientMember& b);

/// Indices of `input.members` in the order the leader's subscription map (a Java HashMap keyed
/// by member id) yields them. A member id listed twice keeps its first entry.
std::vector<std::size_t> subscription_order(const ClientAssignorInput& input);

/// The member's rack if set and non-empty (Kafka ignores empty rack ids).
const std::string* effective_rack(const ClientMember& member);

/// The distinct racks of `tp`'s replicas, or an empty set when unknown.
std::set<std::string> replica_racks(const ClientAssignorInput& input, const TopicPartition& tp);

}  // namespace rsim::assignors::detail
