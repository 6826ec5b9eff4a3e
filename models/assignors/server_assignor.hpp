// Server-side (KIP-848 consumer protocol) partition assignors as pure functions: `uniform`
// (Kafka's UniformAssignor with its homogeneous and heterogeneous builders) and `range` (the
// coordinator's RangeAssignor). The group coordinator computes a target assignment with one of
// them; this file knows nothing about epochs, records or reconciliation. No kernel, no globals.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rsim::assignors {

/// Kafka's GroupSpec.subscriptionType(): homogeneous iff every member subscribes to the same
/// topics (see subscription_type_by_names() for the rule without regular expressions).
enum class SubscriptionType { Homogeneous, Heterogeneous };

/// One topic of the metadata image. Topic ids are strings; a Kafka base64 Uuid
/// ("T1-A4s3VTwiI5CTbEp6POw") is hashed and ordered as Java's Uuid, any other string as a
/// java.lang.String, which is where Kafka's iteration orders come from.
struct ServerTopic {
  std::string id;
  std::string name;
  std::int32_t partitions = 0;
};

/// topic id -> partitions. Kafka's Map<Uuid, Set<Integer>>. Results hold sorted partitions.
using MemberAssignment = std::map<std::string, std::vector<std::int32_t>>;

struct ServerMember {
  std::string member_id;
  std::optional<std::string> instance_id;  // group.instance.id of a static member
  std::optional<std::string> rack;         // no built-in server assignor reads it (Kafka 4.5)
  /// Subscribed topic names, regular-expression matches included. Names missing from the
  /// metadata are ignored, as Kafka's TopicIds view does.
  std::vector<std::string> subscribed_topics;
  /// The member's current target assignment, which the sticky `uniform` assignor starts from.
  /// Each topic's partitions in the order of the target record that set it: Kafka walks the
  /// HashSet<Integer> its replay built from that list (Assignment.fromRecord).
  MemberAssignment target;
  /// Kafka walks `target` in Java HashMap/HashSet order (the coordinator's maps), which is
  /// emulated when this is empty. Set it to walk the topics in this order instead, each topic's
  /// partitions in their order in `target` (an insertion-ordered map, as some Kafka tests use).
  std::vector<std::string> target_topic_order;
};

struct ServerAssignorInput {
  std::vector<ServerTopic> topics;
  /// Members in the order Kafka's GroupSpec.memberIds() yields them (a HashMap of member ids in
  /// the coordinator). `uniform` depends on this order; `range` sorts members itself.
  std::vector<ServerMember> members;
  SubscriptionType subscription_type = SubscriptionType::Homogeneous;
  /// When set, the homogeneous `uniform` builder returns each topic's partitions in the iteration
  /// order of the HashSet Kafka's builder leaves them in (the order Kafka's target record lists
  /// them): a kept set as its replay built it (its record's order, bucket by bucket), a copied one
  /// with the removed partitions left out, the added partitions after the kept ones, in a table
  /// grown as HashSet.add grows it. Otherwise (and for the other builders) sorted.
  bool java_set_order = false;
};

/// member id -> its new target assignment (partitions sorted, or see java_set_order). Which members
/// appear follows Kafka: `uniform` returns no member at all when nobody subscribes to an existing
/// topic, otherwise every member (possibly with nothing); `range` always returns every member.
using ServerAssignment = std::map<std::string, MemberAssignment>;

/// Kafka's PartitionAssignorException (e.g. partitions left over by an inconsistent input).
struct PartitionAssignorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// True for "uniform" and "range".
bool is_server_assignor(const std::string& name);
/// Runs the named assignor ("uniform" or "range"). Throws std::invalid_argument for an unknown
/// name and PartitionAssignorError where Kafka's assignor throws.
ServerAssignment assign_server(const std::string& name, const ServerAssignorInput& input);

/// ConsumerGroup.subscriptionType() for members without regular expressions: homogeneous iff
/// every subscribed topic name is subscribed by all members (also when nobody subscribes).
SubscriptionType subscription_type_by_names(const std::vector<ServerMember>& members);

}  // namespace rsim::assignors
