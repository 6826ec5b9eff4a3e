// The offsets log's typed OffsetCommit records (append_offset_commits): the same `record` events,
// offsets, compaction and loaded records as the records::OffsetCommit records append() takes, the
// listener told once at commit time (at once without write latency), and truncation and clean-up
// alike.
#include <doctest/doctest.h>

#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "trace_helpers.hpp"

namespace {

using rsim::CommittedOffset;

/// The record a coordinator would append() for one committed offset.
rsim::records::GroupRecord as_json(const std::string& group, const CommittedOffset& o,
                                   std::int64_t timestamp_ms) {
  return rsim::records::OffsetCommit{.group = group,
                                     .topic = o.partition.topic,
                                     .partition_index = o.partition.partition,
                                     .committed_offset = o.offset,
                                     .leader_epoch = o.leader_epoch,
                                     .commit_timestamp = timestamp_ms};
}
const rsim::records::OffsetCommit& commit_of(const rsim::records::GroupRecord& r) {
  return std::get<rsim::records::OffsetCommit>(r);
}

struct Answer {
  sim::SimTime at;
  std::string group;
  std::vector<std::pair<std::string, std::int64_t>> offsets;  // "topic-partition", offset
  sim::NodeId node;
  std::int32_t correlation_id;
};

struct Listener final : rsim::OffsetsLog::CommitListener {
  explicit Listener(const sim::Kernel& k) : kernel(k) {}
  void on_offsets_committed(const std::string& group_id, std::span<const CommittedOffset> offsets,
                            sim::NodeId node, std::int32_t correlation_id) override {
    Answer a{kernel.now(), group_id, {}, node, correlation_id};
    for (const auto& o : offsets)
      a.offsets.emplace_back(o.partition.topic + "-" + std::to_string(o.partition.partition),
                             o.offset);
    answers.push_back(std::move(a));
    if (then) then();
  }
  const sim::Kernel& kernel;
  std::vector<Answer> answers;
  std::function<void()> then;  // run inside the callback (a listener that appends again)
};

/// One log that commits at once, and group "g"'s partition of it.
struct OneLog {
  sim::Kernel kernel;
  testing::RecordedTracer tracer{kernel};
  rsim::OffsetsLog log{kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(0), 50};
  Listener listener{kernel};
  const std::int32_t partition = rsim::coordinator_partition("g", 50);
};

/// One log written with typed records, one with the same records as JSON.
struct Pair {
  sim::Kernel kernel;
  testing::RecordedTracer typed_tracer{kernel};
  testing::RecordedTracer json_tracer{kernel};
  rsim::OffsetsLog typed;
  rsim::OffsetsLog json;
  Listener listener{kernel};
  std::vector<sim::SimTime> json_commits;  // when append()'s on_commit ran

  explicit Pair(sim::Distribution latency)
      : typed(kernel, typed_tracer, sim::Rng(1, "log"), latency, 50),
        json(kernel, json_tracer, sim::Rng(1, "log"), std::move(latency), 50) {}

  void commit(const std::string& group, std::vector<CommittedOffset> offsets,
              std::int32_t correlation_id) {
    const std::int64_t ts = sim::to_ms(kernel.now());
    typed.append_offset_commits(group, offsets, ts, listener, 7, correlation_id);
    std::vector<rsim::records::GroupRecord> records;
    for (const auto& o : offsets) records.push_back(as_json(group, o, ts));
    json.append(std::move(records), [this] { json_commits.push_back(kernel.now()); });
  }
};

}  // namespace

TEST_CASE(
    "typed OffsetCommit records: the record events, offsets and loaded records of their JSON") {
  Pair p(sim::Distribution::constant(3));
  const std::int32_t partition = rsim::coordinator_partition("g", 50);
  p.kernel.schedule_closure_after(sim::ms(1), [&] {
    p.commit("g", {{{"t", 0}, 10, 4}, {{"t", 1}, 11, -1}}, 1);
    p.commit("other-group", {{{"u", 3}, 5, 2}}, 2);
  });
  p.kernel.schedule_closure_after(sim::ms(2), [&] { p.commit("g", {{{"t", 0}, 12, 5}}, 3); });
  p.kernel.run(sim::ms(50));

  REQUIRE(p.typed_tracer.lines().size() == 4);
  CHECK(p.typed_tracer.lines() == p.json_tracer.lines());
  CHECK(p.typed_tracer.lines()[0] ==
        "{\"t_us\":1000,\"type\":\"record\",\"partition\":" + std::to_string(partition) +
            ",\"offset\":0,\"record\":\"OffsetCommit\",\"tombstone\":false,\"group\":\"g\","
            "\"topic\":\"t\","
            "\"partition_index\":0,\"committed_offset\":10,\"leader_epoch\":4,\"commit_timestamp\":"
            "1}");
  CHECK(p.typed.log_end_offset("g") == 3);
  // What a new leader loads: the same records, compacted alike (t-0's first value is gone).
  const auto loaded = p.typed.committed_records(partition, p.kernel.now());
  CHECK(loaded == p.json.committed_records(partition, p.kernel.now()));
  REQUIRE(loaded.size() == 2);
  CHECK(commit_of(loaded[0]).partition_index == 1);
  CHECK(commit_of(loaded[1]).committed_offset == 12);
  CHECK(commit_of(loaded[1]).commit_timestamp == 2);  // committed at 2 ms
  CHECK(p.typed.committed_count(partition, p.kernel.now()) == 3);
  CHECK(p.typed.retained_records() == p.json.retained_records());

  // Each write answered once, when it committed (as append()'s on_commit ran), in order.
  REQUIRE(p.listener.answers.size() == 3);
  CHECK(p.json_commits == std::vector<sim::SimTime>{sim::ms(4), sim::ms(4), sim::ms(5)});
  for (std::size_t i = 0; i < 3; ++i) CHECK(p.listener.answers[i].at == p.json_commits[i]);
  CHECK(p.listener.answers[0].group == "g");
  CHECK(p.listener.answers[0].offsets ==
        std::vector<std::pair<std::string, std::int64_t>>{{"t-0", 10}, {"t-1", 11}});
  CHECK(p.listener.answers[0].node == 7);
  CHECK(p.listener.answers[0].correlation_id == 1);
  CHECK(p.listener.answers[1].group == "other-group");
  CHECK(p.listener.answers[2].correlation_id == 3);
}

TEST_CASE("typed OffsetCommit records: without write latency the listener is told at once") {
  Pair p(sim::Distribution::constant(0));
  p.kernel.schedule_closure_after(sim::ms(1), [&] {
    p.commit("g", {{{"t", 0}, 1, -1}}, 1);
    // Answered inside the call, before it returns.
    CHECK(p.listener.answers.size() == 1);
    CHECK(p.json_commits.size() == 1);
  });
  p.kernel.run(sim::ms(10));
  CHECK(p.listener.answers.size() == 1);
  CHECK(p.typed_tracer.lines() == p.json_tracer.lines());
}

TEST_CASE("typed OffsetCommit records: a listener that commits again from its callback") {
  // The slot of the write being answered is not reused by the write its listener appends.
  Pair p(sim::Distribution::constant(2));
  int more = 3;
  p.listener.then = [&] {
    if (more-- > 0)
      p.typed.append_offset_commits("g",
                                    std::vector<CommittedOffset>{{{"t", more}, 100 + more, -1}},
                                    sim::to_ms(p.kernel.now()), p.listener, 9, 10 + more);
  };
  p.kernel.schedule_closure_after(sim::ms(1), [&] {
    p.typed.append_offset_commits("g", std::vector<CommittedOffset>{{{"t", 5}, 1, -1}}, 1,
                                  p.listener, 9, 1);
    p.typed.append_offset_commits("g", std::vector<CommittedOffset>{{{"t", 6}, 2, -1}}, 1,
                                  p.listener, 9, 2);
  });
  p.kernel.run(sim::ms(50));
  REQUIRE(p.listener.answers.size() == 5);
  std::vector<std::int32_t> ids;
  for (const auto& a : p.listener.answers) ids.push_back(a.correlation_id);
  CHECK(ids == std::vector<std::int32_t>{1, 2, 12, 11, 10});
  CHECK(p.listener.answers[2].offsets ==
        std::vector<std::pair<std::string, std::int64_t>>{{"t-2", 102}});
  CHECK(p.listener.answers[4].offsets ==
        std::vector<std::pair<std::string, std::int64_t>>{{"t-0", 100}});
}

TEST_CASE("typed OffsetCommit records: a new leader truncates the uncommitted ones") {
  Pair p(sim::Distribution::constant(10));
  const std::int32_t partition = rsim::coordinator_partition("g", 50);
  std::vector<rsim::records::GroupRecord> loaded;
  p.kernel.schedule_closure_after(sim::ms(1), [&] {
    p.commit("g", {{{"t", 0}, 5, -1}}, 1);
  });  // commits at 11 ms
  p.kernel.schedule_closure_after(sim::ms(20), [&] {
    p.commit("g", {{{"t", 0}, 7, -1}}, 2);
  });  // at 30 ms
  p.kernel.schedule_closure_after(sim::ms(25), [&] {
    p.typed.truncate_uncommitted(partition, p.kernel.now());
    p.json.truncate_uncommitted(partition, p.kernel.now());
    loaded = p.typed.committed_records(partition, p.kernel.now());
  });
  p.kernel.run(sim::ms(40));
  CHECK(p.typed_tracer.lines() == p.json_tracer.lines());
  CHECK(p.typed_tracer.lines().back().find("\"type\":\"log.truncate\"") != std::string::npos);
  REQUIRE(loaded.size() == 1);
  CHECK(commit_of(loaded[0]).committed_offset == 5);
  CHECK(p.typed.log_end_offset("g") == 1);
}

TEST_CASE("typed and JSON OffsetCommit records of one key compact together") {
  OneLog f;
  f.kernel.schedule_closure_after(sim::ms(1), [&] {
    f.log.append_offset_commits("g", std::vector<CommittedOffset>{{{"t", 0}, 1, -1}}, 1, f.listener,
                                0, 0);
    f.log.append({as_json("g", {{"t", 0}, 2, -1}, 1)}, nullptr);
    f.log.append({as_json("g", {{"t", 1}, 3, -1}, 1)}, nullptr);
    f.log.append_offset_commits("g", std::vector<CommittedOffset>{{{"t", 1}, 4, -1}}, 1, f.listener,
                                0, 0);
  });
  f.kernel.run(sim::ms(10));
  const auto loaded = f.log.committed_records(f.partition, f.kernel.now());
  REQUIRE(loaded.size() == 2);
  CHECK(commit_of(loaded[0]).committed_offset == 2);
  CHECK(commit_of(loaded[1]).committed_offset == 4);
  CHECK(f.log.committed_count(f.partition, f.kernel.now()) == 4);
}

TEST_CASE("OffsetCommit records: compaction keeps each key's latest through many renumberings") {
  // 3 partitions committed 100 times each: the log compacts in place whenever half of it is
  // superseded (64 records at least), renumbering each key's latest index, many times over. The
  // latest of every key must survive each one; a tombstone deletes its key's records, and a
  // later commit of it is kept again. Every record committed counts (300 + 1 + 1).
  OneLog f;
  f.kernel.schedule_closure_after(sim::ms(1), [&] {
    for (std::int64_t round = 0; round < 100; ++round)
      f.log.append_offset_commits(
          "g",
          std::vector<CommittedOffset>{
              {{"t", 0}, round, -1}, {{"t", 1}, 1000 + round, -1}, {{"t", 2}, 2000 + round, 5}},
          1, f.listener, 0, 0);
  });
  f.kernel.run(sim::ms(2));
  auto loaded = f.log.committed_records(f.partition, f.kernel.now());
  REQUIRE(loaded.size() == 3);
  CHECK(commit_of(loaded[0]).partition_index == 0);
  CHECK(commit_of(loaded[0]).committed_offset == 99);
  CHECK(commit_of(loaded[1]).committed_offset == 1099);
  CHECK(commit_of(loaded[2]).committed_offset == 2099);
  CHECK(commit_of(loaded[2]).leader_epoch == 5);
  CHECK(f.log.committed_count(f.partition, f.kernel.now()) == 300);
  CHECK(f.log.retained_records() == 3);

  f.kernel.schedule_closure_after(sim::ms(1), [&] {
    f.log.append({rsim::records::Tombstone{.type = rsim::records::RecordType::OffsetCommit,
                                           .group = "g",
                                           .topic = "t",
                                           .partition_index = 1}},
                 nullptr);
  });
  f.kernel.run(sim::ms(3));
  loaded = f.log.committed_records(f.partition, f.kernel.now());
  REQUIRE(loaded.size() == 2);
  CHECK(commit_of(loaded[0]).committed_offset == 99);
  CHECK(commit_of(loaded[1]).committed_offset == 2099);

  f.kernel.schedule_closure_after(sim::ms(1), [&] {
    f.log.append_offset_commits("g", std::vector<CommittedOffset>{{{"t", 1}, 5000, -1}}, 1,
                                f.listener, 0, 0);
  });
  f.kernel.run(sim::ms(4));
  loaded = f.log.committed_records(f.partition, f.kernel.now());
  REQUIRE(loaded.size() == 3);
  CHECK(commit_of(loaded[0]).committed_offset == 99);
  CHECK(commit_of(loaded[1]).committed_offset == 2099);
  CHECK(commit_of(loaded[2]).partition_index == 1);
  CHECK(commit_of(loaded[2]).committed_offset == 5000);
  CHECK(f.log.committed_count(f.partition, f.kernel.now()) == 302);
}
