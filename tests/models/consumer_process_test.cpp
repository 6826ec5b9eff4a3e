// ConsumerProcess: the script's process verbs (restart, stall, pause) are carried out once for
// every variant's client, the share consumer's included: the same events at the same times.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// One consumer A of group g on one partition with 10 records a second, 100 ms per record and at
// most 5 records a poll (a batch is done within 500 ms); links 1 ms each way. A starts at 1000 ms.
json one_consumer(const std::string& protocol, const json& events) {
  json doc = json::parse(R"({
    "name": "consumer-process", "seed": 3, "duration_ms": 40000, "protocols": [")" +
                         protocol + R"("],
    "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
    "topics": [{"name": "t", "partitions": 1, "produce": {"records_per_sec": 10}}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"], "config": {"max.poll.records": 5},
                   "processing": {"per_record_ms": 100}}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"}]
  })");
  for (const auto& e : events) doc["events"].push_back(e);
  return doc;
}

std::vector<json> run(const json& doc, const std::string& variant) {
  const auto spec = rsim::parse_scenario(doc, "test.json");
  return testing::parse_trace(rsim::run_scenario(spec, variant, spec.seed).trace_lines);
}

/// The times (ms) of `type` events of consumer A.
std::vector<double> times(const std::vector<json>& trace, const std::string& type) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == type && e.value("consumer", "") == "A")
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}

const std::vector<std::string> kVariants = {"classic-eager", "classic-cooperative", "consumer",
                                            "share"};

}  // namespace

TEST_CASE(
    "consumer process: a graceful restart starts the next process after_ms after the verb, in "
    "every variant") {
  // close() takes its round trips (and the batch in progress, at most 500 ms): it is done after
  // 20000 ms and well before 25000 ms, so the next start is at 20000 + after_ms = 25000 ms, not
  // after_ms after the close.
  for (const auto& variant : kVariants) {
    CAPTURE(variant);
    const auto trace = run(one_consumer(variant, json::array({json{{"at_ms", 20000},
                                                                   {"do", "restart"},
                                                                   {"consumer", "A"},
                                                                   {"after_ms", 5000},
                                                                   {"graceful", true}}})),
                           variant);
    CHECK(times(trace, "consumer.stop") == std::vector<double>{20000.0});
    const auto closed = times(trace, "consumer.closed");
    REQUIRE(closed.size() == 1);
    CHECK(closed[0] > 20000.0);
    CHECK(closed[0] < 20600.0);
    CHECK(times(trace, "consumer.start") == std::vector<double>{1000.0, 25000.0});
  }
}

TEST_CASE("consumer process: a stall and a pause end exactly for_ms later, in every variant") {
  for (const auto& variant : kVariants) {
    CAPTURE(variant);
    const auto trace = run(
        one_consumer(
            variant,
            json::array(
                {json{{"at_ms", 10000}, {"do", "stall"}, {"consumer", "A"}, {"for_ms", 3000}},
                 json{{"at_ms", 20000}, {"do", "pause"}, {"consumer", "A"}, {"for_ms", 4000}}})),
        variant);
    CHECK(times(trace, "consumer.stall") == std::vector<double>{10000.0});
    CHECK(times(trace, "consumer.pause") == std::vector<double>{20000.0});
    std::vector<std::string> after;
    for (const auto& e : trace)
      if (e["type"] == "consumer.resume") after.push_back(e.value("after", "-"));
    CHECK(times(trace, "consumer.resume") == std::vector<double>{13000.0, 24000.0});
    // The share consumer's trace names what a pause ended; the others' leave it out.
    CHECK(after == std::vector<std::string>{"stall", variant == "share" ? "pause" : "-"});
  }
}

TEST_CASE(
    "consumer process: a crash ends the process at once and a non-graceful restart starts it "
    "after_ms later") {
  for (const auto& variant : kVariants) {
    CAPTURE(variant);
    const auto trace =
        run(one_consumer(variant,
                         json::array({json{{"at_ms", 10000},
                                           {"do", "restart"},
                                           {"consumer", "A"},
                                           {"after_ms", 2000},
                                           {"graceful", false}},
                                      json{{"at_ms", 30000}, {"do", "crash"}, {"consumer", "A"}}})),
            variant);
    CHECK(times(trace, "consumer.crash") == std::vector<double>{10000.0, 30000.0});
    CHECK(times(trace, "consumer.start") == std::vector<double>{1000.0, 12000.0});
    CHECK(times(trace, "consumer.closed").empty());
  }
}
