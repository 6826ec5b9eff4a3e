// Memory bounded by the state of the world, not by the length of the run: the __consumer_offsets
// model keeps one value per committed key however many commits there are (as Kafka's log cleaner
// would), and trace.jsonl leaves the process through a buffer of fixed size.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/trace/group_records_json.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "trace_helpers.hpp"

namespace {

rsim::records::GroupRecord offset_commit(const std::string& group, std::int32_t partition,
                                         std::int64_t offset) {
  return rsim::records::OffsetCommit{
      .group = group, .topic = "t", .partition_index = partition, .committed_offset = offset};
}
const rsim::records::OffsetCommit& commit_of(const rsim::records::GroupRecord& r) {
  return std::get<rsim::records::OffsetCommit>(r);
}

// 1,000 writes of offsets for the same 10 partitions of group "g", 5 ms apart, each made by
// `write(log, round)` (round r commits offsets 10r..10r+9): the log retains about the live keys
// throughout, a new leader reads the latest 10, and the log's length is still all 10,000.
void check_ten_live_keys(const std::function<void(rsim::OffsetsLog&, sim::Kernel&, int)>& write,
                         testing::RecordedTracer& tracer, sim::Kernel& kernel) {
  rsim::OffsetsLog log(kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(2), 50);
  const std::int32_t p = rsim::coordinator_partition("g", 50);
  std::size_t most_retained = 0;
  for (int round = 0; round < 1000; ++round) {
    kernel.schedule_closure_after(sim::ms(5), [&, round] {
      write(log, kernel, round);
      most_retained = std::max(most_retained, log.retained_records());
    });
    kernel.run(kernel.now() + sim::ms(5));
  }
  kernel.run(kernel.now() + sim::ms(100));
  // At most the ten live keys plus one write in flight and the superseded ones awaiting the
  // next clean-up (a clean-up runs once half the held records are superseded).
  CHECK(most_retained <= 10 + 10 + 64);
  const auto records = log.committed_records(p, kernel.now());
  REQUIRE(records.size() == 10);
  for (std::int32_t i = 0; i < 10; ++i) {
    CHECK(commit_of(records[static_cast<std::size_t>(i)]).partition_index == i);
    CHECK(commit_of(records[static_cast<std::size_t>(i)]).committed_offset == 9990 + i);
  }
  // The log a new leader reads is still 10,000 records long (its load time).
  CHECK(log.committed_count(p, kernel.now()) == 10'000);
}

}  // namespace

TEST_CASE(
    "the offsets log keeps the latest committed value per key: 10,000 commits of 10 partitions") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  check_ten_live_keys(
      [](rsim::OffsetsLog& log, sim::Kernel&, int round) {
        std::vector<rsim::records::GroupRecord> write;
        for (std::int32_t i = 0; i < 10; ++i)
          write.push_back(offset_commit("g", i, round * 10 + i));
        log.append(std::move(write), nullptr);
      },
      tracer, kernel);
  // The trace has all 10,000 records (dump-log's source).
  std::size_t traced = 0;
  for (const auto& l : tracer.lines())
    traced += l.find("\"type\":\"record\"") != std::string::npos ? 1 : 0;
  CHECK(traced == 10'000);
}

TEST_CASE(
    "the offsets log keeps the latest committed value per key: 10,000 typed commits (the "
    "coordinators' path)") {
  struct Ignore final : rsim::OffsetsLog::CommitListener {
    void on_offsets_committed(const std::string&, std::span<const rsim::CommittedOffset>,
                              sim::NodeId, std::int32_t) override {}
  } ignore;
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  check_ten_live_keys(
      [&ignore](rsim::OffsetsLog& log, sim::Kernel& k, int round) {
        std::vector<rsim::CommittedOffset> write;
        for (std::int32_t i = 0; i < 10; ++i) write.push_back({{"t", i}, round * 10 + i, -1});
        log.append_offset_commits("g", write, sim::to_ms(k.now()), ignore, 0, round);
      },
      tracer, kernel);
}

TEST_CASE("a record superseded by an uncommitted write stays until that write commits") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  rsim::OffsetsLog log(kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(10), 50);
  const std::int32_t p = rsim::coordinator_partition("g", 50);
  std::vector<rsim::records::GroupRecord> records;
  kernel.schedule_closure_after(
      sim::ms(1), [&] { log.append({offset_commit("g", 0, 5)}, nullptr); });  // commits at 11 ms
  kernel.schedule_closure_after(
      sim::ms(20), [&] { log.append({offset_commit("g", 0, 7)}, nullptr); });  // at 30 ms
  kernel.schedule_closure_after(sim::ms(25), [&] {
    // A new leader at 25 ms truncates the uncommitted write: the old value must still be there.
    log.truncate_uncommitted(p, kernel.now());
    records = log.committed_records(p, kernel.now());
  });
  kernel.run(sim::ms(40));
  REQUIRE(records.size() == 1);
  CHECK(commit_of(records[0]).committed_offset == 5);
}

namespace {

using ojson = nlohmann::ordered_json;

ojson member_record(const char* type, const std::string& member, bool tombstone) {
  return {{"record", type}, {"tombstone", tombstone}, {"group", "g"}, {"member_id", member}};
}

}  // namespace

TEST_CASE(
    "member churn: the log keeps the live members' latest records, and its replay is the full "
    "log's") {
  // 300 rounds of a KIP-848 group of 10 members: each round one member leaves (its current
  // assignment, target and metadata tombstones, in the coordinator's order) and a new one joins,
  // the group epoch bumps, and every member gets a new target and current assignment (its
  // epoch moves), with an offset commit of 10 partitions. Held records stay about the live keys
  // (2 group records, 3 per member, 10 offsets) plus the write in flight, not 300 rounds' worth;
  // the compacted log replays to exactly the groups the whole log replays to.
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  rsim::OffsetsLog log(kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(2), 50);
  const std::int32_t p = rsim::coordinator_partition("g", 50);
  std::vector<rsim::records::GroupRecord> whole;  // every record, in log order
  std::vector<std::string> members;
  int next_member = 0;
  std::size_t most_retained = 0, appended = 0;
  const auto join = [&](std::vector<ojson>& write) {
    const std::string id = fmt::format("m{}", next_member++);
    members.push_back(id);
    ojson r = member_record("ConsumerGroupMemberMetadata", id, false);
    r["consumer"] = fmt::format("c-{}", id);
    r["client_id"] = fmt::format("consumer-g-{}", id);
    r["subscribed_topic_names"] = {"t"};
    r["rebalance_timeout_ms"] = 300000;
    write.push_back(std::move(r));
  };
  for (int round = 1; round <= 300; ++round) {
    kernel.schedule_closure_after(sim::ms(5), [&, round] {
      std::vector<ojson> write;
      if (members.size() == 10) {
        const std::string gone = members.front();
        members.erase(members.begin());
        write.push_back(member_record("ConsumerGroupCurrentMemberAssignment", gone, true));
        write.push_back(member_record("ConsumerGroupTargetAssignmentMember", gone, true));
        write.push_back(member_record("ConsumerGroupMemberMetadata", gone, true));
      }
      while (members.size() < 10) join(write);
      write.push_back({{"record", "ConsumerGroupMetadata"},
                       {"tombstone", false},
                       {"group", "g"},
                       {"epoch", round + 1}});
      for (std::size_t i = 0; i < members.size(); ++i) {
        ojson t = member_record("ConsumerGroupTargetAssignmentMember", members[i], false);
        t["partitions"] = {"t-" + std::to_string(i)};
        write.push_back(std::move(t));
      }
      write.push_back({{"record", "ConsumerGroupTargetAssignmentMetadata"},
                       {"tombstone", false},
                       {"group", "g"},
                       {"assignment_epoch", round + 1},
                       {"assignment_timestamp", round}});
      for (std::size_t i = 0; i < members.size(); ++i) {
        ojson c = member_record("ConsumerGroupCurrentMemberAssignment", members[i], false);
        c["member_epoch"] = round + 1;
        c["previous_member_epoch"] = round;
        c["state"] = 0;
        c["assigned"] = {"t-" + std::to_string(i)};
        c["pending_revocation"] = ojson::array();
        write.push_back(std::move(c));
      }
      std::vector<rsim::records::GroupRecord> typed;
      for (const auto& r : write) typed.push_back(rsim::trace::record_from_json(r));
      for (std::int32_t i = 0; i < 10; ++i) typed.push_back(offset_commit("g", i, round * 10 + i));
      whole.insert(whole.end(), typed.begin(), typed.end());
      appended += typed.size();
      log.append(std::move(typed), nullptr);
      most_retained = std::max(most_retained, log.retained_records());
    });
    kernel.run(kernel.now() + sim::ms(5));
  }
  kernel.run(kernel.now() + sim::ms(100));
  // Live keys: 2 group records, 3 per member (30), 10 offsets; plus one write (<= 36) in flight.
  CHECK(most_retained <= 42 + 36);
  const auto compacted = log.committed_records(p, kernel.now());
  CHECK(compacted.size() == 42);
  CHECK(log.committed_count(p, kernel.now()) == static_cast<std::int64_t>(appended));
  rsim::ConsumerGroups from_whole, from_compacted;
  for (const auto& r : whole) rsim::replay_record(from_whole, r);
  for (const auto& r : compacted) rsim::replay_record(from_compacted, r);
  REQUIRE(from_whole.count("g") == 1);
  CHECK(from_whole.at("g").members.size() == 10);
  CHECK(from_whole.at("g").group_epoch == 301);
  CHECK(from_whole.at("g").offsets.size() == 10);
  // The members' TimelineHashMap is rebuilt by the replay: from the compacted log it holds the
  // same members, but its capacity and the order of its puts are the log's history (Kafka's
  // coordinator loading a compacted log walks its members in another order too), so the rest of
  // the state is compared with the whole log's table.
  auto& compacted_group = from_compacted.at("g");
  const auto& whole_table = from_whole.at("g").member_table;
  auto members_of = [](const rsim::assignors::server_java::TimelineTable& t) {
    auto ids = t.order(t.capacity(), t.puts());
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(members_of(compacted_group.member_table) == members_of(whole_table));
  CHECK(members_of(whole_table).size() == 10);
  compacted_group.member_table = whole_table;
  CHECK(from_compacted == from_whole);
}

TEST_CASE("a long run streams its trace through a bounded buffer and retains no trace") {
  // two-consumers for 30 virtual minutes: a trace of megabytes, a buffer of 64 KiB.
  auto spec = rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) +
                                       "/scenarios/examples/two-consumers.json");
  spec.duration = sim::ms(30 * 60 * 1000);
  const auto dir = std::filesystem::temp_directory_path() / "rsim-bounded-memory-test";
  std::filesystem::create_directories(dir);
  rsim::trace::JsonlFileSink file((dir / "trace.jsonl").string());
  rsim::run_scenario(spec, "classic-eager", spec.seed, {&file});
  file.close();
  CHECK(file.file().bytes_written() > 16 * sim::BufferedFile::kDefaultCapacity);
  CHECK(file.file().peak_buffered() < sim::BufferedFile::kDefaultCapacity + 16 * 1024);
  std::filesystem::remove_all(dir);
}
