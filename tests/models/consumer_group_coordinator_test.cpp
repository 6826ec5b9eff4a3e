// The consumer-group coordinator on its own: its state is always what replaying its `record`
// trace events gives (replay_record, which a coordinator failover reuses), the join/leave/
// fencing/static-member paths answer as Kafka does, and OffsetCommit is checked by epoch.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

#include <algorithm>
#include <map>

#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/trace/group_records_json.hpp"
#include "sim/assert.hpp"
#include "sim/network.hpp"

using namespace rsim;

namespace {

struct Harness {
  sim::Kernel kernel;
  testing::RecordedTracer tracer{kernel};
  sim::Network<Envelope> net{kernel, sim::Rng(1, "net"), sim::LinkSpec{}};
  ClusterMetadata cluster;
  BrokerConfig config;
  OffsetsLog log{kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(0), 50};
  std::unique_ptr<ConsumerGroupCoordinator> coordinator;
  sim::NodeId broker = 0;
  std::map<std::string, sim::NodeId> nodes;
  std::map<std::string, std::vector<Message>> answers;

  Harness() {
    cluster.partitions_per_topic["t"] = 4;
    broker = net.add_node("broker-0", nullptr, [](sim::NodeId, Envelope&&) {});
    for (const char* name : {"A", "B", "C"}) {
      nodes[name] =
          net.add_node(name, nullptr, [this, n = std::string(name)](sim::NodeId, Envelope&& e) {
            answers[n].push_back(std::move(e.message));
          });
    }
    coordinator = std::make_unique<ConsumerGroupCoordinator>(
        kernel, tracer, config, log, cluster,
        [this](sim::NodeId to, Envelope e) { net.send(broker, to, std::move(e)); },
        [this](sim::NodeId n) { return net.name(n); });
  }
  /// Sends one heartbeat from `who` and runs the simulation for 10 ms; returns the answer.
  ConsumerGroupHeartbeatResponse heartbeat(const std::string& who,
                                           ConsumerGroupHeartbeatRequest r) {
    r.group_id = std::string("g");  // not = "g": GCC 12 -Wrestrict false positive
    coordinator->on_heartbeat(nodes.at(who), 0, r);
    kernel.run(kernel.now() + sim::ms(10));
    return std::get<ConsumerGroupHeartbeatResponse>(answers[who].back());
  }
  static ConsumerGroupHeartbeatRequest join(const std::string& id,
                                            std::optional<std::string> instance = {}) {
    ConsumerGroupHeartbeatRequest r;
    r.member_id = id;
    r.member_epoch = 0;
    r.instance_id = std::move(instance);
    r.rebalance_timeout_ms = 300000;
    r.subscribed_topic_names = std::vector<std::string>{"t"};
    r.topic_partitions = std::vector<ConsumerGroupHeartbeatTopicPartitions>{};
    return r;
  }
  static ConsumerGroupHeartbeatRequest hb(const std::string& id, std::int32_t epoch,
                                          std::optional<std::vector<std::int32_t>> owned = {},
                                          std::optional<std::string> instance = {}) {
    ConsumerGroupHeartbeatRequest r;
    r.member_id = id;
    r.member_epoch = epoch;
    r.instance_id = std::move(instance);
    if (owned)
      r.topic_partitions = std::vector<ConsumerGroupHeartbeatTopicPartitions>{{"t", *owned}};
    return r;
  }
  void advance(std::int64_t ms) { kernel.run(kernel.now() + sim::ms(ms)); }
  ConsumerGroups replayed() const {
    ConsumerGroups groups;
    for (const auto& line : tracer.lines()) {
      const auto e = nlohmann::json::parse(line);
      if (e["type"] == "record") replay_record(groups, trace::record_from_json(e));
    }
    return groups;
  }
  void check_replay() const { CHECK(replayed() == coordinator->groups()); }
};

std::vector<std::int32_t> assigned(const ConsumerGroupHeartbeatResponse& r) {
  std::vector<std::int32_t> out;
  if (r.assignment)
    for (const auto& t : *r.assignment)
      out.insert(out.end(), t.partitions.begin(), t.partitions.end());
  return out;
}

}  // namespace

TEST_CASE("consumer-group coordinator: replaying the records gives the live state, step by step") {
  Harness h;
  auto a = h.heartbeat("A", Harness::join("A"));
  CHECK(a.error == ErrorCode::NONE);
  CHECK(a.member_epoch == 2);
  CHECK(a.heartbeat_interval_ms == 5000);
  CHECK(assigned(a) == std::vector<std::int32_t>{0, 1, 2, 3});
  h.check_replay();
  h.advance(2000);  // past the 1 s assignment interval: B's join computes the target at once
  auto b = h.heartbeat("B", Harness::join("B"));
  CHECK(b.member_epoch == 3);
  CHECK(assigned(b).empty());  // its partitions are still A's: UNRELEASED_PARTITIONS
  const auto& g = h.coordinator->groups().at("g");
  CHECK(g.group_epoch == 3);
  CHECK(g.assignment_epoch == 3);
  CHECK(g.members.at("B").member.state == reconciliation::MemberState::UnreleasedPartitions);
  CHECK(g.state() == "reconciling");
  h.check_replay();
  // A's regular heartbeat (no owned list) learns it must give up two partitions.
  a = h.heartbeat("A", Harness::hb("A", 2));
  CHECK(a.member_epoch == 2);
  CHECK(assigned(a).size() == 2);
  CHECK(g.members.at("A").member.state == reconciliation::MemberState::UnrevokedPartitions);
  h.check_replay();
  // B cannot have them before A's acknowledgement.
  b = h.heartbeat("B", Harness::hb("B", 3));
  CHECK(!b.assignment);
  a = h.heartbeat("A", Harness::hb("A", 2, assigned(a)));
  CHECK(a.member_epoch == 3);
  b = h.heartbeat("B", Harness::hb("B", 3));
  CHECK(assigned(b).size() == 2);
  CHECK(g.state() == "stable");
  h.check_replay();
  // Errors: an epoch ahead of the server, an unknown member, a leave.
  CHECK(h.heartbeat("B", Harness::hb("B", 7)).error == ErrorCode::FENCED_MEMBER_EPOCH);
  CHECK(h.heartbeat("C", Harness::hb("C", 3)).error == ErrorCode::UNKNOWN_MEMBER_ID);
  auto leave = h.heartbeat("B", Harness::hb("B", -1));
  CHECK(leave.error == ErrorCode::NONE);
  CHECK(leave.member_epoch == -1);
  CHECK(g.group_epoch == 4);
  CHECK(g.assignment_epoch == 3);  // no reassignment at the leave
  CHECK(g.state() == "assigning");
  h.check_replay();
  a = h.heartbeat("A", Harness::hb("A", 3));
  CHECK(a.member_epoch == 3);  // within 1 s of the last computation: throttled, no timer
  CHECK(!a.assignment);
  h.advance(1000);
  a = h.heartbeat("A", Harness::hb("A", 3));
  CHECK(a.member_epoch == 4);
  CHECK(assigned(a) ==
        std::vector<std::int32_t>{0, 1, 2, 3});  // freed at once, no UNRELEASED phase
  h.check_replay();
}

TEST_CASE("consumer-group coordinator: session timeout 45 s after the last heartbeat, then empty") {
  Harness h;
  h.heartbeat("A", Harness::join("A"));
  h.advance(44'980);
  CHECK(h.coordinator->groups().at("g").members.count("A") == 1);
  h.advance(20);
  const auto& g = h.coordinator->groups().at("g");
  CHECK(g.members.empty());
  CHECK(g.group_epoch == 3);
  CHECK(g.assignment_epoch == 3);  // emptied: up to date, timestamp 0
  CHECK(g.assignment_timestamp_ms == 0);
  CHECK(g.state() == "empty");
  h.check_replay();
}

TEST_CASE(
    "consumer-group coordinator: a member that does not revoke within its rebalance timeout is "
    "fenced") {
  Harness h;
  h.heartbeat("A", Harness::join("A"));
  h.advance(2000);
  h.heartbeat("B", Harness::join("B"));
  h.heartbeat("A", Harness::hb("A", 2));  // UNREVOKED_PARTITIONS from now on
  // Keep both sessions alive without acknowledging: A is fenced 300 s after it became UNREVOKED.
  for (int i = 0; i < 60; ++i) {
    h.advance(4990);
    if (h.coordinator->groups().at("g").members.count("A") == 0) break;
    h.heartbeat("A", Harness::hb("A", 2));
    h.heartbeat("B", Harness::hb("B", 3));
  }
  CHECK(h.coordinator->groups().at("g").members.count("A") == 0);
  CHECK(h.heartbeat("A", Harness::hb("A", 2)).error == ErrorCode::UNKNOWN_MEMBER_ID);
  h.check_replay();
}

TEST_CASE(
    "consumer-group coordinator: static member leaves with -2 and comes back under a new member "
    "id") {
  Harness h;
  h.heartbeat("A", Harness::join("A1", "a"));
  h.advance(2000);
  h.heartbeat("B", Harness::join("B"));
  auto a = h.heartbeat("A", Harness::hb("A1", 2));
  a = h.heartbeat("A", Harness::hb("A1", 2, assigned(a)));
  auto b = h.heartbeat("B", Harness::hb("B", 3));
  REQUIRE(assigned(b).size() == 2);
  const auto& g = h.coordinator->groups().at("g");
  const std::int32_t epoch = g.group_epoch;
  auto leave = h.heartbeat("A", Harness::hb("A1", -2, std::nullopt, "a"));
  CHECK(leave.member_epoch == -2);
  CHECK(g.group_epoch == epoch);  // no bump: its partitions stay reserved
  CHECK(g.partition_epoch("t", 0) == -2);
  h.check_replay();
  // The instance is still held by a live member: a second instance is refused.
  CHECK(h.heartbeat("C", Harness::join("C", "b")).error == ErrorCode::NONE);
  a = h.heartbeat("A", Harness::join("A2", "a"));
  CHECK(a.error == ErrorCode::NONE);
  CHECK(a.member_epoch == 3);
  CHECK(assigned(a) == std::vector<std::int32_t>{0, 1});  // the same partitions, no rebalance
  CHECK(g.members.count("A1") == 0);
  h.check_replay();
  CHECK(h.heartbeat("C", Harness::join("C2", "a")).error == ErrorCode::UNRELEASED_INSTANCE_ID);
}

TEST_CASE("consumer-group coordinator: OffsetCommit validated against the member epoch") {
  Harness h;
  h.heartbeat("A", Harness::join("A"));
  const auto commit = [&](const std::string& member, std::int32_t epoch) {
    OffsetCommitRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.generation_id = epoch;
    r.offsets.push_back({{"t", 0}, 5});
    h.coordinator->on_offset_commit(h.nodes.at("A"), 1, r);
    h.advance(10);
    return std::get<OffsetCommitResponse>(h.answers["A"].back()).error;
  };
  CHECK(commit("A", 2) == ErrorCode::NONE);
  CHECK(commit("A", 3) == ErrorCode::STALE_MEMBER_EPOCH);
  CHECK(commit("A", 1) == ErrorCode::STALE_MEMBER_EPOCH);  // 0 was assigned at epoch 2
  CHECK(commit("X", 2) == ErrorCode::UNKNOWN_MEMBER_ID);
}

TEST_CASE("consumer-group coordinator: OffsetFetch validated against the member id and epoch") {
  // ConsumerGroup.validateOffsetFetch: no member id and epoch -1 (admin client, or a consumer
  // without an epoch) is not checked; otherwise the member must exist (UNKNOWN_MEMBER_ID) and send
  // exactly its current epoch (STALE_MEMBER_EPOCH, older or newer). Offsets are visible once
  // their OffsetCommit records have committed; -1 for a partition without one.
  Harness h;
  h.heartbeat("A", Harness::join("A"));  // A: epoch 2, t-0..t-3
  OffsetCommitRequest c;
  c.group_id = std::string("g");  // not = "g": GCC 12 -Wrestrict false positive
  c.member_id = std::string("A");
  c.generation_id = 2;
  c.offsets.push_back({{"t", 0}, 5});
  h.coordinator->on_offset_commit(h.nodes.at("A"), 1, c);
  h.advance(10);
  const auto fetch = [&](const std::string& member, std::int32_t epoch) {
    OffsetFetchRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = epoch;
    r.partitions = {{"t", 0}, {"t", 1}};
    h.coordinator->on_offset_fetch(h.nodes.at("A"), 2, r);
    h.advance(10);
    return std::get<OffsetFetchResponse>(h.answers["A"].back());
  };
  const auto ok = fetch("A", 2);
  CHECK(ok.error == ErrorCode::NONE);
  REQUIRE(ok.partitions.size() == 2);
  CHECK(ok.partitions[0].offset == 5);
  CHECK(ok.partitions[1].offset == -1);
  CHECK(fetch("A", 1).error == ErrorCode::STALE_MEMBER_EPOCH);
  CHECK(fetch("A", 3).error == ErrorCode::STALE_MEMBER_EPOCH);
  CHECK(fetch("X", 2).error == ErrorCode::UNKNOWN_MEMBER_ID);
  CHECK(fetch("", -1).partitions.at(0).offset == 5);
  // The stored offsets are part of the group's durable state: a load replays them.
  CHECK(h.coordinator->groups().at("g").offsets.at({"t", 0}) == 5);
  std::vector<records::GroupRecord> records;
  for (const auto& line : h.tracer.lines()) {
    const auto e = nlohmann::ordered_json::parse(line);
    if (e["type"] == "record") records.push_back(trace::record_from_json(e));
  }
  const ConsumerGroups before = h.coordinator->groups();
  h.coordinator->unload_partition(coordinator_partition("g", 50));
  h.coordinator->load_partition(coordinator_partition("g", 50), records);
  CHECK(h.coordinator->groups() == before);
  CHECK(fetch("A", 2).partitions.at(0).offset == 5);
}

TEST_CASE(
    "consumer-group replay: a partition owned by two members at once is an invariant violation") {
  ConsumerGroups groups;
  const auto current = [](const std::string& member, int epoch,
                          const std::vector<std::string>& assigned) {
    return trace::record_from_json(
        nlohmann::json{{"record", "ConsumerGroupCurrentMemberAssignment"},
                       {"tombstone", false},
                       {"group", "g"},
                       {"member_id", member},
                       {"consumer", member},
                       {"member_epoch", epoch},
                       {"previous_member_epoch", 0},
                       {"state", 0},
                       {"assigned", assigned},
                       {"pending_revocation", nlohmann::json::array()}});
  };
  replay_record(groups, current("A", 2, {"t-0", "t-1"}));
  CHECK(groups.at("g").partition_epoch("t", 1) == 2);
  replay_record(groups, current("B", 3, {"t-2"}));
  CHECK_THROWS_AS(replay_record(groups, current("B", 3, {"t-1", "t-2"})), sim::InvariantViolation);
  // Once A's record no longer lists it, B may have it.
  ConsumerGroups ok;
  replay_record(ok, current("A", 2, {"t-0", "t-1"}));
  replay_record(ok, current("A", 3, {"t-0"}));
  replay_record(ok, current("B", 3, {"t-1"}));
  CHECK(ok.at("g").partition_epoch("t", 1) == 3);
}

TEST_CASE(
    "consumer-group coordinator: unload then load from the records gives the same groups, fresh "
    "timers") {
  Harness h;
  h.heartbeat("A", Harness::join("A"));
  h.advance(2000);
  h.heartbeat("B", Harness::join("B"));
  h.heartbeat("A", Harness::hb("A", 2));  // A in UNREVOKED_PARTITIONS
  const ConsumerGroups before = h.coordinator->groups();
  std::vector<records::GroupRecord> records;
  for (const auto& line : h.tracer.lines()) {
    const auto e = nlohmann::ordered_json::parse(line);
    if (e["type"] == "record") records.push_back(trace::record_from_json(e));
  }
  const std::int32_t p = coordinator_partition("g", 50);
  CHECK(p == 3);                                      // abs("g".hashCode()) % 50 = 103 % 50
  CHECK(h.coordinator->unload_partition(0).empty());  // another shard: nothing to drop
  CHECK(h.coordinator->unload_partition(p).size() == 1);
  CHECK(h.coordinator->groups().empty());
  h.advance(10'000);  // the old timers are gone: nothing is fenced while unloaded
  const auto loaded = h.coordinator->load_partition(p, records);
  REQUIRE(loaded.size() == 1);
  CHECK(h.coordinator->groups() == before);
  // What coordinator.loaded carries, typed: the group's epochs and its members' states.
  const auto& snap = std::get<ConsumerGroupSnapshot>(loaded[0]);
  CHECK(snap.group == "g");
  CHECK(snap.epoch == before.at("g").group_epoch);
  CHECK(snap.assignment_epoch == before.at("g").assignment_epoch);
  REQUIRE(snap.members.size() == 2);
  const auto a = std::find_if(snap.members.begin(), snap.members.end(),
                              [](const ConsumerMemberSnapshot& m) { return m.consumer == "A"; });
  REQUIRE(a != snap.members.end());
  CHECK(a->state == "UNREVOKED_PARTITIONS");
  // Full session timeouts from the load: 45 s, not 45 s from the last heartbeat.
  h.advance(44'990);
  CHECK(h.coordinator->groups().at("g").members.size() == 2);
  h.advance(20);
  CHECK(h.coordinator->groups().at("g").members.empty());
}

TEST_CASE("consumer-group coordinator: member churn does not pile up timers (1,000 incarnations)") {
  Harness h;
  std::size_t most = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = "member-" + std::to_string(i);
    REQUIRE(h.heartbeat("A", Harness::join(id)).error == ErrorCode::NONE);
    if (i % 4 == 3) {
      // Crashed: no leave, fenced at the session timeout (45 s) while others come and go.
      h.advance(1000);
    } else {
      REQUIRE(h.heartbeat("A", Harness::hb(id, -1)).error == ErrorCode::NONE);
      h.advance(1000);
    }
    most = std::max(most, h.coordinator->timers_held());
  }
  h.advance(60'000);
  // Live at any time: about 12 crashed members awaiting their session timeout (4 timers each);
  // retired ones stay only while a cancelled expiry is still queued (up to 45 s). Without
  // retirement every incarnation keeps its 4 timers: 4,000.
  CHECK(most <= 300);
  CHECK(h.coordinator->groups().at("g").members.empty());
  CHECK(h.coordinator->timers_held() <= 150);
}
