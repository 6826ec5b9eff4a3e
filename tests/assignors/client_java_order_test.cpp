// Java iteration orders the client assignors meet, checked against what Java 17's HashMap
// printed for the same keys (see each case). Found by the differential oracle
// (tools/kafka-oracle/assignors): Kafka groups with computeIfAbsent, whose order is not put's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/assignors/client_java_order.hpp"

using rsim::TopicPartition;
using rsim::TopicPartitions;
namespace java = rsim::assignors::java;

namespace {

std::vector<std::string> in_order(const std::vector<std::string>& keys,
                                  const std::vector<std::size_t>& order) {
  std::vector<std::string> out;
  for (const std::size_t i : order) out.push_back(keys[i]);
  return out;
}

}  // namespace

TEST_CASE("computeIfAbsent puts a colliding key first, put puts it last") {
  // "w" (hash 119) and "wn" (hash 3799) share bucket 7 of 16.
  const std::vector<std::string> keys{"w", "wn"};
  CHECK(in_order(keys, java::hash_map_order(keys)) == std::vector<std::string>{"w", "wn"});
  CHECK(in_order(keys, java::compute_if_absent_order(keys)) == std::vector<std::string>{"wn", "w"});
}

TEST_CASE("computeIfAbsent resizes before inserting: 13 keys stay in 16 buckets") {
  // Java 17: put gives [t4, t5, t6, t7, t8, t9, t10, t12, t11, t0, t1, t2, t3] (32 buckets),
  // computeIfAbsent [t4, t5, t10, t6, t7, t8, t12, t11, t9, t0, t1, t2, t3] (16 buckets).
  const std::vector<std::string> keys{"t12", "t0", "t1", "t2", "t3",  "t4", "t5",
                                      "t6",  "t7", "t8", "t9", "t10", "t11"};
  CHECK(in_order(keys, java::hash_map_order(keys)) ==
        std::vector<std::string>{"t4", "t5", "t6", "t7", "t8", "t9", "t10", "t12", "t11", "t0",
                                 "t1", "t2", "t3"});
  CHECK(in_order(keys, java::compute_if_absent_order(keys)) ==
        std::vector<std::string>{"t4", "t5", "t10", "t6", "t7", "t8", "t12", "t11", "t9", "t0",
                                 "t1", "t2", "t3"});
  // With w and wn as well (15 keys, 32 buckets either way) only the colliding pair differs.
  std::vector<std::string> more = keys;
  more.push_back("w");
  more.push_back("wn");
  CHECK(in_order(more, java::compute_if_absent_order(more)) ==
        std::vector<std::string>{"t4", "t5", "t6", "t7", "t8", "t9", "t10", "t12", "t11", "wn", "w",
                                 "t0", "t1", "t2", "t3"});
}

TEST_CASE("the eager StickyAssignor's user data regroups owned partitions") {
  // StickyAssignor.subscriptionUserData of [w-5, w-11, wn-0], decoded by Kafka 4.4.0's leader:
  // [wn-0, w-5, w-11] (oracle case client.sticky --medium seed 11 #952).
  const TopicPartitions owned{{"w", 5}, {"w", 11}, {"wn", 0}};
  CHECK(java::sticky_user_data_order(owned) == TopicPartitions{{"wn", 0}, {"w", 5}, {"w", 11}});
  // Topics in different buckets: bucket order, partitions in the member's order.
  const TopicPartitions two{{"t1", 3}, {"t0", 2}, {"t1", 0}};
  CHECK(java::sticky_user_data_order(two) == TopicPartitions{{"t0", 2}, {"t1", 3}, {"t1", 0}});
}
