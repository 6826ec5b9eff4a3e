// A consumer's start_latency_ms (docs/writing-scenarios.md#consumers): the time from the script's
// start to the application's first poll(), hence to the first request. Zero (the default)
// changes nothing; a latency moves the first request by exactly that much, under every client,
// is drawn again for a restart's new process, and a crash or stop inside it behaves as Kafka's
// application would.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::vector<std::string> run_lines(const json& doc, const std::string& variant) {
  const auto spec = rsim::parse_scenario(doc, "test.json");
  return rsim::run_scenario(spec, variant, spec.seed).trace_lines;
}

/// `doc` with consumer `name`'s start_latency_ms set.
json with_latency(json doc, const std::string& name, const json& latency) {
  for (auto& c : doc["consumers"])
    if (c["name"] == name) c["start_latency_ms"] = latency;
  return doc;
}

/// Times (ms) of the rpc requests `consumer` sent, in order.
std::vector<double> sends(const std::vector<json>& trace, const std::string& consumer) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e.value("dir", "") == "send" && e.value("from", "") == consumer)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}

std::vector<json> of_type(const std::vector<json>& trace, const std::string& type,
                          const std::string& consumer) {
  std::vector<json> out;
  for (const auto& e : trace)
    if (e["type"] == type && e.value("consumer", "") == consumer) out.push_back(e);
  return out;
}

// Two consumers of one group; A starts at 1000 ms, B at 1080 ms (the two-consumers examples
// start them 81 ms apart, too), links 1 ms each way, initial rebalance delay 0.
json pair(const std::string& protocol) {
  return json::parse(R"({
    "name": "start-latency", "seed": 7, "duration_ms": 20000, "protocols": [")" +
                     protocol + R"("],
    "cluster": {"config": {"group.initial.rebalance.delay.ms": 0}},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [{"name": "A", "group": "g", "topics": ["t"]},
                  {"name": "B", "group": "g", "topics": ["t"]}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"},
               {"at_ms": 1080, "do": "start", "consumer": "B"}]
  })");
}

}  // namespace

TEST_CASE("start_latency_ms 0 is the default: the same trace, byte for byte") {
  for (const auto& row : {std::pair<std::string, std::string>{
                              "scenarios/examples/two-consumers.json", "classic-eager"},
                          {"scenarios/examples/two-consumers-kip848.json", "consumer"}}) {
    const auto& path = std::get<0>(row);
    const auto& variant = std::get<1>(row);
    INFO(path);
    const json doc = read_json(path);
    CHECK(run_lines(with_latency(with_latency(doc, "A", 0), "B",
                                 json{{"dist", "constant"}, {"value", 0}}),
                    variant) == run_lines(doc, variant));
  }
}

TEST_CASE(
    "start_latency_ms moves the first request by the latency, and the later starter joins first") {
  for (const std::string variant : {"classic-eager", "consumer"}) {
    INFO(variant);
    const auto base = testing::parse_trace(
        run_lines(pair(variant == "consumer" ? "consumer" : "classic-eager"), variant));
    const auto late = testing::parse_trace(run_lines(
        with_latency(pair(variant == "consumer" ? "consumer" : "classic-eager"), "A", 500),
        variant));
    // Without the knob A's first request (FindCoordinator) leaves at its start.
    REQUIRE(!sends(base, "A").empty());
    CHECK(sends(base, "A").front() == 1000.0);
    // With 500 ms, consumer.start stays at the script's time and says so; the first request
    // leaves 500 ms later, and nothing before.
    const auto starts = of_type(late, "consumer.start", "A");
    REQUIRE(starts.size() == 1);
    CHECK(starts[0]["t_us"] == 1000000);
    CHECK(starts[0]["start_latency_ms"] == 500.0);
    CHECK(of_type(base, "consumer.start", "A")[0].contains("start_latency_ms") == false);
    REQUIRE(!sends(late, "A").empty());
    CHECK(sends(late, "A").front() == 1500.0);
    // B is unaffected, and now the first member: it alone gets every partition first.
    CHECK(sends(late, "B").front() == 1080.0);
    const auto b_assigned = testing::callback_starts(late, "B", "onPartitionsAssigned");
    REQUIRE(!b_assigned.empty());
    CHECK(testing::callback_partitions(late, "B", "onPartitionsAssigned", 0) ==
          std::vector<std::string>{"t-0", "t-1", "t-2", "t-3"});
    const auto a_assigned = testing::callback_starts(late, "A", "onPartitionsAssigned");
    REQUIRE(!a_assigned.empty());
    CHECK(a_assigned.front() > b_assigned.front());
    CHECK(a_assigned.front() > 1500.0);
  }
}

TEST_CASE("start_latency_ms is drawn for each start; a crash inside it cancels the first poll()") {
  json doc = with_latency(pair("classic-eager"), "A",
                          json{{"dist", "uniform"}, {"min", 300}, {"max", 700}});
  doc["events"] = json::parse(R"([{"at_ms": 1000, "do": "start", "consumer": "A"},
                                  {"at_ms": 1100, "do": "crash", "consumer": "A"},
                                  {"at_ms": 2000, "do": "restart", "consumer": "A", "after_ms": 100}])");
  const auto trace = testing::parse_trace(run_lines(doc, "classic-eager"));
  const auto starts = of_type(trace, "consumer.start", "A");
  REQUIRE(starts.size() == 2);
  const double first = starts[0]["start_latency_ms"].get<double>(),
               second = starts[1]["start_latency_ms"].get<double>();
  CHECK(first >= 300.0);
  CHECK(first <= 700.0);
  CHECK(second >= 300.0);
  CHECK(second <= 700.0);
  CHECK(first != second);  // one draw per start
  CHECK(starts[1]["t_us"] == 2100000);
  // The crash at 1100 ms came before the first poll(): the first process sent nothing; the
  // second sends its first request when its own latency is over.
  const auto a = sends(trace, "A");
  REQUIRE(!a.empty());
  CHECK(a.front() == doctest::Approx(2100.0 + second));
  // The same seed, the same draws.
  CHECK(testing::parse_trace(run_lines(doc, "classic-eager")) == trace);
}

TEST_CASE(
    "a stop inside start_latency_ms takes effect at the first poll(): wakeup() throws there") {
  json doc = with_latency(pair("classic-eager"), "A", 2000);
  doc["events"] = json::parse(R"([{"at_ms": 1000, "do": "start", "consumer": "A"},
                                  {"at_ms": 1500, "do": "stop", "consumer": "A"}])");
  const auto trace = testing::parse_trace(run_lines(doc, "classic-eager"));
  const auto stop = of_type(trace, "consumer.stop", "A");
  const auto wakeup = of_type(trace, "consumer.wakeup", "A");
  REQUIRE(stop.size() == 1);
  REQUIRE(wakeup.size() == 1);
  CHECK(stop[0]["t_us"] == 1500000);
  CHECK(wakeup[0]["t_us"] == 3000000);  // the first poll() throws WakeupException at once
  REQUIRE(of_type(trace, "consumer.closed", "A").size() == 1);
  CHECK(sends(trace, "A").empty());  // it never joined: nothing to leave, nothing to commit
}

TEST_CASE("start_latency_ms is a distribution: a bad one is refused with its JSON path") {
  json doc = with_latency(pair("classic-eager"), "B", -5);
  try {
    rsim::parse_scenario(doc, "x.json");
    FAIL("a negative start_latency_ms was accepted");
  } catch (const rsim::ScenarioError& e) {
    REQUIRE(!e.problems().empty());
    CHECK(e.problems()[0].rfind("/consumers/1/start_latency_ms", 0) == 0);
  }
  doc = with_latency(pair("classic-eager"), "B", json{{"dist", "lognormal"}, {"mean", 3}});
  CHECK_THROWS_AS(rsim::parse_scenario(doc, "x.json"), rsim::ScenarioError);
}

TEST_CASE("a share consumer's start_latency_ms holds back its first ShareGroupHeartbeat") {
  const json doc = read_json("scenarios/share/reject-and-release.json");
  const auto base = testing::parse_trace(run_lines(doc, "share"));
  const auto late = testing::parse_trace(run_lines(with_latency(doc, "W2", 250), "share"));
  REQUIRE(!sends(base, "W2").empty());
  CHECK(sends(base, "W2").front() == 1000.0);
  REQUIRE(!sends(late, "W2").empty());
  CHECK(sends(late, "W2").front() == 1250.0);
  CHECK(of_type(late, "consumer.start", "W2").at(0)["start_latency_ms"] == 250.0);
  CHECK(sends(late, "W1").front() == 1000.0);
  // and 0 is no change at all
  CHECK(run_lines(with_latency(doc, "W2", 0), "share") == run_lines(doc, "share"));
}

TEST_CASE(
    "replayed start latencies (compare, docs/fidelity.md finding 34): one per process start, in "
    "order, also across a restart that replaces the client; beyond them the draws") {
  // rolling-upgrade-to-consumer in small: A restarts at 5,000 ms into the KIP-848 protocol
  // (a new client object) 2,000 ms after the verb; run 1's first polls, 14.730 ms after A's start
  // and 20.546 ms after its restart's new process, and 15.620 ms after B's start.
  json doc = pair("classic-cooperative");
  doc["events"] = json::parse(R"([{"at_ms": 1000, "do": "start", "consumer": "A"},
                                  {"at_ms": 1080, "do": "start", "consumer": "B"},
                                  {"at_ms": 5000, "do": "restart", "consumer": "A", "after_ms": 2000,
                                   "config": {"group.protocol": "consumer"}},
                                  {"at_ms": 9000, "do": "restart", "consumer": "B", "after_ms": 2000}])");
  rsim::ScenarioSpec spec = rsim::parse_scenario(doc, "test.json");
  spec.consumers[0].start_latencies = {std::chrono::microseconds(14730),
                                       std::chrono::microseconds(20546)};
  spec.consumers[1].start_latencies = {std::chrono::microseconds(15620)};
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "classic-cooperative", spec.seed).trace_lines);
  const auto a = of_type(trace, "consumer.start", "A");
  const auto b = of_type(trace, "consumer.start", "B");
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(a[0]["start_latency_ms"] == 14.73);
  CHECK(a[1]["t_us"] == 7000000);
  CHECK(a[1]["start_latency_ms"] == 20.546);  // the new client takes the second one
  CHECK(b[0]["start_latency_ms"] == 15.62);
  CHECK(b[1]["t_us"] == 11000000);
  CHECK_FALSE(b[1].contains("start_latency_ms"));  // none recorded: the draw (constant 0)
  // Each process's first request leaves when its application's first poll() begins.
  const auto a_sends = sends(trace, "A");
  REQUIRE(!a_sends.empty());
  CHECK(a_sends.front() == doctest::Approx(1014.73));
  const auto after_restart =
      std::find_if(a_sends.begin(), a_sends.end(), [](double t) { return t >= 7000.0; });
  REQUIRE(after_restart != a_sends.end());
  CHECK(*after_restart == doctest::Approx(7020.546));
  REQUIRE(!sends(trace, "B").empty());
  CHECK(sends(trace, "B").front() == doctest::Approx(1095.62));
}
