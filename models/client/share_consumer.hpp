// KafkaShareConsumer (ShareConsumerImpl) as far as it shapes timing (kafka-share-groups.md §6):
// coordinator discovery (FindCoordinator to the least loaded broker, CoordinatorRequestManager)
// and NetworkClient's connections (one per broker for data, one to the group coordinator, each
// usable `connection_setup_ms` after it opens), ShareGroupHeartbeat membership (first heartbeat
// once the coordinator is known, then the interval the coordinator gives; a new assignment's
// acknowledging heartbeat at the background thread's next wake-up after its reconciliation, which
// takes `reconciliation_ms` when it adds partitions; leave with epoch -1), one share
// session per partition leader (epoch 0 opens, +1 per request, -1 closes), ShareFetch driven by
// poll() when nothing is buffered, acknowledgements piggybacked on the next ShareFetch to that
// leader or sent in a ShareAcknowledge, implicit or explicit acknowledgement
// (share.acknowledgement.mode), and the application loop with its processing time and its
// per-record outcomes (ACCEPT, RELEASE, REJECT). No rebalance callbacks exist for share groups.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/client/consumer_process.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/member_id_replay.hpp"
#include "models/protocol/messages.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/rng.hpp"

namespace rsim {

/// A share consumer is driven by the scenario's script like any consumer: the process's verbs
/// (stop, crash, restart, stall, pause) are ConsumerProcess's, the same as every other variant's;
/// what a share group has no use for (rebalance callbacks, metadata and leadership changes:
/// leaders do not move in a share run) keeps the interface's no-op defaults.
class ShareConsumer final : public ConsumerProcess {
 public:
  /// `leader_of`: the broker node leading a data partition; `coordinator`: the group
  /// coordinator's node; `bootstrap`: the broker a new process asks FindCoordinator (its least
  /// loaded node: nothing is in flight yet, so the lowest id).
  ShareConsumer(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
                const ConsumerSpec& spec, ConsumerConfig config, std::uint64_t seed,
                std::function<sim::NodeId(const TopicPartition&)> leader_of,
                std::function<sim::NodeId()> coordinator, sim::NodeId bootstrap);
  ShareConsumer(const ShareConsumer&) = delete;
  ShareConsumer& operator=(const ShareConsumer&) = delete;

  sim::NodeId node() const override { return node_; }
  void start() override;
  std::size_t process_starts() const override { return starts_; }
  std::vector<std::string> topics() const override { return topics_; }
  void subscribe(std::vector<std::string> topics) override;
  /// A recording's member ids, taken in place of this client's own draws (the World's; may be
  /// null).
  void set_member_id_replay(MemberIdReplay* replay) { member_ids_ = replay; }

 private:
  struct Batch {
    TopicPartition partition;
    AcquiredRecords records;
  };
  struct Session {
    std::int32_t epoch = 0;
    bool fetch_in_flight = false;
    bool ack_in_flight = false;
    bool close_waiting = false;  // close(): its ShareAcknowledge waits for the answer in flight
    std::vector<PartitionAcknowledgements> pending_acks;
  };

  // ConsumerProcess's hooks.
  bool closing() const override { return stopping_; }
  /// close() runs on the application thread once the current batch is done.
  void begin_close() override;
  /// The OS closes the process's sockets: every share session's broker sees its connection end.
  void on_crash() override;
  void reset_process_state() override { reset(); }

  void send(sim::NodeId to, Message message, bool quiet = false);
  /// How long a request to `to` sent now waits for its connection (NetworkClient.initiateConnect,
  /// then the ApiVersions round trip): a connection not open opens now and is usable after
  /// `connection_setup_ms`; one still being set up makes it wait the rest. `coordinator`: the
  /// group coordinator's connection (a node id of its own in Kafka), else the broker's data one.
  sim::SimTime connection_wait(sim::NodeId to, bool coordinator);
  void on_message(sim::NodeId from, Envelope&& e);
  /// CoordinatorRequestManager: FindCoordinator until the coordinator is known (the background
  /// thread sends it at once, backs off retry.backoff.ms after an error).
  void find_coordinator();
  void on_find_coordinator_response(const FindCoordinatorResponse& r);
  void heartbeat();
  void on_heartbeat_response(const ShareGroupHeartbeatResponse& r);
  /// The end of the background thread's loop that reconciles a new assignment (`next`, sorted):
  /// the member owns it, ACKNOWLEDGING, and the loop's ShareFetch for the new partitions goes when
  /// the application waits in poll(). `woken`: the thread was woken while it reconciled.
  void reconciled(TopicPartitions next, bool woken);
  /// The background thread wakes (ConsumerNetworkThread.runOnce): a response, an application
  /// event (a poll() call, a close), a request it sent. A reconciled assignment's acknowledging
  /// heartbeat goes now (docs/fidelity.md, finding 35).
  void network_wake();
  void schedule_heartbeat(sim::SimTime delay);
  void app_step();
  void poll();
  void finish_batch();
  void queue_acks(const TopicPartition& tp, std::vector<AcknowledgementBatch> acks);
  /// A ShareFetch to each leader of the assignment with none in flight; true if one was sent.
  bool maybe_fetch();
  void send_fetch(sim::NodeId leader);
  void flush_acks(sim::NodeId leader);
  void on_fetch_response(sim::NodeId from, const ShareFetchResponse& r);
  void close_sessions_and_leave();
  void maybe_send_close(sim::NodeId leader);
  void on_close_answered();
  void finish_stop();
  std::string new_member_id();
  void reset();

  sim::Network<Envelope>& net_;
  const ConsumerSpec& spec_;
  ConsumerConfig config_;
  sim::Rng rng_;
  sim::Rng start_rng_;       // start_latency_ms
  std::size_t starts_ = 0;   // process starts so far (ConsumerSpec::start_latencies' cursor)
  sim::Rng connection_rng_;  // connection_setup_ms
  sim::Rng reconcile_rng_;   // reconciliation_ms
  MemberIdReplay* member_ids_ = nullptr;
  std::function<sim::NodeId(const TopicPartition&)> leader_of_;
  std::function<sim::NodeId()> coordinator_;
  sim::NodeId bootstrap_;
  sim::NodeId node_ = 0;
  sim::Timer heartbeat_timer_;
  sim::Timer app_timer_;  // the application thread: end of processing, or poll() waking up
  // The background thread reconciling an assignment that adds partitions (reconciliation_ms):
  // the assignment it applies, and whether something woke the thread meanwhile.
  sim::Timer reconcile_timer_;
  TopicPartitions reconciling_;
  bool woken_while_reconciling_ = false;

  std::vector<std::string> topics_;
  bool topics_changed_ = true;
  bool coordinator_known_ = false;  // a FindCoordinator answer named it (this process)
  bool find_coordinator_in_flight_ = false;
  /// By connection (0: a broker's data connection, 1: the group coordinator's), by broker node:
  /// when the open connection became or becomes usable. Absent: not open.
  std::array<std::map<sim::NodeId, sim::SimTime>, 2> connection_ready_;
  std::string member_id_;
  std::int32_t member_epoch_ = 0;
  std::int32_t heartbeat_interval_ms_ = 0;
  bool heartbeat_in_flight_ = false;
  bool quiet_heartbeat_ = false;  // the heartbeat in flight carries no news (trace::Rpc::quiet)
  bool heartbeat_again_ = false;
  bool leaving_ = false;
  bool leave_in_flight_ = false;  // the heartbeat in flight is the leave (epoch -1)
  bool stopping_ = false;
  bool processing_ = false;
  TopicPartitions assigned_;
  // Whether the member has reconciled an assignment since it (re)joined: Kafka's current
  // LocalAssignment is NONE until then, so the first assignment, even an empty one, is
  // reconciled and acknowledged (AbstractMembershipManager.LocalAssignment.updateWith).
  bool has_assignment_ = false;
  // MemberState.ACKNOWLEDGING: the assignment is reconciled (in the background thread's loop
  // after the answer, where the heartbeat manager has already been polled), and its
  // acknowledging heartbeat waits for the thread's next wake-up (network_wake()).
  bool acknowledging_ = false;
  std::map<sim::NodeId, Session> sessions_;
  std::deque<Batch> buffer_;
  std::optional<Batch> current_;  // the batch poll() returned, being processed
  std::vector<AcknowledgementBatch> current_acks_;
  std::int64_t current_released_ = 0;
  std::int64_t current_rejected_ = 0;
  bool explicit_ = false;
  std::int32_t next_correlation_ = 0;
  std::int32_t closes_pending_ = 0;
  bool closing_sessions_ = false;  // close() has started ending the share sessions (once)
};

}  // namespace rsim
