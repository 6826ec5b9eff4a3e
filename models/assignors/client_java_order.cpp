#include "models/assignors/client_java_order.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace rsim::assignors::java {

namespace {

// Appends the UTF-16 code units of one UTF-8 string; bytes that do not start a valid sequence
// count as one unit each, which is what matters for ids that are plain ASCII anyway.
std::vector<std::uint16_t> utf16_units(std::string_view s) {
  std::vector<std::uint16_t> units;
  units.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    std::uint32_t cp = b0;
    std::size_t len = 1;
    if (b0 >= 0xF0) {
      len = 4;
      cp = b0 & 0x07u;
    } else if (b0 >= 0xE0) {
      len = 3;
      cp = b0 & 0x0Fu;
    } else if (b0 >= 0xC0) {
      len = 2;
      cp = b0 & 0x1Fu;
    }
    if (len > 1 && i + len <= s.size()) {
      for (std::size_t k = 1; k < len; ++k)
        cp = (cp << 6) | (static_cast<std::uint8_t>(s[i + k]) & 0x3Fu);
    } else {
      len = 1;
      cp = b0;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units.push_back(static_cast<std::uint16_t>(0xD800 + (cp >> 10)));
      units.push_back(static_cast<std::uint16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      units.push_back(static_cast<std::uint16_t>(cp));
    }
    i += len;
  }
  return units;
}

}  // namespace

std::int32_t string_hash(std::string_view s) {
  std::uint32_t h = 0;  // unsigned: Java's int overflow wraps, C++'s signed overflow must not
  for (const std::uint16_t unit : utf16_units(s)) h = 31u * h + unit;
  return static_cast<std::int32_t>(h);
}

std::int32_t topic_partition_hash(const TopicPartition& tp) {
  std::uint32_t h = 31u + static_cast<std::uint32_t>(tp.partition);
  h = 31u * h + static_cast<std::uint32_t>(string_hash(tp.topic));
  return static_cast<std::int32_t>(h);
}

std::size_t bucket_of(std::int32_t hash, std::size_t capacity) {
  const auto h = static_cast<std::uint32_t>(hash);
  return static_cast<std::size_t>(h ^ (h >> 16)) & (capacity - 1);
}

std::size_t default_capacity(std::size_t entries) {
  std::size_t capacity = 16;
  while (entries > capacity / 4 * 3) capacity *= 2;
  return capacity;
}

std::vector<std::size_t> hash_map_order(const std::vector<std::string>& keys) {
  std::vector<std::size_t> distinct;
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (seen.insert(keys[i]).second) distinct.push_back(i);
  }
  const std::size_t capacity = default_capacity(distinct.size());
  std::vector<std::size_t> bucket(keys.size(), 0);
  for (const std::size_t i : distinct) bucket[i] = bucket_of(string_hash(keys[i]), capacity);
  // Within a bucket Java keeps insertion order (resizes split buckets without reordering).
  std::stable_sort(distinct.begin(), distinct.end(),
                   [&](std::size_t a, std::size_t b) { return bucket[a] < bucket[b]; });
  return distinct;
}

std::vector<std::size_t> compute_if_absent_order(const std::vector<std::string>& keys) {
  std::vector<std::size_t> distinct;
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (seen.insert(keys[i]).second) distinct.push_back(i);
  }
  // The table is created (16 buckets) by the first insertion and doubled before an insertion
  // that finds it more than 3/4 full, so the last key does not count towards the final size.
  std::size_t capacity = 16;
  for (std::size_t size = 1; size < distinct.size(); ++size) {
    if (size > capacity / 4 * 3) capacity *= 2;
  }
  std::vector<std::size_t> bucket(keys.size(), 0);
  for (const std::size_t i : distinct) bucket[i] = bucket_of(string_hash(keys[i]), capacity);
  // Head insertion: within a bucket the latest key comes first (splits keep relative order).
  std::reverse(distinct.begin(), distinct.end());
  std::stable_sort(distinct.begin(), distinct.end(),
                   [&](std::size_t a, std::size_t b) { return bucket[a] < bucket[b]; });
  return distinct;
}

TopicPartitions sticky_user_data_order(const TopicPartitions& owned) {
  std::vector<std::string> topics;
  topics.reserve(owned.size());
  for (const auto& tp : owned) topics.push_back(tp.topic);
  TopicPartitions out;
  out.reserve(owned.size());
  for (const std::size_t k : compute_if_absent_order(topics)) {
    for (const auto& tp : owned) {
      if (tp.topic == topics[k]) out.push_back(tp);
    }
  }
  return out;
}

}  // namespace rsim::assignors::java
