// The KRaft controller's fence of a dead broker (issue 40), checked against Kafka's rules worked
// by hand (models/broker/controller_quorum.hpp; defaults broker.heartbeat.interval.ms 2000,
// broker.session.timeout.ms 9000, controller.quorum.fetch.timeout.ms 2000,
// controller.quorum.election.timeout.ms 1000):
// - the active controller checks every max(1 ms, session / 8) = 1125 ms from its activation and
//   fences a broker whose last contact + session < now (BrokerHeartbeatTracker.isExpired);
// - a controller activated during the run starts every broker's contact at its activation, before
//   its periodic task is scheduled: the check at exactly activation + session fences;
// - when the active controller dies, the survivors time out controller.quorum.fetch.timeout.ms
//   after their last Fetch answer; the majority-th to time out gets the others' pre-votes.
#include <doctest/doctest.h>

#include <array>

#include "models/broker/controller_quorum.hpp"
#include "models/protocol/config.hpp"
#include "trace_helpers.hpp"

namespace {
using rsim::ControllerQuorum;
using rsim::fence_run;
using sim::ms;
using sim::us;
}  // namespace

TEST_CASE("the fence check runs every broker.session.timeout.ms / 8, at least every 1 ms") {
  CHECK(rsim::fence_check_period(9000) == ms(1125));
  CHECK(rsim::fence_check_period(18000) == ms(2250));
  CHECK(rsim::fence_check_period(4) == ms(1));  // 0.5 ms, raised to 1 ms
  CHECK(rsim::fence_check_period(1001) == us(125125));
}

TEST_CASE("a broker's last heartbeat before its death is on its own 2 s grid") {
  // Heartbeats at 700 + k x 2000 ms: the last one at or before 20000 is 18700.
  CHECK(rsim::last_on_grid(ms(700), ms(2000), ms(20000)) == ms(18700));
  CHECK(rsim::last_on_grid(ms(700), ms(2000), ms(18700)) == ms(18700));  // at the instant: sent
  CHECK(rsim::last_on_grid(ms(700), ms(2000), ms(500)) == ms(-1300));    // before the run
}

TEST_CASE("fence schedule: the first check after last contact + session, never at it") {
  const auto period = ms(1125);
  const auto session = ms(9000);
  // Broker-0 dies at 20000, its last heartbeat at 18700: expired after 27700. The checks run at
  // -300 + k x 1125: ..., 26700, 27825: fenced at 27825, 7825 ms after the death.
  CHECK(fence_run(ms(-300), period, ms(18700), session, false) == ms(27825));
  // The latest possible: a heartbeat at the death itself (20000) and a check at exactly 29000
  // (-250 + 26 x 1125): 20000 + 9000 < 29000 is false, so the next one, 30125, 10125 ms after.
  CHECK(fence_run(ms(-250), period, ms(20000), session, false) == ms(30125));
  // The earliest: a heartbeat 2000 ms before the death (18000.001 ms, last before 20000) and a
  // check just after its expiry, 27000.001 + 1 us: 7000.002 ms after the death.
  CHECK(fence_run(ms(27000) + us(2) - 24 * period, period, ms(18000) + us(1), session, false) ==
        ms(27000) + us(2));
  // A controller activated at 21800 starts every contact there and checks at 21800 + k x 1125:
  // the eighth check, 21800 + 9000 = 30800, already fences (its contact was set first).
  CHECK(fence_run(ms(21800), period, ms(21800), session, true) == ms(30800));
  // The same contact from a heartbeat (not the activation): only the ninth, 31925.
  CHECK(fence_run(ms(21800), period, ms(21800), session, false) == ms(31925));
}

TEST_CASE("a dead active controller: the majority-th voter to time out is elected then") {
  const auto timeout = ms(2000);
  // Three voters, leader 0 dies: 2 last fetched at 19600 and turns Prospective at 21600 (1, still
  // a follower, refuses its pre-vote); 1 last fetched at 19800, turns Prospective at 21800 and
  // gets 2's pre-vote: 2 of 3, elected at 21800.
  auto r = rsim::elect_after_leader_death(
      {{.id = 1, .last_fetch = ms(19800)}, {.id = 2, .last_fetch = ms(19600)}}, 3, timeout);
  CHECK(r.leader == 1);
  CHECK(r.at == ms(21800));
  // Five voters, four survivors: a majority is 3, the third to time out (3 at 19700 + 2000).
  r = rsim::elect_after_leader_death({{.id = 1, .last_fetch = ms(19900)},
                                      {.id = 2, .last_fetch = ms(19500)},
                                      {.id = 3, .last_fetch = ms(19700)},
                                      {.id = 4, .last_fetch = ms(19600)}},
                                     5, timeout);
  CHECK(r.leader == 3);
  CHECK(r.at == ms(21700));
  // Ties go to the lowest id first: 1 times out first, 2 wins.
  r = rsim::elect_after_leader_death(
      {{.id = 2, .last_fetch = ms(19700)}, {.id = 1, .last_fetch = ms(19700)}}, 3, timeout);
  CHECK(r.leader == 2);
  // No majority left (two voters, or one): no leader, nobody is ever fenced.
  r = rsim::elect_after_leader_death({{.id = 1, .last_fetch = ms(19700)}}, 2, timeout);
  CHECK(r.leader == -1);
  CHECK(r.at == sim::kNever);
  CHECK(rsim::elect_after_leader_death({}, 1, timeout).leader == -1);
}

TEST_CASE(
    "the quorum: a broker's fence follows its heartbeat phase, a controller's its successor") {
  const rsim::BrokerConfig config;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    ControllerQuorum q(config, 3, seed);
    REQUIRE(q.active() >= 0);
    REQUIRE(q.active() < 3);
    CHECK(q.activation() < ms(0));  // active since before the run
    CHECK(q.task_origin() <= ms(0));
    CHECK(q.task_origin() > ms(-1125));
    // A broker that is not the controller dies at 20000: its last contact is its last heartbeat,
    // (18000, 20000]; the fence is the first check after contact + 9000: (27000, 30125].
    const std::int32_t other = (q.active() + 1) % 3;
    q.broker_down(other, ms(20000), false);
    const auto contact = q.last_contact(other);
    CHECK(contact > ms(18000));
    CHECK(contact <= ms(20000));
    const auto fence = q.fence_time(other);
    CHECK(fence > contact + ms(9000));
    CHECK(fence - ms(1125) <= contact + ms(9000));
    CHECK((fence - q.task_origin()).count() % ms(1125).count() == 0);
    q.broker_up(other, ms(25000));
    CHECK(q.fence_time(other) == sim::kNever);  // running again: nothing to fence
    // The controller dies at 40000: a survivor is elected 1500-2000 ms later (its last Fetch
    // answer within 500 ms before the death, plus the 2000 ms fetch timeout), and fences the old
    // controller exactly 9000 ms after its activation.
    const std::int32_t old = q.active();
    q.broker_down(old, ms(40000), false);
    REQUIRE(q.active() >= 0);
    CHECK(q.active() != old);
    CHECK(q.activation() > ms(41500));
    CHECK(q.activation() <= ms(42000));
    CHECK(q.last_contact(old) == q.activation());
    CHECK(q.fence_time(old) == q.activation() + ms(9000));
  }
}

TEST_CASE("the quorum: a graceful stop hands over at once; without a majority nobody fences") {
  const rsim::BrokerConfig config;
  ControllerQuorum q(config, 3, 1);
  const std::int32_t first = q.active();
  q.broker_down(first, ms(10000), true);  // EndQuorumEpoch: the lowest live id, at once
  CHECK(q.active() == (first == 0 ? 1 : 0));
  CHECK(q.activation() == ms(10000));
  q.broker_up(first, ms(12000));
  const std::int32_t second = q.active();
  const std::int32_t third = 3 - first - second;
  // Two of three down: no majority, no controller; a dead broker stays unfenced.
  q.broker_down(third, ms(20000), false);
  q.broker_down(second, ms(20000), false);
  CHECK(q.active() == -1);
  CHECK(q.fence_time(third) == sim::kNever);
  // One back: a majority again; the live voters elect as at the start, 1000-2000 ms later.
  q.broker_up(second, ms(30000));
  REQUIRE(q.active() >= 0);
  CHECK(q.activation() >= ms(31000));
  CHECK(q.activation() < ms(32000));
  CHECK(q.fence_time(third) == q.activation() + ms(9000));
  // One voter alone (a one-broker cluster) that dies: no controller at all.
  ControllerQuorum single(config, 1, 1);
  CHECK(single.active() == 0);
  single.broker_down(0, ms(20000), false);
  CHECK(single.active() == -1);
  CHECK(single.fence_time(0) == sim::kNever);
}

TEST_CASE("the quorum's draws come from their own stream and follow the seed") {
  const rsim::BrokerConfig config;
  ControllerQuorum a(config, 3, 7);
  ControllerQuorum b(config, 3, 7);
  CHECK(a.active() == b.active());
  CHECK(a.task_origin() == b.task_origin());
  a.broker_down(0, ms(20000), false);
  b.broker_down(0, ms(20000), false);
  CHECK(a.fence_time(0) == b.fence_time(0));
  // Over many seeds every voter is the first controller sometimes (a uniform race).
  std::array<int, 3> wins{};
  for (std::uint64_t seed = 0; seed < 300; ++seed)
    ++wins.at(static_cast<std::size_t>(ControllerQuorum(config, 3, seed).active()));
  for (const int w : wins) CHECK(w > 60);
  // Kafka's keys reach the model: a 4 s session is checked every 500 ms.
  rsim::ClusterSpec cluster;
  cluster.config["broker.session.timeout.ms"] = 4000;
  cluster.config["broker.heartbeat.interval.ms"] = 1000;
  const auto resolved = rsim::resolve_broker_config(cluster);
  CHECK(resolved.broker_session_timeout_ms == 4000);
  CHECK(resolved.broker_heartbeat_interval_ms == 1000);
  CHECK(resolved.controller_quorum_fetch_timeout_ms == 2000);
  CHECK(resolved.controller_quorum_election_timeout_ms == 1000);
  ControllerQuorum c(resolved, 3, 7);
  const std::int32_t other = (c.active() + 1) % 3;
  c.broker_down(other, ms(20000), false);
  CHECK(c.last_contact(other) > ms(19000));
  CHECK(c.fence_time(other) > c.last_contact(other) + ms(4000));
  CHECK(c.fence_time(other) <= c.last_contact(other) + ms(4500));
  CHECK((c.fence_time(other) - c.task_origin()).count() % ms(500).count() == 0);
}
