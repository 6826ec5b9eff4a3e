// The KRaft controller quorum and the fence of a silent broker: see controller_quorum.hpp.
#include "models/broker/controller_quorum.hpp"

#include <algorithm>

namespace rsim {

namespace {
/// The leader answers a follower's Fetch within KafkaRaftClient's MAX_FETCH_WAIT_MS (500), and
/// has a NoOpRecord to send every metadata.max.idle.interval.ms (500): a follower's last
/// successful Fetch is less than this before the leader's death.
constexpr sim::SimTime kMaxFetchGap = sim::ms(500);
/// Before every time of a run: the first controller's activation.
constexpr sim::SimTime kLongAgo = sim::SimTime{INT64_MIN / 4};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
}  // namespace

sim::SimTime fence_check_period(std::int64_t broker_session_timeout_ms) {
  // session / 8 in Kafka's nanoseconds is session_ms x 125 microseconds, exactly.
  return std::max(sim::ms(1), sim::us(broker_session_timeout_ms * 125));
}

sim::SimTime last_on_grid(sim::SimTime origin, sim::SimTime interval, sim::SimTime t) {
  const std::int64_t k = floor_div((t - origin).count(), interval.count());
  return origin + interval * k;
}

sim::SimTime fence_run(sim::SimTime origin, sim::SimTime period, sim::SimTime contact,
                       sim::SimTime session, bool contact_at_activation) {
  const std::int64_t d = (contact + session - origin).count();
  const std::int64_t p = period.count();
  // The first k with origin + k x p > contact + session (>= when set at the activation).
  std::int64_t k = contact_at_activation ? -floor_div(-d, p) : floor_div(d, p) + 1;
  k = std::max<std::int64_t>(k, 1);
  return origin + period * k;
}

ElectionResult elect_after_leader_death(std::vector<SurvivingVoter> survivors, std::int32_t voters,
                                        sim::SimTime fetch_timeout) {
  const auto majority = static_cast<std::size_t>(voters / 2 + 1);
  if (survivors.size() < majority) return {};
  std::sort(survivors.begin(), survivors.end(),
            [](const SurvivingVoter& a, const SurvivingVoter& b) {
              return a.last_fetch != b.last_fetch ? a.last_fetch < b.last_fetch : a.id < b.id;
            });
  // The first majority-1 to time out are Prospective and grant; the majority-th wins.
  const SurvivingVoter& winner = survivors[majority - 1];
  return {.leader = winner.id, .at = winner.last_fetch + fetch_timeout};
}

ControllerQuorum::ControllerQuorum(const BrokerConfig& config, std::int32_t voters,
                                   std::uint64_t seed)
    : heartbeat_interval_(sim::ms(std::max<std::int64_t>(config.broker_heartbeat_interval_ms, 1))),
      session_(sim::ms(config.broker_session_timeout_ms)),
      period_(fence_check_period(config.broker_session_timeout_ms)),
      fetch_timeout_(sim::ms(config.controller_quorum_fetch_timeout_ms)),
      election_timeout_(sim::ms(config.controller_quorum_election_timeout_ms)),
      rng_(seed, "kraft-controller"),
      up_(static_cast<std::size_t>(voters), true),
      heartbeat_origin_(static_cast<std::size_t>(voters), sim::SimTime{0}),
      down_at_(static_cast<std::size_t>(voters), sim::kNever) {
  // Draws in a fixed order: the first election, the periodic task's phase, each broker's
  // heartbeat phase.
  elect_among_live(sim::SimTime{0});
  activation_ = kLongAgo;
  task_origin_ = -sim::us(rng_.uniform(0, period_.count() - 1));
  for (auto& origin : heartbeat_origin_)
    origin = sim::us(rng_.uniform(0, heartbeat_interval_.count() - 1));
}

std::int32_t ControllerQuorum::live_voters() const {
  return static_cast<std::int32_t>(std::count(up_.begin(), up_.end(), true));
}

void ControllerQuorum::elect_among_live(sim::SimTime now) {
  // Each live voter's election timeout in [t, 2t) ms (QuorumState.randomElectionTimeoutMs); the
  // first to expire wins (ties: the lowest id).
  active_ = -1;
  if (up_.empty() || live_voters() < static_cast<std::int32_t>(up_.size()) / 2 + 1) return;
  const std::int64_t t = sim::to_ms(election_timeout_);
  std::int64_t best = 0;
  for (std::size_t i = 0; i < up_.size(); ++i) {
    if (!up_[i]) continue;
    const std::int64_t drawn = t == 0 ? 0 : rng_.uniform(t, 2 * t - 1);
    if (active_ < 0 || drawn < best) {
      active_ = static_cast<std::int32_t>(i);
      best = drawn;
    }
  }
  activation_ = now + sim::ms(best);
  task_origin_ = activation_;
}

void ControllerQuorum::broker_down(std::int32_t b, sim::SimTime now, bool graceful) {
  const auto i = static_cast<std::size_t>(b);
  if (i >= up_.size() || !up_[i]) return;
  up_[i] = false;
  down_at_[i] = now;
  if (b != active_) return;
  const std::int32_t voters = static_cast<std::int32_t>(up_.size());
  if (graceful) {
    // EndQuorumEpoch: the first preferred successor runs at once.
    active_ = -1;
    if (live_voters() < voters / 2 + 1) return;
    active_ = static_cast<std::int32_t>(std::find(up_.begin(), up_.end(), true) - up_.begin());
    activation_ = now;
    task_origin_ = now;
    return;
  }
  std::vector<SurvivingVoter> survivors;
  for (std::size_t v = 0; v < up_.size(); ++v)
    if (up_[v])
      survivors.push_back({.id = static_cast<std::int32_t>(v),
                           .last_fetch = now - sim::us(rng_.uniform(0, kMaxFetchGap.count() - 1))});
  const ElectionResult r = elect_after_leader_death(std::move(survivors), voters, fetch_timeout_);
  active_ = r.leader;
  activation_ = r.at;
  task_origin_ = r.at;
}

void ControllerQuorum::broker_up(std::int32_t b, sim::SimTime now) {
  const auto i = static_cast<std::size_t>(b);
  if (i >= up_.size() || up_[i]) return;
  up_[i] = true;
  down_at_[i] = sim::kNever;
  heartbeat_origin_[i] = now;  // it registers, then heartbeats every interval
  // A quorum that had lost its majority elects again once it has one (as at the first start).
  if (active_ < 0) elect_among_live(now);
}

sim::SimTime ControllerQuorum::last_contact(std::int32_t b) const {
  const auto i = static_cast<std::size_t>(b);
  const sim::SimTime heartbeat =
      last_on_grid(heartbeat_origin_[i], heartbeat_interval_, down_at_[i]);
  return std::max(heartbeat, activation_);
}

sim::SimTime ControllerQuorum::fence_time(std::int32_t b) const {
  const auto i = static_cast<std::size_t>(b);
  if (active_ < 0 || i >= up_.size() || up_[i]) return sim::kNever;
  const sim::SimTime contact = last_contact(b);
  return fence_run(task_origin_, period_, contact, session_, contact == activation_);
}

}  // namespace rsim
