// A committed offset with a leader epoch is validated (OffsetForLeaderEpoch to the partition's
// leader) before the consumer fetches from it or commits it: SubscriptionState's AWAIT_VALIDATION,
// sent by the pass of poll() after the OffsetFetch answer, at most retry.backoff.ms later.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// A alone on orders-0 (10 records/s, offset k appended at (k + 1) * 100 ms), 1 ms links. It starts
// at 1000 (position from ListOffsets: no epoch), fetches records (their epoch is 0), closes at
// `stop1` (its commit carries epoch 0) and starts again at 10000.
std::vector<json> run(std::int64_t poll_timeout_ms, std::int64_t stop2_ms) {
  json doc = json::parse(R"({
    "name": "offset-validation", "seed": 1, "duration_ms": 12000,
    "cluster": { "brokers": 1, "config": { "group.initial.rebalance.delay.ms": 0 } },
    "network": { "latency_ms": 1 },
    "topics": [ { "name": "orders", "partitions": 1, "produce": { "records_per_sec": 10 } } ],
    "consumers": [ { "name": "A", "group": "g", "topics": ["orders"] } ],
    "events": [
      { "at_ms": 1000,  "do": "start", "consumer": "A" },
      { "at_ms": 5000,  "do": "stop",  "consumer": "A" },
      { "at_ms": 10000, "do": "start", "consumer": "A" }
    ]
  })");
  doc["consumers"][0]["poll_timeout_ms"] = poll_timeout_ms;
  if (stop2_ms > 0)
    doc["events"].push_back({{"at_ms", stop2_ms}, {"do", "stop"}, {"consumer", "A"}});
  const auto spec = testing::ideal_machine(doc, "offset_validation_test.cpp");
  return testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
}

std::vector<json> of(const std::vector<json>& trace, const std::string& type,
                     std::int64_t from_us) {
  std::vector<json> out;
  for (const auto& e : trace)
    if (e["type"] == type && e["t_us"].get<std::int64_t>() >= from_us) out.push_back(e);
  return out;
}

std::vector<json> rpcs(const std::vector<json>& trace, const std::string& dir,
                       const std::string& api, std::int64_t from_us) {
  std::vector<json> out;
  for (const auto& e : of(trace, "rpc", from_us))
    if (e["dir"] == dir && e["api"] == api) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("a committed offset with a leader epoch awaits validation until the next pass") {
  const auto trace = run(100, 0);
  // The first close (5000 is when poll() returns: 1000 + 40 polls of 100 ms) commits the
  // position of records fetched from the leader: epoch 0.
  json last_commit;
  for (const auto& r : of(trace, "record", 0))
    if (r["record"] == "OffsetCommit" && r["t_us"].get<std::int64_t>() < 10'000'000)
      last_commit = r;
  REQUIRE(last_commit.is_object());
  CHECK(last_commit["t_us"] == 5'001'000);
  CHECK(last_commit["leader_epoch"] == 0);
  // The restart joins as at 1000: FindCoordinator, JoinGroup twice, SyncGroup -> assigned at
  // 10008; OffsetFetch sent then, answered at 10010 with the committed offset and its epoch.
  const auto fetch_answer = rpcs(trace, "recv", "OffsetFetch", 10'000'000);
  REQUIRE(fetch_answer.size() == 1);
  CHECK(fetch_answer[0]["t_us"] == 10'010'000);
  const auto positions = of(trace, "position", 10'000'000);
  REQUIRE(positions.size() == 2);
  CHECK(positions[0]["t_us"] == 10'010'000);
  CHECK(positions[0]["source"] == "committed");
  CHECK(positions[0]["state"] == "AWAIT_VALIDATION");
  CHECK(positions[0]["offset"] == last_commit["committed_offset"]);
  // No validation at the answer itself: the pass it ends goes on to pollForFetches, which waits
  // min(poll() left, retry.backoff.ms) = until 10100, where poll(100 ms) returns; the next
  // poll()'s updateFetchPositions sends OffsetForLeaderEpoch to the leader (broker-0).
  const auto sent = rpcs(trace, "send", "OffsetForLeaderEpoch", 10'000'000);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0]["t_us"] == 10'100'000);
  CHECK(sent[0]["to"] == "broker-0");
  // Answered one round trip later: epoch 0 ends at the log end offset, above the position.
  CHECK(positions[1]["t_us"] == 10'102'000);
  CHECK(positions[1]["source"] == "validated");
  CHECK(positions[1]["state"] == "FETCHING");
  CHECK(positions[1]["offset"] == positions[0]["offset"]);
  // Only then are records returned from it (all appended since, at once).
  const auto fetched = of(trace, "records.fetched", 10'000'000);
  REQUIRE(!fetched.empty());
  CHECK(fetched[0]["t_us"] == 10'102'000);
  CHECK(fetched[0]["ranges"][0]["first_offset"] == positions[0]["offset"]);
}

TEST_CASE("poll() waiting for a position to validate passes again after retry.backoff.ms") {
  // poll(1 s): the poll() that sees the assignment starts at 10000 and would run to 11000;
  // without a valid position pollForFetches caps its wait at retry.backoff.ms (100 ms), so the
  // validation goes out at 10010 + 100.
  const auto trace = run(1000, 0);
  const auto positions = of(trace, "position", 10'000'000);
  REQUIRE(positions.size() == 2);
  CHECK(positions[0]["t_us"] == 10'010'000);
  CHECK(positions[0]["state"] == "AWAIT_VALIDATION");
  const auto sent = rpcs(trace, "send", "OffsetForLeaderEpoch", 10'000'000);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0]["t_us"] == 10'110'000);
  CHECK(positions[1]["t_us"] == 10'112'000);
  CHECK(positions[1]["state"] == "FETCHING");
}

TEST_CASE("close() before the validation commits nothing: allConsumed() has no valid position") {
  // Stop requested at 10050, between the OffsetFetch answer (10010) and the end of that poll()
  // (10100): the stop's wakeup() ends the waiting poll() with WakeupException at once and
  // close() runs before any further pass, so the position is still AWAIT_VALIDATION and the
  // closing commitSync has nothing to send; the LeaveGroup goes out at the stop.
  const auto trace = run(100, 10050);
  CHECK(rpcs(trace, "send", "OffsetForLeaderEpoch", 10'000'000).empty());
  for (const auto& c : of(trace, "commit", 10'000'000)) CHECK(c["phase"] != "sent");
  for (const auto& r : of(trace, "record", 10'000'000)) CHECK(r["record"] != "OffsetCommit");
  const auto leave = rpcs(trace, "send", "LeaveGroup", 10'000'000);
  REQUIRE(leave.size() == 1);
  CHECK(leave[0]["t_us"] == 10'050'000);
  const auto positions = of(trace, "position", 10'000'000);
  REQUIRE(positions.size() == 1);
  CHECK(positions[0]["state"] == "AWAIT_VALIDATION");
}
