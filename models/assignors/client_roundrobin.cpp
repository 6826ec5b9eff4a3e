#include "models/assignors/client_roundrobin.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "models/assignors/client_common.hpp"

namespace rsim::assignors {

ClientAssignment assign_roundrobin(const ClientAssignorInput& input) {
  ClientAssignment result;
  for (const auto& m : input.members) result[m.member_id];
  if (input.members.empty()) return result;

  std::vector<std::size_t> ring(input.members.size());
  std::iota(ring.begin(), ring.end(), std::size_t{0});
  std::stable_sort(ring.begin(), ring.end(), [&](std::size_t a, std::size_t b) {
    return detail::member_info_less(input.members[a], input.members[b]);
  });
  std::vector<std::set<std::string>> subscribed;
  std::set<std::string> topics;  // every subscribed topic, in name order
  for (const std::size_t i : ring) {
    const auto& subs = input.members[i].topics;
    subscribed.emplace_back(subs.begin(), subs.end());
    topics.insert(subs.begin(), subs.end());
  }

  std::size_t next = 0;  // position in `ring` of the member the circular iterator points at
  for (const auto& topic : topics) {
    const auto it = input.partitions_per_topic.find(topic);
    if (it == input.partitions_per_topic.end()) continue;
    for (std::int32_t p = 0; p < it->second; ++p) {
      // Someone subscribes to `topic` (it came from a subscription), so this loop ends.
      while (subscribed[next].count(topic) == 0) next = (next + 1) % ring.size();
      result[input.members[ring[next]].member_id].push_back(TopicPartition{topic, p});
      next = (next + 1) % ring.size();
    }
  }
  return result;
}

}  // namespace rsim::assignors
