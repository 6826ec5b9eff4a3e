// Records, offsets, commits and lag, checked against hand computations: the producers'
// arithmetic, positions from OffsetFetch / auto.offset.reset, the duplicates a crash between
// processing and auto-commit causes, lag samples, a zombie's refused commit, and lost == 0 in
// every scenario that keeps Kafka's default commits.
#include <doctest/doctest.h>

#include <filesystem>

#include "models/workload/workload.hpp"
#include "reports/summary.hpp"
#include "trace_helpers.hpp"

namespace {

using json = nlohmann::json;
using testing::events;
using testing::lag_samples;
using testing::summary_of;

rsim::TopicSpec topic(const std::string& name, std::int32_t partitions, std::int64_t initial,
                      std::optional<sim::Distribution> gap, double rate) {
  rsim::TopicSpec t;
  t.name = name;
  t.partitions = partitions;
  t.initial_records = initial;
  t.produce_gap = std::move(gap);
  t.records_per_sec = rate;
  return t;
}

}  // namespace

TEST_CASE("a constant rate is exact: the k-th record at ceil(k * 10^6 / r) us, no drift") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  // 3 records/s: records at 333334 us, 666667 us, 1000000 us, ...
  rsim::Workload w(kernel, tracer, {topic("t", 2, 5, sim::Distribution::constant(1000.0 / 3), 3)},
                   1);
  const rsim::TopicPartition t0{"t", 0};
  CHECK(w.log_end_offset(t0) == 5);
  CHECK(w.next_append(t0) == sim::us(333334));
  std::vector<std::int64_t> seen;
  for (const std::int64_t at :
       std::vector<std::int64_t>{333333, 333334, 999999, 1000000, 3000000, 3600000000LL}) {
    kernel.schedule_closure_after(sim::us(at) - kernel.now(),
                                  [&] { seen.push_back(w.log_end_offset(t0)); });
    kernel.run(sim::us(at));
  }
  // 3 per second for an hour is 10800 records on top of the 5 initial ones, exactly.
  CHECK(seen == std::vector<std::int64_t>{5, 6, 7, 8, 14, 10805});
  CHECK(w.log_end_offset({"t", 1}) == 10805);  // every partition produces at the rate
  CHECK(w.log_end_offset({"t", 7}) == 0);      // unknown partition
}

TEST_CASE("a whole rate's integer arithmetic equals the long double formula it replaces") {
  using rsim::ProductionClock;
  CHECK(ProductionClock(1).whole());
  CHECK(ProductionClock(1'000'000).whole());
  CHECK_FALSE(ProductionClock(0.5).whole());
  CHECK_FALSE(ProductionClock(1000.0 / 3).whole());
  CHECK_FALSE(ProductionClock(2'000'000).whole());
  sim::Rng rng(7, "production-clock");
  int compared = 0;
  for (int i = 0; i < 200'000; ++i) {
    // Rates from 1 to 10^6 records/s, small ones more often; spans up to the integer path's
    // bound, and counts just around the boundaries of whole seconds.
    const std::int64_t r =
        rng.chance_ppm(500'000) ? rng.uniform(1, 1000) : rng.uniform(1, 1'000'000);
    const ProductionClock clock(static_cast<double>(r));
    REQUIRE(clock.whole());
    std::int64_t dt = rng.uniform(0, ProductionClock::kMaxWholeSpan);
    if (rng.chance_ppm(300'000)) dt = rng.uniform(0, 10'000'000);
    if (rng.chance_ppm(300'000)) dt = (dt / 1'000'000) * 1'000'000 + rng.uniform(-2, 2);
    if (dt < 0) dt = 0;
    REQUIRE(clock.count(sim::SimTime{dt}) ==
            ProductionClock::reference_count(sim::SimTime{dt}, static_cast<double>(r)));
    const std::int64_t k = clock.count(sim::SimTime{dt}) + rng.uniform(0, 2);
    if (ProductionClock::reference_time_of(k, static_cast<double>(r)).count() <=
        ProductionClock::kMaxWholeSpan) {
      REQUIRE(clock.time_of(k) == ProductionClock::reference_time_of(k, static_cast<double>(r)));
      ++compared;
    }
  }
  CHECK(compared > 100'000);
  // Beyond the integer path's span the formula answers.
  const ProductionClock one(1);
  const sim::SimTime far{ProductionClock::kMaxWholeSpan + 5'000'000};
  CHECK(one.count(far) == ProductionClock::reference_count(far, 1));
}

TEST_CASE("a rate change takes effect at its instant - 0 stops production") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  rsim::Workload w(kernel, tracer, {topic("t", 1, 0, sim::Distribution::constant(100), 10)}, 1);
  const rsim::TopicPartition tp{"t", 0};
  std::vector<std::int64_t> seen;
  kernel.schedule_closure_after(sim::ms(1050), [&] {
    seen.push_back(w.log_end_offset(tp));                         // 10 records by 1.05 s
    w.set_production("t", sim::Distribution::constant(10), 100);  // 100/s from 1.05 s
  });
  kernel.schedule_closure_after(sim::ms(2050), [&] {
    seen.push_back(w.log_end_offset(tp));  // + 100 in the next second
    w.set_production("t", std::nullopt, 0);
  });
  kernel.schedule_closure_after(sim::ms(9000), [&] { seen.push_back(w.log_end_offset(tp)); });
  kernel.run(sim::ms(10000));
  CHECK(seen == std::vector<std::int64_t>{10, 110, 110});
  CHECK(w.next_append(tp) == sim::kNever);
  const auto trace = testing::parse_trace(tracer.lines());
  REQUIRE(events(trace, "produce").size() == 2);
  CHECK(events(trace, "produce")[0]["records_per_sec"] == 100.0);
  CHECK(events(trace, "produce")[1]["records_per_sec"] == 0);
}

TEST_CASE("drawn gaps: each partition has its own stream, whatever the order of the questions") {
  const auto gap = [] {
    sim::Distribution d;
    d.kind = sim::Distribution::Kind::Exponential;
    d.mean = 50;
    return d;
  }();
  auto leo_at = [&](bool reverse) {
    sim::Kernel kernel;
    testing::RecordedTracer tracer(kernel);
    rsim::Workload w(kernel, tracer, {topic("t", 2, 0, gap, 20)}, 42);
    std::vector<std::int64_t> out(4);
    kernel.schedule_closure_after(sim::ms(500), [&] {
      if (reverse) out[1] = w.log_end_offset({"t", 1});
      out[0] = w.log_end_offset({"t", 0});
    });
    kernel.schedule_closure_after(sim::ms(10000), [&] {
      out[2] = w.log_end_offset({"t", 0});
      out[3] = w.log_end_offset({"t", 1});
    });
    kernel.run(sim::ms(10000));
    return std::vector<std::int64_t>{out[2], out[3]};
  };
  const auto a = leo_at(false);
  CHECK(a == leo_at(true));
  // Poisson arrivals at 20/s for 10 s: about 200 each (a loose sanity bound, not a timing).
  CHECK(a[0] > 140);
  CHECK(a[0] < 260);
  CHECK(a[0] != a[1]);
}

TEST_CASE("crash between processing and auto-commit: exactly the uncommitted records come back") {
  // orders-0 grows by 10 records/s: offset k is appended at (k + 1) * 100 ms. A owns it.
  const auto trace =
      testing::run_trace("scenarios/workload/crash-before-auto-commit.json", "classic-eager");
  // A starts at 1000: FindCoordinator, JoinGroup x2, SyncGroup (1 ms links) -> assigned at 1008;
  // OffsetFetch (none) and ListOffsets (latest) -> position at 1012 = LEO(1.012 s) = 10.
  const auto positions = events(trace, "position");
  REQUIRE(positions.size() >= 3);
  CHECK(positions[0]["consumer"] == "A");
  CHECK(positions[0]["t_us"] == 1012000);
  CHECK(positions[0]["offset"] == 10);
  CHECK(positions[0]["source"] == "reset:latest");
  // B joins at 2000; A learns at its heartbeat (1006 + 3000 = 4006), commits before revoking
  // (position 40), and gets orders-0 back at 4014 (its range assignment: client id consumer-g-1
  // sorts before consumer-g-2); it resumes at the committed 40. That commit carried leader epoch
  // 0 (the position came from fetched records), so the OffsetFetch answer (4016) leaves the
  // position AWAIT_VALIDATION; the next pass, when poll(100 ms) returns at 4100, sends
  // OffsetForLeaderEpoch, and the answer (4102) makes it valid.
  REQUIRE(positions.size() >= 5);
  CHECK(positions[1]["consumer"] == "A");
  CHECK(positions[1]["t_us"] == 4016000);
  CHECK(positions[1]["offset"] == 40);
  CHECK(positions[1]["source"] == "committed");
  CHECK(positions[1]["state"] == "AWAIT_VALIDATION");
  CHECK(positions[2]["t_us"] == 4102000);
  CHECK(positions[2]["offset"] == 40);
  CHECK(positions[2]["source"] == "validated");
  CHECK(positions[2]["state"] == "FETCHING");
  // The auto-commit timer restarts at the assignment (4014): commits at 9014 carry 90.
  std::vector<json> a_auto;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "A" && c["phase"] == "sent" && c["purpose"] == "auto-commit")
      a_auto.push_back(c);
  REQUIRE(a_auto.size() == 1);
  CHECK(a_auto[0]["t_us"] == 9014000);
  CHECK(a_auto[0]["offsets"]["orders-0"] == 90);
  // A crashes at 12550 having been handed offsets 90..124 (the last appended at 12.5 s).
  std::int64_t a_last = -1;
  for (const auto& f : events(trace, "records.fetched"))
    if (f["consumer"] == "A") a_last = f["ranges"].back()["last_offset"].get<std::int64_t>();
  CHECK(a_last == 124);
  // B takes orders-0 after A's session times out and starts from the committed 90 (validated
  // first, as A's 40 was).
  const auto& b_committed = positions[positions.size() - 2];
  CHECK(b_committed["consumer"] == "B");
  CHECK(b_committed["offset"] == 90);
  CHECK(b_committed["source"] == "committed");
  CHECK(b_committed["state"] == "AWAIT_VALIDATION");
  CHECK(positions.back()["consumer"] == "B");
  CHECK(positions.back()["offset"] == 90);
  CHECK(positions.back()["source"] == "validated");
  // So offsets 90..124 reach the application twice: 35 duplicates, and nothing is lost.
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto s = summary_of("scenarios/workload/crash-before-auto-commit.json", variant);
    CHECK(s["metrics"]["duplicates"] == 35);
    CHECK(s["metrics"]["lost"] == 0);
  }
}

TEST_CASE("commitSync after each batch: a crash mid-batch re-delivers only that batch") {
  const auto s = summary_of("scenarios/workload/commit-sync-crash.json", "classic-eager");
  // Offset 124 is appended at 12.5 s and fetched at once; A dies at 12.525 s, 25 ms into its
  // 50 ms of processing; it committed 124 after processing 123.
  CHECK(s["metrics"]["duplicates"] == 1);
  CHECK(s["metrics"]["lost"] == 0);
  const auto trace =
      testing::run_trace("scenarios/workload/commit-sync-crash.json", "classic-eager");
  std::int64_t last_commit = -1;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "A" && c["phase"] == "sent")
      last_commit = c["offsets"]["orders-0"].get<std::int64_t>();
  CHECK(last_commit == 124);
  CHECK(events(trace, "position").back()["offset"] == 124);
}

TEST_CASE("lag by hand: a consumer that starts behind and catches up") {
  // 100 records + 10/s; A reads from the earliest offset, 10 records per poll, 100 ms per
  // batch. Position valid at 1012 (OffsetFetch, ListOffsets earliest = 0); batch k is fetched
  // at 1012 + 100k ms. At the 2 s sample ten batches are done (position 100) and
  // LEO = 100 + 20 = 120. Batch 11 (2112) brings it to 120, batch 12 (2212) takes the 2 records
  // left; from then on each poll (every 100 ms, at ...12 ms) takes the one new record, so at
  // each later sample the position is LEO - 1 (the record appended at the sample instant).
  const auto trace = testing::run_trace("scenarios/workload/lag-catch-up.json", "classic-eager");
  const auto samples = lag_samples(trace);  // (ms, log end offset, position, lag)
  const decltype(samples) expected{
      {2000, 120, 100, 20}, {3000, 130, 129, 1}, {4000, 140, 139, 1}, {5000, 150, 149, 1}};
  CHECK(samples == expected);
  const auto fetched = events(trace, "records.fetched");
  REQUIRE(fetched.size() > 12);
  CHECK(fetched[11]["t_us"] == 2112000);
  CHECK(fetched[11]["ranges"][0]["last_offset"] == 119);
  CHECK(fetched[12]["ranges"][0]["first_offset"] == 120);
  CHECK(fetched[12]["count"] == 2);
  CHECK(fetched[12]["batch"] == 13);
  const auto s = summary_of("scenarios/workload/lag-catch-up.json", "classic-eager");
  CHECK(s["metrics"]["max_lag"] == 20);
  // Offsets 0..148 were handed out; the batch fetched at 4912 (offset 148) is still being
  // processed when the run ends at 5000.
  CHECK(s["metrics"]["records_delivered"] == 149);
  CHECK(s["metrics"]["records_processed"] == 148);
}

TEST_CASE("a zombie's commits fail: none is written, and its heartbeat finds it removed first") {
  const auto trace = testing::run_trace("scenarios/workload/zombie-commit.json", "classic-eager");
  // A is frozen from 10 s to 60 s; the coordinator expires it (45 s session) and B owns both
  // partitions from 55 s. On waking, A's application sends its overdue auto-commit at 60000 and
  // its heartbeat thread, which has seen no heartbeat answer for 45 s, closes the connection to
  // the coordinator at the same instant: the commit fails (NETWORK_EXCEPTION). The coordinator
  // found at 60002 is unavailable (its connection in the reconnect backoff, finding 19) and is
  // found again one retry backoff step (80-120 ms, drawn) later; then the commit's retry and the
  // long-due heartbeat go out, the retry is answered UNKNOWN_MEMBER_ID 2 ms later (nothing
  // written), and A loses orders-1 and rejoins.
  std::vector<std::pair<std::int64_t, std::string>> a_results;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "A" && c["phase"] == "completed" &&
        c["t_us"].get<std::int64_t>() >= 60000000)
      a_results.emplace_back(c["t_us"].get<std::int64_t>() / 1000, c["error"].get<std::string>());
  REQUIRE(a_results.size() >= 2);
  CHECK(a_results[0] == std::make_pair(std::int64_t{60000}, std::string("NETWORK_EXCEPTION")));
  const std::int64_t lost_at = a_results[1].first;
  CHECK(a_results[1].second == "UNKNOWN_MEMBER_ID");
  CHECK(lost_at - 60002 - 4 >= 80);  // the step + FindCoordinator's and OffsetCommit's round trips
  CHECK(lost_at - 60002 - 4 < 120);
  CHECK(testing::responses(trace, "A", "Heartbeat", "UNKNOWN_MEMBER_ID").size() == 1);
  CHECK(testing::first_time(trace, "consumer.generation_reset", "consumer", "A") ==
        static_cast<double>(lost_at));
  CHECK(testing::callback_starts(trace, "A", "onPartitionsLost") ==
        std::vector<double>{static_cast<double>(lost_at)});
  // The only OffsetCommit records between A's wake-up and its rejoin are B's.
  std::vector<std::int64_t> b_sent;
  for (const auto& c : events(trace, "commit"))
    if (c["consumer"] == "B" && c["phase"] == "sent" && c["offsets"].contains("orders-0"))
      b_sent.push_back(c["offsets"]["orders-0"].get<std::int64_t>());
  for (const auto& r : events(trace, "record")) {
    if (r["record"] != "OffsetCommit" || r["partition_index"] != 0) continue;
    const auto t = r["t_us"].get<std::int64_t>();
    if (t < 55000000 || t > 61026000) continue;
    CHECK(std::find(b_sent.begin(), b_sent.end(), r["committed_offset"].get<std::int64_t>()) !=
          b_sent.end());
  }
}

TEST_CASE("at-least-once: lost == 0 in every scenario with Kafka's default commits") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::recursive_directory_iterator(std::string(RSIM_SOURCE_DIR) + "/scenarios"))
    // scenarios/assign/ holds `rebalance-sim assign` cases, not scenarios.
    if (entry.path().extension() == ".json" && entry.path().filename() != "schema.json" &&
        entry.path().parent_path().filename() != "assign")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 9);
  for (const auto& f : files) {
    const auto spec = rsim::load_scenario_file(f.string());
    for (const auto& variant : spec.protocols) {
      if (!rsim::variant_supported(variant)) continue;
      CAPTURE(f.string());
      CAPTURE(variant);
      // The summary as the run's sink at the standard level (the same summary bytes as a full
      // trace read back, which the summary tests check): no trace is kept or parsed here.
      reports::SummarySink summary{reports::SummaryInputs{}};
      rsim::run_scenario(spec, variant, spec.seed, {&summary}, rsim::trace::Detail::Standard);
      const auto s = summary.finish();
      CHECK(s["metrics"]["lost"] == 0);
    }
  }
}
