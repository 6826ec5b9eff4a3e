// A KafkaConsumer with group.protocol=consumer (KIP-848): Kafka's AsyncKafkaConsumer with its
// background network thread (ConsumerHeartbeatRequestManager, ConsumerMembershipManager,
// CommitRequestManager) and its application thread, which runs every rebalance callback inside
// poll(). Records, positions and processing are the shared RecordConsumption component, driven
// as Kafka's AsyncPollEvent does: positions from OffsetFetch (with member id and epoch), then
// ListOffsets for auto.offset.reset; commits (auto-commit, before reconciliation, commitSync /
// commitAsync, close) carry all_consumed().
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/client/consumer_client.hpp"
#include "models/client/consumer_model.hpp"
#include "models/client/quiet_chain.hpp"
#include "models/client/record_consumption.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/member_id_replay.hpp"
#include "models/protocol/messages.hpp"
#include "models/protocol/model_options.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/rng.hpp"

namespace rsim {

class Workload;
class LagMonitor;

/// The client's member states (org.apache.kafka.clients.consumer.internals.MemberState).
enum class ConsumerMemberState {
  UNSUBSCRIBED,
  JOINING,
  RECONCILING,
  ACKNOWLEDGING,
  STABLE,
  FENCED,
  PREPARE_LEAVING,
  LEAVING,
  FATAL,
  STALE,
};
const char* member_state_name(ConsumerMemberState s);

class AsyncConsumer final : public QuietReturns<AsyncConsumer> {
 public:
  AsyncConsumer(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& network,
                const ClusterMetadata& cluster, const ConsumerSpec& spec, ConsumerConfig config,
                std::uint64_t seed, Workload& workload, LagMonitor* lag);
  AsyncConsumer(const AsyncConsumer&) = delete;
  AsyncConsumer& operator=(const AsyncConsumer&) = delete;

  ConsumerMemberState state() const { return state_; }

  void start() override;
  void subscribe(std::vector<std::string> topics) override;

  void on_message(sim::NodeId from, Envelope&& envelope) override;

  /// A recording's member ids, taken in place of this client's own draws (the World's; may be
  /// null).
  void set_member_id_replay(MemberIdReplay* replay) { member_ids_ = replay; }

 private:
  /// Work the background thread hands to the application thread (callbacks run in poll()).
  struct AppEvent {
    enum class Kind { Revoke, Assign, Lost, Leave };
    Kind kind;
    TopicPartitions partitions;
    std::uint64_t reconciliation = 0;  // which reconciliation it belongs to (Revoke, Assign)
  };
  enum class Reconcile { Idle, Committing, Revoking, Assigning };

  // Application thread.
  void poll_pass() override { pass(); }
  void on_poll_loop_continue() override;
  void first_poll() override;
  void on_app_wake() override;
  void on_positions_changed();
  void pass();
  /// When the application's wait for records in this pass ends at the latest: Kafka's
  /// pollForFetches bounds it by retry.backoff.ms (no partition, a position missing, or a
  /// fetchable partition with nothing buffered) and by the network thread's maximumTimeToWait
  /// (the next heartbeat, the next auto-commit, retry.backoff.ms without a Fetch in flight).
  /// A bound of zero is a busy loop (the first join, while the heartbeat interval is still 0):
  /// spinning_ is set and the next response the network thread handles starts a pass.
  /// The network thread caches maximumTimeToWait at the end of its loop, after its blocking
  /// network poll, computed with the time the loop started (ConsumerNetworkThread.runOnce). A
  /// pass's AsyncPollEvent wakes it: the pass's wait reads the value of the loop the event ends,
  /// which started at the network thread's previous wake (network_wake(): the previous pass, a
  /// request sent, a response, a Fetch's end, a callback's completion), with the deadlines as
  /// they were before the event. So the next heartbeat and auto-commit bound the wait from that
  /// wake, not from the pass: a deadline d bounds it at now + (d - wake), and a pass does not wake
  /// at a deadline inside its call when the network thread did not wake since the previous pass
  /// (finding 27). When the auto-commit timer had expired by that wake with no commit in
  /// flight, the value is 0: a RECONCILING member's pass (which waits for its event's
  /// reconciliation check, so it reads that value) ends its wait at once and poll() loops again
  /// in the same call (loop_at_once_, finding 11), though not into the onPartitionsAssigned that
  /// a revocation in that pass leads to (finding 33). Later waits of the pass (after a callback,
  /// a wake) read the deadlines afresh: the network thread has run since.
  sim::SimTime wait_bound();
  /// The start of the network thread's latest loop before now: its last wake (see wait_bound()).
  sim::SimTime network_wake() const { return std::max(last_poll_, network_woke_); }
  /// FetchBuffer.wakeup(): a waiting poll() makes a pass now; otherwise its next wait ends at once.
  void wake_app();
  // Records (fetch, processing, commits after a batch), around RecordConsumption.
  void maybe_return_records();
  void drain_app_events();
  void run_app_event(const AppEvent& e);
  void on_app_event_done(const AppEvent& e);
  void start_close();
  void continue_close() override;
  sim::Timer& coordinator_retry_timer() override { return coordinator_retry_timer_; }
  void on_coordinator_lookup_done(bool) override {
    maybe_heartbeat();  // a heartbeat goes out as soon as the coordinator is known
  }

  // Background thread: membership, heartbeats, commits.
  void on_poll_event();
  void transition(ConsumerMemberState to);
  void transition_to_joining();
  void transition_to_fenced(ErrorCode why);
  void maybe_reconcile(bool can_commit);
  void after_reconcile_commit();
  void abort_reconciliation();
  /// When the next heartbeat may go (see retry_now_not_before_).
  sim::SimTime heartbeat_due() const;
  void maybe_heartbeat();
  void send_heartbeat();
  void send_leave_heartbeat(std::int32_t epoch);
  void on_poll_timer_expired();
  /// The heartbeat manager's poll at a wake of the background thread: true (and the member
  /// leaves) when the poll timer has expired and the member is in the group, not leaving.
  bool leave_if_poll_timer_expired();
  void leave_on_poll_timeout();
  void on_heartbeat_response(const InFlight& req, const ConsumerGroupHeartbeatResponse& r);
  void on_offset_commit_response(const InFlight& req, const OffsetCommitResponse& r,
                                 const std::string& purpose);
  /// Sends an OffsetCommit of all_consumed() (member id, and the epoch when the member has one);
  /// std::nullopt when there is nothing to commit or no coordinator (no request, as Kafka
  /// completes an empty commit locally).
  std::optional<std::int32_t> send_offset_commit(const std::string& purpose) override;
  void retry_reconcile_commit();
  /// A Fetch ended (ConsumerClient's fetching): like any Fetch's end, it wakes the
  /// application's wait. Records themselves are delivered by RecordConsumption (a waiting poll()
  /// gets them `Route::delay` after their append), which also ends the Fetch that carried them.
  void on_fetch_ended() override {
    network_woke_ = kernel_.now();
    wake_app();
  }
  // Positions (OffsetsRequestManager): OffsetFetch, then ListOffsets.
  void update_fetch_positions();
  /// The context of position lookups (OffsetForLeaderEpoch, ListOffsets): no member epoch.
  static RequestContext lookup_context() { return RequestContext{0, {}, {}}; }
  void on_offset_fetch_response(std::int32_t id, const OffsetFetchResponse& r);
  void on_list_offsets_response(std::int32_t id, const ListOffsetsResponse& r);
  void on_offsets_for_leader_epoch_response(std::int32_t id,
                                            const OffsetsForLeaderEpochResponse& r);
  void fail_fatally(ErrorCode error);

  // Network client.
  std::int32_t send_request(sim::NodeId to, Message request, std::int64_t timeout_ms,
                            std::int32_t epoch = 0);
  void fail_in_flight(std::int32_t id, const InFlight& req) override;
  void handle_response(const InFlight& req, std::int32_t id, const Message& response);

  // Helpers.
  void on_callback_end() override;
  void set_owned(TopicPartitions owned);
  std::string generate_member_id();
  void reset_client_state() override;
  bool in_group() const;

  sim::Timer close_retry_timer_;
  sim::Timer heartbeat_timer_;
  sim::Timer poll_timer_;
  sim::Timer coordinator_retry_timer_;
  sim::Timer reconcile_commit_timer_;

  // Membership (reset at every start).
  ConsumerMemberState state_ = ConsumerMemberState::UNSUBSCRIBED;
  std::string member_id_;
  std::int32_t member_epoch_ = 0;
  std::optional<TopicPartitions> target_;  // the latest assignment the coordinator sent
  bool has_current_ =
      false;  // false: the current assignment is NONE (before the first reconciliation)
  TopicPartitions owned_;
  std::vector<std::string> topics_;
  bool subscription_updated_ = false;
  bool leaving_due_to_poll_timer_ = false;
  bool closing_leave_ = false;

  // Reconciliation in progress.
  Reconcile reconcile_ = Reconcile::Idle;
  std::uint64_t reconciliation_ = 0;
  TopicPartitions rec_target_, rec_added_, rec_revoked_;
  std::optional<std::int32_t> rec_commit_id_;
  sim::SimTime rec_commit_deadline_{0};
  int rec_commit_attempts_ = 0;

  // Heartbeats: the interval starts at 0, so the first one goes out at once.
  std::int64_t heartbeat_interval_ms_ = 0;
  sim::SimTime next_heartbeat_{0};
  sim::SimTime backoff_until_{0};
  /// A JOINING or ACKNOWLEDGING member heartbeats at once, whatever the backoff
  /// (AbstractHeartbeatRequestManager.poll: shouldHeartbeatNow and nothing in flight); only not
  /// before this, a kSpinTurn after its last failure, so that a failure answered at once cannot
  /// loop within one instant.
  sim::SimTime retry_now_not_before_{0};
  int heartbeat_attempts_ = 0;
  std::optional<std::int32_t> heartbeat_in_flight_;
  // What the last heartbeat sent, for the fields sent only on change (§15.4).
  bool sent_valid_ = false;
  std::vector<std::string> sent_topics_;
  std::optional<TopicPartitions> sent_owned_;

  // Application thread.
  std::deque<AppEvent> app_events_;
  std::size_t drain_remaining_ = 0;
  std::optional<AppEvent> running_event_;
  sim::SimTime close_deadline_{0};
  std::optional<std::int32_t> close_commit_id_;
  bool close_commit_sent_ = false;
  std::optional<std::int32_t> leave_id_;
  sim::SimTime next_auto_commit_{0};
  std::optional<std::int32_t> auto_commit_in_flight_;
  sim::SimTime last_poll_{0};

  // Records.
  sim::SimTime lookup_not_before_{0};  // backoff after a failed OffsetFetch
  bool buffer_woken_ = false;          // FetchBuffer's wokenup flag: the next wait ends at once
  bool spinning_ = false;              // the application's wait bound was zero (see wait_bound())
  /// This pass's wait ends at once: the network thread's cached wait was 0 (see wait_bound()).
  bool loop_at_once_ = false;
  /// The network thread's last wake other than a pass (a request sent, a response, a Fetch's
  /// end, a callback's completion); see network_wake().
  sim::SimTime network_woke_{0};
  /// The pass's own wait is next (see wait_bound()): the network thread's wake before the pass
  /// and the auto-commit deadline before its AsyncPollEvent.
  bool pass_wait_ = false;
  sim::SimTime pass_wake_{0};
  sim::SimTime pass_auto_commit_{0};

  // Coordinator discovery and the network client.

  // Quiet passes and quiet chains (QuietReturns), with the KIP-848 client's own bounds: a quiet
  // pass finds the member STABLE, a Fetch in flight to every broker, no record there before the
  // next append, and nothing due; it re-arms the next return, the poll timer
  // (max.poll.interval.ms) and the fetch wake-up. Each return of a chain elides the poll timer's
  // re-arm.
  friend class QuietReturns<AsyncConsumer>;
  /// After a full return of poll(): whether the client is in the quiet state, and its bounds.
  void note_quiet_pass();
  /// The timer a quiet pass re-arms (and a chain's return elides the re-arm of): the poll
  /// timer, max.poll.interval.ms after the pass.
  sim::Timer* chain_timer() { return &poll_timer_; }
  Rearm chain_rearm() const { return {sim::ms(config_.max_poll_interval_ms), true}; }
  /// Any quiet pass may open a chain.
  bool chain_may_open() const { return true; }
  /// What else a quiet pass leaves: nothing left to drain, no spinning.
  void quiet_pass_state() {
    drain_remaining_ = 0;
    spinning_ = false;
  }
  /// The quiet state's fixed bound (the next heartbeat or auto-commit) as a quiet return's wait
  /// reads it: from the network thread's last wake (see wait_bound()).
  /// (A pass at this instant already read that wake: the checked quiet pass runs after the full
  /// one.)
  sim::SimTime quiet_fixed_bound(sim::SimTime now) const {
    const sim::SimTime fixed = quiet_pass_.fixed_bound;
    const sim::SimTime wake = last_poll_ == now ? pass_wake_ : network_wake();
    return fixed == sim::kNever ? fixed : sim::saturating_add(fixed, now - wake);
  }
  /// In a chain the network thread's last wake is the previous return, a poll_call_length()
  /// before: the bound is `until` + that, after the next return, so it never ends a chain.
  sim::SimTime chain_fixed_bound() const { return sim::kNever; }
  /// What a pass leaves that the checked quiet pass compares: poll-return, poll and fetch-wake
  /// timers (armed, deadline), the last poll, in_poll, spinning and the drain left.
  using PollState = std::tuple<bool, sim::SimTime, bool, sim::SimTime, bool, sim::SimTime,
                               sim::SimTime, bool, bool, std::size_t>;
  PollState poll_state() const;
  MemberIdReplay* member_ids_ = nullptr;
};

}  // namespace rsim
