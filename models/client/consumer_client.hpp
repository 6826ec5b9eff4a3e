// What the classic KafkaConsumer (ClassicConsumer) and the KIP-848 one (AsyncConsumer) share:
// the process with its application thread and network/heartbeat thread, the records side
// (RecordConsumption), the timers of the application loop, and their part of what the scenario's
// script does to the process (ConsumerProcess carries out stop, crash, restart, stall and pause
// for every variant). Each protocol's client supplies the group logic through the hooks below.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "models/client/consumer_process.hpp"
#include "models/client/record_consumption.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/messages.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/rng.hpp"

namespace rsim {

/// The simulator does not model CPU time. A loop that Kafka runs back to back with nothing to
/// wait for (poll(Duration.ZERO), the network thread with retry.backoff.ms=0,
/// auto.commit.interval.ms=0, metadata.max.age.ms=0 with retry.backoff.ms=0) spins in real time
/// there; here each turn of it takes kSpinTurn, so that the clock advances.
inline constexpr sim::SimTime kSpinTurn = sim::ms(1);
inline constexpr sim::SimTime at_least_a_turn(sim::SimTime d) {
  return d < kSpinTurn ? kSpinTurn : d;
}

class ConsumerClient : public ConsumerProcess {
 public:
  ConsumerClient(const ConsumerClient&) = delete;
  ConsumerClient& operator=(const ConsumerClient&) = delete;

  sim::NodeId node() const override { return node_; }

  // The scenario's script (the process's part: ConsumerProcess).
  std::size_t process_starts() const override { return starts_; }
  std::vector<std::string> topics() const override { return spec_.topics; }
  /// The broker's process died: a connection to it (requests in flight, or the coordinator's)
  /// is reset at once.
  void on_broker_down(sim::NodeId broker) override;
  /// Data-partition leaders moved: a Fetch to a broker that no longer leads one of the
  /// partitions it asks for answers NOT_LEADER_OR_FOLLOWER after the round trip, and the client
  /// asks for a metadata update (AbstractFetch / FetchCollector.handleInitializeErrors).
  void on_leaders_changed() override;

 protected:
  enum class CloseStage { None, Committing, Revoking, Leaving, Closed };
  /// What the client was when it sent a request, to tell whether its answer is still current:
  /// the classic generation (id, member id, protocol) or the KIP-848 member epoch (`epoch` only).
  struct RequestContext {
    std::int32_t epoch = -1;
    std::string member_id;
    std::string protocol;
    bool operator==(const RequestContext&) const = default;
  };
  struct InFlight {
    std::string api;  // "OffsetCommit:<purpose>" for commits
    sim::NodeId node;
    sim::SimTime deadline;
    RequestContext context;
    bool quiet = false;  // a heartbeat or auto-commit that carries no news (trace::Rpc::quiet)
  };

  /// `network_thread` names the thread that owns the client's network node ("heartbeat" for
  /// the classic client, "network" for the KIP-848 one).
  ConsumerClient(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& network,
                 const ClusterMetadata& cluster, const ConsumerSpec& spec, ConsumerConfig config,
                 std::uint64_t seed, Workload& workload, LagMonitor* lag,
                 const char* network_thread);
  ~ConsumerClient() override = default;

  // ConsumerProcess's hooks.
  void on_script_entry() override { entered(); }
  bool closing() const override { return close_stage_ != CloseStage::None; }
  /// Graceful close(): by the scenario's `on_stop`, through wakeup() (a poll() in progress ends
  /// with WakeupException) or at the application's next return from poll().
  void begin_close() override;
  void reset_process_state() override { reset_client_state(); }
  void on_stall() override;
  void on_stall_end() override;

  // Hooks of the protocol's client.
  virtual void on_message(sim::NodeId from, Envelope&& envelope) = 0;
  virtual void reset_client_state() = 0;
  /// One pass of the application thread's poll() loop.
  virtual void poll_pass() = 0;
  virtual void on_app_wake() = 0;
  /// The poll() timer returned: true when the protocol's client handled it all (both clients'
  /// quiet passes, QuietReturns), false for the shared full_poll_return().
  virtual bool quiet_poll_return() { return false; }
  /// poll() returned at its timeout: the application's loop goes on.
  void full_poll_return();
  virtual void on_callback_end() = 0;
  virtual void on_poll_loop_continue() = 0;
  /// The application's first poll() after a start (at once, or after `start_latency_ms`).
  virtual void first_poll() = 0;
  virtual void continue_close() = 0;
  /// The timer whose expiry makes the client look the coordinator up (on the application thread
  /// in the classic client, the network thread in the KIP-848 one).
  virtual sim::Timer& coordinator_retry_timer() = 0;
  /// A FindCoordinator answer was handled (`found` or backed off): the client goes on.
  virtual void on_coordinator_lookup_done(bool found) = 0;
  /// Sends an OffsetCommit of all_consumed(); std::nullopt when nothing is sent.
  virtual std::optional<std::int32_t> send_offset_commit(const std::string& purpose) = 0;
  /// A commit the client refuses before sending anything (the classic client outside a stable
  /// generation); true when it did (and traced it).
  virtual bool commit_fails_locally(const std::string& /*purpose*/) { return false; }
  /// Fails a request whose connection closed (NETWORK_EXCEPTION), as its response handler would.
  virtual void fail_in_flight(std::int32_t id, const InFlight& req) = 0;

  // Coordinator discovery (FindCoordinator to the least loaded broker, exponential backoff).
  void ensure_coordinator();
  void on_find_coordinator_response(const FindCoordinatorResponse& r);
  /// Forgets the coordinator; its in-flight requests fail with a disconnect, and a lookup
  /// follows at the next event of the thread that does it.
  void mark_coordinator_unknown(const std::string& why);

  // Rebalance callbacks run by the application thread; close().
  /// Starts a callback (a `callback` start event); true if it already ended (zero duration).
  bool start_callback(const char* callback, const TopicPartitions& partitions,
                      const sim::Distribution& duration);
  /// The running callback ended (its end event); true if close() took over from there.
  bool end_callback();
  /// close() is done: the process ends (and restarts later if the script asked for it).
  void finish_close();

  // The application's poll(poll_timeout_ms) loop.
  /// A wakeup() is pending and poll() is at a point where it checks for one (a network wait,
  /// outside a callback): poll() throws WakeupException and the application goes on to close().
  /// True when it did; the caller's pass is over.
  bool maybe_trigger_wakeup();
  void begin_poll();
  /// How long a poll() call that finds nothing takes from its start to the application's next
  /// call: poll_timeout_ms (at least a turn), plus the client's poll_return_lateness_ (the
  /// KIP-848 client's `poll_return_lateness_ms`; 0 for the others).
  sim::SimTime poll_call_length() const {
    return at_least_a_turn(spec_.poll_timeout) + poll_return_lateness_;
  }
  /// Draws `start_latency_ms` for a start: zero calls first_poll() at once; otherwise the call
  /// comes when the latency is over. Returns the latency drawn.
  sim::SimTime draw_start_latency();
  void schedule_first_poll(sim::SimTime latency);
  void on_poll_return();
  /// One turn of the application's loop is over (poll() returned, its records processed): after
  /// the loop's own time (`processing.per_poll_ms`), on_poll_loop_continue().
  void continue_loop();

  // Records: poll() returning a batch, processing, the commit after a batch.
  /// Returns a batch if there is one (the application then processes it), or arranges to wake
  /// the waiting poll() when records arrive, or at `wake_by` (sim::kNever: no other bound), or
  /// when poll()'s timeout ends, whichever comes first.
  void return_records_or_wait(sim::SimTime wake_by);
  void on_processing_end();
  /// The partitions lookup request `id` asked for, now forgotten; nullopt if it is no longer
  /// awaited (the client restarted or gave up on it).
  std::optional<TopicPartitions> take_lookup(std::int32_t id);
  /// validatePositionsIfNeeded: an OffsetForLeaderEpoch to each leader for the positions
  /// awaiting validation (a committed offset with a leader epoch); its answer completes them.
  void send_position_validations(const RequestContext& context);
  /// resetPositionsIfNeeded: a ListOffsets to each leader for the partitions awaiting a reset
  /// (auto.offset.reset).
  void send_list_offsets(const RequestContext& context);
  /// commitSync / commitAsync of every position after a batch (`commit: sync/async`), then the
  /// application loop goes on (after_batch).
  void commit_after_batch();
  void after_batch();

  // Network client (NetworkClient): one connection per broker, requests time out after their
  // timeout, which closes the connection and fails every request on it.
  std::int32_t send_to(sim::NodeId to, Message request, std::int64_t timeout_ms,
                       RequestContext context);
  void on_request_timeout_check();
  void disconnect(sim::NodeId node, const std::string& why);
  /// How long a request to `to` sent now waits for its connection (data or coordinator's): a
  /// connection that is not open opens now and is usable after `connection_setup_ms`; an open
  /// one that is still being set up makes it wait the rest.
  sim::SimTime connection_wait(sim::NodeId to, bool coordinator_connection);
  /// The connections to broker `node` close (a disconnect, the broker went down); `coordinator`:
  /// only the group coordinator's.
  void close_connections(sim::NodeId node, bool coordinator_only = false);
  /// The least loaded live broker (fewest requests in flight from this client, then lowest id),
  /// where FindCoordinator goes.
  sim::NodeId least_loaded_broker() const;
  /// ExponentialBackoff(retry.backoff.ms, 2, retry.backoff.max.ms, jitter 0.2) after `attempts`
  /// failures, drawn from the client's RNG stream.
  std::int64_t exponential_backoff_ms(int attempts) {
    return exponential_backoff_ms(attempts, rng_);
  }
  std::int64_t exponential_backoff_ms(int attempts, sim::Rng& rng);
  /// ExponentialBackoff(initial, 2, max, jitter 0.2) after `attempts`, drawn from `rng`.
  static std::int64_t exponential_backoff_ms(std::int64_t initial_ms, std::int64_t max_ms,
                                             int attempts, sim::Rng& rng);
  /// The coordinator connection to `node` closes now (AbstractCoordinator.markCoordinatorUnknown
  /// disconnects it; the classic client only): it waits out its reconnect backoff from here.
  void close_coordinator_connection(sim::NodeId node);
  /// A FindCoordinator answer naming broker `broker` whose coordinator connection is still in its
  /// reconnect backoff: the classic client marks it unknown again and asks again later (true).
  bool coordinator_unavailable(std::size_t broker);
  /// An answer came from `node`: its connections work, their reconnect backoff starts over.
  void broker_answered(sim::NodeId node);
  /// `quiet`: trace::Rpc::quiet (a heartbeat that carries and causes no news).
  void trace_rpc(const char* dir, sim::NodeId from, sim::NodeId to, const char* api,
                 std::int32_t id, const ErrorCode* error, bool quiet = false);

  /// A data partition's leader as the client's metadata says (where its Fetch and offset
  /// lookups go): the cluster's leaders as of its last metadata refresh. No leader: the
  /// partition's first replica (nothing can be fetched then).
  sim::NodeId partition_leader(const TopicPartition& tp) const;
  /// Brings a partition's route (its leader in the client's metadata, the link to it) up to date.
  void refresh_route(const TopicPartition& tp, RecordConsumption::Route& route) const {
    if (route.version != route_version()) fill_route(tp, route);
  }
  /// What routes are derived from: the client's leaders and the links to them (their latency,
  /// their cut). Never 0.
  std::uint64_t route_version() const { return leaders_version_ + network_.changes(); }
  void fill_route(const TopicPartition& tp, RecordConsumption::Route& route) const;
  /// RecordConsumption's reach_epoch: equal values, equal reachability and routes for every
  /// partition (0: unknown, when a data leader moved).
  std::uint64_t reach_epoch() const;
  /// The same leader as an index into cluster_.broker_nodes.
  std::size_t partition_leader_index(const TopicPartition& tp) const;
  /// The client's metadata names the partition's current, live leader: a Fetch can succeed.
  bool leader_known(const TopicPartition& tp) const;

  // Fetching (Fetcher / FetchRequestManager): at most one Fetch in flight per leader, sent by a
  // pass of poll() for the fetchable partitions it leads. The broker holds one that finds no
  // records for fetch.max.wait.ms; its answer, like any Fetch's end, goes to on_fetch_ended().
  // Records themselves are delivered by RecordConsumption (a waiting poll() gets them
  // `Route::delay` after their append); returning them ends the Fetches in flight.
  void send_fetches();
  /// How long after it is sent a Fetch to broker `b` (by index) answers at the latest.
  sim::SimTime fetch_answer(std::size_t b);
  void on_fetch_response_due();
  void clear_fetches();
  /// A new process: no Fetch in flight, no connection open.
  void reset_fetching();
  void end_fetch(std::size_t broker_index, ErrorCode error);
  /// A Fetch ended: the application's waiting poll() goes on.
  virtual void on_fetch_ended() = 0;
  /// When the broker (by index) can read another request of this client's connection to it:
  /// its SocketServer mutes a connection while one of its requests is being served, and a Fetch
  /// is served until it answers (records for it, or fetch.max.wait.ms). `now` with no Fetch in
  /// flight there.
  sim::SimTime data_connection_free_at(std::size_t broker_index) const;
  /// NetworkClient.leastLoadedNode over the data connections (Fetches and other requests to a
  /// broker that is not the group coordinator's connection): walking the brokers from a random
  /// one, the first connected one with nothing in flight, else the connected one with the
  /// fewest, else one to connect to; std::nullopt when every broker is down.
  std::optional<std::size_t> least_loaded_data_connection();

  // Metadata (Metadata / ConsumerMetadata / NetworkClient.DefaultMetadataUpdater).
  /// Metadata.requestUpdate: the next metadata request goes out at the first poll of the
  /// network client after the refresh backoff (retry.backoff.ms after the last refresh,
  /// growing exponentially to retry.backoff.max.ms while refreshes leave a leader unknown).
  void request_metadata_update(const std::string& why);
  /// The client's view of the data-partition leaders becomes the cluster's (a `consumer.leaders`
  /// event when an assigned partition's leader changed).
  void refresh_leaders(const std::string& why);
  /// The Fetch errors of on_leaders_changed() arrive: a `fetch.error`, then a metadata update.
  void on_fetch_errors();
  /// A new process's metadata state (the cluster's leaders, no update pending).
  void reset_metadata();
  /// A metadata response arrived: the classic client also takes the partition counts.
  virtual void on_metadata_response(const std::string& why) { refresh_leaders(why); }

  /// Counts every entry into the client: each of its timers' expiries, each message to its
  /// node, each call of the scenario's script. Between two entries nothing of the client changes
  /// but what time itself changes (see QuietReturns::quiet_poll_return()).
  void entered() {
    if (chain_open_) close_chain();
    ++entries_;
  }
  /// A quiet chain is open (QuietReturns): its quiet returns of poll() are not yet written into
  /// the client's state; close_chain() writes them, before anything else enters the client.
  bool chain_open_ = false;
  virtual void close_chain() {}
  /// The end of an entry (of the frequent ones: messages, records and Fetch answers, processed
  /// batches): the protocol's client may note its state (QuietReturns::settled()).
  virtual void settled() {}
  /// An application-thread timer that wakes the application's waiting poll(): entered(),
  /// on_app_wake(), settled().
  void on_app_wake_entry() {
    entered();
    on_app_wake();
    settled();
  }
  std::uint64_t entries_ = 0;

  sim::Network<Envelope>& network_;
  const ClusterMetadata& cluster_;
  ConsumerSpec spec_;
  ConsumerConfig config_;
  sim::Rng rng_;
  sim::Rng loop_rng_;       // the application loop's own time (processing.per_poll_ms)
  sim::Rng start_rng_;      // start_latency_ms
  std::size_t starts_ = 0;  // process starts so far (ConsumerSpec::start_latencies' cursor)

  // Fetches in flight (fetch_ entries whose `due` is not sim::kNever) and brokers, kept beside the
  // process's state: a poll pass with a Fetch in flight to every broker (most passes) learns it
  // here, without loading fetch_.
  std::uint32_t fetches_in_flight_ = 0;
  std::uint32_t fetch_brokers_ = 0;
  sim::NodeId node_ = 0;

  /// See poll_call_length(): set by the client that models it (AsyncConsumer).
  sim::SimTime poll_return_lateness_{0};

  // Application-thread timers.
  sim::Timer poll_return_timer_;
  sim::Timer callback_timer_;
  sim::Timer fetch_wake_timer_;
  sim::Timer processing_timer_;
  sim::Timer commit_retry_timer_;
  sim::Timer loop_timer_;
  // Network-thread timer.
  sim::Timer request_timeout_timer_;
  sim::Timer first_poll_timer_;      // the end of start_latency_ms (on the application thread)
  bool first_poll_pending_ = false;  // started, the first poll() not called yet
  // Network-thread timers of the metadata: the pending update, the Fetch errors of moved leaders.
  sim::Timer metadata_update_timer_;
  sim::Timer fetch_error_timer_;

  // Application state shared by both clients (reset by reset_client_state()).
  bool in_poll_ = false;
  bool busy_ = false;  // inside a rebalance callback
  const char* current_callback_ = "";
  TopicPartitions current_callback_partitions_;
  bool stop_requested_ = false;
  bool wakeup_pending_ = false;  // consumer.wakeup() was called; the next network wait throws
  CloseStage close_stage_ = CloseStage::None;

  // Metadata: the data-partition leaders the client knows (the cluster's data_leaders as of its
  // last refresh), when it last refreshed, and the update it waits for.
  std::map<TopicPartition, std::int32_t> known_leaders_;
  std::uint64_t leaders_version_ = 1;  // changes with known_leaders_ (routes are stale then)
  sim::SimTime last_metadata_refresh_{0};
  std::string metadata_update_reason_;
  int metadata_refresh_attempts_ = 0;

  // Coordinator and network client.
  std::optional<sim::NodeId> coordinator_;
  std::optional<std::int32_t> find_coordinator_in_flight_;
  int coordinator_lookup_attempts_ = 0;
  sim::SimTime coordinator_lookup_not_before_{0};
  /// FindCoordinator's backoff restarts at its first step after a success too
  /// (CoordinatorRequestManager's RequestState; the KIP-848 client), not only after a failure.
  bool lookup_backoff_after_success_ = false;
  /// The classic client's coordinator connection (AbstractCoordinator over NetworkClient): marking
  /// the coordinator unknown closes it, and a coordinator found again on the same broker while that
  /// connection is in its reconnect backoff is unavailable (ensureCoordinatorReady: marked unknown
  /// again, FindCoordinator asked again after the retry backoff's step). Off for the KIP-848
  /// client.
  bool coordinator_reconnect_backoff_ = false;
  /// By broker index: until when the coordinator connection there waits out its reconnect
  /// backoff (kNever-free: SimTime 0 when it was never closed), and its failed attempts since it
  /// was last usable (ClusterConnectionStates.failedAttempts).
  std::vector<sim::SimTime> coordinator_reconnect_at_;
  std::vector<int> coordinator_reconnect_failures_;
  /// ensureCoordinatorReady's attempts at a coordinator found unavailable (its retry backoff step).
  int coordinator_unavailable_attempts_ = 0;
  trace::RpcRequestFields rpc_fields_;  // what the next request's `rpc` trace event adds
  /// The next send_to() carries an auto-commit: its request is quiet (trace::Rpc::quiet), and its
  /// answer too when NONE (the `commit` events stay at `standard`).
  bool auto_commit_send_ = false;
  std::int32_t next_correlation_id_ = 0;
  std::map<std::int32_t, InFlight> in_flight_;

  // Records.
  RecordConsumption consumption_;
  std::optional<Batch> batch_;        // being processed by the application
  bool commit_sync_waiting_ = false;  // the application is blocked in commitSync()
  /// OffsetFetch / ListOffsets / OffsetForLeaderEpoch requests in flight: what each asked for.
  std::map<std::int32_t, TopicPartitions> lookups_;
  sim::SimTime commit_sync_deadline_{0};
  int commit_sync_attempts_ = 0;

  // The Fetch state of each broker, by broker index, in one block (a pass that sends or ends
  // Fetches reads all of it: one or two cache lines instead of one per field's vector).
  struct FetchSlot {
    sim::SimTime due = sim::kNever;   // when its Fetch in flight answers (sim::kNever: none)
    sim::SimTime sent = sim::kNever;  // when it was sent
    /// How long after it is sent a Fetch there answers at the latest (see send_fetches()),
    /// derived from the links as of network_.changes() == fetch_answer_changes_ (sim::kNever:
    /// not derived yet; the brokers' handling is set at wiring and never changes).
    sim::SimTime answer = sim::kNever;
    std::int32_t id = -1;  // its correlation id (rpc trace events)
    bool failed = false;   // its connection was reset or it timed out
    /// The data connection is open (a request was sent there since the start and the broker
    /// did not go down since): leastLoadedNode prefers it.
    bool connected = false;
  };
  sim::Timer fetch_response_timer_;
  std::vector<FetchSlot> fetch_;
  /// The earliest `due` of fetch_ (sim::kNever: no Fetch in flight).
  sim::SimTime first_fetch_due() const;
  std::uint64_t fetch_answer_changes_ = UINT64_MAX;
  sim::Rng least_loaded_rng_;  // leastLoadedNode's random starting node
  sim::Rng lookup_rng_;        // the jitter of FindCoordinator's backoff after a success
  sim::Rng reconnect_rng_;     // the coordinator connection's reconnect backoff, its retry step
  /// By connection (0: the broker's data and metadata connection, 1: the group coordinator's, a
  /// node id of its own in Kafka), by broker index: when the open connection became or becomes
  /// usable (its setup over); sim::kNever: not open.
  std::array<std::vector<sim::SimTime>, 2> connection_ready_;
  sim::Rng connection_rng_;  // connection_setup_ms
};

}  // namespace rsim
