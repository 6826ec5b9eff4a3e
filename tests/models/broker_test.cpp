// The broker on its own (models/broker, issue 33): who answers a Fetch, ListOffsets earliest and
// latest, OffsetsForLeaderEpoch, FindCoordinator, leadership moves, a broker that does not
// coordinate a group refusing its requests, and a share-partition leader releasing records whose
// acquisition lock outlived group.share.record.lock.duration.ms. Every number follows from
// Kafka's rules (replicas p, p+1, ... mod brokers; Utils.abs(groupId.hashCode()) % partitions;
// EARLIEST_TIMESTAMP = -2, LATEST_TIMESTAMP = -1) and the 1 ms links of the test network.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/broker/broker.hpp"
#include "models/broker/share_partition_manager.hpp"
#include "models/client/lag_monitor.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/workload/workload.hpp"
#include "trace_helpers.hpp"

using namespace rsim;

namespace {

/// `brokers` live brokers (node n = broker n), offsets.topic.replication.factor 3, one topic
/// "t" with `partitions` partitions.
ClusterMetadata cluster_of(std::int32_t brokers, std::int32_t partitions,
                           std::int32_t offsets_partitions = 50) {
  ClusterMetadata c;
  for (std::int32_t b = 0; b < brokers; ++b) {
    c.broker_nodes.push_back(static_cast<sim::NodeId>(b));
    c.broker_down.push_back(false);
    c.broker_fenced.push_back(false);
  }
  c.offsets_topic_num_partitions = offsets_partitions;
  c.offsets_topic_replication_factor = 3;
  c.partitions_per_topic["t"] = partitions;
  return c;
}

TopicSpec topic_t(std::int32_t partitions, std::int64_t initial,
                  std::optional<sim::Distribution> gap) {
  TopicSpec t;
  t.name = "t";
  t.partitions = partitions;
  t.initial_records = initial;
  t.produce_gap = std::move(gap);
  return t;
}

}  // namespace

TEST_CASE(
    "broker: only the partition's leader serves a Fetch; the others answer "
    "NOT_LEADER_OR_FOLLOWER") {
  ClusterMetadata c = cluster_of(3, 3);
  // Partition p starts led by broker p mod 3.
  CHECK(fetch_error(c, 1, {"t", 1}) == ErrorCode::NONE);
  CHECK(fetch_error(c, 0, {"t", 1}) == ErrorCode::NOT_LEADER_OR_FOLLOWER);
  CHECK(fetch_error(c, 2, {"t", 1}) == ErrorCode::NOT_LEADER_OR_FOLLOWER);
  CHECK(error_name(ErrorCode::NOT_LEADER_OR_FOLLOWER) == "NOT_LEADER_OR_FOLLOWER");
  // Broker 1 shuts down: t-1 (replicas 1, 2, 0) moves to broker 2, which now serves it.
  c.broker_fenced[1] = true;
  CHECK(move_data_leaders(c, 1) == LeaderMoves{{{"t", 1}, 2}});
  CHECK(fetch_error(c, 1, {"t", 1}) == ErrorCode::NOT_LEADER_OR_FOLLOWER);
  CHECK(fetch_error(c, 2, {"t", 1}) == ErrorCode::NONE);
  CHECK(fetch_error(c, 0, {"t", 0}) == ErrorCode::NONE);  // untouched
}

TEST_CASE("broker: leadership moves to the next eligible replica, none left means no leader") {
  ClusterMetadata c = cluster_of(3, 3);
  c.broker_fenced[1] = true;
  CHECK(move_data_leaders(c, 1) == LeaderMoves{{{"t", 1}, 2}});
  // Broker 2 dies too: t-1 (1 fenced, 2 failed) goes to 0; t-2 (replicas 2, 0, 1) to 0.
  c.broker_down[2] = true;
  CHECK(move_data_leaders(c, 2) == LeaderMoves{{{"t", 1}, 0}, {{"t", 2}, 0}});
  CHECK(move_data_leaders(c, 2).empty());  // it leads nothing any more
  // Broker 0 dies: nobody is eligible for any partition.
  c.broker_down[0] = true;
  CHECK(move_data_leaders(c, 0) ==
        LeaderMoves{{{"t", 0}, std::nullopt}, {{"t", 1}, std::nullopt}, {{"t", 2}, std::nullopt}});
  CHECK(c.data_leader({"t", 2}) == -1);
  // Broker 1 registers again: as a replica of every partition (replication 3 of 3) it takes the
  // leaderless ones back.
  c.broker_fenced[1] = false;
  CHECK(adopt_leaderless(c, 1) == LeaderMoves{{{"t", 0}, 1}, {{"t", 1}, 1}, {{"t", 2}, 1}});
  CHECK(adopt_leaderless(c, 1).empty());
  CHECK(next_eligible_leader(c, c.offsets_replicas(4), 1) == -1);  // 1 excluded, 0 and 2 down
  CHECK(next_eligible_leader(c, c.offsets_replicas(4), 2) == 1);
}

TEST_CASE("broker: __consumer_offsets leadership and FindCoordinator") {
  ClusterMetadata c = cluster_of(2, 1, 5);
  CHECK(offsets_partitions_led_by(c, 0) == std::vector<std::int32_t>{0, 2, 4});
  CHECK(offsets_partitions_led_by(c, 1) == std::vector<std::int32_t>{1, 3});
  // "g".hashCode() = 103; 103 % 5 = 3, led by broker 3 % 2 = 1.
  const FindCoordinatorResponse found = find_coordinator(c, "g");
  CHECK(found.error == ErrorCode::NONE);
  CHECK(found.node_id == 1);
  c.elected_leaders[3] = 0;
  CHECK(offsets_partitions_led_by(c, 0) == std::vector<std::int32_t>{0, 2, 3, 4});
  CHECK(find_coordinator(c, "g").node_id == 0);
  c.elected_leaders[3] = -1;  // every replica down
  const FindCoordinatorResponse none = find_coordinator(c, "g");
  CHECK(none.error == ErrorCode::COORDINATOR_NOT_AVAILABLE);
  CHECK(none.node_id == -1);
}

TEST_CASE(
    "broker: ListOffsets earliest is the log start, latest the log end now; "
    "OffsetsForLeaderEpoch") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  // 5 records at start, then one every 100 ms per partition.
  Workload w(kernel, tracer, {topic_t(2, 5, sim::Distribution::constant(100))}, 1);
  const TopicPartition t0{"t", 0}, t1{"t", 1};
  const ListOffsetsRequest earliest{.timestamp = -2, .partitions = {t0, t1}};
  const ListOffsetsRequest latest{.timestamp = -1, .partitions = {t0, t1}};
  std::vector<std::int64_t> seen;
  const auto ask = [&] {
    for (const auto* r : {&earliest, &latest})
      for (const auto& p : list_offsets(w, *r).partitions) seen.push_back(p.offset);
  };
  ask();
  // At 1000 ms the records of 100, 200, ..., 1000 ms have been appended: 5 + 10 = 15.
  kernel.schedule_closure_after(sim::ms(1000), ask);
  kernel.run(sim::ms(1000));
  CHECK(seen == std::vector<std::int64_t>{0, 0, 5, 5, 0, 0, 15, 15});
  // The leader epoch of data partitions is 0 and ends at the log end; an epoch below it is unknown.
  const OffsetsForLeaderEpochRequest q{
      .partitions = {{.partition = t0, .leader_epoch = 0}, {.partition = t1, .leader_epoch = -1}}};
  const OffsetsForLeaderEpochResponse r = offsets_for_leader_epoch(w, q);
  REQUIRE(r.partitions.size() == 2);
  CHECK(r.partitions[0].leader_epoch == 0);
  CHECK(r.partitions[0].end_offset == 15);
  CHECK(r.partitions[1].leader_epoch == -1);
  CHECK(r.partitions[1].end_offset == -1);
}

TEST_CASE(
    "broker: on the network, a group request to a broker that does not coordinate the group is "
    "refused") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  sim::Network<Envelope> net(kernel, sim::Rng(1, "net"), sim::LinkSpec{});
  ClusterMetadata cluster = cluster_of(2, 1);
  cluster.broker_nodes.clear();
  BrokerConfig config;  // offsets.topic.num.partitions 50
  OffsetsLog log(kernel, tracer, sim::Rng(1, "offsets-log"), sim::Distribution::constant(0), 50);
  Workload w(kernel, tracer, {topic_t(1, 7, std::nullopt)}, 1);
  LagMonitor lag(kernel, tracer, w, sim::ms(1000));
  std::vector<std::unique_ptr<Broker>> brokers;
  for (std::int32_t b = 0; b < 2; ++b) {
    brokers.push_back(std::make_unique<Broker>(b, kernel, tracer, net, cluster, config,
                                               CoordinatorLoadSpec{}, log, 1, w, lag,
                                               InjectedBugs{}));
    cluster.broker_nodes.push_back(brokers.back()->node());
  }
  std::vector<std::pair<std::int64_t, Envelope>> got;
  const sim::NodeId client = net.add_node("client", nullptr, [&](sim::NodeId, Envelope&& e) {
    got.emplace_back(sim::to_ms(kernel.now()), std::move(e));
  });
  // "g" lives in __consumer_offsets partition 103 % 50 = 3, led by broker 3 % 2 = 1.
  net.send(client, brokers[0]->node(), Envelope{1, JoinGroupRequest{.group_id = "g"}});
  net.send(client, brokers[0]->node(),
           Envelope{2, ListOffsetsRequest{.timestamp = -1, .partitions = {{"t", 0}}}});
  net.send(client, brokers[0]->node(), Envelope{3, FindCoordinatorRequest{"g"}});
  kernel.run(sim::ms(10));
  // Each answer comes back one 1 ms hop each way later.
  REQUIRE(got.size() == 3);
  CHECK(got[0].first == 2);
  CHECK(got[0].second.correlation_id == 1);
  CHECK(std::get<JoinGroupResponse>(got[0].second.message).error == ErrorCode::NOT_COORDINATOR);
  CHECK(std::get<ListOffsetsResponse>(got[1].second.message).partitions.at(0).offset == 7);
  CHECK(std::get<FindCoordinatorResponse>(got[2].second.message).node_id == 1);
  // A broker that is down answers nothing.
  cluster.broker_down[0] = true;
  net.send(client, brokers[0]->node(), Envelope{4, FindCoordinatorRequest{"g"}});
  kernel.run(sim::ms(20));
  CHECK(got.size() == 3);
}

TEST_CASE(
    "broker: a share lock expires group.share.record.lock.duration.ms after the acquisition") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  sim::Network<Envelope> net(kernel, sim::Rng(1, "net"), sim::LinkSpec{});  // 1 ms links
  ClusterMetadata cluster = cluster_of(1, 1);
  BrokerConfig config;
  config.group_share_record_lock_duration_ms = 15000;
  Workload w(kernel, tracer, {topic_t(1, 10, std::nullopt)}, 1);  // offsets 0..9, no production
  ShareGroupConfig g = resolve_share_group_config(config, {});
  g.auto_offset_reset = "earliest";  // SPSO at the log start, not the end
  SharePartitionManager share(kernel, tracer, net, cluster, config, w, {{"g", g}},
                              sim::Distribution::constant(2), sim::Distribution::constant(1), 1,
                              [&](sim::NodeId n) { return net.name(n); });
  cluster.broker_nodes = {net.add_node("broker-0", nullptr, [&](sim::NodeId from, Envelope&& e) {
    share.on_message(0, from, std::move(e));
  })};
  std::vector<std::pair<std::int64_t, ShareFetchResponse>> got;
  const sim::NodeId client = net.add_node("c1", nullptr, [&](sim::NodeId, Envelope&& e) {
    got.emplace_back(sim::to_ms(kernel.now()), std::get<ShareFetchResponse>(e.message));
  });
  const auto fetch = [&](std::int32_t epoch) {
    net.send(client, cluster.broker_nodes[0],
             Envelope{epoch, ShareFetchRequest{.group_id = "g",
                                               .member_id = "m1",
                                               .share_session_epoch = epoch,
                                               .partitions = {{"t", 0}}}});
  };
  fetch(0);
  // Arrives at 1 ms; the share-partition is read from the share coordinator (one 2 ms write, the
  // coordinator is on this broker) at 3 ms; records 0..9 are acquired then, locked to 15003 ms.
  kernel.schedule_closure_after(sim::ms(20000), [&] { fetch(1); });
  kernel.run(sim::ms(30000));
  REQUIRE(got.size() == 2);
  CHECK(got[0].first == 4);
  CHECK(got[0].second.acquisition_lock_timeout_ms == 15000);
  CHECK(got[0].second.partitions.at(0).acquired_records == std::vector<AcquiredRecords>{{0, 9, 1}});
  // After the lock expired the records are available again; the next fetch (at 20001 ms)
  // acquires them as their second delivery.
  CHECK(got[1].first == 20002);
  CHECK(got[1].second.partitions.at(0).acquired_records == std::vector<AcquiredRecords>{{0, 9, 2}});
  const auto trace = testing::parse_trace(tracer.lines());
  const auto records = testing::events(trace, "share.records");
  REQUIRE(records.size() == 3);
  CHECK(records[1]["t_us"] == 15003000);
  CHECK(records[1]["cause"] == "lock_timeout");
  CHECK(records[1]["from"] == "ACQUIRED");
  CHECK(records[1]["to"] == "AVAILABLE");
  CHECK(records[1]["first_offset"] == 0);
  CHECK(records[1]["last_offset"] == 9);
  CHECK(records[1]["consumer"] == "c1");
  CHECK(records[2]["t_us"] == 20001000);
  CHECK(records[2]["delivery_count"] == 2);
  // The expiry is persisted in __share_group_state one 2 ms write later.
  CHECK(testing::times(trace, "share_state.record", "record", "ShareUpdate") ==
        std::vector<double>{15005.0});
}
