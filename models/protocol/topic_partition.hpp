// A Kafka TopicPartition, printed as Kafka prints it: "orders-3", and set helpers on lists of them.
#pragma once
#include <algorithm>
#include <compare>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace rsim {

struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
  std::string str() const { return topic + "-" + std::to_string(partition); }
};

using TopicPartitions = std::vector<TopicPartition>;

inline std::vector<std::string> to_strings(const TopicPartitions& tps) {
  std::vector<std::string> out;
  out.reserve(tps.size());
  for (const auto& tp : tps) out.push_back(tp.str());
  return out;
}

/// The partitions as a JSON list of "topic-partition" strings (trace events, records).
inline nlohmann::ordered_json partition_list(const TopicPartitions& tps) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& tp : tps) list.push_back(tp.str());
  return list;
}

/// Sets `m[k] = v` in an ordered map, looking at `hint` first, and returns the entry after k: the
/// hint for the next key. Offsets committed together are for consecutive partitions, so from the
/// second one on each is found in O(1) instead of a walk down the tree that compares topic names
/// (a group's offsets map holds every partition it consumes).
template <class Map, class V>
typename Map::iterator assign_from(Map& m, typename Map::iterator hint,
                                   const typename Map::key_type& k, V&& v) {
  return std::next(m.insert_or_assign(hint, k, std::forward<V>(v)));
}

/// `a` without the partitions of `b`, in a's order.
inline TopicPartitions minus(const TopicPartitions& a, TopicPartitions b) {
  std::sort(b.begin(), b.end());
  TopicPartitions out;
  for (const auto& tp : a)
    if (!std::binary_search(b.begin(), b.end(), tp)) out.push_back(tp);
  return out;
}

}  // namespace rsim
