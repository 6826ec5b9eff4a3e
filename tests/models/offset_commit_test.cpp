// The classic coordinator's OffsetCommit validation and OffsetFetch, driven directly: commits
// of a stale generation or an unknown member are refused and write nothing; accepted commits
// are what OffsetFetch returns once their records commit.
#include <doctest/doctest.h>

#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "sim/rng.hpp"
#include "trace_helpers.hpp"

namespace {

struct Harness {
  sim::Kernel kernel;
  testing::RecordedTracer tracer{kernel};
  rsim::OffsetsLog log{kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(2), 50};
  std::vector<rsim::Message> replies;
  std::unique_ptr<rsim::GroupCoordinator> coordinator;
  std::int32_t next_id = 0;

  Harness() {
    rsim::BrokerConfig config;
    config.group_initial_rebalance_delay_ms = 0;
    coordinator = std::make_unique<rsim::GroupCoordinator>(
        kernel, tracer, sim::Rng(1, "coordinator"), config, log,
        [this](sim::NodeId, rsim::Envelope e) { replies.push_back(std::move(e.message)); },
        [](sim::NodeId) { return std::string("A"); });
  }
  /// Sends one request and runs the kernel until everything due has happened; the last reply.
  rsim::Message request(rsim::Message m) {
    const std::size_t before = replies.size();
    coordinator->on_request(0, rsim::Envelope{next_id++, std::move(m)});
    kernel.run(kernel.now() + sim::ms(10));
    REQUIRE(replies.size() > before);
    return replies.back();
  }
  rsim::ErrorCode commit(std::int32_t generation, const std::string& member, std::int64_t offset) {
    rsim::OffsetCommitRequest r{"g", generation, member, std::nullopt, {{{"t", 0}, offset}}};
    return std::get<rsim::OffsetCommitResponse>(request(r)).error;
  }
  std::int64_t fetch() {
    rsim::OffsetFetchRequest r;
    r.group_id = "g";
    r.partitions = {{"t", 0}};
    const auto resp = std::get<rsim::OffsetFetchResponse>(request(r));
    REQUIRE(resp.partitions.size() == 1);
    return resp.partitions[0].offset;
  }
  std::size_t commit_records() const {
    std::size_t n = 0;
    for (const auto& e : testing::parse_trace(tracer.lines()))
      if (e["type"] == "record" && e["record"] == "OffsetCommit") ++n;
    return n;
  }
};

rsim::JoinGroupRequest join(const std::string& member_id) {
  rsim::JoinGroupRequest r;
  r.group_id = "g";
  r.session_timeout_ms = 45000;
  r.rebalance_timeout_ms = 300000;
  r.member_id = member_id;
  r.client_id = "c";
  r.protocols = {{"range", rsim::Subscription{{"t"}, {}, -1, std::nullopt}}};
  return r;
}

}  // namespace

TEST_CASE(
    "OffsetCommit: stale generation -> ILLEGAL_GENERATION, unknown member -> UNKNOWN_MEMBER_ID") {
  Harness h;
  CHECK(h.fetch() == -1);  // no group, no offset
  const auto first = std::get<rsim::JoinGroupResponse>(h.request(join("")));
  REQUIRE(first.error == rsim::ErrorCode::MEMBER_ID_REQUIRED);
  const std::string id = first.member_id;
  const auto joined = std::get<rsim::JoinGroupResponse>(h.request(join(id)));
  REQUIRE(joined.error == rsim::ErrorCode::NONE);
  REQUIRE(joined.generation_id == 1);
  // Between the join and the leader's SyncGroup the group is CompletingRebalance.
  CHECK(h.commit(1, id, 5) == rsim::ErrorCode::REBALANCE_IN_PROGRESS);
  rsim::SyncGroupRequest sync;
  sync.group_id = "g";
  sync.generation_id = 1;
  sync.member_id = id;
  sync.protocol_name = "range";
  sync.assignments = {{id, {{"t", 0}}}};
  REQUIRE(std::get<rsim::SyncGroupResponse>(h.request(sync)).error == rsim::ErrorCode::NONE);
  const std::size_t records_before = h.commit_records();
  CHECK(h.commit(0, id, 7) == rsim::ErrorCode::ILLEGAL_GENERATION);  // a zombie of generation 0
  CHECK(h.commit(1, "c-not-a-member", 7) == rsim::ErrorCode::UNKNOWN_MEMBER_ID);
  CHECK(h.commit(-1, "", 7) ==
        rsim::ErrorCode::UNKNOWN_MEMBER_ID);    // no member info, group not Empty
  CHECK(h.commit_records() == records_before);  // refused commits write nothing
  CHECK(h.fetch() == -1);
  CHECK(h.commit(1, id, 42) == rsim::ErrorCode::NONE);
  CHECK(h.commit_records() == records_before + 1);
  CHECK(h.fetch() == 42);
}

TEST_CASE("OffsetFetch sees an offset only once its record has committed") {
  Harness h;
  // A commit without member info to a group that does not exist creates a simple group.
  rsim::OffsetCommitRequest r{"g", -1, "", std::nullopt, {{{"t", 0}, 9}}};
  h.coordinator->on_request(0, rsim::Envelope{1, r});
  CHECK(h.replies.empty());  // the response waits for the 2 ms write
  rsim::OffsetFetchRequest f;
  f.group_id = "g";
  f.partitions = {{"t", 0}};
  h.coordinator->on_request(0, rsim::Envelope{2, f});
  REQUIRE(h.replies.size() == 1);
  CHECK(std::get<rsim::OffsetFetchResponse>(h.replies[0]).partitions[0].offset == -1);
  h.kernel.run(sim::ms(5));
  REQUIRE(h.replies.size() == 2);
  CHECK(std::get<rsim::OffsetCommitResponse>(h.replies[1]).error == rsim::ErrorCode::NONE);
  CHECK(h.fetch() == 9);
}

TEST_CASE(
    "a commit's offsets land whatever their order: consecutive, reversed, gapped, new or not") {
  Harness h;
  // Simple-group commits (no member) of partitions of two topics: in order, backwards, with
  // gaps, repeated within one request, existing and new. The group's offsets are the last
  // value of each partition, as a map updated one key at a time would hold.
  std::map<rsim::TopicPartition, std::int64_t> expected;
  const std::vector<std::vector<std::pair<rsim::TopicPartition, std::int64_t>>> commits = {
      {{{"t", 0}, 1}, {{"t", 1}, 2}, {{"t", 2}, 3}, {{"t", 3}, 4}},
      {{{"t", 3}, 14}, {{"t", 2}, 13}, {{"t", 0}, 11}},
      {{{"a", 5}, 50}, {{"t", 1}, 12}, {{"t", 9}, 90}, {{"a", 5}, 51}, {{"t", 4}, 40}},
      {{{"t", 2}, 23}, {{"t", 3}, 24}, {{"t", 4}, 25}, {{"t", 5}, 26}, {{"u", 0}, 7}},
  };
  for (const auto& offsets : commits) {
    rsim::OffsetCommitRequest r{"g", -1, "", std::nullopt, {}};
    for (const auto& [tp, offset] : offsets) {
      r.offsets.push_back({tp, offset});
      expected[tp] = offset;
    }
    CHECK(std::get<rsim::OffsetCommitResponse>(h.request(r)).error == rsim::ErrorCode::NONE);
  }
  rsim::OffsetFetchRequest f;
  f.group_id = "g";
  for (const auto& [tp, offset] : expected) f.partitions.push_back(tp);
  f.partitions.push_back({"t", 7});  // never committed
  const auto resp = std::get<rsim::OffsetFetchResponse>(h.request(f));
  REQUIRE(resp.partitions.size() == expected.size() + 1);
  std::size_t i = 0;
  for (const auto& [tp, offset] : expected) {
    CHECK(resp.partitions[i].partition == tp);
    CHECK(resp.partitions[i].offset == offset);
    ++i;
  }
  CHECK(resp.partitions.back().offset == -1);
  const auto* committed = h.coordinator->committed_offsets("g");
  REQUIRE(committed != nullptr);
  CHECK(*committed == expected);
}

TEST_CASE("assign_from: each key set as operator[] would, the hint only saves the search") {
  // Random keys (runs of consecutive ones, jumps back and forth, repeats) against a reference.
  sim::Rng rng(7, "assign-from");
  std::map<rsim::TopicPartition, std::int64_t> m, reference;
  auto hint = m.begin();
  std::int32_t p = 0;
  for (std::int64_t i = 0; i < 5000; ++i) {
    const std::uint64_t r = rng.next() % 10;
    if (r == 0)
      p = static_cast<std::int32_t>(rng.next() % 200);  // a jump
    else if (r == 1)
      hint = m.begin();  // a new request
    else if (r == 2)
      hint = m.end();
    else if (r < 8)
      ++p;  // the next partition
    const rsim::TopicPartition tp{r == 9 ? "a" : "t", p};
    hint = rsim::assign_from(m, hint, tp, i);
    reference[tp] = i;
    REQUIRE(m == reference);
    CHECK(hint == std::next(m.find(tp)));
  }
}

TEST_CASE("classic coordinator: timers of pending members that never rejoin are freed, not kept") {
  Harness h;
  std::size_t most = 0;
  // 2,000 JoinGroups without a member id, 100 ms apart: each makes a pending member whose
  // timer expires a session timeout (45 s) later, retiring it from inside its own callback.
  for (int i = 0; i < 2000; ++i) {
    const auto r = std::get<rsim::JoinGroupResponse>(h.request(join("")));
    REQUIRE(r.error == rsim::ErrorCode::MEMBER_ID_REQUIRED);
    h.kernel.run(h.kernel.now() + sim::ms(90));
    most = std::max(most, h.coordinator->retired_timers());
  }
  h.kernel.run(h.kernel.now() + sim::ms(100'000));
  // Every timer is idle once it has fired: the pool is swept down as it grows, to about 2x
  // what was busy at the last sweep.
  CHECK(most <= 64);
  CHECK(h.coordinator->retired_timers() <= 64);
}
