// Group size limits (Kafka 4.4.0 GroupMetadataManager): group.max.size for classic groups
// (acceptJoiningMember), group.consumer.max.size for consumer groups (throwIfConsumerGroupIsFull)
// and for an online upgrade (validateOnlineUpgrade). A refused member gets GROUP_MAX_SIZE_REACHED
// (GROUP_ID_NOT_FOUND for the refused upgrade), fatal for the client; the members inside the limit
// are not disturbed. Idealized machine (tests/trace_helpers.hpp), 1 ms one-way links.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

/// A, B and C in one group on four partitions: A and B at 0 ms, C at 10 s.
json three_consumers(const std::string& broker_key, int max_size) {
  json doc = json::parse(R"({"name": "max-size", "duration_ms": 30000,
    "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]}, {"name": "B", "group": "g", "topics": ["t"]},
                  {"name": "C", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 0, "do": "start", "consumer": "B"},
               {"at_ms": 10000, "do": "start", "consumer": "C"}]})");
  doc["cluster"]["config"][broker_key] = max_size;
  return doc;
}

std::vector<json> run(const json& doc, const std::string& variant) {
  const auto spec = testing::ideal_machine(doc, "max-size.json");
  return testing::parse_trace(rsim::run_scenario(spec, variant, 1).trace_lines);
}

json final_assignment(const json& doc, const std::string& variant) {
  const auto spec = testing::ideal_machine(doc, "max-size.json");
  return testing::summary_of(
      rsim::run_scenario(spec, variant, 1).trace_lines)["metrics"]["final_assignment"];
}

}  // namespace

TEST_CASE(
    "group.max.size: a classic member beyond it is refused with GROUP_MAX_SIZE_REACHED, fatally") {
  const auto trace = run(three_consumers("group.max.size", 2), "classic-eager");
  // C at 10000: FindCoordinator (answered at 10002), JoinGroup with no member id arrives at
  // 10003 in a Stable group of two: refused at once, answered at 10004.
  CHECK(testing::responses(trace, "C", "JoinGroup", "GROUP_MAX_SIZE_REACHED") ==
        std::vector<double>{10004});
  CHECK(testing::responses(trace, "C", "JoinGroup", "MEMBER_ID_REQUIRED").empty());
  CHECK(testing::times(trace, "consumer.error", "consumer", "C") == std::vector<double>{10004});
  // A and B keep their generation: no rebalance after C's attempt.
  CHECK(testing::times(trace, "member.join", "consumer", "C").empty());
  const auto owners = final_assignment(three_consumers("group.max.size", 2), "classic-eager");
  CHECK(owners.size() == 2);
  CHECK(owners["A"].size() == 2);
  CHECK(owners["B"].size() == 2);
  // With room for three, C joins (its MEMBER_ID_REQUIRED round trip first).
  const auto roomy = run(three_consumers("group.max.size", 3), "classic-eager");
  CHECK(testing::responses(roomy, "C", "JoinGroup", "GROUP_MAX_SIZE_REACHED").empty());
  CHECK(testing::responses(roomy, "C", "JoinGroup", "MEMBER_ID_REQUIRED") ==
        std::vector<double>{10004});
}

TEST_CASE("group.consumer.max.size: a new consumer-protocol member beyond it is refused, fatally") {
  const auto trace = run(three_consumers("group.consumer.max.size", 2), "consumer");
  // C's first ConsumerGroupHeartbeat (epoch 0, its own new member id) arrives at 10003.
  CHECK(testing::responses(trace, "C", "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED") ==
        std::vector<double>{10004});
  CHECK(testing::times(trace, "consumer.error", "consumer", "C") == std::vector<double>{10004});
  const auto owners = final_assignment(three_consumers("group.consumer.max.size", 2), "consumer");
  CHECK(owners.size() == 2);
  CHECK(owners["A"].size() == 2);
  CHECK(owners["B"].size() == 2);
  // The members inside the limit keep heartbeating without an error.
  CHECK(testing::responses(trace, "A", "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED").empty());
  const auto roomy = run(three_consumers("group.consumer.max.size", 3), "consumer");
  CHECK(testing::responses(roomy, "C", "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED").empty());
}

TEST_CASE("an online upgrade of a classic group larger than group.consumer.max.size is refused") {
  // Three classic members; C restarts at 15 s as a consumer-protocol member. When its heartbeat
  // arrives the classic group has A and B (C's old incarnation left in its graceful close): 2
  // members over a limit of 1, so the upgrade is refused with GROUP_ID_NOT_FOUND.
  json doc = three_consumers("group.consumer.max.size", 1);
  doc["events"][2]["at_ms"] = 0;
  doc["events"].push_back(json{{"at_ms", 15000},
                               {"do", "restart"},
                               {"consumer", "C"},
                               {"after_ms", 1000},
                               {"config", {{"group.protocol", "consumer"}}}});
  const auto trace = run(doc, "classic-eager");
  const auto migrations = testing::events(trace, "group.migration");
  REQUIRE(migrations.size() == 1);
  CHECK(migrations[0]["refused"].get<std::string>().find("exceeds the consumer group maximum size "
                                                         "(group.consumer.max.size=1)") !=
        std::string::npos);
  CHECK(testing::responses(trace, "C", "ConsumerGroupHeartbeat", "GROUP_ID_NOT_FOUND").size() == 1);
  // With room, the same restart converts the group.
  json roomy = doc;
  roomy["cluster"]["config"]["group.consumer.max.size"] = 3;
  const auto converted = testing::events(run(roomy, "classic-eager"), "group.migration");
  REQUIRE_FALSE(converted.empty());
  CHECK(converted[0]["to"] == "consumer");
}
