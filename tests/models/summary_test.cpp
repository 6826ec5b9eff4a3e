// summary.json from a hand-written trace: rebalance windows, unavailable partition-ms, final
// assignment; nothing but the trace lines goes in.
#include <doctest/doctest.h>

#include "reports/summary.hpp"

TEST_CASE("a hand-written trace gives the rebalance windows and unavailability it implies") {
  const std::vector<std::string> trace{
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":20})",
      R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":2})",
      R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"]})",
      R"({"t_us":2000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member A joined"})",
      R"({"t_us":3000,"type":"group.epoch","group":"g","generation":1,"members":["A"]})",
      R"({"t_us":4000,"type":"group.state","group":"g","state":"Stable","generation":1})",
      R"({"t_us":5000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]})",
      R"({"t_us":5000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"})",
      R"({"t_us":6000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"end"})",
      R"({"t_us":10000,"type":"consumer.crash","consumer":"A"})",
  };
  reports::SummaryInputs in;
  in.scenario = "s";
  in.protocol = "classic-eager";
  in.seed = 1;
  const auto s = reports::summarize(trace, in);
  REQUIRE(s["rebalances"].size() == 1);
  CHECK(s["rebalances"][0]["start_us"] == 2000);
  CHECK(s["rebalances"][0]["end_us"] == 6000);  // when the last member's assignment callback ended
  CHECK(s["rebalances"][0]["trigger"] == "member A joined");
  CHECK(s["rebalances"][0]["generation"] == 1);
  CHECK(s["metrics"]["rebalance_count"] == 1);
  CHECK(s["metrics"]["max_rebalance_ms"] == 4.0);
  CHECK(s["metrics"]["total_rebalance_ms"] == 4.0);
  // Two partitions unowned from A's start (1 ms) to its assignment (5 ms): 2 x 4 ms. After the
  // crash nobody is live in the group, so nothing counts as unavailable.
  CHECK(s["metrics"]["unavailable_partition_ms"] == 8.0);
  CHECK(s["metrics"]["final_assignment"] == nlohmann::ordered_json::object());
}
