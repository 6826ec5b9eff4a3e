// Reproduces the iteration order of Java's HashMap/HashSet for the keys Kafka's client
// assignors hash (member ids, topic names, TopicPartitions). Kafka's results depend on that
// order in a few places; this header is the only place that knows how Java orders buckets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/protocol/topic_partition.hpp"

namespace rsim::assignors::java {

/// Java's String.hashCode over the string's UTF-16 code units (input is UTF-8).
std::int32_t string_hash(std::string_view s);
/// Kafka's TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode().
std::int32_t topic_partition_hash(const TopicPartition& tp);
/// HashMap's bucket index of a key hash in a table of `capacity` (a power of two) buckets.
std::size_t bucket_of(std::int32_t hash, std::size_t capacity);
/// Table size of a default-constructed HashMap after `entries` puts (16, doubling past 3/4 full).
std::size_t default_capacity(std::size_t entries);

/// The order a default-constructed HashMap<String, ...> iterates `keys` put in the given order
/// (duplicates ignored). Returns indices into `keys`.
std::vector<std::size_t> hash_map_order(const std::vector<std::string>& keys);

/// The same for a HashMap filled with computeIfAbsent (Kafka's grouping idiom). Unlike put, it
/// links a new key at the head of its bucket and resizes before inserting, so keys that share a
/// bucket come out in reverse order of first appearance. Returns indices of first appearances.
std::vector<std::size_t> compute_if_absent_order(const std::vector<std::string>& keys);

/// `owned` as the eager StickyAssignor's user data gives it back to the leader: the member's
/// partitions grouped by topic in compute_if_absent_order, each topic's in their order in `owned`.
TopicPartitions sticky_user_data_order(const TopicPartitions& owned);

}  // namespace rsim::assignors::java
