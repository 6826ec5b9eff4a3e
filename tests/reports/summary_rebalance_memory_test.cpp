// The summary's retained state stays bounded by the open rebalances, not by the run: a closed
// rebalance keeps only its entry of `rebalances` (written as text when it closes), not its
// partition sets. An eager group of one consumer and 1,000 partitions rebalances N times; the
// rebalances held in full, and the partition names they hold, peak at the same counts for N = 10
// and N = 100, and are none once the run is over.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include <fmt/format.h>

#include "models/trace/trace_jsonl.hpp"
#include "reports/summary.hpp"

namespace {

constexpr int kPartitions = 1000;

struct Feed {
  reports::SummarySink sink{reports::SummaryInputs{}};
  rsim::trace::ReadStorage storage;
  std::pair<std::size_t, std::size_t> most{0, 0};  // the peaks of retained_rebalances()
  void line(const std::string& l) {
    storage.clear();
    sim::SimTime t{};
    const rsim::trace::Event e = rsim::trace::parse_jsonl(l, storage, t);
    sink.on_event(t, e);
    const auto held = sink.retained_rebalances();
    most.first = std::max(most.first, held.first);
    most.second = std::max(most.second, held.second);
  }
};

std::string partitions() {
  std::string out;
  for (int p = 0; p < kPartitions; ++p) out += fmt::format("{}\"t-{}\"", p == 0 ? "" : ",", p);
  return out;
}

// One eager rebalance of generation `gen` starting at `t`: A revokes everything, the group
// completes, A is assigned everything again (the rebalance closes at its onPartitionsAssigned end).
void rebalance(Feed& f, std::int64_t t, int gen, const std::string& parts) {
  f.line(fmt::format(R"({{"t_us":{},"type":"group.state","group":"g","state":"PreparingRebalance","generation":{},"reason":"member A rejoined"}})", t, gen - 1));
  f.line(fmt::format(R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":[{}],"phase":"start"}})", t + 1, parts));
  f.line(fmt::format(R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":[{}],"phase":"end"}})", t + 1, parts));
  f.line(fmt::format(R"({{"t_us":{},"type":"assignment","consumer":"A","owned":[]}})", t + 1));
  f.line(fmt::format(R"({{"t_us":{},"type":"group.state","group":"g","state":"CompletingRebalance","generation":{},"reason":"all members joined"}})", t + 2, gen));
  f.line(fmt::format(R"({{"t_us":{},"type":"group.epoch","group":"g","generation":{},"protocol":"range","leader":"A","members":["A"]}})", t + 2, gen));
  f.line(fmt::format(R"({{"t_us":{},"type":"group.state","group":"g","state":"Stable","generation":{},"reason":"leader's assignment persisted"}})", t + 3, gen));
  f.line(fmt::format(R"({{"t_us":{},"type":"assignment","consumer":"A","owned":[{}]}})", t + 4, parts));
  f.line(fmt::format(R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[{}],"phase":"start"}})", t + 4, parts));
  f.line(fmt::format(R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[{}],"phase":"end"}})", t + 4, parts));
}

struct Outcome {
  std::pair<std::size_t, std::size_t> most, at_end;
  nlohmann::ordered_json summary;
};

Outcome run(int n) {
  Feed f;
  const std::string parts = partitions();
  f.line(R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":100000000})");
  f.line(R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"],"protocol":"classic-eager"})");
  for (int k = 1; k <= n; ++k) rebalance(f, 1000 + k * 10000, k, parts);
  Outcome o{f.most, f.sink.retained_rebalances(), {}};
  o.summary = f.sink.finish();
  return o;
}

}  // namespace

TEST_CASE("closed rebalances keep no partition sets: 10 and 100 eager rebalances of 1,000 partitions hold the same") {
  const Outcome ten = run(10), hundred = run(100);
  // One rebalance open at a time, holding at most its 1,000 revoked and 1,000 assigned names;
  // keeping closed ones in full, 100 rebalances would hold 100 and 200,000.
  CHECK(ten.most == std::pair<std::size_t, std::size_t>{1, 2 * kPartitions});
  CHECK(hundred.most == ten.most);
  CHECK(ten.at_end == std::pair<std::size_t, std::size_t>{0, 0});
  CHECK(hundred.at_end == std::pair<std::size_t, std::size_t>{0, 0});
  // The entries are still whole: every rebalance revoked and assigned all 1,000 partitions of A.
  const auto& rs = hundred.summary["rebalances"];
  REQUIRE(rs.size() == 100);
  CHECK(rs[0]["start_us"] == 11000);
  CHECK(rs[0]["end_us"] == 11004);
  CHECK(rs[0]["generation"] == 1);
  CHECK(rs[99]["start_us"] == 1001000);
  CHECK(rs[99]["generation"] == 100);
  for (const auto& r : rs) {
    CHECK(r["completed"] == true);
    CHECK(r["revoked"]["A"].size() == kPartitions);
    CHECK(r["assigned"]["A"].size() == kPartitions);
    CHECK(r["assigned"]["A"][999] == "t-999");
  }
  CHECK(hundred.summary["metrics"]["rebalance_count"] == 100);
}
