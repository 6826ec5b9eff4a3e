// The KRaft controller quorum of the simulated cluster and the active controller's fence of a
// broker it no longer hears from (issue 40). The cluster runs in combined mode, as the oracle's
// real cluster does (tools/kafka-oracle/runner Cluster.java: process.roles=broker,controller on
// every broker, controller.quorum.voters = every broker): every broker is a voter, one of them is
// the active controller, and a broker that dies may take the active controller with it.
//
// The rules, from Kafka's source (read for behaviour only):
// - A live broker heartbeats the controller every broker.heartbeat.interval.ms
//   (BrokerLifecycleManager: the next heartbeat is scheduled that long after each answer).
// - The active controller records the time of each heartbeat (BrokerHeartbeatTracker) and, every
//   max(1 ms, broker.session.timeout.ms / 8) from its activation (QuorumController's periodic task
//   maybeFenceStaleBroker), fences a broker whose last contact is expired: contact + session < now.
// - A controller that becomes active starts every registered, unfenced broker's contact at its
//   activation (ClusterControlManager.activate), before it schedules its periodic tasks
//   (CompleteActivationEvent), so the check at exactly activation + session already fences.
// - When the active controller dies, each surviving voter turns Prospective
//   controller.quorum.fetch.timeout.ms after its last successful Fetch from it (the leader answers
//   within 500 ms: KafkaRaftClient's MAX_FETCH_WAIT_MS, and writes a NoOpRecord every
//   metadata.max.idle.interval.ms, 500) and asks the others for pre-votes; a follower still
//   attached to the leader refuses (FollowerState.canGrantVote), a Prospective voter grants. So
//   the voter that is the majority-th to time out collects a majority at its own timeout and is
//   elected at once (Candidate, then the Vote that the others, now at a lower epoch, grant).
//   Requires the first prospective's election timeout (controller.quorum.election.timeout.ms, at
//   least) to outlast the spread of the timeouts (at most 500 ms); local round trips are left out.
// - A controller that stops gracefully resigns (EndQuorumEpoch): its first preferred successor
//   runs at once (KafkaRaftClient.strictExponentialElectionBackoffMs: position 0, no backoff; the
//   later ones wait up to controller.quorum.election.backoff.max.ms, which the model never needs).
//   The successors are ordered by their fetched offset, equal here: the lowest live id.
// - The first active controller: every voter starts Unattached with an election timeout drawn in
//   [election.timeout.ms, 2 x election.timeout.ms) (QuorumState.randomElectionTimeoutMs); the
//   first to expire is granted the pre-votes and the votes of the others. The oracle starts all
//   its brokers at once, so it is a uniform draw among the voters, made from the stream
//   "kraft-controller" (ties: the lowest id). The cluster runs since before the scenario's start:
//   the phases of the brokers' heartbeats and of the periodic task are drawn from the same stream.
// - Without a majority of live voters there is no active controller: nobody fences anyone.
#pragma once
#include <cstdint>
#include <vector>

#include "models/spec/kafka_config.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace rsim {

/// maybeFenceStaleBroker's period: max(1 ms, broker.session.timeout.ms / 8).
sim::SimTime fence_check_period(std::int64_t broker_session_timeout_ms);

/// The latest point origin + k x interval (k any integer) at or before t.
sim::SimTime last_on_grid(sim::SimTime origin, sim::SimTime interval, sim::SimTime t);

/// The run of the periodic fence check (origin + k x period, k >= 1) that fences a broker last
/// heard from at `contact`: the first with contact + session < run, or contact + session <= run
/// when the contact was set by the controller's activation (set before the task is scheduled).
sim::SimTime fence_run(sim::SimTime origin, sim::SimTime period, sim::SimTime contact,
                       sim::SimTime session, bool contact_at_activation);

/// A voter that outlives the leader, with the time of its last successful Fetch from it.
struct SurvivingVoter {
  std::int32_t id = 0;
  sim::SimTime last_fetch{0};
};
struct ElectionResult {
  std::int32_t leader = -1;  // -1: no majority, no leader
  sim::SimTime at = sim::kNever;
};
/// The leader's successor among `survivors` of a quorum of `voters` voters: the majority-th to
/// reach last_fetch + fetch_timeout, at that time (ties: the lowest id first).
ElectionResult elect_after_leader_death(std::vector<SurvivingVoter> survivors, std::int32_t voters,
                                        sim::SimTime fetch_timeout);

class ControllerQuorum {
 public:
  /// `voters` brokers 0 .. voters-1, all alive at time 0. Draws from the stream "kraft-controller".
  ControllerQuorum(const BrokerConfig& config, std::int32_t voters, std::uint64_t seed);

  std::int32_t active() const { return active_; }  // -1: none
  /// When the active controller became (or becomes) active; contacts start there. Before the
  /// scenario's start for the first one.
  sim::SimTime activation() const { return activation_; }
  /// Where the periodic fence check's runs are counted from (its activation for a controller
  /// elected during the run; a drawn phase for the first one).
  sim::SimTime task_origin() const { return task_origin_; }

  /// Broker b's process stopped at `now` (crash, kill, or a graceful stop); a leader that dies
  /// is succeeded as the rules say.
  void broker_down(std::int32_t b, sim::SimTime now, bool graceful);
  /// Broker b's process started at `now`: it registers and heartbeats from now on, a follower.
  void broker_up(std::int32_t b, sim::SimTime now);

  /// The active controller's last contact with broker b, which is down: its last heartbeat
  /// before it died, or the controller's activation if that came later.
  sim::SimTime last_contact(std::int32_t b) const;
  /// When the active controller fences broker b (down, not fenced yet); kNever without one.
  sim::SimTime fence_time(std::int32_t b) const;

 private:
  void elect_among_live(sim::SimTime now);
  std::int32_t live_voters() const;

  sim::SimTime heartbeat_interval_;
  sim::SimTime session_;
  sim::SimTime period_;
  sim::SimTime fetch_timeout_;
  sim::SimTime election_timeout_;
  sim::Rng rng_;
  std::vector<bool> up_;
  std::vector<sim::SimTime> heartbeat_origin_;  // heartbeats at origin + k x interval
  std::vector<sim::SimTime> down_at_;
  std::int32_t active_ = -1;
  sim::SimTime activation_{0};
  sim::SimTime task_origin_{0};
};

}  // namespace rsim
