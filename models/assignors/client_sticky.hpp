// Kafka's StickyAssignor and CooperativeStickyAssignor (classic protocol, client side) as pure
// functions. Both keep as much of each member's previous assignment as balance allows; the
// cooperative flavour also withholds partitions that must first be revoked by another member
// (KIP-429). Exposes the extra facts Kafka's tests look at, so conformance checks can see them.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "models/assignors/client_assignor.hpp"

namespace rsim::assignors {

enum class StickyFlavor { Eager, Cooperative };

struct StickyOutcome {
  ClientAssignment assignment;
  /// Partitions handed to a new owner in this call (Kafka's partitionsTransferringOwnership).
  /// nullopt when the general (unequal subscriptions) path ran, which does not compute it.
  std::optional<std::map<TopicPartition, std::string>> transferring_ownership;
  /// True when every member subscribed to the same topics (Kafka's "constrained" builder ran).
  bool constrained_path = false;
};

/// Runs the sticky assignor. `Eager` is `sticky`, `Cooperative` is `cooperative-sticky`.
/// Members' `owned_partitions`/`generation` are what the assignor decodes from their
/// subscriptions; a missing generation counts as Kafka's DEFAULT_GENERATION (-1).
/// Known differences from a long-lived Kafka assignor object: Kafka never lowers its
/// `maxGeneration` between calls, we start from the call's own maximum; and Java HashMap
/// order is reproduced for list buckets only (never for buckets of 8+ keys turned into trees).
StickyOutcome assign_sticky(const ClientAssignorInput& input, StickyFlavor flavor);

}  // namespace rsim::assignors
