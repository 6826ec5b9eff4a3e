// A Kafka TopicPartition, printed as Kafka prints it: "orders-3", and set helpers on lists of them.
#pragma once
#include <algorithm>
#include <compare>
#include <cstdint>
#include <string>
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

/// `a` without the partitions of `b`, in a's order.
inline TopicPartitions minus(const TopicPartitions& a, TopicPartitions b) {
  std::sort(b.begin(), b.end());
  TopicPartitions out;
  for (const auto& tp : a)
    if (!std::binary_search(b.begin(), b.end(), tp)) out.push_back(tp);
  return out;
}

}  // namespace rsim
