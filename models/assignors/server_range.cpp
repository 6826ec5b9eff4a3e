// The coordinator's `range` assignor (Kafka's server-side RangeAssignor): per topic, its
// subscribers in a fixed order take contiguous ranges, the first ones one partition more. Not
// sticky: current targets are ignored.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "models/assignors/server_group_view.hpp"

namespace rsim::assignors::server_detail {
namespace {

struct TopicRanges {
  std::int32_t partitions = 0;
  std::int32_t members = 0;  // subscribers sharing the topic
  std::int32_t min_quota = -1;
  std::int32_t extra = 0;
  std::int32_t next = 0;

  /// The next subscriber's range [start, end).
  std::pair<std::int32_t, std::int32_t> take() {
    if (min_quota == -1) {
      min_quota = partitions / members;
      extra = partitions % members;
    }
    std::int32_t quota = min_quota;
    if (extra > 0) {
      ++quota;
      --extra;
    }
    const std::int32_t start = next;
    next = std::min(start + quota, partitions);
    return {start, next};
  }
};

}  // namespace

ServerAssignment range_assign(GroupView& group) {
  const std::vector<ServerMember>& members = group.input().members;
  // Static members first, by instance id, so that a restarted instance gets its ranges back;
  // then dynamic members by member id.
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ia = members[a].instance_id;
    const auto& ib = members[b].instance_id;
    if (ia && ib) return *ia < *ib;
    if (ia || ib) return ia.has_value();
    return members[a].member_id < members[b].member_id;
  });

  std::vector<TopicRanges> topics(group.input().topics.size());
  const bool homogeneous = group.input().subscription_type == SubscriptionType::Homogeneous;
  if (homogeneous) {
    for (const int t : group.subscription(order.front())) {
      topics[static_cast<std::size_t>(t)].partitions = group.topic(t).partitions;
      topics[static_cast<std::size_t>(t)].members = static_cast<std::int32_t>(members.size());
    }
  } else {
    for (const std::size_t m : order) {
      for (const int t : group.subscription(m)) {
        topics[static_cast<std::size_t>(t)].partitions = group.topic(t).partitions;
        ++topics[static_cast<std::size_t>(t)].members;
      }
    }
  }

  ServerAssignment out;
  std::vector<std::pair<int, std::vector<std::int32_t>>> parts;
  for (const std::size_t m : order) {
    // Ranges of one topic depend only on the member order, so topics go in id order, which is
    // the order the result is built in.
    const std::vector<int>& subscribed = group.subscription_by_id(homogeneous ? order.front() : m);
    parts.clear();
    for (const int t : subscribed) {
      const auto [start, end] = topics[static_cast<std::size_t>(t)].take();
      if (start >= end) continue;
      std::vector<std::int32_t> range(static_cast<std::size_t>(end - start));
      std::iota(range.begin(), range.end(), start);
      parts.emplace_back(t, std::move(range));
    }
    out.emplace(members[m].member_id, group.make_assignment(parts));
  }
  return out;
}

}  // namespace rsim::assignors::server_detail
