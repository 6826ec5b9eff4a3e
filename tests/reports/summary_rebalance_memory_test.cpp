// The summary's retained state stays bounded by the open rebalances, not by the run: a closed
// rebalance keeps only its entry of `rebalances` (written as text when it closes), not its
// partition sets. An eager group of one consumer and 1,000 partitions rebalances N times; the
// rebalances held in full, and the partition names they hold, peak at the same counts for N = 10
// and N = 100, and are none once the run is over. Streamed (SummarySink::spool_rebalances), the
// closed rebalances' entries are not in memory either, and summary.json is the same bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>

#include "models/trace/trace_jsonl.hpp"
#include "reports/summary.hpp"

namespace {

constexpr int kPartitions = 1000;

struct Feed {
  reports::SummarySink sink{reports::SummaryInputs{}};
  rsim::trace::ReadStorage storage;
  std::pair<std::size_t, std::size_t> most{0, 0};  // the peaks of retained_rebalances()
  std::size_t most_entry_bytes = 0;                // the peak of retained_entry_bytes()
  void line(const std::string& l) {
    storage.clear();
    sim::SimTime t{};
    const rsim::trace::Event e = rsim::trace::parse_jsonl(l, storage, t);
    sink.on_event(t, e);
    const auto held = sink.retained_rebalances();
    most.first = std::max(most.first, held.first);
    most.second = std::max(most.second, held.second);
    most_entry_bytes = std::max(most_entry_bytes, sink.retained_entry_bytes());
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
  f.line(fmt::format(
      R"({{"t_us":{},"type":"group.state","group":"g","state":"PreparingRebalance","generation":{},"reason":"member A rejoined"}})",
      t, gen - 1));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":[{}],"phase":"start"}})",
      t + 1, parts));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsRevoked","partitions":[{}],"phase":"end"}})",
      t + 1, parts));
  f.line(fmt::format(R"({{"t_us":{},"type":"assignment","consumer":"A","owned":[]}})", t + 1));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"group.state","group":"g","state":"CompletingRebalance","generation":{},"reason":"all members joined"}})",
      t + 2, gen));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"group.epoch","group":"g","generation":{},"protocol":"range","leader":"A","members":["A"]}})",
      t + 2, gen));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"group.state","group":"g","state":"Stable","generation":{},"reason":"leader's assignment persisted"}})",
      t + 3, gen));
  f.line(fmt::format(R"({{"t_us":{},"type":"assignment","consumer":"A","owned":[{}]}})", t + 4,
                     parts));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[{}],"phase":"start"}})",
      t + 4, parts));
  f.line(fmt::format(
      R"({{"t_us":{},"type":"callback","consumer":"A","callback":"onPartitionsAssigned","partitions":[{}],"phase":"end"}})",
      t + 4, parts));
}

struct Outcome {
  std::pair<std::size_t, std::size_t> most, at_end;
  nlohmann::ordered_json summary;
};

void feed(Feed& f, int n) {
  const std::string parts = partitions();
  f.line(
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"classic-eager","seed":1,"duration_ms":100000000})");
  f.line(
      R"({"t_us":1000,"type":"consumer.start","consumer":"A","group":"g","topics":["t"],"protocol":"classic-eager"})");
  for (int k = 1; k <= n; ++k) rebalance(f, 1000 + k * 10000, k, parts);
}

Outcome run(int n) {
  Feed f;
  feed(f, n);
  Outcome o{f.most, f.sink.retained_rebalances(), {}};
  o.summary = f.sink.finish();
  return o;
}

}  // namespace

TEST_CASE(
    "closed rebalances keep no partition sets: 10 and 100 eager rebalances of 1,000 partitions "
    "hold the same") {
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

TEST_CASE(
    "streamed, closed rebalances' entries stay out of memory and summary.json is the same bytes") {
  const auto spool = std::filesystem::temp_directory_path() /
                     ("rebalance-sim-summary-spool-" + std::to_string(getpid()) + ".spool");
  Feed whole;
  feed(whole, 100);
  // Each entry lists A's 1,000 names twice (revoked and assigned): "t-0" to "t-999" with their
  // quotes and commas are 10 * 6 + 90 * 7 + 900 * 8 - 1 = 7,889 bytes a list; the rest of an
  // entry (keys, times, trigger, cause) is under 300 bytes.
  CHECK(whole.sink.retained_entry_bytes() >= 100 * 2 * 7889);
  CHECK(whole.sink.retained_entry_bytes() < 100 * (2 * 7889 + 300));
  const std::string expected = whole.sink.finish().dump(2);
  std::string streamed;
  {
    Feed f;
    f.sink.spool_rebalances(spool);
    feed(f, 100);
    CHECK(f.most_entry_bytes == 0);
    const auto head = f.sink.finish_streamed();
    CHECK(head["rebalances"] == std::string(reports::kStreamedRebalances));
    CHECK(head["metrics"]["rebalance_count"] == 100);
    std::ostringstream out;
    f.sink.write_json(out, head);
    streamed = out.str();
    // The spool holds what memory held unstreamed (written by then: read back for summary.json).
    CHECK(std::filesystem::file_size(spool) == whole.sink.retained_entry_bytes());
  }
  CHECK(streamed.size() == expected.size());
  CHECK(streamed == expected);
  CHECK(!std::filesystem::exists(spool));  // the sink removes its spool
}

TEST_CASE("streamed with no rebalance: an empty list, as dump(2) writes it") {
  const auto spool = std::filesystem::temp_directory_path() /
                     ("rebalance-sim-summary-spool-none-" + std::to_string(getpid()) + ".spool");
  Feed whole, f;
  f.sink.spool_rebalances(spool);
  feed(whole, 0);
  feed(f, 0);
  std::ostringstream out;
  f.sink.write_json(out, f.sink.finish_streamed());
  CHECK(out.str().find("\n  \"rebalances\": [],\n") != std::string::npos);
  CHECK(out.str() == whole.sink.finish().dump(2));
}
