// Records under group.protocol=consumer (the KIP-848 client), against hand computations: positions
// from OffsetFetch (member id and epoch) then ListOffsets, the auto-commit timer restarted when a
// reconciliation completes, the duplicates of a crash before the auto-commit, lag samples, and
// lost == 0 in every scenario run under the consumer protocol.
#include <doctest/doctest.h>

#include <filesystem>

#include "reports/summary.hpp"
#include "trace_helpers.hpp"

namespace {

using json = nlohmann::json;
using testing::events;
using testing::lag_samples;
using testing::summary_of;

json summary_of(const std::string& path) {
  return testing::summary_of(path, "consumer");
}

}  // namespace

TEST_CASE("consumer protocol: a crash before the auto-commit re-delivers exactly 110..124") {
  // orders-0 grows by 10 records/s: offset k is appended at (k + 1) * 100 ms.
  const auto trace =
      testing::run_trace("scenarios/workload/crash-before-auto-commit.json", "consumer");
  // A starts at 1000: FindCoordinator (1000-1002), heartbeat answered at 1004 with orders-0;
  // the 1100 poll pass reconciles (onPartitionsAssigned), the 1200 pass sends OffsetFetch with
  // A's member id and epoch 2 (no committed offset), then ListOffsets at once: 1204, LEO 12.
  const auto positions = events(trace, "position");
  REQUIRE(positions.size() == 3);
  CHECK(positions[0]["consumer"] == "A");
  CHECK(positions[0]["t_us"] == 1204000);
  CHECK(positions[0]["offset"] == 12);
  CHECK(positions[0]["source"] == "reset:latest");
  CHECK(testing::responses(trace, "A", "OffsetFetch", "NONE") == std::vector<double>{1202});
  for (const auto& e : events(trace, "rpc"))
    if (e["api"] == "OffsetFetch" && e["dir"] == "send" && e["from"] == "A") {
      CHECK(e["t_us"] == 1200000);
      CHECK(e["member_epoch"] == 2);
    }
  // The auto-commit timer restarts when the reconciliation completes (1100): commits at 6100
  // and 11100, each carrying the position of that instant. B's join changes nothing for A.
  std::vector<json> a_auto;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "A" && c["phase"] == "sent") a_auto.push_back(c);
  REQUIRE(a_auto.size() == 2);
  CHECK(a_auto[0]["purpose"] == "auto-commit");
  CHECK(a_auto[0]["t_us"] == 6100000);
  CHECK(a_auto[0]["offsets"]["orders-0"] == 60);
  CHECK(a_auto[0]["generation"] == 2);
  CHECK(a_auto[1]["t_us"] == 11100000);
  CHECK(a_auto[1]["offsets"]["orders-0"] == 110);
  CHECK(a_auto[1]["generation"] == 3);  // B's join bumped A's epoch at A's 6.1 s heartbeat
  // A is handed offsets up to 124 (appended at 12.5 s) before it crashes at 12550.
  std::int64_t a_last = -1;
  for (const auto& f : events(trace, "records.fetched"))
    if (f["consumer"] == "A") a_last = f["ranges"].back()["last_offset"].get<std::int64_t>();
  CHECK(a_last == 124);
  // A's session (45 s from its last heartbeat at 11.101 s) expires at 56.101 s; the next target
  // waits for the 1 s assignment interval (57.101 s); B starts the reconciliation at its 57.2 s
  // poll pass (an empty commit: B owns nothing) and runs onPartitionsAssigned at the next
  // (57.3 s), sends OffsetFetch at the 57.4 s pass and gets the committed 110 with A's leader
  // epoch at 57.402 s: AWAIT_VALIDATION; the next pass (57.5 s) sends OffsetForLeaderEpoch and
  // the position is valid at 57.502 s, when B fetches 110..573.
  CHECK(positions[1]["consumer"] == "B");
  CHECK(positions[1]["t_us"] == 57402000);
  CHECK(positions[1]["offset"] == 110);
  CHECK(positions[1]["source"] == "committed");
  CHECK(positions[1]["state"] == "AWAIT_VALIDATION");
  CHECK(positions[2]["t_us"] == 57502000);
  CHECK(positions[2]["offset"] == 110);
  CHECK(positions[2]["source"] == "validated");
  const auto s = summary_of("scenarios/workload/crash-before-auto-commit.json");
  CHECK(s["metrics"]["duplicates"] == 15);  // 110..124
  CHECK(s["metrics"]["lost"] == 0);
}

TEST_CASE("consumer protocol: commit before revocation carries the revoked partitions' positions") {
  const auto trace =
      testing::run_trace("scenarios/workload/cooperative-revocation-duplicates.json", "consumer");
  // A learns its new target [0,1] at its 6.1 s heartbeat; the next poll pass reconciles: the
  // revoked partitions stop fetching and all consumed offsets are committed before
  // onPartitionsRevoked.
  json before;
  for (const auto& c : events(trace, "commit"))
    if (c["purpose"] == "before revocation" && c["phase"] == "sent") before = c;
  REQUIRE(before.is_object());
  CHECK(before["consumer"] == "A");
  CHECK(before["offsets"]["orders-2"] == 610);
  CHECK(before["offsets"]["orders-3"] == 610);
  const auto revoked = testing::callback_starts(trace, "A", "onPartitionsRevoked");
  REQUIRE(revoked.size() == 1);
  CHECK(revoked[0] > before["t_us"].get<double>() / 1000.0);
  for (const auto& p : events(trace, "position"))
    if (p["consumer"] == "B") CHECK(p["offset"] == 610);
  const auto s = summary_of(
      rsim::run_scenario(
          rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) +
                                   "/scenarios/workload/cooperative-revocation-duplicates.json"),
          "consumer", 1)
          .trace_lines);
  CHECK(s["metrics"]["duplicates"] == 0);
  // B owns orders-2, orders-3 from its 50th poll() call after its acknowledgement at 5,100.33
  // (5,100.33 + 50 x 100.33 = 10,116.83; docs/fidelity.md, finding 27), where the owner's sample
  // is LEO 1011 (100 records/s) - A's commit 610. B has positions at 10.22 s and has caught up to
  // lag 18 by the 11 s sample. (With poll() returning on time: owner at 10.3 s, positions at
  // 10.502 s, the 11 s sample LEO 1100 - 670 = 430.)
  CHECK(s["metrics"]["max_lag"] == 401);
}

TEST_CASE("consumer protocol: lag by hand on lag-catch-up") {
  // Position 0 at 1204 (as above, earliest); batches of 10 at 1204 + 100k ms, 100 ms each: at
  // the 2 s sample eight batches (position 80) against LEO 100 + 20: lag 40. The 2404 poll takes
  // the 4 records left; later samples see lag 1 (the record appended at the sample instant).
  const auto trace = testing::run_trace("scenarios/workload/lag-catch-up.json", "consumer");
  const auto samples = lag_samples(trace);  // (ms, log end offset, position, lag)
  const decltype(samples) expected{
      {2000, 120, 80, 40}, {3000, 130, 129, 1}, {4000, 140, 139, 1}, {5000, 150, 149, 1}};
  CHECK(samples == expected);
  const auto fetched = events(trace, "records.fetched");
  REQUIRE(fetched.size() > 13);
  CHECK(fetched[0]["t_us"] == 1204000);
  CHECK(fetched[12]["t_us"] == 2404000);
  CHECK(fetched[12]["count"] == 4);
}

TEST_CASE("consumer protocol: a zombie's commit and fetch are refused by member epoch") {
  const auto trace = testing::run_trace("scenarios/workload/zombie-commit.json", "consumer");
  // A wakes at 60 s after B took orders-0: its auto-commit (epoch 3) and its heartbeat are both
  // answered UNKNOWN_MEMBER_ID (the member was removed at its session timeout); it is fenced.
  std::vector<std::string> errors;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "A" && c["phase"] == "completed" &&
        c["t_us"].get<std::int64_t>() >= 60000000)
      errors.push_back(c["error"]);
  REQUIRE(!errors.empty());
  CHECK(errors[0] == "UNKNOWN_MEMBER_ID");
  bool fenced = false;
  for (const auto& f : events(trace, "consumer.fenced"))
    fenced = fenced || (f["consumer"] == "A" && f["error"] == "UNKNOWN_MEMBER_ID");
  CHECK(fenced);
  // No OffsetCommit record is written for A's refused commit.
  for (const auto& r : events(trace, "record"))
    if (r["record"] == "OffsetCommit" && r["t_us"].get<std::int64_t>() >= 60000000 &&
        r["t_us"].get<std::int64_t>() < 60010000)
      CHECK(r["committed_offset"] != 99);
}

TEST_CASE("at-least-once under the consumer protocol: lost == 0 in every scenario") {
  // Every scenario, listed for `consumer` or not, run with --protocol consumer.
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::recursive_directory_iterator(std::string(RSIM_SOURCE_DIR) + "/scenarios"))
    if (entry.path().extension() == ".json" && entry.path().filename() != "schema.json" &&
        entry.path().parent_path().filename() != "assign")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 9);
  int runs = 0;
  for (const auto& f : files) {
    const auto spec = rsim::load_scenario_file(f.string());
    if (!rsim::unsupported_features(spec, "consumer").empty()) continue;
    CAPTURE(f.string());
    // The summary as the run's sink at the standard level (the summary tests check it gives the
    // bytes of a full trace read back): no trace is kept or parsed here.
    reports::SummarySink summary{reports::SummaryInputs{}};
    rsim::run_scenario(spec, "consumer", spec.seed, {&summary}, rsim::trace::Detail::Standard);
    CHECK(summary.finish()["metrics"]["lost"] == 0);
    ++runs;
  }
  CHECK(runs == static_cast<int>(files.size()));
}

TEST_CASE("consumer protocol failover: the committed offsets survive the coordinator's load") {
  // The new coordinator replays the partition's OffsetCommit records with the group's records:
  // the loaded group has the offsets the failed one held, and OffsetFetch reads them.
  const auto trace = testing::run_trace("scenarios/consumer/coordinator-failover.json", "consumer");
  json unloaded, loaded;
  for (const auto& e : trace) {
    if (e["type"] == "coordinator.unloaded") unloaded = e["groups"];
    if (e["type"] == "coordinator.loaded" && !e["groups"].empty()) loaded = e["groups"];
  }
  REQUIRE(unloaded.size() == 1);
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0]["offsets"].size() == 4);
  CHECK(loaded[0]["offsets"] == unloaded[0]["offsets"]);
}
