// The steady window's record and lag metrics (issue 39): the steady window's builder reads no
// batch, commit or lag sample; the whole run's builder counts them also from the steady moment
// on and lends its lag series. On a hand-written trace with records, lag and a rebalance on both
// sides of the steady moment, every number is derived by hand below, for the whole run and for
// the steady window.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// A classic group g of A and B on t (2 partitions). Rebalance 1 (2 -> 5 ms) ends with both
// onPartitionsAssigned at 5 ms: the steady window starts at 5 ms. Before it, A reads t-0 0..4
// and t-0 lags 50. In it: A reads t-0 3..9 (3 and 4 again), B reads t-1 0..2, X (known only from
// its batch) reads t-1 3, g commits t-0 at 12, rebalance 2 runs 8 -> 9.6 ms, the lag drains.
const std::vector<std::string> kTrace{
    R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":20})",
    R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":2})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"]})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"B","group":"g","topics":["t"]})",
    R"({"t_us":2000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member A joined"})",
    R"({"t_us":3000,"type":"group.epoch","group":"g","generation":1,"members":["A","B"]})",
    R"({"t_us":3000,"type":"group.state","group":"g","state":"Stable","generation":1})",
    R"({"t_us":4000,"type":"assignment","consumer":"A","owned":["t-0"]})",
    R"({"t_us":4000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0"],"phase":"start"})",
    R"({"t_us":4000,"type":"assignment","consumer":"B","owned":["t-1"]})",
    R"({"t_us":4000,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-1"],"phase":"start"})",
    R"({"t_us":4400,"type":"position","consumer":"A","group":"g","partition":"t-0","offset":0})",
    R"({"t_us":4500,"type":"records.fetched","consumer":"A","group":"g","batch":1,"count":5,"ranges":[{"partition":"t-0","first_offset":0,"last_offset":4}]})",
    R"({"t_us":4500,"type":"lag","group":"g","partition":"t-0","lag":50,"log_end_offset":50,"offset":0,"owner":"A","reason":"owner"})",
    R"({"t_us":4600,"type":"records.processed","consumer":"A","group":"g","batch":1,"count":5})",
    R"({"t_us":5000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0"],"phase":"end"})",
    R"({"t_us":5000,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-1"],"phase":"end"})",
    R"({"t_us":6000,"type":"lag","group":"g","partition":"t-0","lag":7,"log_end_offset":57,"offset":50,"owner":"A","reason":"tick"})",
    R"({"t_us":6000,"type":"lag","group":"g","partition":"t-1","lag":3,"log_end_offset":3,"offset":0,"owner":"B","reason":"tick"})",
    R"({"t_us":6000,"type":"records.fetched","consumer":"A","group":"g","batch":2,"count":7,"ranges":[{"partition":"t-0","first_offset":3,"last_offset":9}]})",
    R"({"t_us":6100,"type":"records.processed","consumer":"A","group":"g","batch":2,"count":7})",
    R"({"t_us":6200,"type":"records.fetched","consumer":"B","group":"g","batch":1,"count":3,"ranges":[{"partition":"t-1","first_offset":0,"last_offset":2}]})",
    R"({"t_us":6300,"type":"records.processed","consumer":"B","group":"g","batch":1,"count":3})",
    R"({"t_us":6400,"type":"records.fetched","consumer":"X","group":"g","batch":1,"count":1,"ranges":[{"partition":"t-1","first_offset":3,"last_offset":3}]})",
    R"({"t_us":6500,"type":"records.processed","consumer":"X","group":"g","batch":1,"count":1})",
    R"({"t_us":7000,"type":"record","partition":0,"offset":0,"record":"OffsetCommit","tombstone":false,"group":"g","topic":"t","partition_index":0,"committed_offset":12,"leader_epoch":-1,"commit_timestamp":7})",
    R"({"t_us":8000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":1,"reason":"member C joined"})",
    R"({"t_us":9000,"type":"group.epoch","group":"g","generation":2,"members":["A","B"]})",
    R"({"t_us":9000,"type":"group.state","group":"g","state":"Stable","generation":2})",
    R"({"t_us":9500,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[],"phase":"start"})",
    R"({"t_us":9500,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":[],"phase":"start"})",
    R"({"t_us":9600,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[],"phase":"end"})",
    R"({"t_us":9600,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":[],"phase":"end"})",
    R"({"t_us":10000,"type":"lag","group":"g","partition":"t-0","lag":5,"log_end_offset":62,"offset":57,"owner":"A","reason":"tick"})",
    R"({"t_us":10000,"type":"lag","group":"g","partition":"t-1","lag":1,"log_end_offset":4,"offset":3,"owner":"B","reason":"tick"})",
};

json summary_with_steady() {
  reports::SummaryInputs in;
  in.steady_consumers = std::vector<std::string>{"A", "B"};
  return json::parse(reports::summarize(kTrace, in).dump());
}

}  // namespace

TEST_CASE(
    "steady window: records, duplicates, lost and lag counted from the steady moment, read once "
    "by the whole run's builder") {
  const json s = summary_with_steady();
  REQUIRE(s["steady"]["from_us"] == 5000);
  const json& m = s["metrics"];
  const json& st = s["steady"]["metrics"];
  // The whole run: A 5 + 7, B 3, X 1 records; t-0's 3 and 4 delivered twice.
  CHECK(m["records_delivered"] == 16);
  CHECK(m["records_processed"] == 16);
  CHECK(m["duplicates"] == 2);
  CHECK(m["records_processed_by_consumer"] == json{{"A", 12}, {"B", 3}, {"X", 1}});
  // The steady window: only the batches after 5 ms (A's second batch still finds 3 and 4 seen).
  CHECK(st["records_delivered"] == 11);
  CHECK(st["records_processed"] == 11);
  CHECK(st["duplicates"] == 2);
  // X has its entry in both, as the batch it processed in the window made it.
  CHECK(st["records_processed_by_consumer"] == json{{"A", 7}, {"B", 3}, {"X", 1}});
  CHECK(st["paused_ms_by_consumer"] == json{{"A", 0.0}, {"B", 0.0}, {"X", 0.0}});
  // `lost` is over the whole run in both: t-0 committed at 12, processed 0..9 from position 0.
  CHECK(m["lost"] == 2);
  CHECK(st["lost"] == 2);
  // Lag: 50 before the window; the group's totals 50 (4.5 ms), 10 (6 ms), 6 (10 ms).
  CHECK(m["max_lag"] == 50);
  CHECK(st["max_lag"] == 7);
  CHECK(m["max_group_lag"] == 50);
  CHECK(st["max_group_lag"] == 10);
  // Rebalance 2 (8 -> 9.6 ms) drains to 6 <= 10 (its lag before) at 10 ms: 0.4 ms, in both.
  CHECK(m["rebalance_count"] == 2);
  CHECK(st["rebalance_count"] == 1);
  CHECK(m["max_drain_ms"] == 0.4);
  CHECK(st["max_drain_ms"] == 0.4);
  REQUIRE(s["rebalances"].size() == 2);
  CHECK(s["rebalances"][1]["lag_before"] == 10);
  CHECK(s["rebalances"][1]["drain_ms"] == 0.4);
}
