#include "models/client/consumer_client.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

namespace {
/// Requests that go to the group coordinator, over the client's own connection to it
/// (AbstractCoordinator and the KIP-848 request managers address the coordinator under a node id
/// of its own); the others use the broker's data connection.
bool is_coordinator_api(std::string_view api) {
  for (const std::string_view c :
       {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
        "ConsumerGroupHeartbeat", "ShareGroupHeartbeat"})
    if (api.substr(0, c.size()) == c && (api.size() == c.size() || api[c.size()] == ':'))
      return true;
  return false;
}
}  // namespace

ConsumerClient::ConsumerClient(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& network,
                               const ClusterMetadata& cluster, const ConsumerSpec& spec,
                               ConsumerConfig config, std::uint64_t seed, Workload& workload,
                               LagMonitor* lag, const char* network_thread)
    : ConsumerProcess(kernel, tracer, spec.name, network_thread, std::nullopt),
      network_(network),
      cluster_(cluster),
      spec_(spec),
      config_(std::move(config)),
      rng_(seed, "consumer-" + spec.name),
      loop_rng_(seed, "loop-" + spec.name),
      start_rng_(seed, "start-" + spec.name),
      poll_return_timer_(
          kernel,
          [this] {
            entered();
            on_poll_return();
          },
          &app_),
      callback_timer_(
          kernel,
          [this] {
            entered();
            on_callback_end();
          },
          &app_),
      fetch_wake_timer_(
          kernel, [this] { on_app_wake_entry(); }, &app_),
      processing_timer_(
          kernel,
          [this] {
            entered();
            on_processing_end();
            settled();
          },
          &app_),
      commit_retry_timer_(
          kernel,
          [this] {
            entered();
            commit_after_batch();
          },
          &app_),
      loop_timer_(
          kernel,
          [this] {
            entered();
            if (process_.alive() && close_stage_ == CloseStage::None && !busy_)
              on_poll_loop_continue();
          },
          &app_),
      request_timeout_timer_(
          kernel,
          [this] {
            entered();
            on_request_timeout_check();
          },
          &network_thread_),
      first_poll_timer_(
          kernel,
          [this] {
            entered();
            if (!first_poll_pending_) return;
            first_poll_pending_ = false;
            if (process_.alive() && close_stage_ == CloseStage::None) first_poll();
          },
          &app_),
      metadata_update_timer_(
          kernel,
          [this] {
            entered();
            on_metadata_response(metadata_update_reason_);
          },
          &network_thread_),
      fetch_error_timer_(
          kernel,
          [this] {
            entered();
            on_fetch_errors();
          },
          &network_thread_),
      consumption_(kernel, tracer, workload, lag,
                   RecordConsumption::Options{
                       spec.name, config_.group_id, config_.max_poll_records,
                       config_.auto_offset_reset, spec.processing,
                       [this](const TopicPartition& tp, RecordConsumption::Route& r) {
                         // leader_known() and no cut link to the leader, from the partition's
                         // route (this runs per partition per poll pass).
                         refresh_route(tp, r);
                         return r.leader >= 0 && r.leader == cluster_.data_leader(tp) &&
                                !cluster_.broker_down[static_cast<std::size_t>(r.leader)] && !r.cut;
                       },
                       [this] { return reach_epoch(); }},
                   sim::Rng(seed, "processing-" + spec.name)),
      fetch_response_timer_(
          kernel,
          [this] {
            entered();
            on_fetch_response_due();
            settled();
          },
          &network_thread_),
      fetch_(cluster.broker_nodes.size()),
      least_loaded_rng_(seed, "least-loaded-" + spec.name),
      lookup_rng_(seed, "find-coordinator-" + spec.name),
      reconnect_rng_(seed, "reconnect-" + spec.name),
      connection_rng_(seed, "connection-" + spec.name) {
  for (auto& c : connection_ready_) c.assign(cluster.broker_nodes.size(), sim::kNever);
  fetch_brokers_ = static_cast<std::uint32_t>(fetch_.size());
  coordinator_reconnect_at_.assign(cluster.broker_nodes.size(), sim::SimTime{0});
  coordinator_reconnect_failures_.assign(cluster.broker_nodes.size(), 0);
  node_ = network_.add_node(spec_.name, &network_thread_, [this](sim::NodeId from, Envelope&& e) {
    entered();
    on_message(from, std::move(e));
    settled();
  });
  // A network node is one consumer's for the run: its id names the consumer for trace sinks.
  consumption_.set_trace_slot(static_cast<std::uint32_t>(node_) + 1);
}

void ConsumerClient::fill_route(const TopicPartition& tp, RecordConsumption::Route& r) const {
  r.version = route_version();
  const auto n = cluster_.broker_nodes.size();
  const auto it = known_leaders_.find(tp);
  r.leader = it != known_leaders_.end() ? it->second : tp.partition % static_cast<std::int32_t>(n);
  r.broker = r.leader >= 0 ? static_cast<std::size_t>(r.leader)
                           : static_cast<std::size_t>(tp.partition) % n;
  const sim::NodeId leader = cluster_.broker_nodes[r.broker];
  r.cut = network_.is_cut(leader, node_) || network_.is_cut(node_, leader);
  // The records' delay: the mean one-way latency of the leader's link (no draw: no RNG use).
  const double ms = network_.mean_latency_ms(leader, node_);
  r.delay = sim::SimTime{static_cast<std::int64_t>(std::llround(ms * 1000.0))};
}

std::uint64_t ConsumerClient::reach_epoch() const {
  // leader_reachable reads the route (route_version()), the partition's leader in the cluster
  // and which brokers are down. With no leader moved the cluster's leader is the first replica,
  // fixed: the version and one bit per broker name every answer. Otherwise: unknown.
  const auto& down = cluster_.broker_down;
  const std::uint64_t version = route_version();
  if (!cluster_.data_leaders.empty() || down.size() > 32 || version >= (std::uint64_t{1} << 31))
    return 0;
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b < down.size(); ++b)
    if (down[b]) bits |= std::uint64_t{1} << b;
  return version << 32 | bits;
}

sim::NodeId ConsumerClient::partition_leader(const TopicPartition& tp) const {
  return cluster_.broker_nodes[partition_leader_index(tp)];
}

std::size_t ConsumerClient::partition_leader_index(const TopicPartition& tp) const {
  const auto n = cluster_.broker_nodes.size();
  const auto it = known_leaders_.find(tp);
  const std::int32_t leader =
      it != known_leaders_.end() ? it->second : tp.partition % static_cast<std::int32_t>(n);
  return leader >= 0 ? static_cast<std::size_t>(leader)
                     : static_cast<std::size_t>(tp.partition) % n;
}

bool ConsumerClient::leader_known(const TopicPartition& tp) const {
  const auto it = known_leaders_.find(tp);
  const std::int32_t known =
      it != known_leaders_.end() ? it->second : tp.partition % cluster_.brokers();
  return known >= 0 && known == cluster_.data_leader(tp) &&
         !cluster_.broker_down[static_cast<std::size_t>(known)];
}

void ConsumerClient::reset_metadata() {
  metadata_update_timer_.cancel();
  fetch_error_timer_.cancel();
  metadata_refresh_attempts_ = 0;
  // A new process bootstraps: its first metadata answer is the cluster's current one.
  known_leaders_ = cluster_.data_leaders;
  ++leaders_version_;
  last_metadata_refresh_ = kernel_.now();
}

void ConsumerClient::request_metadata_update(const std::string& why) {
  if (!process_.alive() || metadata_update_timer_.armed()) return;
  metadata_update_reason_ = why;
  // Metadata.timeToNextUpdate: an update waits for the refresh backoff since the last one
  // (retry.backoff.ms, doubled per refresh that left a leader unknown, up to
  // retry.backoff.max.ms; the jitter of Kafka's ExponentialBackoff is left out).
  const double backoff = std::min(static_cast<double>(config_.retry_backoff_max_ms),
                                  static_cast<double>(config_.retry_backoff_ms) *
                                      std::pow(2.0, std::min(metadata_refresh_attempts_, 30)));
  const sim::SimTime at =
      std::max(kernel_.now(), last_metadata_refresh_ + sim::ms(static_cast<std::int64_t>(backoff)));
  metadata_update_timer_.arm_at(at);
}

void ConsumerClient::refresh_leaders(const std::string& why) {
  last_metadata_refresh_ = kernel_.now();
  metadata_update_timer_.cancel();
  LeaderMoves moved;
  consumption_.for_each_assigned([&](const TopicPartition& tp) {
    const auto it = known_leaders_.find(tp);
    const std::int32_t before =
        it != known_leaders_.end() ? it->second : tp.partition % cluster_.brokers();
    const std::int32_t now = cluster_.data_leader(tp);
    if (before != now) moved.push_back({tp, now < 0 ? std::nullopt : std::optional(now)});
  });
  known_leaders_ = cluster_.data_leaders;
  ++leaders_version_;
  if (!moved.empty())
    tracer_.publish(
        trace::ConsumerLeaders{.consumer = spec_.name, .leaders = &moved, .reason = why});
  // A leader that is still down (crashed, not yet fenced by the controller) or missing: the
  // next Fetch fails to connect, and the client asks again after a longer backoff.
  bool unknown = false;
  consumption_.for_each_assigned(
      [&](const TopicPartition& tp) { unknown = unknown || !leader_known(tp); });
  if (unknown) {
    ++metadata_refresh_attempts_;
    request_metadata_update(why);
  } else {
    metadata_refresh_attempts_ = 0;
  }
  if (!moved.empty()) on_app_wake();
}

void ConsumerClient::on_leaders_changed() {
  entered();
  if (!process_.alive()) return;
  // The first assigned partition whose Fetch goes to a live broker that no longer leads it: the
  // resigned leader completes the Fetch at once with NOT_LEADER_OR_FOLLOWER, which arrives one
  // round trip later. (A Fetch to a broker that died fails with the disconnect instead.)
  std::optional<TopicPartition> stale;
  consumption_.for_each_assigned([&](const TopicPartition& tp) {
    if (stale) return;
    const auto b = partition_leader_index(tp);
    if (!cluster_.broker_down[b] && static_cast<std::int32_t>(b) != cluster_.data_leader(tp))
      stale = tp;
  });
  if (!stale || fetch_error_timer_.armed()) return;
  const sim::NodeId old = partition_leader(*stale);
  const double rtt_ms = network_.link_spec(node_, old).latency.expected_ms() +
                        network_.link_spec(old, node_).latency.expected_ms();
  fetch_error_timer_.arm(sim::SimTime{static_cast<std::int64_t>(std::llround(rtt_ms * 1000.0))});
}

void ConsumerClient::on_fetch_errors() {
  std::vector<TopicPartition> partitions;
  std::optional<sim::NodeId> from;
  consumption_.for_each_assigned([&](const TopicPartition& tp) {
    const auto b = partition_leader_index(tp);
    if (cluster_.broker_down[b] || static_cast<std::int32_t>(b) == cluster_.data_leader(tp)) return;
    if (!from) from = cluster_.broker_nodes[b];
    if (cluster_.broker_nodes[b] == *from) partitions.push_back(tp);
  });
  if (!from) return;
  tracer_.publish(trace::FetchError{.consumer = spec_.name,
                                    .broker = network_.name(*from),
                                    .partitions = partitions,
                                    .error = "NOT_LEADER_OR_FOLLOWER"});
  request_metadata_update("NOT_LEADER_OR_FOLLOWER");
  // Partitions of another stale broker answer in their own round trip.
  on_leaders_changed();
}

void ConsumerClient::begin_close() {
  stop_requested_ = true;
  if (spec_.on_stop != StopMode::Wakeup) return;
  wakeup_pending_ = true;
  maybe_trigger_wakeup();
}

bool ConsumerClient::maybe_trigger_wakeup() {
  if (!wakeup_pending_ || !in_poll_ || busy_ || !app_.runnable() ||
      close_stage_ != CloseStage::None)
    return false;
  wakeup_pending_ = false;
  tracer_.publish(trace::ConsumerWakeup{.consumer = spec_.name, .exception = "WakeupException"});
  in_poll_ = false;
  poll_return_timer_.cancel();
  fetch_wake_timer_.cancel();
  // The exception ends the application's loop: no records, no loop time; close() follows.
  on_poll_loop_continue();
  return true;
}

void ConsumerClient::on_stall() {
  // The application is busy outside poll(): nothing of its thread runs until it returns.
  in_poll_ = false;
  poll_return_timer_.cancel();
  fetch_wake_timer_.cancel();
}

void ConsumerClient::on_stall_end() {
  // A batch being processed or a commitSync() goes on; otherwise the loop polls again. A stall
  // inside start_latency_ms: the first poll() is still to come.
  if (close_stage_ == CloseStage::None && !batch_ && !commit_sync_waiting_ && !first_poll_pending_)
    begin_poll();
}

void ConsumerClient::on_broker_down(sim::NodeId broker) {
  entered();
  if (!process_.alive()) return;
  bool connected = std::any_of(in_flight_.begin(), in_flight_.end(),
                               [broker](const auto& kv) { return kv.second.node == broker; });
  // A Fetch to it is in flight whenever it leads an assigned partition.
  consumption_.for_each_assigned(
      [&](const TopicPartition& tp) { connected = connected || partition_leader(tp) == broker; });
  if (connected || coordinator_ == broker) disconnect(broker, "connection reset by peer");
  if (!process_.alive()) return;
  // A Fetch in flight to it fails at once (connection reset), which wakes the wait.
  for (std::size_t b = 0; b < fetch_.size(); ++b) {
    if (cluster_.broker_nodes[b] != broker) continue;
    FetchSlot& f = fetch_[b];
    f.connected = false;
    connection_ready_[0][b] = connection_ready_[1][b] = sim::kNever;
    if (f.due != sim::kNever) {
      f.due = kernel_.now();
      f.failed = true;
      fetch_response_timer_.arm(sim::SimTime::zero());
    }
  }
}

void ConsumerClient::ensure_coordinator() {
  if (coordinator_ || find_coordinator_in_flight_) return;
  if (kernel_.now() < coordinator_lookup_not_before_) {
    coordinator_retry_timer().arm_at(coordinator_lookup_not_before_);
    return;
  }
  find_coordinator_in_flight_ =
      send_to(least_loaded_broker(), FindCoordinatorRequest{config_.group_id},
              config_.request_timeout_ms, {});
}

void ConsumerClient::on_find_coordinator_response(const FindCoordinatorResponse& r) {
  find_coordinator_in_flight_.reset();
  const bool found = r.error == ErrorCode::NONE;
  if (found && coordinator_unavailable(static_cast<std::size_t>(r.node_id))) return;
  if (found) {
    coordinator_ = cluster_.broker_nodes.at(static_cast<std::size_t>(r.node_id));
    coordinator_lookup_attempts_ = 0;
    // The KIP-848 client's RequestState.onSuccessfulAttempt: the next lookup (the coordinator
    // found proves unreachable, say) waits the first backoff step from this answer.
    if (lookup_backoff_after_success_)
      coordinator_lookup_not_before_ =
          sim::saturating_add(kernel_.now(), sim::ms(exponential_backoff_ms(0, lookup_rng_)));
  } else {
    coordinator_lookup_not_before_ = sim::saturating_add(
        kernel_.now(), sim::ms(exponential_backoff_ms(coordinator_lookup_attempts_++)));
  }
  on_coordinator_lookup_done(found);
}

void ConsumerClient::mark_coordinator_unknown(const std::string& why) {
  if (!coordinator_) return;
  tracer_.publish(trace::ConsumerCoordinatorUnknown{.consumer = spec_.name, .reason = why});
  const sim::NodeId old = *coordinator_;
  coordinator_.reset();
  close_coordinator_connection(old);
  // In-flight requests to the old coordinator fail with a disconnect.
  bool any = false;
  for (const auto& [id, req] : in_flight_) any = any || req.node == old;
  if (any) disconnect(old, why);
  // A disconnect ends the thread's network wait: its next event (at this instant) looks the
  // coordinator up again.
  sim::Timer& retry = coordinator_retry_timer();
  if (!retry.armed() || retry.deadline() > kernel_.now()) retry.arm(sim::SimTime::zero());
}

bool ConsumerClient::start_callback(const char* callback, const TopicPartitions& partitions,
                                    const sim::Distribution& duration) {
  tracer_.publish(trace::Callback{
      .consumer = spec_.name, .callback = callback, .partitions = partitions, .phase = "start"});
  const sim::SimTime d = duration.sample(rng_);
  current_callback_ = callback;
  current_callback_partitions_ = partitions;
  if (d == sim::SimTime::zero()) {
    tracer_.publish(trace::Callback{
        .consumer = spec_.name, .callback = callback, .partitions = partitions, .phase = "end"});
    return true;
  }
  busy_ = true;
  callback_timer_.arm(d);
  return false;
}

bool ConsumerClient::end_callback() {
  busy_ = false;
  tracer_.publish(trace::Callback{.consumer = spec_.name,
                                  .callback = current_callback_,
                                  .partitions = current_callback_partitions_,
                                  .phase = "end"});
  if (close_stage_ == CloseStage::None) return false;
  continue_close();
  return true;
}

void ConsumerClient::finish_close() {
  close_stage_ = CloseStage::Closed;
  end_after_close();
}

sim::SimTime ConsumerClient::draw_start_latency() {
  const sim::SimTime drawn = spec_.start_latency.sample(start_rng_);
  const std::size_t k = starts_++;
  return k < spec_.start_latencies.size() ? spec_.start_latencies[k] : drawn;
}

void ConsumerClient::schedule_first_poll(sim::SimTime latency) {
  if (latency <= sim::SimTime::zero()) {
    first_poll();
    return;
  }
  first_poll_pending_ = true;
  first_poll_timer_.arm(latency);
}

void ConsumerClient::begin_poll() {
  if (!process_.alive()) return;
  in_poll_ = true;
  // A wakeup() between two poll() calls makes the next one throw at once.
  if (maybe_trigger_wakeup()) return;
  poll_return_timer_.arm(poll_call_length());
  poll_pass();
}

void ConsumerClient::on_poll_return() {
  if (quiet_poll_return()) return;
  full_poll_return();
}

void ConsumerClient::full_poll_return() {
  in_poll_ = false;
  fetch_wake_timer_.cancel();
  if (busy_) return;
  continue_loop();
}

void ConsumerClient::continue_loop() {
  const sim::SimTime d = spec_.processing.per_poll.sample(loop_rng_);
  if (d == sim::SimTime::zero()) {
    on_poll_loop_continue();
    return;
  }
  loop_timer_.arm(d);
}

void ConsumerClient::return_records_or_wait(sim::SimTime wake_by) {
  if (auto batch = consumption_.poll()) {
    // poll() returns the records; the application processes them before it polls again.
    in_poll_ = false;
    poll_return_timer_.cancel();
    fetch_wake_timer_.cancel();
    batch_ = std::move(batch);
    processing_timer_.arm(consumption_.processing_time(*batch_));
    return;
  }
  // Nothing yet: poll() waits on the network, where a pending wakeup() throws.
  if (maybe_trigger_wakeup()) return;
  // The fetch (a long poll at the broker) answers when a record arrives.
  const sim::SimTime next = std::min(consumption_.next_fetchable(), wake_by);
  if (next != sim::kNever && (!poll_return_timer_.armed() || next < poll_return_timer_.deadline()))
    fetch_wake_timer_.arm_at(std::max(next, kernel_.now()));
  else
    fetch_wake_timer_.cancel();
}

std::optional<TopicPartitions> ConsumerClient::take_lookup(std::int32_t id) {
  const auto it = lookups_.find(id);
  if (it == lookups_.end()) return std::nullopt;
  TopicPartitions asked = std::move(it->second);
  lookups_.erase(it);
  return asked;
}

void ConsumerClient::send_position_validations(const RequestContext& context) {
  std::map<sim::NodeId, OffsetsForLeaderEpochRequest> by_leader;
  for (const auto& q : consumption_.awaiting_validation())
    by_leader[partition_leader(q.partition)].partitions.push_back(q);
  for (auto& [leader, request] : by_leader) {
    TopicPartitions tps;
    for (const auto& q : request.partitions) tps.push_back(q.partition);
    consumption_.lookup_sent(tps);
    lookups_[send_to(leader, std::move(request), config_.request_timeout_ms, context)] = tps;
  }
}

void ConsumerClient::send_list_offsets(const RequestContext& context) {
  std::map<sim::NodeId, TopicPartitions> by_leader;
  for (const auto& tp : consumption_.awaiting_reset())
    by_leader[partition_leader(tp)].push_back(tp);
  for (auto& [leader, tps] : by_leader) {
    consumption_.lookup_sent(tps);
    ListOffsetsRequest r{consumption_.reset_timestamp(), tps};
    lookups_[send_to(leader, std::move(r), config_.request_timeout_ms, context)] = tps;
  }
}

void ConsumerClient::on_processing_end() {
  if (!batch_) return;
  consumption_.processed(*batch_);
  batch_.reset();
  commit_sync_attempts_ = 0;
  commit_after_batch();
}

void ConsumerClient::commit_after_batch() {
  if (spec_.commit == CommitMode::Auto) {
    after_batch();
    return;
  }
  const std::string purpose = spec_.commit == CommitMode::Sync ? "commitSync" : "commitAsync";
  if (commit_fails_locally(purpose)) {
    after_batch();
    return;
  }
  if (!commit_sync_waiting_)
    commit_sync_deadline_ =
        sim::saturating_add(kernel_.now(), sim::ms(config_.default_api_timeout_ms));
  if (!coordinator_) {
    // commitSync of something waits for the coordinator (retried until
    // default.api.timeout.ms); an empty one completes at once. A commitAsync without a
    // coordinator is not modelled as queued: it is dropped.
    if (spec_.commit == CommitMode::Sync && kernel_.now() < commit_sync_deadline_ &&
        !consumption_.all_consumed().empty()) {
      commit_sync_waiting_ = true;
      ensure_coordinator();
      commit_retry_timer_.arm(sim::ms(config_.retry_backoff_ms));
      return;
    }
    after_batch();
    return;
  }
  const auto id = send_offset_commit(purpose);
  if (id && spec_.commit == CommitMode::Sync) {
    commit_sync_waiting_ = true;  // blocked until the response
    return;
  }
  after_batch();
}

void ConsumerClient::after_batch() {
  commit_sync_waiting_ = false;
  if (!process_.alive() || close_stage_ != CloseStage::None || !app_.runnable()) return;
  continue_loop();
}

std::int32_t ConsumerClient::send_to(sim::NodeId to, Message request, std::int64_t timeout_ms,
                                     RequestContext context) {
  const std::int32_t id = next_correlation_id_++;
  const char* api = api_name(request);
  // A heartbeat with nothing new in it: the classic Heartbeat always, a ConsumerGroupHeartbeat
  // of a member at a positive epoch (not a join, -1 or -2: a leave) sending none of its
  // optional fields.
  const std::string_view a = api;
  const bool no_fields = rpc_fields_.fields && rpc_fields_.fields->empty();
  // An auto-commit (purpose `auto-commit`) is quiet too: its `commit` events say what it carries.
  const bool auto_commit = std::exchange(auto_commit_send_, false) && a == "OffsetCommit";
  const bool quiet =
      auto_commit || a == "Heartbeat" ||
      (a == "ConsumerGroupHeartbeat" && no_fields && rpc_fields_.member_epoch.value_or(0) > 0);
  trace_rpc("send", node_, to, api, id, nullptr, quiet);
  const sim::SimTime deadline = sim::saturating_add(kernel_.now(), sim::ms(timeout_ms));
  in_flight_.emplace(id, InFlight{api, to, deadline, std::move(context), quiet});
  if (cluster_.is_down(to)) {
    // Connection refused: the request fails with a disconnect as soon as it is tried.
    kernel_.schedule_closure_after(sim::SimTime{0}, [this, to, gen = process_.incarnation()] {
      entered();
      if (process_.alive() && process_.incarnation() == gen) disconnect(to, "connection refused");
    });
    return id;
  }
  network_.send(node_, to, Envelope{id, std::move(request)},
                connection_wait(to, is_coordinator_api(api)));
  if (!is_coordinator_api(api))
    for (std::size_t b = 0; b < cluster_.broker_nodes.size(); ++b)
      if (cluster_.broker_nodes[b] == to) fetch_[b].connected = true;
  if (!request_timeout_timer_.armed() || deadline < request_timeout_timer_.deadline())
    request_timeout_timer_.arm_at(deadline);
  return id;
}

void ConsumerClient::on_request_timeout_check() {
  // A request with no answer within its timeout: the connection is closed, and every request
  // on it fails with a disconnect (NetworkClient.handleTimedOutRequests).
  std::optional<sim::NodeId> timed_out;
  for (const auto& [id, req] : in_flight_)
    if (req.deadline <= kernel_.now() && !timed_out) timed_out = req.node;
  if (timed_out) disconnect(*timed_out, "request timed out");
  sim::SimTime next = sim::kNever;
  for (const auto& [id, req] : in_flight_) next = std::min(next, req.deadline);
  if (next != sim::kNever) request_timeout_timer_.arm_at(next);
}

sim::SimTime ConsumerClient::connection_wait(sim::NodeId to, bool coordinator_connection) {
  const sim::SimTime now = kernel_.now();
  for (std::size_t b = 0; b < cluster_.broker_nodes.size(); ++b) {
    if (cluster_.broker_nodes[b] != to) continue;
    sim::SimTime& ready = connection_ready_[coordinator_connection ? 1 : 0][b];
    // NetworkClient.initiateConnect, then the ApiVersions round trip before any other request.
    if (ready == sim::kNever) ready = now + spec_.connection_setup.sample(connection_rng_);
    return ready > now ? ready - now : sim::SimTime{0};
  }
  return sim::SimTime{0};
}

void ConsumerClient::close_connections(sim::NodeId node, bool coordinator_only) {
  for (std::size_t b = 0; b < cluster_.broker_nodes.size(); ++b) {
    if (cluster_.broker_nodes[b] != node) continue;
    connection_ready_[1][b] = sim::kNever;
    if (!coordinator_only) connection_ready_[0][b] = sim::kNever;
  }
}

void ConsumerClient::disconnect(sim::NodeId node, const std::string& why) {
  close_connections(node);
  tracer_.publish(
      trace::NetDisconnect{.consumer = spec_.name, .node = network_.name(node), .reason = why});
  std::vector<std::pair<std::int32_t, InFlight>> failed;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.node == node) {
      failed.emplace_back(it->first, it->second);
      it = in_flight_.erase(it);
    } else {
      ++it;
    }
  }
  if (coordinator_ == node) mark_coordinator_unknown(why);
  for (const auto& [id, req] : failed) fail_in_flight(id, req);
  // DefaultMetadataUpdater.handleServerDisconnect: the disconnect may come from stale metadata.
  request_metadata_update("disconnect");
}

void ConsumerClient::send_fetches() {
  if (!process_.alive()) return;
  const sim::SimTime now = kernel_.now();
  // The brokers a Fetch can go to now (none in flight, not down). With none there is nothing to
  // send, and the scan below stops once each has one (not O(assigned partitions) per pass).
  if (fetches_in_flight_ == fetch_brokers_) return;
  std::size_t open = 0;
  for (std::size_t b = 0; b < fetch_.size(); ++b)
    if (fetch_[b].due == sim::kNever && !cluster_.is_down(cluster_.broker_nodes[b])) ++open;
  if (open == 0) return;
  // Records waiting to be returned: this pass returns them, and the next one fetches.
  if (consumption_.records_waiting()) return;
  bool sent = false;
  // One Fetch per open broker, in the order of the fetchable partitions each one leads first.
  consumption_.for_each_fetch_broker_while([&](std::size_t b) {
    const sim::NodeId leader = cluster_.broker_nodes[b];
    FetchSlot& f = fetch_[b];
    if (f.due != sim::kNever || cluster_.is_down(leader)) return true;
    f.id = next_correlation_id_++;
    trace_rpc("send", node_, leader, "Fetch", f.id, nullptr);
    f.sent = now;
    f.connected = true;
    f.due = now + fetch_answer(b);
    ++fetches_in_flight_;
    sent = true;
    return --open > 0;
  });
  if (!sent) return;
  const sim::SimTime first = first_fetch_due();
  if (!fetch_response_timer_.armed() || first < fetch_response_timer_.deadline())
    fetch_response_timer_.arm_at(first);
}

sim::SimTime ConsumerClient::fetch_answer(std::size_t b) {
  // Sent several times a second per broker: derived from the links once per change of them.
  if (fetch_answer_changes_ != network_.changes()) {
    fetch_answer_changes_ = network_.changes();
    for (FetchSlot& f : fetch_) f.answer = sim::kNever;
  }
  sim::SimTime& answer = fetch_[b].answer;
  if (answer != sim::kNever) return answer;
  // The mean latency of both links and of the broker's handling and purgatory lateness (no
  // draw: the records' own delivery uses no RNG either), plus the broker's wait for records;
  // at least 1 ms, so that a zero wait cannot spin.
  const sim::NodeId leader = cluster_.broker_nodes[b];
  const double rtt_ms = network_.mean_latency_ms(node_, leader) +
                        network_.mean_latency_ms(leader, node_) +
                        network_.handling(leader).expected_ms() + cluster_.purgatory_lateness_ms;
  answer = std::max(sim::SimTime{static_cast<std::int64_t>(std::llround(rtt_ms * 1000.0))} +
                        sim::ms(config_.fetch_max_wait_ms),
                    sim::ms(1));
  return answer;
}

void ConsumerClient::on_fetch_response_due() {
  const sim::SimTime now = kernel_.now();
  bool ended = false;
  for (std::size_t b = 0; b < fetch_.size(); ++b) {
    FetchSlot& f = fetch_[b];
    if (f.due > now) continue;
    const sim::NodeId leader = cluster_.broker_nodes[b];
    const sim::SimTime timeout = sim::saturating_add(f.sent, sim::ms(config_.request_timeout_ms));
    if (!f.failed && (network_.is_cut(node_, leader) || network_.is_cut(leader, node_)) &&
        timeout > now) {
      f.due = timeout;  // lost on a cut link: the request times out
      f.failed = true;
      continue;
    }
    end_fetch(b, f.failed ? ErrorCode::NETWORK_EXCEPTION : ErrorCode::NONE);
    ended = true;
  }
  const sim::SimTime next = first_fetch_due();
  if (next != sim::kNever) fetch_response_timer_.arm_at(next);
  if (ended) on_fetch_ended();
}

void ConsumerClient::end_fetch(std::size_t b, ErrorCode error) {
  FetchSlot& f = fetch_[b];
  trace_rpc("recv", cluster_.broker_nodes[b], node_, "Fetch", f.id, &error);
  SIM_ASSERT(f.due != sim::kNever && fetches_in_flight_ > 0);
  f.due = sim::kNever;
  --fetches_in_flight_;
  f.failed = false;
}

sim::SimTime ConsumerClient::first_fetch_due() const {
  sim::SimTime first = sim::kNever;
  for (const FetchSlot& f : fetch_) first = std::min(first, f.due);
  return first;
}

void ConsumerClient::reset_fetching() {
  clear_fetches();
  for (FetchSlot& f : fetch_) f.connected = false;
  for (auto& c : connection_ready_) std::fill(c.begin(), c.end(), sim::kNever);
}

void ConsumerClient::clear_fetches() {
  // The Fetches in flight answer now (with the records just returned); none is traced when
  // the client is reset.
  if (process_.alive())
    for (std::size_t b = 0; b < fetch_.size(); ++b)
      if (fetch_[b].due != sim::kNever) end_fetch(b, ErrorCode::NONE);
  for (FetchSlot& f : fetch_) {
    f.due = sim::kNever;
    f.failed = false;
  }
  fetches_in_flight_ = 0;
  fetch_response_timer_.cancel();
}

sim::SimTime ConsumerClient::data_connection_free_at(std::size_t b) const {
  const sim::SimTime now = kernel_.now();
  const FetchSlot& f = fetch_[b];
  if (f.due == sim::kNever || f.failed) return now;
  // The broker answers the Fetch when records for it arrive (they reach the client `Route::delay`
  // after their append, one link after the answer) or when fetch.max.wait.ms is over (the Fetch's
  // due time is its arrival here); the connection is read again once the answer is sent.
  const sim::NodeId leader = cluster_.broker_nodes[b];
  const double back_ms = network_.link_spec(leader, node_).latency.expected_ms();
  const sim::SimTime back{static_cast<std::int64_t>(std::llround(back_ms * 1000.0))};
  const sim::SimTime answered_here = std::min(f.due, consumption_.next_fetchable());
  return std::max(now, answered_here - back);
}

std::optional<std::size_t> ConsumerClient::least_loaded_data_connection() {
  const std::size_t n = cluster_.broker_nodes.size();
  const auto offset =
      static_cast<std::size_t>(least_loaded_rng_.uniform(0, static_cast<std::int64_t>(n) - 1));
  std::optional<std::size_t> ready;
  std::size_t ready_load = SIZE_MAX;
  std::optional<std::size_t> can_connect;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = (offset + i) % n;
    const sim::NodeId node = cluster_.broker_nodes[b];
    if (cluster_.is_down(node)) continue;
    if (!fetch_[b].connected) {
      if (!can_connect) can_connect = b;
      continue;
    }
    // Requests in flight on the data connection: its Fetch and the requests that are not the
    // group coordinator's (those use a connection of their own).
    std::size_t load = fetch_[b].due != sim::kNever ? 1 : 0;
    for (const auto& [id, req] : in_flight_)
      if (req.node == node && !is_coordinator_api(req.api)) ++load;
    if (load == 0) return b;
    if (load < ready_load) {
      ready = b;
      ready_load = load;
    }
  }
  return ready ? ready : can_connect;
}

sim::NodeId ConsumerClient::least_loaded_broker() const {
  sim::NodeId best = cluster_.broker_nodes.front();
  std::size_t best_load = SIZE_MAX;
  for (const sim::NodeId b : cluster_.broker_nodes) {
    if (cluster_.is_down(b)) continue;  // in reconnect backoff after its connection failed
    const auto load = static_cast<std::size_t>(std::count_if(
        in_flight_.begin(), in_flight_.end(), [b](const auto& kv) { return kv.second.node == b; }));
    if (load < best_load) {
      best = b;
      best_load = load;
    }
  }
  return best;
}

std::int64_t ConsumerClient::exponential_backoff_ms(int attempts, sim::Rng& rng) {
  return exponential_backoff_ms(config_.retry_backoff_ms, config_.retry_backoff_max_ms, attempts,
                                rng);
}

std::int64_t ConsumerClient::exponential_backoff_ms(std::int64_t initial_ms, std::int64_t max_ms,
                                                    int attempts, sim::Rng& rng) {
  const double initial = static_cast<double>(initial_ms);
  const double max = static_cast<double>(max_ms);
  const double exp_max = max > initial ? std::log(max / std::max(initial, 1.0)) / std::log(2.0) : 0;
  const double term = initial * std::pow(2.0, std::min(static_cast<double>(attempts), exp_max));
  const double factor = 0.8 + 0.4 * rng.uniform01();
  return std::min(static_cast<std::int64_t>(factor * term), max_ms);
}

void ConsumerClient::close_coordinator_connection(sim::NodeId node) {
  // A broker that is down refuses the connection anyway (send_to): its reconnect backoff is not
  // modelled (docs/fidelity.md, finding 19).
  if (!coordinator_reconnect_backoff_) return;
  close_connections(node, true);
  if (cluster_.is_down(node)) return;
  // ClusterConnectionStates.disconnected(): the next connection attempt waits the reconnect
  // backoff (reconnect.backoff.ms doubled per failed attempt up to reconnect.backoff.max.ms,
  // jitter 0.2) from the close.
  for (std::size_t b = 0; b < cluster_.broker_nodes.size(); ++b) {
    if (cluster_.broker_nodes[b] != node) continue;
    const std::int64_t backoff =
        exponential_backoff_ms(config_.reconnect_backoff_ms, config_.reconnect_backoff_max_ms,
                               coordinator_reconnect_failures_[b]++, reconnect_rng_);
    coordinator_reconnect_at_[b] = sim::saturating_add(kernel_.now(), sim::ms(backoff));
  }
}

void ConsumerClient::broker_answered(sim::NodeId node) {
  // A connection to the broker works (ClusterConnectionStates.ready() resets the failed attempts).
  for (std::size_t b = 0; b < coordinator_reconnect_failures_.size(); ++b)
    if (cluster_.broker_nodes[b] == node) coordinator_reconnect_failures_[b] = 0;
}

bool ConsumerClient::coordinator_unavailable(std::size_t broker) {
  if (!coordinator_reconnect_backoff_ || broker >= coordinator_reconnect_at_.size()) return false;
  if (kernel_.now() >= coordinator_reconnect_at_[broker]) {
    coordinator_unavailable_attempts_ = 0;
    return false;
  }
  // AbstractCoordinator.ensureCoordinatorReady(): the coordinator is found, but its connection
  // is disconnected and within its reconnect backoff (NetworkClientUtils.isUnavailable), so it is
  // marked unknown again ("coordinator unavailable") and the lookup is retried after the retry
  // backoff's step for this attempt (timer.sleep(retryBackoff.backoff(attempts++))).
  find_coordinator_in_flight_.reset();
  tracer_.publish(trace::ConsumerCoordinatorUnknown{.consumer = spec_.name,
                                                    .reason = "coordinator unavailable"});
  coordinator_lookup_not_before_ = sim::saturating_add(
      kernel_.now(),
      sim::ms(exponential_backoff_ms(coordinator_unavailable_attempts_++, reconnect_rng_)));
  on_coordinator_lookup_done(false);
  return true;
}

void ConsumerClient::trace_rpc(const char* dir, sim::NodeId from, sim::NodeId to, const char* api,
                               std::int32_t id, const ErrorCode* error, bool quiet) {
  if (!trace::wants(tracer_,
                    trace::data_path_api(api) ? trace::Detail::Full : trace::Detail::Standard))
    return;
  trace::Rpc f{.dir = dir,
               .from = network_.name(from),
               .to = network_.name(to),
               .api = api,
               .id = id,
               .quiet = quiet};
  if (error != nullptr) f.error = error_name(*error);
  // A ConsumerGroupHeartbeat request also says its epoch and which optional fields it carries;
  // an OffsetFetch request the member epoch it carries (-1: none, and no member id).
  if (error == nullptr) {
    f.member_epoch = rpc_fields_.member_epoch;
    if (rpc_fields_.fields) f.sent_fields = trace::Names(*rpc_fields_.fields);
  }
  tracer_.publish(f);
}

}  // namespace rsim
