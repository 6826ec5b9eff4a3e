// An add-partitions takes effect at the KRaft controller's commit, as Kafka's CreatePartitions
// (issue 40, docs/fidelity.md finding 18): the admin's request reaches a broker (one network
// latency) and is forwarded to the active controller (one more), whose batch accumulator waits
// controller.quorum.append.linger.ms (25) before it appends and flushes the batch (one
// cluster.write_latency_ms, 0 on the idealized machine). Only then do the group coordinators see
// the new partitions: GroupMetadataManager.onMetadataUpdate asks each subscribed group for a
// metadata refresh, which the group's next heartbeat does (a new metadata hash bumps the group
// epoch). On 1 ms links the commit is at 20,000 + 1 + 1 + 25 = 20,027 ms.
#include <doctest/doctest.h>

#include "models/protocol/config.hpp"
#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;
constexpr const char* kTable = "scenarios/share/membership-table.json";

std::vector<json> run(rsim::ScenarioSpec spec) {
  return testing::parse_trace(rsim::run_scenario(spec, "share", spec.seed).trace_lines);
}
}  // namespace

TEST_CASE(
    "add-partitions: the group coordinator sees the new partitions at the controller's commit, "
    "two hops and controller.quorum.append.linger.ms after the event") {
  const auto trace = run(testing::load_ideal(kTable));
  // T1 grows from 1 to 4 partitions at 20,000 ms: committed at 20,027.
  CHECK(testing::times(trace, "topic.partitions", "partitions", 4) == std::vector<double>{20027});
  // M2's heartbeat reaches the coordinator at 20,009 (sent at 20,008: M2 acknowledged its first
  // assignment at its join's answer, 10,004, with its first ShareFetch; each heartbeat 5,000 ms
  // after the previous one's answer), before the commit: no bump. M1's next one (sent at 21,110:
  // it acknowledged its join's empty assignment at its poll() call of 1,100, docs/fidelity.md
  // finding 35, and T1-0 at 6,104) sees the new metadata hash: epoch 5 at 21,111, as in both real
  // runs (M1's heartbeat at 21,133 and 21,134 ms, M2's at 20,045 and 20,049 still answered
  // epoch 4).
  CHECK(testing::times(trace, "group.epoch", "reason", "metadata change") ==
        std::vector<double>{21111});
  // The three new partitions are initialized by then; the epoch that assigns them (6) comes with
  // M2's next heartbeat, 5,000 ms after its last one (sent at 25,010).
  CHECK(testing::times(trace, "group.epoch", "epoch", 6) == std::vector<double>{25011});
}

TEST_CASE(
    "add-partitions: with controller.quorum.append.linger.ms 0 the commit is two hops later") {
  auto spec = testing::load_ideal(kTable);
  spec.cluster.config["controller.quorum.append.linger.ms"] = 0;
  const auto trace = run(spec);
  CHECK(testing::times(trace, "topic.partitions", "partitions", 4) == std::vector<double>{20002});
  // M2's heartbeat at 20,009 now sees the new partitions and bumps the epoch itself.
  CHECK(testing::times(trace, "group.epoch", "reason", "metadata change") ==
        std::vector<double>{20009});
}

TEST_CASE(
    "controller.quorum.append.linger.ms: Kafka's default 25 (QuorumConfig), set in "
    "cluster.config") {
  rsim::ClusterSpec cluster;
  CHECK(rsim::resolve_broker_config(cluster).controller_quorum_append_linger_ms == 25);
  cluster.config["controller.quorum.append.linger.ms"] = 7;
  CHECK(rsim::resolve_broker_config(cluster).controller_quorum_append_linger_ms == 7);
}
