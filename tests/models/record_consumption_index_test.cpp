// RecordConsumption's fetchable-data index: a poll pass looks only at partitions that may have
// records (not at every assigned one), and poll() / next_fetchable() give exactly what the plain
// scan over every assigned partition gives (checked against that scan, written out here).
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/client/record_consumption.hpp"
#include "models/workload/workload.hpp"
#include "trace_helpers.hpp"

namespace {

rsim::TopicSpec topic(const std::string& name, std::int32_t partitions,
                      std::optional<sim::Distribution> gap) {
  rsim::TopicSpec t;
  t.name = name;
  t.partitions = partitions;
  t.produce_gap = std::move(gap);
  return t;
}

sim::Distribution uniform_ms(double lo, double hi) {
  sim::Distribution d;
  d.kind = sim::Distribution::Kind::Uniform;
  d.min = lo;
  d.max = hi;
  return d;
}

/// Every partition FETCHING from offset 0.
void fetch_from_zero(rsim::RecordConsumption& c, const rsim::TopicPartitions& tps) {
  c.assign(tps);
  c.lookup_sent(c.awaiting_committed());
  std::vector<rsim::PartitionOffset> offsets;
  for (const auto& tp : tps) offsets.push_back({.partition = tp, .offset = 0, .leader_epoch = -1});
  c.on_committed(offsets);
}

/// The scan the index replaces: every assigned partition in order, from the next in line.
struct Reference {
  rsim::Workload& workload;
  std::int64_t max_poll_records;
  std::function<bool(const rsim::TopicPartition&)> reachable;
  std::function<sim::SimTime(const rsim::TopicPartition&)> delay;
  std::map<rsim::TopicPartition, std::int64_t> positions;
  std::optional<rsim::TopicPartition> next_in_line;

  std::vector<rsim::FetchedRange> poll() {
    std::vector<rsim::FetchedRange> out;
    auto start = next_in_line ? positions.lower_bound(*next_in_line) : positions.begin();
    if (start == positions.end()) start = positions.begin();
    std::int64_t room = max_poll_records;
    auto it = start;
    std::optional<rsim::TopicPartition> next;
    do {
      auto& [tp, pos] = *it;
      if (reachable(tp)) {
        const std::int64_t available = workload.log_end_offset(tp) - pos;
        if (available > 0 && room > 0) {
          const std::int64_t n = std::min(room, available);
          out.push_back({tp, pos, pos + n - 1});
          pos += n;
          room -= n;
          if (n < available) next = tp;
        }
      }
      if (++it == positions.end()) it = positions.begin();
      if (room == 0 && !next) next = it->first;
    } while (it != start && room > 0);
    if (out.empty()) return out;
    next_in_line = next ? next : std::optional<rsim::TopicPartition>(it->first);
    return out;
  }
  sim::SimTime next_fetchable(sim::SimTime now) {
    sim::SimTime best = sim::kNever;
    for (const auto& [tp, pos] : positions) {
      if (!reachable(tp)) continue;
      if (workload.log_end_offset(tp) > pos) return now;
      const sim::SimTime next = workload.next_append(tp);
      if (next == sim::kNever) continue;
      best = std::min(best, next + delay(tp));
    }
    return best;
  }
};

/// One consumer ("c" of group "g", default options) fetching from a workload of `topics` (seed
/// 1) on a kernel of its own.
struct Consuming {
  sim::Kernel kernel;
  testing::RecordedTracer tracer{kernel};
  rsim::Workload workload;
  rsim::RecordConsumption c;
  explicit Consuming(const std::vector<rsim::TopicSpec>& topics)
      : workload(kernel, tracer, topics, 1),
        c(kernel, tracer, workload, nullptr,
          rsim::RecordConsumption::Options{.consumer = "c", .group = "g"}, sim::Rng(1, "t")) {}
};

bool same(const std::vector<rsim::FetchedRange>& a, const std::vector<rsim::FetchedRange>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].partition != b[i].partition || a[i].first != b[i].first || a[i].last != b[i].last)
      return false;
  return true;
}

}  // namespace

TEST_CASE("record consumption: a poll pass visits only the partitions with records") {
  // 2 busy partitions (10 records/s) among 100 assigned; the other 98 never get a record.
  Consuming f(
      {topic("busy", 2, sim::Distribution::constant(100)), topic("idle", 98, std::nullopt)});
  auto& kernel = f.kernel;
  auto& c = f.c;
  rsim::TopicPartitions all;
  for (std::int32_t p = 0; p < 2; ++p) all.push_back({"busy", p});
  for (std::int32_t p = 0; p < 98; ++p) all.push_back({"idle", p});
  fetch_from_zero(c, all);
  CHECK(c.has_all_fetch_positions());

  // The first pass after an assignment looks at everything once.
  kernel.run(sim::ms(1000));
  auto batch = c.poll();
  REQUIRE(batch);
  CHECK(batch->records == 20);
  CHECK(c.partitions_visited() == 100);

  // From then on only the partitions whose log grew: 2 per pass, not 100.
  for (int second = 2; second <= 5; ++second) {
    kernel.run(sim::ms(1000 * second));
    const std::uint64_t before = c.partitions_visited();
    batch = c.poll();
    REQUIRE(batch);
    CHECK(batch->records == 20);
    CHECK(batch->ranges.size() == 2);
    CHECK(c.partitions_visited() - before == 2);
    // Nothing left: the next record is 100 ms away, found without a scan.
    const std::uint64_t mid = c.partitions_visited();
    CHECK(c.next_fetchable() == sim::ms(1000 * second + 100));
    CHECK(c.partitions_visited() - mid <= 2);
    CHECK_FALSE(c.poll());
  }
}

TEST_CASE("record consumption: the index returns what a scan of every partition returns") {
  // With a reach_epoch (the cut's state: equal epochs, equal answers) the quiet state is kept
  // between passes; without one every pass asks each partition.
  for (const bool with_epoch : {false, true})
    for (const std::uint64_t seed : {1, 2, 3}) {
      CAPTURE(with_epoch);
      sim::Kernel kernel;
      testing::RecordedTracer tracer(kernel);
      const std::vector<rsim::TopicSpec> topics = {topic("a", 5, sim::Distribution::constant(37)),
                                                   topic("b", 4, uniform_ms(5, 400)),
                                                   topic("c", 3, std::nullopt)};
      // Two workloads of the same spec and seed produce the same records whoever asks.
      rsim::Workload w1(kernel, tracer, topics, seed), w2(kernel, tracer, topics, seed);
      bool cut = false;  // partition b-1's leader unreachable
      const auto reachable = [&cut](const rsim::TopicPartition& tp) {
        return !(cut && tp.topic == "b" && tp.partition == 1);
      };
      const auto delay = [](const rsim::TopicPartition& tp) { return sim::ms(tp.partition % 3); };
      rsim::RecordConsumption c(
          kernel, tracer, w1, nullptr,
          rsim::RecordConsumption::Options{
              .consumer = "c",
              .group = "g",
              .max_poll_records = 7,
              .leader_reachable =
                  [&](const rsim::TopicPartition& tp, rsim::RecordConsumption::Route& route) {
                    route.delay = delay(tp);
                    return reachable(tp);
                  },
              .reach_epoch = [&]() -> std::uint64_t {
                if (!with_epoch) return 0;
                return cut ? 2 : 1;
              }},
          sim::Rng(seed, "t"));
      Reference ref{w2, 7, reachable, delay, {}, {}};
      rsim::TopicPartitions all;
      for (const auto& t : topics)
        for (std::int32_t p = 0; p < t.partitions; ++p) all.push_back({t.name, p});
      fetch_from_zero(c, all);
      for (const auto& tp : all) ref.positions[tp] = 0;

      sim::Rng rng(seed, "steps");
      for (int step = 0; step < 3000; ++step) {
        const std::uint64_t r = rng.next() % 10;
        if (r < 4) {
          kernel.run(kernel.now() + sim::ms(static_cast<std::int64_t>(rng.next() % 60)));
        } else if (r < 8) {
          const auto got = c.poll();
          const auto want = ref.poll();
          REQUIRE(same(got ? got->ranges : std::vector<rsim::FetchedRange>{}, want));
        } else if (r < 9) {
          const sim::SimTime want = ref.next_fetchable(kernel.now());
          if (rng.next() % 2 == 0) REQUIRE(c.records_waiting() == (want <= kernel.now()));
          REQUIRE(c.next_fetchable() == want);
          REQUIRE(c.any_fetchable());
        } else {
          cut = !cut;
        }
      }
      // A production change (Workload::layout()) is seen too.
      w1.set_production("c", sim::Distribution::constant(10), 100);
      w2.set_production("c", sim::Distribution::constant(10), 100);
      kernel.run(kernel.now() + sim::ms(50));
      REQUIRE(c.next_fetchable() == ref.next_fetchable(kernel.now()));
      const auto got = c.poll();
      REQUIRE(same(got ? got->ranges : std::vector<rsim::FetchedRange>{}, ref.poll()));
    }
}

TEST_CASE("record consumption: a partition's route is kept until the client says it is stale") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  rsim::Workload workload(kernel, tracer, {topic("t", 3, sim::Distribution::constant(100))}, 1);
  // The client's side: routes derived from `version`, with a delay that says which version.
  std::uint64_t version = 1;
  int fills = 0;
  const auto reachable = [&](const rsim::TopicPartition&, rsim::RecordConsumption::Route& route) {
    if (route.version != version) {
      route.version = version;
      route.delay = sim::ms(static_cast<std::int64_t>(version));
      ++fills;
    }
    return true;
  };
  rsim::RecordConsumption c(kernel, tracer, workload, nullptr,
                            rsim::RecordConsumption::Options{
                                .consumer = "c", .group = "g", .leader_reachable = reachable},
                            sim::Rng(1, "t"));
  const rsim::TopicPartitions all = {{"t", 0}, {"t", 1}, {"t", 2}};
  fetch_from_zero(c, all);
  kernel.run(sim::ms(150));
  REQUIRE(c.poll());
  CHECK(fills == 3);  // each partition's route once
  CHECK(c.next_fetchable() == sim::ms(200 + 1));
  CHECK_FALSE(c.records_waiting());
  CHECK(fills == 3);  // kept while the version holds, index rebuilds included
  c.mark_pending_revocation({});
  CHECK(c.next_fetchable() == sim::ms(200 + 1));
  CHECK(fills == 3);

  // The client's leaders or links changed: every route is filled again, once.
  version = 2;
  CHECK(c.next_fetchable() == sim::ms(200 + 2));
  CHECK(fills == 3 + 3);
  CHECK(c.next_fetchable() == sim::ms(200 + 2));
  CHECK(fills == 3 + 3);

  // A partition revoked and assigned again starts with no route.
  c.revoke({{"t", 1}});
  fetch_from_zero(c, {{"t", 1}});
  CHECK(c.records_waiting());  // t-1 is back at offset 0
  CHECK(fills == 3 + 3 + 1);
  kernel.run(sim::ms(200));
  CHECK(c.records_waiting());
  REQUIRE(c.poll());
  CHECK(fills == 3 + 3 + 1);
}

TEST_CASE(
    "record consumption: the brokers a pass fetches from, in the order of their first partition") {
  for (const bool with_epoch : {false, true}) {
    CAPTURE(with_epoch);
    sim::Kernel kernel;
    testing::RecordedTracer tracer(kernel);
    rsim::Workload workload(kernel, tracer, {topic("t", 6, sim::Distribution::constant(100))}, 1);
    // Partition p's leader is broker (p + 2) % 3; partition 0's is unreachable while `cut`.
    bool cut = false;
    int asked = 0;
    const auto reachable = [&](const rsim::TopicPartition& tp,
                               rsim::RecordConsumption::Route& route) {
      ++asked;
      route.broker = static_cast<std::size_t>((tp.partition + 2) % 3);
      return !(cut && tp.partition == 0);
    };
    rsim::RecordConsumption c(
        kernel, tracer, workload, nullptr,
        rsim::RecordConsumption::Options{
            .consumer = "c",
            .group = "g",
            .leader_reachable = reachable,
            .reach_epoch = [&]() -> std::uint64_t { return with_epoch ? (cut ? 2 : 1) : 0; }},
        sim::Rng(1, "t"));
    const auto brokers = [&c] {
      std::vector<std::size_t> out;
      c.for_each_fetch_broker_while([&](std::size_t b) {
        out.push_back(b);
        return true;
      });
      return out;
    };
    fetch_from_zero(c, {{"t", 0}, {"t", 1}, {"t", 2}, {"t", 3}});
    CHECK(brokers() == std::vector<std::size_t>{2, 0, 1});
    // f returning false ends the walk.
    std::vector<std::size_t> first;
    c.for_each_fetch_broker_while([&](std::size_t b) {
      first.push_back(b);
      return false;
    });
    CHECK(first == std::vector<std::size_t>{2});
    cut = true;
    CHECK(brokers() == std::vector<std::size_t>{0, 1, 2});
    // The same epoch asks no partition again; without one every walk does.
    const int before = asked;
    CHECK(brokers() == std::vector<std::size_t>{0, 1, 2});
    CHECK((asked == before) == with_epoch);
    // A partition no longer fetchable (pending revocation) is seen whatever the epoch.
    c.mark_pending_revocation({{"t", 1}});
    CHECK(brokers() == std::vector<std::size_t>{1, 2});
    cut = false;
    CHECK(brokers() == std::vector<std::size_t>{2, 1});
  }
}

TEST_CASE("record consumption: all_consumed() read through the index is the map's walk") {
  // An auto-commit's offsets come from the index's list of assigned partitions while it is valid
  // (every consumer, every auto.commit.interval.ms), else from the map. Both must give every
  // FETCHING partition in partition order with its position and epoch, and nothing else.
  // "a": 3 partitions at 10 records/s; "b": 2 partitions without production.
  Consuming f({topic("a", 3, sim::Distribution::constant(100)), topic("b", 2, std::nullopt)});
  auto& kernel = f.kernel;
  auto& c = f.c;
  fetch_from_zero(c, {{"a", 0}, {"a", 1}, {"a", 2}, {"b", 0}, {"b", 1}});
  c.assign({{"a", 3}});  // no such partition in the workload, and no position: INITIALIZING
  using Offsets = std::vector<std::tuple<std::string, std::int32_t, std::int64_t, std::int32_t>>;
  const auto consumed = [&c] {
    Offsets out;
    for (const auto& o : c.all_consumed())
      out.emplace_back(o.partition.topic, o.partition.partition, o.offset, o.leader_epoch);
    return out;
  };
  const std::int32_t data = rsim::kDataLeaderEpoch;
  // Before any poll the index is not built: the map's walk. Positions from OffsetFetch (0, no
  // epoch); a-3 has none.
  CHECK(
      consumed() ==
      Offsets{{"a", 0, 0, -1}, {"a", 1, 0, -1}, {"a", 2, 0, -1}, {"b", 0, 0, -1}, {"b", 1, 0, -1}});
  // At 1 s each of a-0..a-2 has 10 records; poll() returns them (and builds the index): the
  // positions move to 10 with the data's epoch.
  kernel.run(sim::ms(1000));
  auto batch = c.poll();
  REQUIRE(batch);
  CHECK(batch->records == 30);
  CHECK(consumed() == Offsets{{"a", 0, 10, data},
                              {"a", 1, 10, data},
                              {"a", 2, 10, data},
                              {"b", 0, 0, -1},
                              {"b", 1, 0, -1}});
  // A revocation makes the index stale: the map's walk again, without a-1.
  c.revoke({{"a", 1}});
  CHECK(consumed() ==
        Offsets{{"a", 0, 10, data}, {"a", 2, 10, data}, {"b", 0, 0, -1}, {"b", 1, 0, -1}});
  // The next poll() rebuilds it: 10 more records each of a-0 and a-2 by 2 s.
  kernel.run(sim::ms(2000));
  batch = c.poll();
  REQUIRE(batch);
  CHECK(batch->records == 20);
  CHECK(consumed() ==
        Offsets{{"a", 0, 20, data}, {"a", 2, 20, data}, {"b", 0, 0, -1}, {"b", 1, 0, -1}});
}
