// compare: the simulator against a recorded real run, as pure functions of two traces
// (tools/compare.hpp), and the exit codes of `rebalance-sim compare`.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tools/compare.hpp"
#include "cli_helpers.hpp"

namespace {

using nlohmann::json;
using rsim::compare::compare_variant;
using rsim::compare::facts_of;
using rsim::compare::parse_jsonl;

std::vector<json> trace(const std::string& text) { return parse_jsonl(text, "test"); }

// A's assignment at 3048 ms, revocation at 6050 ms; B joins at 6054 ms; two group generations.
const char* kSim = R"({"t_us":0,"type":"consumer.start","consumer":"A"}
{"t_us":3047000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":1,"members":[{"consumer":"A","assignment":["t-1","t-0"]}]}
{"t_us":3048000,"type":"assignment","consumer":"A","owned":["t-0","t-1"]}
{"t_us":3048000,"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":["t-0","t-1"],"phase":"start"}
{"t_us":3100000,"type":"records.fetched","consumer":"A","ranges":[{"partition":"t-0","first_offset":0,"last_offset":9}]}
{"t_us":5000000,"type":"consumer.start","consumer":"B"}
{"t_us":6050000,"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":["t-0","t-1"],"phase":"start"}
{"t_us":6051000,"type":"record","record":"GroupMetadata","tombstone":false,"group":"g","generation":2,"members":[{"consumer":"A","assignment":["t-0"]},{"consumer":"B","assignment":["t-1"]}]}
{"t_us":6052000,"type":"record","record":"OffsetCommit","group":"g","topic":"t","partition_index":0,"committed_offset":10}
{"t_us":6053000,"type":"assignment","consumer":"A","owned":["t-0"]}
{"t_us":6054000,"type":"assignment","consumer":"B","owned":["t-1"]}
{"t_us":6054000,"type":"callback","consumer":"B","callback":"onPartitionsAssigned","partitions":["t-1"],"phase":"start"}
)";

}  // namespace

TEST_CASE("compare: facts of a trace: callbacks, group records without OffsetCommit, final assignment, generations") {
  const auto f = facts_of(trace(kSim));
  REQUIRE(f.callbacks.size() == 3);
  CHECK(f.callbacks[0].t_us == 3048000);
  CHECK(f.callbacks[1].kind == "onPartitionsRevoked");
  REQUIRE(f.records.size() == 2);  // the OffsetCommit record is left aside
  CHECK(f.records[0].str() == "GroupMetadata epoch 1 [A:t-0,A:t-1]");
  CHECK(f.final_assignment == json({{"A", {"t-0"}}, {"B", {"t-1"}}}));
  CHECK(f.rebalances == 2);
  CHECK(f.duplicates == 0);
}

TEST_CASE("compare: a real run 149 ms late agrees under classic (±150 ms); 151 ms late does not") {
  const auto sim = facts_of(trace(kSim));
  auto shifted = [&](std::int64_t us) {
    auto t = trace(kSim);
    for (auto& e : t) e["t_us"] = e["t_us"].get<std::int64_t>() + us;
    return facts_of(t);
  };
  const auto ok = compare_variant("classic-eager", sim, {shifted(149000)}, {"real"}, {});
  CHECK(ok.passed());
  CHECK(ok.worst_deviation_us == 149000);
  const auto late = compare_variant("classic-eager", sim, {shifted(151000)}, {"real"}, {});
  CHECK_FALSE(late.passed());
  CHECK(late.failures().at(0) == "callback A onPartitionsAssigned [t-0,t-1] beyond ±150 ms");
  // the consumer protocol's default tolerance is ±400 ms
  CHECK(compare_variant("consumer", sim, {shifted(399000)}, {"real"}, {}).passed());
  CHECK_FALSE(compare_variant("consumer", sim, {shifted(401000)}, {"real"}, {}).passed());
  // two real runs: their spread is reported
  const auto two = compare_variant("classic-eager", sim, {shifted(10000), shifted(40000)}, {"r1", "r2"}, {});
  CHECK(two.passed());
  CHECK(two.spread_us == 30000);
}

TEST_CASE("compare: a callback of other partitions, a missing record and redelivered offsets are differences") {
  const auto sim = facts_of(trace(kSim));
  std::string other = kSim;
  other.replace(other.find(R"("partitions":["t-1"],"phase")"), 28, R"("partitions":["t-0"],"phase")");
  other += R"({"t_us":7000000,"type":"records.fetched","consumer":"B","ranges":[{"partition":"t-0","first_offset":5,"last_offset":12}]}
)";
  const auto c = compare_variant("classic-eager", sim, {facts_of(trace(other))}, {"real"}, {});
  CHECK_FALSE(c.passed());
  CHECK(c.callbacks_unmatched == 2);  // B's [t-1] only in sim, B's [t-0] only in real
  CHECK(c.duplicates_real == 5);      // offsets 5..9 of t-0 delivered twice
  const auto f = c.failures();
  CHECK(std::find(f.begin(), f.end(), "duplicates: sim 0 real 5") != f.end());

  std::string fewer = kSim;
  const auto at = fewer.find(R"({"t_us":6051000)");
  fewer.erase(at, fewer.find('\n', at) + 1 - at);
  const auto r = compare_variant("classic-eager", sim, {facts_of(trace(fewer))}, {"real"}, {});
  CHECK_FALSE(r.records_equal);
  CHECK(r.first_record_difference ==
        "at record 2: sim GroupMetadata epoch 2 [A:t-0 B:t-1], real (none)");
}

TEST_CASE("compare: the command refuses a directory without a recorded variant (exit 2)") {
  const auto r = testing::run_cli("compare scenarios/examples/two-consumers.json --real /nonexistent-dir", "compare-none");
  CHECK(r.code == 2);
  CHECK(r.err.find("no recorded variant") != std::string::npos);
}
