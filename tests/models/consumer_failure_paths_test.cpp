// Consumer-protocol (KIP-848) scenarios, each instant where Kafka's defaults put it:
// group.consumer.heartbeat.interval.ms 5000 (anchored on each send), the 1 s assignment interval
// without a timer, group.consumer.session.timeout.ms 45000 from the last heartbeat, the rebalance
// timeout = max.poll.interval.ms 300000 from entering UNREVOKED_PARTITIONS, the poll timer
// (max.poll.interval.ms) from the last poll(), and callbacks only in poll() passes 100 ms apart.
// Links are 1 ms each way and the coordinator's writes commit at once.
#include <doctest/doctest.h>

#include <set>

#include "trace_helpers.hpp"

using testing::callback_partitions;
using testing::callback_starts;

namespace {
std::vector<nlohmann::json> run(const std::string& name) {
  return testing::run_trace("scenarios/consumer/" + name + ".json", "consumer");
}
double first(const std::vector<nlohmann::json>& trace, const std::string& type,
             const std::string& consumer) {
  if (consumer.empty()) {  // events that name no consumer
    const auto all = testing::events(trace, type);
    return all.empty() ? -1 : all.front()["t_us"].get<double>() / 1000.0;
  }
  return testing::first_time(trace, type, "consumer", consumer);
}
/// Time of the last heartbeat `consumer` sent before `before_ms`.
double last_heartbeat(const std::vector<nlohmann::json>& trace, const std::string& consumer,
                      double before_ms) {
  return testing::last_send_before(trace, consumer, {"ConsumerGroupHeartbeat"}, before_ms);
}
std::vector<double> epochs_at(const std::vector<nlohmann::json>& trace) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == "group.epoch" && e.contains("epoch"))
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}
}  // namespace

TEST_CASE("consumer protocol: a join outside the assignment interval computes the target at once") {
  const auto t = run("join");
  // A: start 1000, FindCoordinator + join heartbeat (4 ms), assigned at its pass at 1100; its
  // acknowledgement at 1100 sets its heartbeat phase: 6100, 11100, ...
  CHECK(callback_starts(t, "A", "onPartitionsAssigned")[0] == 1100);
  // B joins at 11003 (> 1003 + 1000): target computed in B's join heartbeat.
  CHECK(epochs_at(t)[1] == 11003);
  // A learns at its heartbeat at 11100 (answer 11102): pass 11200 commits, 11300 revokes,
  // 11400 assigns [] and acknowledges.
  CHECK(callback_starts(t, "A", "onPartitionsRevoked")[0] == 11300);
  CHECK(callback_partitions(t, "A", "onPartitionsRevoked", 0) ==
        std::vector<std::string>{"t-2", "t-3"});
  // B's heartbeat phase is its acknowledgement at 11100: at 16100 the partitions are free.
  CHECK(callback_starts(t, "B", "onPartitionsAssigned")[1] == 16100 + 100);
}

TEST_CASE(
    "consumer protocol: a leave frees the partitions at once; A takes them at its next heartbeat") {
  const auto t = run("leave");
  // B polls on a 100 ms grid from 3000: close() at 20000, commitSync (2 ms), revoke, leave.
  CHECK(callback_starts(t, "B", "onPartitionsRevoked")[0] == 20002);
  // A's heartbeats: acknowledgement at 6400, then every 5000 ms: 21400 is the first after.
  CHECK(callback_starts(t, "A", "onPartitionsAssigned").back() == 21400 + 200);
  CHECK(callback_starts(t, "A", "onPartitionsRevoked").size() == 1);  // A revokes nothing then
}

TEST_CASE("consumer protocol: a crashed member is fenced 45 s after its last heartbeat") {
  const auto t = run("crash-session-timeout");
  const double last = last_heartbeat(t, "B", 20000);
  CHECK(last == 18200);  // acknowledgement at 8200, then every 5 s
  CHECK(first(t, "member.leave", "B") == last + 1 + 45000);
  // A's next heartbeat after the fencing (6400 + 5000k = 66400) brings B's partitions.
  CHECK(callback_starts(t, "A", "onPartitionsAssigned").back() == 66400 + 200);
}

TEST_CASE(
    "consumer protocol: a stall beyond max.poll.interval.ms leaves (STALE) and rejoins on the next "
    "poll") {
  const auto t = run("stall-max-poll-interval");
  // B's last pass before the stall at 20000 was at 19900: the poll timer expires 300 s later.
  CHECK(first(t, "consumer.poll_timeout", "B") == 19900 + 300000);
  CHECK(callback_starts(t, "B", "onPartitionsLost")[0] == 20000 + 310000);  // first pass after
  // The leave bumped the epoch at 319901; A's heartbeat at 321400 brings B's partitions.
  CHECK(callback_starts(t, "A", "onPartitionsAssigned")[2] == 321400 + 200);
  // B rejoins at once after onPartitionsLost (epoch 0): nothing at first (A still owns them),
  // then its partitions back once A released them.
  CHECK(callback_partitions(t, "B", "onPartitionsAssigned", 2).empty());
  CHECK(callback_partitions(t, "B", "onPartitionsAssigned", 3) ==
        std::vector<std::string>{"t-2", "t-3"});
}

TEST_CASE("consumer protocol: a revocation slower than the rebalance timeout is fenced") {
  const auto t = run("slow-revocation-fenced");
  // A enters UNREVOKED_PARTITIONS at its heartbeat at 11101; fenced 300 s later.
  double unrevoked = -1;
  for (const auto& e : t)
    if (e["type"] == "member.epoch" && e["consumer"] == "A" &&
        e["state"] == "UNREVOKED_PARTITIONS") {
      unrevoked = e["t_us"].get<double>() / 1000.0;
      break;
    }
  CHECK(unrevoked == 11101);
  CHECK(first(t, "member.leave", "A") == unrevoked + 300000);
  CHECK(first(t, "consumer.fenced", "A") == unrevoked + 300000 + 1);
  // The callback (310 s from 11300) returns; onPartitionsLost then a rejoin with epoch 0.
  CHECK(callback_starts(t, "A", "onPartitionsLost")[0] == 11300 + 310000);
}

TEST_CASE(
    "consumer protocol: a static member back within the session timeout gets its partitions, no "
    "rebalance") {
  const auto t = run("static-restart-within-session");
  CHECK(callback_starts(t, "A", "onPartitionsRevoked").size() == 1);  // only B's first join
  CHECK(epochs_at(t).size() == 2);  // A's and B's joins; the restart bumps nothing
  // B is back at 30000: join heartbeat answered at 30004 with its old partitions, pass at 30100.
  CHECK(callback_starts(t, "B", "onPartitionsAssigned").back() == 30100);
  CHECK(callback_partitions(t, "B", "onPartitionsAssigned", 2) ==
        std::vector<std::string>{"t-2", "t-3"});
}

TEST_CASE("consumer protocol: a static member away longer than the session timeout is fenced") {
  const auto t = run("static-restart-beyond-session");
  const double last = last_heartbeat(t, "B", 20000);
  CHECK(last == 18200);
  // The -2 leave does not refresh the session: fenced 45 s after the last regular heartbeat.
  CHECK(first(t, "member.leave", "B") == last + 1 + 45000);
  CHECK(callback_starts(t, "A", "onPartitionsAssigned")[2] == 66400 + 200);
}

TEST_CASE("consumer protocol: a subscription change goes out with the next heartbeat") {
  const auto t = run("subscription-change");
  // B's heartbeats: acknowledgement at 8200, so 23200 is the first after the change at 20000.
  CHECK(epochs_at(t)[2] == 23201);
  CHECK(callback_starts(t, "B", "onPartitionsRevoked")[0] == 23400);
  CHECK(callback_partitions(t, "B", "onPartitionsAssigned", 3) ==
        std::vector<std::string>{"u-0", "u-1", "u-2", "u-3"});
  // A gets t-2, t-3 at its own heartbeat after B's acknowledgement (23500): 26400.
  CHECK(callback_starts(t, "A", "onPartitionsAssigned").back() == 26400 + 200);
}

TEST_CASE("consumer protocol: more partitions are seen by the next heartbeat of anyone") {
  const auto t = run("partition-increase");
  // A's heartbeat at 21400 is the first after 20000: new metadata hash, epoch 4, target.
  CHECK(epochs_at(t)[2] == 21401);
  CHECK(callback_partitions(t, "A", "onPartitionsAssigned", 2) ==
        std::vector<std::string>{"t-4", "t-5"});
  CHECK(callback_starts(t, "B", "onPartitionsAssigned").back() == 23200 + 200);
}

TEST_CASE(
    "consumer protocol: scale-out 1 -> 10 on 60 partitions ends balanced, epochs one per join") {
  const auto t = run("scale-out-10");
  CHECK(epochs_at(t).size() == 10);
  std::map<std::string, std::size_t> owned;
  for (const auto& e : t)
    if (e["type"] == "assignment") owned[e["consumer"].get<std::string>()] = e["owned"].size();
  CHECK(owned.size() == 10);
  for (const auto& [c, n] : owned) CHECK(n == 6);
}

TEST_CASE(
    "consumer protocol: a static member back from a crash meets UNRELEASED_INSTANCE_ID (fatal)") {
  const auto t = run("static-crash-unreleased-instance");
  // Back at 30000: FindCoordinator, then the join heartbeat is refused at 30004.
  CHECK(first(t, "consumer.error", "B") == 30004);
  CHECK(first(t, "member.leave", "B") ==
        18200 + 1 + 45000);  // the old member, at its session timeout
  CHECK(callback_starts(t, "A", "onPartitionsAssigned").back() == 66400 + 200);
}

TEST_CASE(
    "consumer protocol: coordinator failover rebuilds the group from its records, no rebalance") {
  const auto t = run("coordinator-failover");
  nlohmann::json unloaded, loaded;
  for (const auto& e : t) {
    if (e["type"] == "coordinator.unloaded") unloaded = e["groups"];
    if (e["type"] == "coordinator.loaded" && !e["groups"].empty()) loaded = e["groups"];
  }
  REQUIRE(unloaded.size() == 1);
  CHECK(loaded == unloaded);  // same epochs, members, member epochs, assignments
  std::set<int> epochs;
  for (const auto& e : t)
    if (e["type"] == "group.epoch") epochs.insert(e["epoch"].get<int>());
  CHECK(epochs == std::set<int>{2, 3});  // A's and B's joins only
  // broker-0 is fenced after broker.session.timeout.ms (9 s) and broker-1 loads for 500 ms +
  // 5 µs per record; the members' heartbeats then reach broker-1.
  CHECK(first(t, "coordinator.loaded", "") > 29000);
  double first_hb_after = -1;
  for (const auto& e : t)
    if (e["type"] == "rpc" && e["dir"] == "recv" && e["api"] == "ConsumerGroupHeartbeat" &&
        e["from"] == "broker-1" && e["error"] == "NONE") {
      first_hb_after = e["t_us"].get<double>() / 1000.0;
      break;
    }
  CHECK(first_hb_after > 29500);
  CHECK(first_hb_after < 29500 + 2000);  // within the capped backoff (1 s) of the load
}

TEST_CASE(
    "consumer protocol: subscribe([]) leaves the group like unsubscribe(); a new subscription "
    "rejoins") {
  const auto t = run("unsubscribe-resubscribe");
  // At B's next pass (20000): onPartitionsRevoked, then the -1 leave, answered at 20002.
  CHECK(callback_starts(t, "B", "onPartitionsRevoked")[0] == 20000);
  bool left = false;
  for (const auto& e : t)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "B" &&
        e["api"] == "ConsumerGroupHeartbeat" && e["member_epoch"] == -1 && e["t_us"] == 20000000)
      left = true;
  CHECK(left);
  CHECK(callback_starts(t, "A", "onPartitionsAssigned").back() > 30000);  // A gives them back later
  // B rejoins at its pass at 30000 with epoch 0 and the full set of fields.
  double rejoin = -1;
  for (const auto& e : t)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "B" &&
        e["api"] == "ConsumerGroupHeartbeat" && e["member_epoch"] == 0 &&
        e["t_us"].get<double>() >= 30000000) {
      rejoin = e["t_us"].get<double>() / 1000.0;
      break;
    }
  CHECK(rejoin == 30000);  // the coordinator is still known: no FindCoordinator
}
