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

class ClassicConsumer final : public ConsumerClient {
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

  /// Every quiet return of poll() (see quiet_poll_return()) also runs the full pass and checks
  /// that both leave the same state; a difference is an internal error (exit 3). ModelOptions::
  /// check_quiet_passes, set by the world.
  void check_quiet_passes(bool on) { check_quiet_passes_ = on; }
  /// Whether quiet returns of poll() may form quiet chains (see quiet_pass()); on by default.
  /// ModelOptions::quiet_chains, set by the world.
  void quiet_chains(bool on) { quiet_chains_ = on; }
  /// Where the client counts its quiet passes (the world's ModelCounters); null: not counted.
  void count_into(ModelCounters* counters) { counters_ = counters; }

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

  // Quiet returns of poll(). In the steady state most returns of poll() at its timeout find
  // nothing to do: the member is STABLE with nothing to join or commit, every position is valid,
  // a Fetch is in flight to every broker, no record can be there before the next append, and no
  // heartbeat or auto-commit is due. Such a return only re-arms its timers (the next return, the
  // auto-commit timer at its unchanged deadline, the fetch wake-up); once a full return or a
  // frequent entry left the client in that state and nothing entered the client since
  // (entries_), the next return does just that, at the same instants, in the same order, with
  // the same kernel sequence numbers as the full pass (AsyncConsumer's quiet passes, with the
  // classic client's own bounds).
  struct QuietPass {
    bool valid = false;
    std::uint64_t entries = 0;  // entries_ as the pass ended
    /// The next heartbeat (the pass notifies the heartbeat thread then) or auto-commit: a pass
    /// then acts.
    sim::SimTime until{0};
  };
  bool quiet_poll_return() override;
  void settled() override { note_quiet_pass(); }
  /// At the end of an entry: whether the client is in the quiet state, and its bound.
  void note_quiet_pass();
  /// What a quiet return does at `now`: full_poll_return(), begin_poll() and pass() in the quiet
  /// state, their timers armed alike. With `may_chain`, a return that arms no fetch wake-up
  /// opens a quiet chain (below).
  void quiet_pass(bool may_chain);

  // Quiet chains (as AsyncConsumer's): a quiet return that opens a chain queues its next return
  // as an entry of `chain_` instead of the poll-return timer's, with the same (time, sequence
  // number). While each return would be quiet again the chain takes it without touching the
  // client: it takes the sequence numbers the pass would take (the next return's, then the
  // auto-commit timer's, whose re-arm at the same deadline the kernel elides and counts as the
  // pass would), queues its next entry and counts the pass. The first entry into the client
  // (entered()) or a return that would not be quiet closes the chain: write_chain() writes its
  // passes into the client (last_poll_, entries_, the auto-commit timer's last arm) and hands the
  // queued return to the poll-return timer (Timer::adopt_queued). Events, their order, their
  // sequence numbers and Kernel::fired() are those of the returns one by one.
  struct QuietChain final : sim::EventTarget {
    explicit QuietChain(ClassicConsumer& c) : owner(c) {}
    void fire(std::uint64_t id) override { owner.on_chain_return(id); }
    std::string actor() const override;
    ClassicConsumer& owner;
    std::uint64_t id = 0;       // the open chain's; entries of closed chains are stale
    std::uint64_t returns = 0;  // quiet returns the chain took since it opened
    sim::SimTime next_at{0};    // the chain's queued return: (next_at, next_seq)
    std::uint64_t next_seq = 0;
    sim::SimTime last{0};           // the last return it took (when returns > 0)
    std::uint64_t commit_seq = 0;   // that return's auto-commit re-arm: its sequence number
    bool commit_counted = false;    // and whether the kernel counted its elision
    bool auto_commit = false;       // the passes re-arm the auto-commit timer
    sim::SimTime until{0};          // a return at or after it may not be quiet
    sim::SimTime commit_queued{0};  // the auto-commit timer's queued entry (sim::kNever: none)
    sim::SimTime wake{0};           // the fetch wake-up a pass would arm (sim::kNever: none)
    sim::SimTime turn{0};           // poll.timeout, at least a turn
    std::uint64_t epoch = 0;        // the reach epoch and production layout it holds for
    std::uint64_t layout = 0;
  };
  void open_chain(sim::SimTime ret_at);
  void on_chain_return(std::uint64_t id);
  /// An entry into the client closes the open chain (see write_chain()).
  void close_chain() override;
  /// Writes the chain's returns into the client and hands its queued return to the timer: the
  /// generation the entry fires the timer with.
  std::uint64_t write_chain();
  /// Returns of closed chains still queued, handed to the timer: (chain id, timer generation).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> handed_;
  /// What a return leaves that the checked quiet pass compares: the poll-return, auto-commit and
  /// fetch-wake timers (armed, deadline), the last poll, in_poll and all_fetch_positions.
  using PollState = std::tuple<bool, sim::SimTime, bool, sim::SimTime, bool, sim::SimTime,
                               sim::SimTime, bool, bool>;
  PollState poll_state() const;
  QuietPass quiet_pass_;
  QuietChain chain_{*this};
  bool quiet_chains_ = true;
  bool check_quiet_passes_ = false;
  ModelCounters* counters_ = nullptr;
};

}  // namespace rsim
