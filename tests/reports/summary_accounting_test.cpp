// The summary's accounting on hand-checked timelines: rebalance windows and the callbacks inside
// them (classic and consumer protocol), merged causes, a fenced member leaving the wait, Kafka's
// partition order, and the metrics (max_unavailable_ms, stop_the_world_ms, paused, records per
// consumer, duplicates) over the whole run and over windows.
#include <doctest/doctest.h>

#include <set>

#include <fmt/format.h>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// A classic group: A starts, B starts while the rebalance is in progress (merged: two causes), A
// is frozen 2 ms, B crashes; A re-reads two offsets. Every number below is computed by hand.
const std::vector<std::string> kClassicTrace{
    R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":20})",
    R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":11})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"]})",
    R"({"t_us":2000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member A joined"})",
    R"({"t_us":2500,"type":"consumer.start","consumer":"B","group":"g","topics":["t"]})",
    R"({"t_us":3000,"type":"group.epoch","group":"g","generation":1,"members":["A","B"]})",
    R"({"t_us":4000,"type":"group.state","group":"g","state":"Stable","generation":1})",
    R"({"t_us":5000,"type":"assignment","consumer":"A","owned":["t-10","t-2","t-1"]})",
    R"({"t_us":5000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-10","t-2","t-1"],"phase":"start"})",
    R"({"t_us":5500,"type":"assignment","consumer":"B","owned":["t-0","t-3","t-4","t-5","t-6","t-7","t-8","t-9"]})",
    R"({"t_us":5500,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-0","t-3","t-4","t-5","t-6","t-7","t-8","t-9"],"phase":"start"})",
    R"({"t_us":6000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-10","t-2","t-1"],"phase":"end"})",
    R"({"t_us":6500,"type":"records.fetched","consumer":"A","group":"g","batch":1,"count":3,"ranges":[{"partition":"t-1","first_offset":0,"last_offset":2}]})",
    R"({"t_us":6600,"type":"records.processed","consumer":"A","group":"g","batch":1,"count":3})",
    R"({"t_us":7000,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-0","t-3","t-4","t-5","t-6","t-7","t-8","t-9"],"phase":"end"})",
    R"({"t_us":8000,"type":"consumer.pause","consumer":"A","for_ms":2})",
    R"({"t_us":10000,"type":"consumer.resume","consumer":"A"})",
    R"({"t_us":12000,"type":"consumer.crash","consumer":"B"})",
    R"({"t_us":13000,"type":"records.fetched","consumer":"A","group":"g","batch":2,"count":4,"ranges":[{"partition":"t-1","first_offset":1,"last_offset":4}]})",
    R"({"t_us":13100,"type":"records.processed","consumer":"A","group":"g","batch":2,"count":4})",
};

json summary(const std::vector<std::string>& lines,
             std::optional<std::int64_t> from_us = std::nullopt,
             std::optional<std::int64_t> to_us = std::nullopt) {
  reports::SummaryInputs in;
  in.from_us = from_us;
  in.to_us = to_us;
  return json::parse(reports::summarize(lines, in).dump());
}

}  // namespace

TEST_CASE(
    "classic: a start during a rebalance merges into it, and its partitions print in Kafka's "
    "order") {
  const json s = summary(kClassicTrace);
  REQUIRE(s["rebalances"].size() == 1);
  const json& r = s["rebalances"][0];
  CHECK(r["start_us"] == 2000);
  CHECK(r["end_us"] == 7000);  // B's onPartitionsAssigned ends last
  CHECK(r["trigger"] == "member A joined");
  CHECK(r["causes"] == json::array({"member A joined", "member B joined"}));
  CHECK(r["assigned"]["A"] == json::array({"t-1", "t-2", "t-10"}));
  CHECK(r["assigned"]["B"] ==
        json::array({"t-0", "t-3", "t-4", "t-5", "t-6", "t-7", "t-8", "t-9"}));
  CHECK(s["metrics"]["final_assignment"] == json({{"A", {"t-1", "t-2", "t-10"}}}));
}

TEST_CASE("classic: unavailability, stop-the-world, pause and records on a hand-checked timeline") {
  const json m = summary(kClassicTrace)["metrics"];
  // A's 3 partitions wait 1 -> 5 ms (4 ms each), B's 8 wait 1 -> 5.5 ms (4.5 ms each); A's pause
  // stops its 3 for 2 ms; B's crash leaves its 8 unconsumed 12 -> 20 ms.
  CHECK(m["unavailable_partition_ms"] == doctest::Approx(3 * 4 + 8 * 4.5 + 3 * 2 + 8 * 8));
  CHECK(m["max_unavailable_ms"] == 8.0);                  // B's partitions after the crash
  CHECK(m["unavailable_ms_by_partition"]["t-1"] == 6.0);  // 4 + 2
  CHECK(m["max_unavailable_ms_by_partition"]["t-1"] == 4.0);
  CHECK(m["max_unavailable_ms_by_partition"]["t-0"] == 8.0);
  // Nothing of g is consumed from A's start to A's assignment: 1 -> 5 ms. During A's pause B
  // consumes; after B's crash A does.
  CHECK(m["stop_the_world_ms"] == 4.0);
  CHECK(m["max_stop_the_world_ms"] == 4.0);
  CHECK(m["paused_ms_by_consumer"]["A"] == 2.0);
  CHECK(m["paused_ms_by_consumer"]["B"] == 0.0);
  CHECK(m["records_processed_by_consumer"]["A"] == 7);
  CHECK(m["records_processed"] == 7);
  CHECK(m["records_delivered"] == 7);
  CHECK(m["duplicates"] == 2);  // offsets 1 and 2 of t-1, delivered twice
  CHECK(m["rebalance_count"] == 1);
  CHECK(m["max_rebalance_ms"] == 5.0);
}

TEST_CASE("a window clips times and keeps what happened inside it") {
  const json late = summary(kClassicTrace, 11000, std::nullopt);
  CHECK(late["metrics"]["rebalance_count"] == 0);
  CHECK(late["rebalances"].empty());
  CHECK(late["metrics"]["unavailable_partition_ms"] == 64.0);  // B's 8 partitions, 12 -> 20 ms
  CHECK(late["metrics"]["paused_ms_by_consumer"]["A"] == 0.0);
  CHECK(late["metrics"]["duplicates"] == 2);
  CHECK(late["metrics"]["records_processed_by_consumer"]["A"] == 4);
  CHECK(late["window"]["from_ms"] == 11.0);
  const json early = summary(kClassicTrace, 0, 9000);
  CHECK(early["metrics"]["rebalance_count"] == 1);
  CHECK(early["metrics"]["paused_ms_by_consumer"]["A"] == 1.0);  // 8 -> 9 ms of the 8 -> 10 pause
  CHECK(early["metrics"]["unavailable_partition_ms"] == doctest::Approx(3 * 4 + 8 * 4.5 + 3 * 1));
  CHECK(early["metrics"]["duplicates"] == 0);
  // final_assignment is the one at the window's end: B was still alive at 9 ms.
  CHECK(early["metrics"]["final_assignment"].contains("B"));
}

TEST_CASE("consumer protocol: two-consumers-kip848, each rebalance holds its own callbacks") {
  // Hand-checked against the trace of scenarios/examples/two-consumers-kip848.json: each
  // rebalance runs from its group epoch bump to the callback that completes the last member's
  // reconciliation to that epoch's target.
  const json s = testing::summary_of("scenarios/examples/two-consumers-kip848.json", "consumer");
  const json& rs = s["rebalances"];
  REQUIRE(rs.size() == 4);
  // Epoch 2: A joined at 2703 (target computed at once); A's onPartitionsAssigned at 2800.33
  // (its second poll() call: 100 ms, and the program's 0.33 on the idealized machine).
  CHECK(rs[0]["trigger"] == "member A joined");
  CHECK(rs[0]["start_us"] == 2703000);
  CHECK(rs[0]["end_us"] == 2800330);
  CHECK(rs[0]["assigned"] ==
        json({{"A", {"orders-0", "orders-1", "orders-2", "orders-3", "orders-4", "orders-5"}}}));
  // Epoch 3: B joined at 2787; its target waits for A's heartbeat at 7801.33; A revokes 3..5 at
  // 7917.16; B gets them at its heartbeat at 12885.33 and runs onPartitionsAssigned at 12931.83,
  // when its reconciling pass's wait, the auto-commit's 14.5 ms as the network thread computed it
  // at the answer, ends (tests/models/two_consumers_kip848_test.cpp).
  CHECK(rs[1]["trigger"] == "member B joined");
  CHECK(rs[1]["start_us"] == 2787000);
  CHECK(rs[1]["end_us"] == 12931830);
  CHECK(rs[1]["revoked"] == json({{"A", {"orders-3", "orders-4", "orders-5"}}}));
  CHECK(rs[1]["assigned"] == json({{"B", {"orders-3", "orders-4", "orders-5"}}}));
  // Epoch 4: B's close() revokes 3..5 (31480.38) before its leave bumps the epoch (31481.38); A's
  // onPartitionsAssigned for 3..5 at 33024.66 completes it.
  CHECK(rs[2]["trigger"] == "member B left the group");
  CHECK(rs[2]["start_us"] == 31481380);
  CHECK(rs[2]["end_us"] == 33024660);
  CHECK(rs[2]["revoked"] == json({{"B", {"orders-3", "orders-4", "orders-5"}}}));
  CHECK(rs[2]["assigned"] == json({{"A", {"orders-3", "orders-4", "orders-5"}}}));
  // Epoch 5: A leaves, the group is empty at once.
  CHECK(rs[3]["trigger"] == "member A left the group");
  CHECK(rs[3]["start_us"] == 33102990);
  CHECK(rs[3]["end_us"] == 33102990);
  CHECK(rs[3]["revoked"]["A"].size() == 6);
}

TEST_CASE(
    "records and lag kept per group and partition: two groups, two topics, a partition beyond the "
    "dense table") {
  // Group g reads t-1 and u-0, group h reads t-1 too (its own offsets); u-5000000 is beyond the
  // summary's dense per-topic table and lands in its map instead. Lag totals per group: g's
  // latest t-1 and u-0 and u-5000000 values summed at each instant; h's kept apart.
  const std::vector<std::string> lines{
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":20})",
      R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t","u"]})",
      R"({"t_us":1000,"type":"consumer.start","consumer":"B","group":"h","topics":["t"]})",
      R"({"t_us":2000,"type":"position","consumer":"A","group":"g","partition":"t-1","offset":0})",
      R"({"t_us":2000,"type":"position","consumer":"A","group":"g","partition":"u-5000000","offset":0})",
      R"({"t_us":3000,"type":"records.fetched","consumer":"A","group":"g","batch":1,"count":7,"ranges":[{"partition":"t-1","first_offset":0,"last_offset":2},{"partition":"u-5000000","first_offset":0,"last_offset":3}]})",
      R"({"t_us":3000,"type":"records.fetched","consumer":"B","group":"h","batch":1,"count":2,"ranges":[{"partition":"t-1","first_offset":0,"last_offset":1}]})",
      R"({"t_us":3500,"type":"records.processed","consumer":"A","group":"g","batch":1,"count":7})",
      R"({"t_us":3500,"type":"records.processed","consumer":"B","group":"h","batch":1,"count":2})",
      // A's second batch re-delivers t-1 offset 2 (one duplicate) and u-5000000 offset 3 (another).
      R"({"t_us":4000,"type":"records.fetched","consumer":"A","group":"g","batch":2,"count":3,"ranges":[{"partition":"t-1","first_offset":2,"last_offset":3},{"partition":"u-5000000","first_offset":3,"last_offset":3}]})",
      R"({"t_us":4500,"type":"records.processed","consumer":"A","group":"g","batch":2,"count":3})",
      R"({"t_us":5000,"type":"lag","group":"g","partition":"t-1","lag":3,"log_end_offset":7,"offset":4,"owner":"A","reason":"sample"})",
      R"({"t_us":5000,"type":"lag","group":"g","partition":"u-0","lag":2,"log_end_offset":2,"offset":0,"owner":null,"reason":"sample"})",
      R"({"t_us":5000,"type":"lag","group":"g","partition":"u-5000000","lag":4,"log_end_offset":8,"offset":4,"owner":"A","reason":"sample"})",
      R"({"t_us":5000,"type":"lag","group":"h","partition":"t-1","lag":5,"log_end_offset":7,"offset":2,"owner":"B","reason":"sample"})",
      R"({"t_us":6000,"type":"lag","group":"g","partition":"u-5000000","lag":1,"log_end_offset":8,"offset":7,"owner":"A","reason":"sample"})",
  };
  const json s = summary(lines);
  const json& m = s["metrics"];
  CHECK(m["records_delivered"] == 12);  // 3 + 4 + 2 + 2 + 1
  CHECK(m["duplicates"] == 2);
  CHECK(m["records_processed"] == 12);
  CHECK(m["records_processed_by_consumer"] == json({{"A", 10}, {"B", 2}}));
  CHECK(m["max_lag"] == 5);
  // g: 3 + 2 + 4 = 9 at 5 ms (without the sparse slot it would be 5), then 3 + 2 + 1 = 6; h: 5.
  CHECK(m["max_group_lag"] == 9);
  CHECK(m["lost"] == 0);
}

TEST_CASE(
    "duplicates: batches delivered out of order, overlapping and with gaps, counted against every "
    "offset seen") {
  // One partition's coverage is a run of ranges: the usual in-order delivery extends the last
  // one, re-reads after a rewind, gaps and fills go through the general merge. The count of
  // re-delivered offsets must equal a brute-force set of the offsets seen so far.
  std::vector<std::string> lines{
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":100})",
      R"({"t_us":0,"type":"consumer.start","consumer":"A","group":"g","topics":["t"]})",
  };
  std::uint64_t x = 88172645463325252ULL;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  std::set<std::int64_t> seen;
  std::int64_t duplicates = 0, delivered = 0, position = 0;
  for (int batch = 1; batch <= 3000; ++batch) {
    std::int64_t first = position;
    switch (next() % 5) {
      case 0:
        first = static_cast<std::int64_t>(next() % 400);
        break;  // a rewind or a jump
      case 1:
        first = position + 1 + static_cast<std::int64_t>(next() % 5);
        break;  // a gap
      default:
        break;  // in order
    }
    const std::int64_t last = first + static_cast<std::int64_t>(next() % 4);
    position = last + 1;
    for (std::int64_t o = first; o <= last; ++o) duplicates += seen.insert(o).second ? 0 : 1;
    delivered += last - first + 1;
    const std::int64_t t = 1000 + batch * 10;
    lines.push_back(fmt::format(
        R"({{"t_us":{},"type":"records.fetched","consumer":"A","group":"g","batch":{},"count":{},"ranges":[{{"partition":"t-0","first_offset":{},"last_offset":{}}}]}})",
        t, batch, last - first + 1, first, last));
    lines.push_back(fmt::format(
        R"({{"t_us":{},"type":"records.processed","consumer":"A","group":"g","batch":{},"count":{}}})",
        t + 5, batch, last - first + 1));
  }
  // A commit past every offset delivered: `lost` is what lies below it and was never processed
  // (each batch was processed whole), the gaps no rewind filled; the processed ranges come out of
  // order too, so this reads the ranges kept out of line.
  const std::int64_t committed = *seen.rbegin() + 1;
  const std::int64_t lost = committed - static_cast<std::int64_t>(seen.size());
  lines.push_back(fmt::format(
      R"({{"t_us":{},"type":"record","partition":0,"offset":0,"record":"OffsetCommit","tombstone":false,"group":"g","topic":"t","partition_index":0,"committed_offset":{},"leader_epoch":-1,"commit_timestamp":1}})",
      1000 + 3001 * 10, committed));
  const json m = summary(lines)["metrics"];
  CHECK(m["records_delivered"] == delivered);
  CHECK(m["duplicates"] == duplicates);
  CHECK(duplicates > 1000);  // the random batches did re-deliver
  CHECK(m["records_processed"] == delivered);
  CHECK(m["lost"] == lost);
  CHECK(lost > 0);  // some gaps stayed
}
