#include "models/broker/replication.hpp"

#include <algorithm>
#include <cmath>

namespace rsim {

namespace {
sim::SimTime mean_of(const sim::Distribution& d) {
  return sim::us(std::llround(d.expected_ms() * 1000.0));
}
}  // namespace

ReplicatedWrites::ReplicatedWrites(ReplicationTiming timing, sim::Rng rng, std::int32_t brokers)
    : timing_(std::move(timing)),
      rng_(std::move(rng)),
      brokers_(brokers),
      // At least 1 us: with no wait and no latency a follower is always asking.
      empty_round_(
          std::max(sim::us(1), timing_.fetch_wait_max + 2 * mean_of(timing_.network_latency))),
      followers_(static_cast<std::size_t>(brokers)),
      loops_(static_cast<std::size_t>(brokers) * static_cast<std::size_t>(brokers)) {}

sim::SimTime ReplicatedWrites::rejoin_at(sim::SimTime now) const {
  // The first Fetch reaches the leader, its answer the follower, which writes and fetches again.
  return now + 3 * mean_of(timing_.network_latency) + mean_of(timing_.follower_write);
}

void ReplicatedWrites::broker_down(std::int32_t b, sim::SimTime now) {
  Follower& f = followers_[static_cast<std::size_t>(b)];
  if (f.down) return;
  f.down = true;
  f.down_since = now;
  f.fence_at = sim::kNever;
}

void ReplicatedWrites::expect_fence(std::int32_t b, sim::SimTime at) {
  followers_[static_cast<std::size_t>(b)].fence_at = at;
}

void ReplicatedWrites::out_of_isr(std::int32_t b) {
  followers_[static_cast<std::size_t>(b)].out_of_isr = true;
}

void ReplicatedWrites::broker_up(std::int32_t b, sim::SimTime now) {
  Follower& f = followers_[static_cast<std::size_t>(b)];
  f = Follower{.in_isr_from = rejoin_at(now)};
  for (std::int32_t leader = 0; leader < brokers_; ++leader)
    loop(leader, b) = Loop{.next_arrival = f.in_isr_from};
}

sim::SimTime ReplicatedWrites::confirm(Loop& l, sim::SimTime written) {
  if (written <= l.last_served) return l.last_confirm;  // the answer in flight carries it
  sim::SimTime arrival = l.next_arrival;
  if (written > arrival + timing_.fetch_wait_max) {
    // Empty long polls since: each parked Fetch expired and the next one arrived a round later.
    const auto rounds =
        (written - arrival - timing_.fetch_wait_max + empty_round_ - sim::us(1)) / empty_round_;
    arrival += rounds * empty_round_;
  }
  const sim::SimTime served = std::max(written, arrival);
  const sim::SimTime to_follower = timing_.network_latency.sample(rng_);
  const sim::SimTime follower_write = timing_.follower_write.sample(rng_);
  const sim::SimTime back = timing_.network_latency.sample(rng_);
  l.last_served = served;
  l.last_confirm = served + to_follower + follower_write + back;
  l.next_arrival = l.last_confirm;  // that Fetch is parked in turn
  return l.last_confirm;
}

sim::SimTime ReplicatedWrites::committed_at(std::int32_t leader, std::int32_t first_replica,
                                            std::int32_t replicas, sim::SimTime written) {
  sim::SimTime commit = written;
  if (leader < 0 || leader >= brokers_) return commit;  // no leader: nobody fetches from it
  for (std::int32_t k = 0; k < replicas; ++k) {
    const std::int32_t b = (first_replica + k) % brokers_;
    if (b == leader) continue;
    const Follower& f = followers_[static_cast<std::size_t>(b)];
    if (f.out_of_isr || written < f.in_isr_from) continue;  // not in the ISR: not waited for
    if (f.down) {
      // In the ISR until the controller fences it or the leader shrinks the ISR.
      commit = std::max(commit, std::min(f.fence_at, f.down_since + timing_.lag_time_max));
      continue;
    }
    commit = std::max(commit, confirm(loop(leader, b), written));
  }
  return commit;
}

}  // namespace rsim
