// A ShareFetch that carries acknowledgements: KafkaApis.handleShareFetchRequest starts the
// acknowledgements (handleAcknowledgements: the records change state at once, then their state
// is written to the share coordinator) and the fetch (handleFetchFromShareFetchRequest: the
// delayed share fetch acquires at once when records are there) together, and answers when both
// are done (thenCombine). So the new records are acquired when the request arrives, not after the
// acknowledgements' write, and a client killed while that write is under way has them released
// by its connection's close (docs/fidelity.md, finding 37).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

std::int64_t us(const json& e) {
  return e["t_us"].get<std::int64_t>();
}

// One broker (the share coordinator's writes take write_latency_ms, 20 ms, and no link), 1 ms
// links, the broker no other time; one record every 100 ms; A spends 250 ms on each batch, so
// records are waiting whenever its next ShareFetch (with the batch's ACCEPTs) arrives.
std::vector<json> run(int crash_at_ms) {
  json doc = json::parse(R"({
    "name": "share-fetch-with-acks", "seed": 7, "duration_ms": 40000, "protocols": ["share"],
    "cluster": {"brokers": 1, "write_latency_ms": {"dist": "constant", "value": 20}},
    "network": {"latency_ms": {"dist": "constant", "value": 1}},
    "topics": [{"name": "jobs", "partitions": 1, "produce": {"records_per_sec": 10}}],
    "consumers": [{"name": "A", "group": "queue", "topics": ["jobs"],
                   "processing": {"per_batch_ms": 250}}],
    "events": [{"at_ms": 1000, "do": "start", "consumer": "A"}]})");
  if (crash_at_ms > 0)
    doc["events"].push_back({{"at_ms", crash_at_ms}, {"do", "crash"}, {"consumer", "A"}});
  const auto spec = testing::ideal_machine(doc);
  return testing::parse_trace(rsim::run_scenario(spec, "share", spec.seed).trace_lines);
}

/// Times (us) of A's acceptances after 5,000 ms.
std::vector<std::int64_t> accepts(const std::vector<json>& trace) {
  std::vector<std::int64_t> out;
  for (const auto& e : testing::events(trace, "share.records"))
    if (e["cause"] == "ACCEPT" && us(e) > 5000000) out.push_back(us(e));
  return out;
}

}  // namespace

TEST_CASE(
    "share: a ShareFetch with acknowledgements acquires on arrival and is answered after their "
    "write") {
  // The request leaves A 1 ms before it arrives; its ACCEPTs and the new acquisition are in the
  // same instant (not 20 ms apart, the write); the answer reaches A 20 + 1 ms after the arrival.
  const auto trace = run(0);
  const auto acks = accepts(trace);
  REQUIRE(acks.size() >= 10);
  std::vector<std::int64_t> acquired, sent, received;
  for (const auto& e : testing::events(trace, "share.records"))
    if (e["cause"] == "fetch" && e["consumer"] == "A") acquired.push_back(us(e));
  for (const auto& e : testing::events(trace, "rpc")) {
    if (e["api"] != "ShareFetch") continue;
    (e["dir"] == "send" ? sent : received).push_back(us(e));
  }
  for (std::size_t i = 0; i < 10; ++i) {
    const std::int64_t t = acks[i];
    INFO("acceptance at " << t << " us");
    CHECK(std::count(acquired.begin(), acquired.end(), t) == 1);
    CHECK(std::count(sent.begin(), sent.end(), t - 1000) == 1);
    CHECK(std::count(received.begin(), received.end(), t + 21000) == 1);
  }
}

TEST_CASE(
    "share: a client killed while its acknowledgements are written has the batch that ShareFetch "
    "acquired released by its connection's close") {
  // A is killed 5 ms after a ShareFetch with acknowledgements arrived (the run is the same up to
  // the kill); its connection's close reaches the broker 1 ms later, 14 ms before the write ends.
  // The records that ShareFetch acquired on arrival go back then (cause disconnect), so no lock
  // is left to time out 30,000 ms later (group.share.record.lock.duration.ms).
  const std::int64_t t = accepts(run(0)).at(0);
  const int kill_ms = static_cast<int>(t / 1000) + 5;
  const auto trace = run(kill_ms);
  std::int64_t first = -1, last = -1;
  for (const auto& e : testing::events(trace, "share.records"))
    if (e["cause"] == "fetch" && us(e) == t) {
      first = e["first_offset"].get<std::int64_t>();
      last = e["last_offset"].get<std::int64_t>();
    }
  REQUIRE(first >= 0);
  int released = 0;
  for (const auto& e : testing::events(trace, "share.records")) {
    CHECK(e["cause"] != "lock_timeout");
    if (e["cause"] == "disconnect") {
      CHECK(us(e) == (kill_ms + 1) * std::int64_t{1000});
      CHECK(e["first_offset"] == first);
      CHECK(e["last_offset"] == last);
      CHECK(e["to"] == "AVAILABLE");
      ++released;
    }
  }
  CHECK(released == 1);
}
