// The wait of a replicated __consumer_offsets write (issue 40, finding 22), worked by hand from
// Kafka's rules (models/broker/replication.hpp) with fixed latencies: network 1 ms each way, a
// follower's append 2 ms, replica.fetch.wait.max.ms 500, replica.lag.time.max.ms 30000.
// - the leader's append completes each in-sync follower's parked Fetch at once; the answer takes
//   1 ms to the follower, which appends (2 ms) and sends its next Fetch (1 ms): the high
//   watermark passes the write 4 ms after the leader's write;
// - a write made while a follower's answer is on its way goes with the follower's next Fetch;
// - an idle follower's Fetch expires after 500 ms and the next one arrives 2 ms later;
// - a dead follower holds writes back until it leaves the ISR (its fence, or 30 s of lag); a
//   fenced or shut down one is not waited for; a restarted one counts once caught up.
#include <doctest/doctest.h>

#include "models/broker/replication.hpp"

namespace {
using rsim::ReplicatedWrites;
using sim::ms;

ReplicatedWrites three_brokers() {
  return ReplicatedWrites(rsim::ReplicationTiming{.network_latency = sim::Distribution::constant(1),
                                                  .follower_write = sim::Distribution::constant(2),
                                                  .fetch_wait_max = ms(500),
                                                  .lag_time_max = ms(30000)},
                          sim::Rng(1, "replication"), 3);
}
}  // namespace

TEST_CASE("one replica: the write commits at the leader's write") {
  ReplicatedWrites r = three_brokers();
  CHECK(r.committed_at(/*leader=*/0, /*first_replica=*/0, /*replicas=*/1, ms(10)) == ms(10));
  CHECK(r.committed_at(1, 1, 1, ms(20)) == ms(20));
}

TEST_CASE("three replicas, all in sync: the followers' next Fetches carry the high watermark") {
  ReplicatedWrites r = three_brokers();
  // Parked Fetches of brokers 1 and 2 answered at 10: 10 + 1 + 2 + 1.
  CHECK(r.committed_at(0, 0, 3, ms(10)) == ms(14));
  // Written at 10 too: the same answers carry it.
  CHECK(r.committed_at(0, 0, 3, ms(10)) == ms(14));
  // Written at 12, the answers on their way: the next Fetches (arriving 14) take it, 14 + 4.
  CHECK(r.committed_at(0, 0, 3, ms(12)) == ms(18));
  // Idle: the Fetch parked at 18 expires at 518, the next arrives at 520 and waits till 1020.
  CHECK(r.committed_at(0, 0, 3, ms(1000)) == ms(1004));
  // Written at 1505: the Fetch parked at 1004 expired at 1504, the next one arrives at 1506.
  CHECK(r.committed_at(0, 0, 3, ms(1505)) == ms(1510));
  // Partition 1's replicas are brokers 1, 2, 0, led by 1: its own fetch loops, parked since 0.
  CHECK(r.committed_at(1, 1, 3, ms(1506)) == ms(1510));
}

TEST_CASE("three replicas, one follower down: held until it leaves the ISR") {
  ReplicatedWrites r = three_brokers();
  CHECK(r.committed_at(0, 0, 3, ms(10)) == ms(14));
  r.broker_down(2, ms(5000));
  // Not fenced yet, no fence scheduled: the leader shrinks the ISR after 30 s of lag.
  CHECK(r.committed_at(0, 0, 3, ms(6000)) == ms(35000));
  // The controller will fence it at 14 s: the write commits then.
  r.expect_fence(2, ms(14000));
  CHECK(r.committed_at(0, 0, 3, ms(7000)) == ms(14000));
  // Fenced: only broker 1 is waited for.
  r.out_of_isr(2);
  CHECK(r.committed_at(0, 0, 3, ms(15000)) == ms(15004));
  // Restarted at 20 s: in the ISR once caught up, 20 s + 1 + 1 + 2 + 1.
  r.broker_up(2, ms(20000));
  CHECK(r.rejoin_at(ms(20000)) == ms(20005));
  CHECK(r.committed_at(0, 0, 3, ms(20004)) == ms(20008));  // broker 1 only
  // Broker 1's answer carries 20004 until 20008; broker 2's Fetch is parked from 20005.
  CHECK(r.committed_at(0, 0, 3, ms(20010)) == ms(20014));
}

TEST_CASE("controlled shutdown: the follower leaves the ISR at once") {
  ReplicatedWrites r = three_brokers();
  r.out_of_isr(1);
  r.broker_down(1, ms(50));
  CHECK(r.committed_at(0, 0, 3, ms(100)) == ms(104));  // broker 2 only
  // Both followers gone: the leader alone is the ISR.
  r.out_of_isr(2);
  CHECK(r.committed_at(0, 0, 3, ms(200)) == ms(200));
}

TEST_CASE("no fetch wait and no latency: the follower is always asking") {
  ReplicatedWrites r(rsim::ReplicationTiming{.network_latency = sim::Distribution::constant(0),
                                             .follower_write = sim::Distribution::constant(2),
                                             .fetch_wait_max = ms(0),
                                             .lag_time_max = ms(30000)},
                     sim::Rng(1, "replication"), 3);
  CHECK(r.committed_at(0, 0, 3, ms(7)) == ms(9));     // the follower's write only
  CHECK(r.committed_at(-1, 0, 3, ms(10)) == ms(10));  // no leader: nothing to wait for
}
