// The two-member classic group the heartbeat and coordinator tests build on: A and B in group g,
// topic t of 4 partitions, classic-eager, group.initial.rebalance.delay.ms 0, A started at 1 s and
// B at 2 s, then one scripted event on B (a stall, a pause...).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace testing {

inline nlohmann::json classic_pair(const std::string& name, std::uint64_t seed,
                                   std::int64_t duration_ms, const nlohmann::json& b_event) {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "protocols": ["classic-eager"],
    "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]},
                  {"name": "B", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"},
               {"at_ms": 2000, "do": "start", "consumer": "B"}]
  })");
  doc["name"] = name;
  doc["seed"] = seed;
  doc["duration_ms"] = duration_ms;
  nlohmann::json event = b_event;
  event["consumer"] = "B";
  doc["events"].push_back(event);
  return doc;
}

}  // namespace testing
