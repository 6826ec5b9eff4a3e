// A closed rebalance's entry of summary.json's `rebalances` is written as text, its partition
// maps without a JSON tree (reports/summary.cpp, entry_text): names that JSON must escape come
// out as nlohmann's dump() writes them. And OwnerList, the owners of a partition in the summary's
// clocks (reports/availability.hpp), behaves as the std::map it replaced.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "reports/availability.hpp"
#include "trace_helpers.hpp"

namespace {

// Two consumers whose names JSON escapes: `"\u0001B"` (a control character, escaped as \u0001)
// and `A"é` (a quote, escaped; é written as UTF-8). Generation 1 gives A t-0 and t-1 and \u0001B
// t-2; the rebalance of generation 2 revokes everything (eager) and gives it back the same way.
const std::vector<std::string> kEscapedNames{
    R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":40})",
    R"({"t_us":0,"type":"topic.partitions","topic":"t","partitions":3})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"A\"é","group":"g","topics":["t"]})",
    R"({"t_us":1000,"type":"consumer.start","consumer":"\u0001B","group":"g","topics":["t"]})",
    R"({"t_us":2000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":0,"reason":"member joined"})",
    R"({"t_us":3000,"type":"group.epoch","group":"g","generation":1,"members":["A\"é","\u0001B"]})",
    R"({"t_us":3000,"type":"group.state","group":"g","state":"Stable","generation":1})",
    R"({"t_us":4000,"type":"assignment","consumer":"A\"é","owned":["t-0","t-1"]})",
    R"({"t_us":4000,"type":"assignment","consumer":"\u0001B","owned":["t-2"]})",
    R"({"t_us":4000,"type":"callback","consumer":"A\"é","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"})",
    R"({"t_us":4000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsAssigned","partitions":["t-2"],"phase":"start"})",
    R"({"t_us":5000,"type":"callback","consumer":"A\"é","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"end"})",
    R"({"t_us":5000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsAssigned","partitions":["t-2"],"phase":"end"})",
    R"({"t_us":10000,"type":"group.state","group":"g","state":"PreparingRebalance","generation":1,"reason":"member joined"})",
    R"({"t_us":11000,"type":"callback","consumer":"A\"é","callback":"onPartitionsRevoked","partitions":["t-0","t-1"],"phase":"start"})",
    R"({"t_us":11000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsRevoked","partitions":["t-2"],"phase":"start"})",
    R"({"t_us":12000,"type":"callback","consumer":"A\"é","callback":"onPartitionsRevoked","partitions":["t-0","t-1"],"phase":"end"})",
    R"({"t_us":12000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsRevoked","partitions":["t-2"],"phase":"end"})",
    R"({"t_us":12000,"type":"assignment","consumer":"A\"é","owned":[]})",
    R"({"t_us":12000,"type":"assignment","consumer":"\u0001B","owned":[]})",
    R"({"t_us":13000,"type":"group.epoch","group":"g","generation":2,"members":["A\"é","\u0001B"]})",
    R"({"t_us":13000,"type":"group.state","group":"g","state":"Stable","generation":2})",
    R"({"t_us":14000,"type":"assignment","consumer":"A\"é","owned":["t-0","t-1"]})",
    R"({"t_us":14000,"type":"assignment","consumer":"\u0001B","owned":["t-2"]})",
    R"({"t_us":14000,"type":"callback","consumer":"A\"é","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"})",
    R"({"t_us":14000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsAssigned","partitions":["t-2"],"phase":"start"})",
    R"({"t_us":15000,"type":"callback","consumer":"A\"é","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"end"})",
    R"({"t_us":15000,"type":"callback","consumer":"\u0001B","callback":"onPartitionsAssigned","partitions":["t-2"],"phase":"end"})",
};

}  // namespace

TEST_CASE("summary: a rebalance's partition maps written as text escape names as dump() does") {
  const nlohmann::ordered_json s = reports::summarize(kEscapedNames, reports::SummaryInputs{});
  const auto& rebalances = s.at("rebalances");
  REQUIRE(rebalances.size() == 2);
  // The maps are keyed in std::map order of the names' bytes: 0x01 before 'A'.
  CHECK(rebalances[0].at("assigned").dump() == R"({"\u0001B":["t-2"],"A\"é":["t-0","t-1"]})");
  CHECK(rebalances[0].at("revoked").dump() == "{}");
  CHECK(rebalances[1].at("revoked").dump() == R"({"\u0001B":["t-2"],"A\"é":["t-0","t-1"]})");
  CHECK(rebalances[1].at("lost").dump() == "{}");
  CHECK(rebalances[1].at("assigned").dump() == R"({"\u0001B":["t-2"],"A\"é":["t-0","t-1"]})");
  // The fields before the maps, in their order (2 ms to 15 ms: the generation-1 callbacks ended).
  CHECK(rebalances[0].at("start_us") == 2000);
  CHECK(rebalances[1].at("start_us") == 10000);
  CHECK(rebalances[1].at("end_us") == 15000);
  CHECK(rebalances[1].at("generation") == 2);
}

TEST_CASE(
    "OwnerList: name order, operator[] adds false or finds, erase of a missing name is none") {
  reports::OwnerList owners;
  CHECK(owners.empty());
  owners["c2"] = true;
  owners["c10"] = false;
  owners["a"] = true;
  CHECK(owners.size() == 3);
  std::vector<std::pair<std::string, bool>> seen(owners.begin(), owners.end());
  // std::string order: "a" < "c10" < "c2".
  CHECK(seen ==
        std::vector<std::pair<std::string, bool>>{{"a", true}, {"c10", false}, {"c2", true}});
  CHECK(owners["c10"] == false);  // found, not added
  CHECK(owners["b"] == false);    // added, false
  CHECK(owners.size() == 4);
  owners["c10"] = true;
  owners.erase("zz");
  CHECK(owners.size() == 4);
  owners.erase("a");
  CHECK(owners.size() == 3);
  CHECK(owners.begin()->first == "b");
  seen.assign(owners.begin(), owners.end());
  CHECK(seen ==
        std::vector<std::pair<std::string, bool>>{{"b", false}, {"c10", true}, {"c2", true}});
}
