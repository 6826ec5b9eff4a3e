// A Kafka TopicPartition, printed as Kafka prints it: "orders-3".
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace rsim
