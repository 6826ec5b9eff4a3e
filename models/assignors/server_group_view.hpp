// Internal to the server-side assignors: a ServerAssignorInput with topics numbered and
// subscriptions resolved to topic numbers once, so that the builders work on integers. Not a
// public API; the coordinator calls assign_server() in server_assignor.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/assignors/server_assignor.hpp"
#include "models/assignors/server_java_order.hpp"

namespace rsim::assignors::server_detail {

/// A topic of the metadata, numbered by its position in ServerAssignorInput::topics.
struct TopicView {
  std::int32_t partitions = 0;
  std::int32_t java_hash = 0;             // hash of the id as Java's HashMap<Uuid> sees it
  std::optional<server_java::Uuid> uuid;  // the id as a Kafka Uuid, when it is one
  std::size_t id_rank = 0;                // position of the id in string order
};

/// One topic of a member's current target, as the builders walk it.
struct TargetTopic {
  int topic = -1;  // -1: the id is not in the metadata
  const std::vector<std::int32_t>* partitions = nullptr;
  const std::string* id = nullptr;
};

class GroupView {
 public:
  explicit GroupView(const ServerAssignorInput& input);

  const ServerAssignorInput& input() const { return input_; }
  std::size_t member_count() const { return input_.members.size(); }
  const TopicView& topic(int t) const { return topics_[static_cast<std::size_t>(t)]; }
  int topic_by_id(std::string_view id) const;

  /// The member's subscribed topics that exist, without duplicates, in subscription order.
  /// Members with equal subscription lists share one resolution.
  const std::vector<int>& subscription(std::size_t member);
  /// The same topics, sorted by topic number (for binary search).
  const std::vector<int>& sorted_subscription(std::size_t member);
  /// The same topics in topic-id order, the order results are built in.
  const std::vector<int>& subscription_by_id(std::size_t member);
  /// `topics` sorted by topic id.
  std::vector<int> by_id(std::vector<int> topics) const;
  /// The member's subscribed topics in the order Java iterates `new HashSet<>(TopicIds)` built
  /// from the member's HashSet of topic names (what UniformHomogeneousAssignmentBuilder walks).
  std::vector<int> java_subscription_order(std::size_t member) const;
  /// The member's subscribed topics in the order Java iterates the TopicIds view itself (no
  /// copy): the order of the member's HashSet of topic names, names missing from the metadata
  /// left out (what SimpleHomogeneousAssignmentBuilder walks).
  std::vector<int> topic_ids_view_order(std::size_t member) const;

  /// The member's current target in Kafka's iteration order (see ServerMember).
  std::vector<TargetTopic> target_in_java_order(std::size_t member) const;
  /// `partitions` of one target topic in the order Kafka walks them.
  std::vector<std::int32_t> partitions_in_java_order(
      std::size_t member, const std::vector<std::int32_t>& partitions) const;

  /// Kafka's Uuid.compareTo on two topics' ids.
  int compare_ids(int a, int b) const;

  /// Builds a member's result from (topic, partitions) pairs in any order; cheapest when they
  /// come in topic-id order with sorted partitions.
  MemberAssignment make_assignment(
      std::vector<std::pair<int, std::vector<std::int32_t>>>& parts) const;

 private:
  struct Resolution {
    const std::vector<std::string>* names = nullptr;
    std::vector<int> topics;
    std::vector<int> sorted;
    std::vector<int> by_rank;
  };
  std::size_t resolve(std::size_t member);
  /// The member's existing subscribed topics in the order of its HashSet of names;
  /// `distinct_names` gets the set's size (missing names included).
  std::vector<int> names_in_java_order(std::size_t member, std::size_t& distinct_names) const;

  const ServerAssignorInput& input_;
  std::vector<TopicView> topics_;
  std::unordered_map<std::string_view, int> by_name_;
  std::unordered_map<std::string_view, int> by_id_;
  std::vector<Resolution> resolutions_;
  std::vector<std::size_t> member_resolution_;  // member -> index into resolutions_ (+1; 0 = none)
  std::vector<std::uint32_t> seen_stamp_;
  std::uint32_t stamp_ = 0;
};

ServerAssignment uniform_homogeneous(GroupView& group);
ServerAssignment uniform_heterogeneous(GroupView& group);
ServerAssignment range_assign(GroupView& group);

}  // namespace rsim::assignors::server_detail
