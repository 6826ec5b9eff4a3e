// A KafkaConsumer with group.protocol=classic (ClassicKafkaConsumer + ConsumerCoordinator +
// AbstractCoordinator): an application thread that calls poll() in a loop and a heartbeat
// thread, over the simulated network. Records, positions and processing are the shared
// RecordConsumption component: positions come from OffsetFetch (then ListOffsets for
// auto.offset.reset), poll() returns up to max.poll.records, the application processes them
// and commits by the scenario's `commit` mode.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/client/consumer_client.hpp"
#include "models/client/consumer_model.hpp"
#include "models/client/quiet_chain.hpp"
#include "models/client/record_consumption.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
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

enum class MemberState { UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE };

class ClassicConsumer final : public QuietReturns<ClassicConsumer> {
 public:
  ClassicConsumer(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& network,
                  const ClusterMetadata& cluster, const ConsumerSpec& spec, ConsumerConfig config,
                  std::uint64_t seed, Workload& workload, LagMonitor* lag);
  ClassicConsumer(const ClassicConsumer&) = delete;
  ClassicConsumer& operator=(const ClassicConsumer&) = delete;

  const std::string& name() const { return spec_.name; }
  bool alive() const { return process_.alive(); }

  // The scenario's script.
  void start() override;
  void subscribe(std::vector<std::string> topics) override;

  void on_message(sim::NodeId from, Envelope&& envelope) override;

 private:
  struct Generation {
    std::int32_t id = -1;
    std::string member_id;
    std::string protocol;
    bool operator==(const Generation&) const = default;
  };
  enum class JoinFuture { None, Pending, Succeeded, Failed };
  enum class PrepareStage { Start, Committing, CommitDone, Revoking, Done };
  enum class CompleteStage { Start, Revoking, Assigning, Done };
  static Generation generation_of(const InFlight& req) {
    return {req.context.epoch, req.context.member_id, req.context.protocol};
  }

  // Application thread.
  void poll_pass() override { pass(); }
  void on_app_wake() override;
  /// One turn of poll()'s loop. `resumed`: the turn a blocking OffsetFetch was waiting in goes
  /// on with its answer (updateFetchPositions does not validate or re-check positions again).
  void pass(bool resumed = false);
  bool join_group_if_needed();
  bool on_join_prepare();
  bool on_join_complete();
  void initiate_join_group();
  void maybe_auto_commit();
  // Records (poll/fetch/positions/processing/commits), around RecordConsumption.
  bool coordinator_poll();
  void update_fetch_positions(bool resumed);
  void maybe_return_records();
  bool commit_fails_locally(const std::string& purpose) override;
  void on_poll_loop_continue() override;
  void first_poll() override;
  void continue_close() override;
  sim::Timer& coordinator_retry_timer() override { return retry_timer_; }
  void on_coordinator_lookup_done(bool found) override {
    if (found)
      session_deadline_ = sim::saturating_add(kernel_.now(), sim::ms(config_.session_timeout_ms));
    on_app_wake();
  }

  // Heartbeat thread.
  void on_heartbeat_tick();
  void arm_heartbeat_tick();
  void wait_one_backoff();
  void fail_heartbeat();
  void set_heartbeat_due(sim::SimTime due);
  void enable_heartbeat();
  void maybe_leave_group(const std::string& reason);

  // Network client.
  std::int32_t send_request(sim::NodeId to, Message request, std::int64_t timeout_ms);
  /// The generation a request is sent in (its answer is stale once the generation changed).
  RequestContext generation_context() const {
    return RequestContext{generation_.id, generation_.member_id, generation_.protocol};
  }
  void fail_in_flight(std::int32_t correlation_id, const InFlight& req) override;
  void handle_response(const InFlight& req, const Message& response);

  void on_join_group_response(const InFlight& req, const JoinGroupResponse& r);
  void on_sync_group_response(const InFlight& req, const SyncGroupResponse& r);
  /// Completes the pending Join/Sync with an error (forgetting the coordinator if it is gone).
  void fail_join(ErrorCode error);
  void on_heartbeat_response(const InFlight& req, const HeartbeatResponse& r);
  void on_offset_commit_response(const InFlight& req, const OffsetCommitResponse& r,
                                 const std::string& purpose);
  void on_leave_group_response(const LeaveGroupResponse& r);
  void on_offset_fetch_response(std::int32_t id, const OffsetFetchResponse& r);
  void on_list_offsets_response(std::int32_t id, const ListOffsetsResponse& r);
  void on_offsets_for_leader_epoch_response(std::int32_t id,
                                            const OffsetsForLeaderEpochResponse& r);

  // Helpers.
  std::vector<JoinGroupProtocol> join_protocols() const;
  std::vector<SyncGroupAssignment> run_assignor(const JoinGroupResponse& r);
  void take_assignment_snapshot(const JoinGroupResponse& r);
  /// The SyncGroup of a JoinGroup answer: the leader's carries its assignment (none for a
  /// returning static leader); the join future completes with its answer.
  void send_sync_group(const JoinGroupResponse& r);
  /// The group subscribes to a topic outside the leader's own subscription
  /// (updateGroupSubscription), so the leader waits for a metadata update before it assigns.
  bool leader_needs_metadata(const JoinGroupResponse& r) const;
  /// A Metadata request of the client (NetworkClient's DefaultMetadataUpdater): its correlation
  /// id, where it went (broker index; the broker count when no broker could be asked), and
  /// whether it went over a cut link (no answer comes: it times out).
  struct MetadataRequest {
    std::int32_t id = -1;
    std::size_t broker = 0;
    bool timed_out = false;
    bool in_flight = false;
  };
  /// Sends a Metadata request to the least loaded node and arms `answer` at its answer: the
  /// broker reads it only once its answer to a Fetch in flight on that connection is sent
  /// (docs/fidelity.md, findings 9 and 12). No broker to ask: `answer` fires after the refresh
  /// backoff with `timed_out` set, and the caller asks again.
  void send_metadata_request(MetadataRequest& req, sim::Timer& answer);
  /// The answer (or the timeout) of `req` is here: traces it; false when it timed out.
  bool receive_metadata_answer(MetadataRequest& req);
  /// ensureFreshMetadata of a leader that assigns a topic outside its subscription.
  void send_leader_metadata_request();
  void on_leader_metadata_response();
  /// metadata.max.age.ms elapsed since the last successful refresh (Metadata.timeToNextUpdate):
  /// NetworkClient.maybeUpdate sends a Metadata request (none while one is in flight), and the
  /// next refresh is timed from its answer (Metadata.update sets lastSuccessfulRefreshMs).
  void send_periodic_metadata_request();
  void on_periodic_metadata_response();
  /// The client's metadata cache (partition counts and leaders): refreshed when the consumer
  /// starts, when a topic it needs is unknown, at the answer of the periodic request every
  /// metadata.max.age.ms, and after a requested update (a disconnect, NOT_LEADER_OR_FOLLOWER).
  void refresh_metadata(const std::string& why);
  void on_metadata_response(const std::string& why) override { refresh_metadata(why); }
  /// The leader's check of ConsumerCoordinator.rejoinNeededOrPending: partition counts of the
  /// group's topics differ from those the last assignment was computed with.
  bool assignment_metadata_changed() const;
  /// Sends an OffsetCommit of allConsumed(); std::nullopt when there is nothing to commit (Kafka
  /// completes such a commit locally, without a request).
  std::optional<std::int32_t> send_offset_commit(const std::string& purpose) override;
  void on_callback_end() override;
  void set_owned(TopicPartitions owned);
  void throw_heartbeat_failure();
  void reset_generation(bool reset_member_id, const std::string& why);
  void request_rejoin(const std::string& why);
  void fail_fatally(ErrorCode error, const std::string& where);
  bool is_cooperative() const { return cooperative_; }
  void reset_client_state() override;
  void on_fetch_ended() override;

  bool cooperative_ = false;

  // Application-thread timers.
  sim::Timer retry_timer_;
  sim::Timer auto_commit_timer_;
  /// poll() blocks on the network no longer than the time to the next heartbeat
  /// (ConsumerCoordinator.timeToNextPoll): then its pass notifies the heartbeat thread.
  sim::Timer heartbeat_due_timer_;
  // Heartbeat-thread and network timers.
  sim::Timer heartbeat_tick_;
  sim::Timer metadata_timer_;
  sim::Timer leader_metadata_timer_;    // the answer of the leader's Metadata request
  sim::Timer periodic_metadata_timer_;  // the answer of the metadata.max.age.ms refresh
  // Script timers (no activity: they act on the process from outside).

  // Client state (reset at every start).
  MemberState state_ = MemberState::UNJOINED;
  Generation generation_;
  bool rejoin_needed_ = true;
  bool needs_join_prepare_ = true;
  JoinFuture join_future_ = JoinFuture::None;
  ErrorCode join_error_ = ErrorCode::NONE;
  TopicPartitions join_assignment_;
  PrepareStage prepare_stage_ = PrepareStage::Start;
  CompleteStage complete_stage_ = CompleteStage::Start;
  TopicPartitions pending_revoked_;
  bool is_leader_ = false;
  TopicPartitions owned_;
  std::vector<std::string> topics_;
  std::map<std::string, std::int32_t> metadata_;  // topic -> partition count, as last fetched
  std::optional<std::map<std::string, std::int32_t>> assignment_snapshot_;  // leader only
  /// The leader's JoinGroup answer while it waits for metadata before assigning.
  std::optional<JoinGroupResponse> leader_join_;
  MetadataRequest leader_metadata_;    // its Metadata request
  MetadataRequest periodic_metadata_;  // the metadata.max.age.ms refresh's request

  bool fatal_ = false;
  sim::SimTime close_deadline_{0};
  std::optional<std::int32_t> prepare_commit_id_;
  std::optional<std::int32_t> close_commit_id_;
  std::optional<std::int32_t> leave_id_;
  bool close_commit_sent_ = false;
  sim::SimTime next_auto_commit_{0};

  bool heartbeat_enabled_ = false;
  bool heartbeat_awaits_notify_ = false;  // in wait(): a notify() wakes it before its timeout
  bool heartbeat_failed_ = false;
  sim::SimTime heartbeat_due_{0};
  /// The end of the heartbeat thread's current wait: its last pass plus whole steps of
  /// retry.backoff.ms, each `heartbeat_wakeup_lateness_ms` late.
  sim::SimTime heartbeat_wake_{0};
  sim::Rng heartbeat_rng_;  // heartbeat_wakeup_lateness_ms
  sim::SimTime session_deadline_{0};
  sim::SimTime last_poll_{0};
  int heartbeat_attempts_ = 0;

  // Records.
  /// An OffsetFetch answer not yet applied (Kafka's pendingCommittedOffsetRequest): applied in
  /// updateFetchPositions, after its validation step.
  std::optional<std::vector<PartitionOffset>> committed_answer_;
  /// Kafka's cachedSubscriptionHasAllFetchPositions, as of the last updateFetchPositions: while
  /// false, a poll() waiting for records passes again after retry.backoff.ms at the latest.
  bool all_fetch_positions_ = true;

  std::int32_t handling_id_ = 0;  // correlation id of the response being handled

  // Quiet returns of poll() and quiet chains (QuietReturns), with the classic client's own
  // bounds: a quiet return finds the member STABLE with nothing to join or commit, every
  // position valid, a Fetch in flight to every broker, no record there before the next append,
  // and no heartbeat (its notification) or auto-commit due; it re-arms the next return, the
  // auto-commit timer at its unchanged deadline and the fetch wake-up. Each return of a chain
  // elides the auto-commit timer's re-arm.
  friend class QuietReturns<ClassicConsumer>;
  /// At the end of an entry: whether the client is in the quiet state, and its bound.
  void note_quiet_pass();
  /// The timer a quiet return re-arms (maybe_auto_commit(): nothing due, the timer armed at its
  /// deadline again) and a chain's return elides the re-arm of: the auto-commit timer (when
  /// enabled), at its unchanged deadline.
  sim::Timer* chain_timer() { return config_.enable_auto_commit ? &auto_commit_timer_ : nullptr; }
  Rearm chain_rearm() const { return {next_auto_commit_, false}; }
  /// A chain needs the auto-commit timer's re-arm at its unchanged deadline to be elided.
  bool chain_may_open() const {
    return !config_.enable_auto_commit ||
           (auto_commit_timer_.queued() && auto_commit_timer_.queued_at() <= next_auto_commit_);
  }
  /// What else a quiet return leaves: every position valid (updateFetchPositions), so no
  /// retry.backoff.ms bound either.
  void quiet_pass_state() { all_fetch_positions_ = true; }
  /// The quiet state's fixed bound as it is (none: sim::kNever), at a return and in a chain.
  sim::SimTime quiet_fixed_bound(sim::SimTime) const { return quiet_pass_.fixed_bound; }
  sim::SimTime chain_fixed_bound() const { return quiet_pass_.fixed_bound; }
  /// What a return leaves that the checked quiet pass compares: the poll-return, auto-commit and
  /// fetch-wake timers (armed, deadline), the last poll, in_poll and all_fetch_positions.
  using PollState = std::tuple<bool, sim::SimTime, bool, sim::SimTime, bool, sim::SimTime,
                               sim::SimTime, bool, bool>;
  PollState poll_state() const;
};

}  // namespace rsim
