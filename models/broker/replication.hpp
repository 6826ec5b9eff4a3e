// The wait of a replicated write (issue 40, finding 22): when the high watermark of a
// __consumer_offsets partition passes a record its leader appended, so that the group coordinator
// may answer the request that wrote it (CoordinatorRuntime completes a write, and any request
// queued behind an uncommitted write, at onHighWatermarkUpdated).
//
// Kafka's rules, as this model follows them:
// - Every follower of a partition long-polls its leader: its Fetch carries its log end offset as
//   the fetch offset and, finding nothing new, is parked in the leader's fetch purgatory
//   (DelayedFetch) for up to `replica.fetch.wait.max.ms` (500) with `replica.fetch.min.bytes` 1;
//   an empty answer is followed at once by the next Fetch. One Fetch per follower and leader is in
//   flight at a time (one fetcher thread per source broker).
// - The leader's append completes the parked Fetch (ReplicaManager.appendRecords ->
//   addCompletePurgatoryAction -> tryCompleteDelayedFetch); the answer crosses the network, the
//   follower appends the records to its own log (ReplicaFetcherThread.processPartitionData) and
//   sends its next Fetch, whose fetch offset tells the leader the follower's new log end offset
//   (Partition.updateFollowerFetchState). The high watermark is the smallest log end offset of the
//   in-sync replicas (Partition.maybeIncrementLeaderHW), so the write commits when the last
//   in-sync follower's next Fetch has arrived: the leader's write, then per follower the network to
//   it, its write and the network back; a Fetch still in flight when the leader appends carries
//   the records on its next round instead.
// - A follower leaves the in-sync replicas when the controller fences it
//   (ReplicationControlManager.handleBrokerFenced, after broker.session.timeout.ms) or at its
//   controlled shutdown (handleBrokerInControlledShutdown), or when the leader shrinks the ISR
//   after `replica.lag.time.max.ms` (30 s) without it catching up (Partition.maybeShrinkIsr);
//   until then a dead follower holds every write back. A restarted follower rejoins once caught up
//   (Partition.maybeExpandIsr): its first Fetch, the answer and its write, and the next Fetch.
// With one replica the write commits at the leader's write, as before.
// Left out: the AlterPartition round trip to the controller at an ISR change, request handling
// time of the followers' Fetches, network verbs between brokers (a cut link does not shrink the
// ISR), min.insync.replicas (the default 1 never refuses a write here).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace rsim {

struct ReplicationTiming {
  sim::Distribution network_latency;           // `network.latency_ms`, each way
  sim::Distribution follower_write;            // `cluster.write_latency_ms`: a follower's append
  sim::SimTime fetch_wait_max = sim::ms(500);  // replica.fetch.wait.max.ms
  sim::SimTime lag_time_max = sim::ms(30000);  // replica.lag.time.max.ms
};

class ReplicatedWrites {
 public:
  ReplicatedWrites(ReplicationTiming timing, sim::Rng rng, std::int32_t brokers);

  /// When the high watermark passes a write to a partition whose replicas are brokers
  /// `first_replica`, +1, ... (mod brokers), `replicas` of them, led by `leader`, whose local
  /// write on the leader ends at `written` (the commit time with one replica). Followers are
  /// asked in replica order (the draws are deterministic).
  sim::SimTime committed_at(std::int32_t leader, std::int32_t first_replica, std::int32_t replicas,
                            sim::SimTime written);

  /// Broker b's process is gone: it stays in the ISR (holding writes back) until it leaves it.
  void broker_down(std::int32_t b, sim::SimTime now);
  /// The time the controller will fence down broker b (kNever: none scheduled).
  void expect_fence(std::int32_t b, sim::SimTime at);
  /// Broker b is out of every ISR: fenced, or in controlled shutdown.
  void out_of_isr(std::int32_t b);
  /// Broker b runs again and registers: a follower that rejoins the ISR once it caught up.
  void broker_up(std::int32_t b, sim::SimTime now);
  /// When a follower that came up at `now` is back in the ISR (its catch-up round, mean times).
  sim::SimTime rejoin_at(sim::SimTime now) const;

 private:
  struct Follower {
    bool down = false;
    bool out_of_isr = false;
    sim::SimTime down_since{0};
    sim::SimTime fence_at = sim::kNever;
    sim::SimTime in_isr_from{0};
  };
  /// A follower's fetch loop with one leader.
  struct Loop {
    sim::SimTime next_arrival{0};  // the follower's next Fetch reaches the leader (then parked)
    sim::SimTime last_served{-1};  // the leader answered the last Fetch with records then
    sim::SimTime last_confirm{0};  // ... and the Fetch after it reported them
  };
  /// The follower's confirmation of a write ready on the leader at `written`.
  sim::SimTime confirm(Loop& loop, sim::SimTime written);
  Loop& loop(std::int32_t leader, std::int32_t follower) {
    return loops_[static_cast<std::size_t>(leader * brokers_ + follower)];
  }

  ReplicationTiming timing_;
  sim::Rng rng_;
  std::int32_t brokers_;
  sim::SimTime empty_round_;         // a parked Fetch that expired, and the next one's arrival
  std::vector<Follower> followers_;  // by broker id
  std::vector<Loop> loops_;          // by leader x brokers + follower
};

}  // namespace rsim
