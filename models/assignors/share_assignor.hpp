// The share-group (KIP-932) `simple` assignor as a pure function: Kafka's SimpleAssignor with
// its homogeneous and heterogeneous builders (Kafka 4.1 and later: members are spread over the
// partitions, a partition is shared only when there are more members than partitions). The
// share-group coordinator computes a target assignment with it; it knows nothing about epochs,
// records or share-partition initialization beyond the set of assignable partitions.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/assignors/server_assignor.hpp"

namespace rsim::assignors {

/// topic id -> the partitions the group may assign (Kafka's GroupSpec.isPartitionAssignable:
/// only share-partitions whose state is initialized). nullopt: every partition is assignable.
/// A topic missing from a present map has no assignable partition.
using AssignablePartitions = std::optional<std::map<std::string, std::vector<std::int32_t>>>;

/// What Kafka's SimpleAssignor throws outside PartitionAssignorException: in 4.4.0 (and trunk),
/// SimpleHomogeneous/HeterogeneousAssignmentBuilder.assignRemainingPartitions restarts its
/// iterator over the unfilled members after the last of them was filled while the partition
/// still wants members, and next() throws NoSuchElementException. Our builders throw this at
/// the same point instead of reading past the end.
struct ShareAssignorCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs SimpleAssignor on `input` (members in GroupSpec.memberIds() order; `target` is each
/// member's current target assignment). Returns every member (possibly with nothing), or no
/// member at all when there are none or nobody subscribes to an existing topic, as Kafka does.
/// Throws PartitionAssignorError where Kafka's assignor throws it, ShareAssignorCrash where
/// Kafka's throws NoSuchElementException.
ServerAssignment assign_share_simple(const ServerAssignorInput& input,
                                     const AssignablePartitions& assignable = std::nullopt);

}  // namespace rsim::assignors
