// The coordinator partition of a group is Utils.abs(groupId.hashCode()) % partitions, with
// Java's String.hashCode over UTF-16 code units.
#include <doctest/doctest.h>

#include "models/coordinator/group_coordinator.hpp"

TEST_CASE("group ids land on the __consumer_offsets partition Kafka picks") {
  CHECK(rsim::coordinator_partition("g-classic", 50) == 18);   // the measured classic run
  CHECK(rsim::coordinator_partition("g-consumer", 50) == 32);  // the measured KIP-848 run
  CHECK(rsim::java_string_hash("") == 0);
  CHECK(rsim::java_string_hash("a") == 97);
  CHECK(rsim::java_string_hash("\xc3\xa9") == 233);                     // "é": one UTF-16 unit
  CHECK(rsim::java_string_hash("\xe6\x97\xa5\xe6\x9c\xac") == 835047);  // "日本": 26085*31 + 26412
}
