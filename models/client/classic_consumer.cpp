#include "models/client/classic_consumer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/assignors/client_assignor.hpp"
#include "models/assignors/client_java_order.hpp"
#include "models/client/lag_monitor.hpp"
#include "models/spec/overloaded.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {
TopicPartitions sorted(TopicPartitions tps) {
  std::sort(tps.begin(), tps.end());
  return tps;
}

bool retriable_coordinator_error(ErrorCode e) {
  return e == ErrorCode::COORDINATOR_NOT_AVAILABLE || e == ErrorCode::NOT_COORDINATOR ||
         e == ErrorCode::NETWORK_EXCEPTION || e == ErrorCode::REQUEST_TIMED_OUT;
}
}  // namespace

ClassicConsumer::ClassicConsumer(sim::Kernel& kernel, Tracer& tracer,
                                 sim::Network<Envelope>& network, const ClusterMetadata& cluster,
                                 const ConsumerSpec& spec, ConsumerConfig config,
                                 std::uint64_t seed, Workload& workload, LagMonitor* lag)
    : QuietReturns(kernel, tracer, network, cluster, spec, std::move(config), seed, workload, lag,
                   "heartbeat"),
      // Every expiry enters the client (entered(), see ConsumerClient); those of the steady
      // state end with settled(), which notes whether the next return of poll() is quiet.
      retry_timer_(
          kernel,
          [this] {
            entered();
            on_app_wake();
          },
          &app_),
      auto_commit_timer_(
          kernel, [this] { on_app_wake_entry(); }, &app_),
      heartbeat_due_timer_(
          kernel, [this] { on_app_wake_entry(); }, &app_),
      heartbeat_tick_(
          kernel,
          [this] {
            entered();
            on_heartbeat_tick();
            settled();
          },
          &network_thread_),
      metadata_timer_(
          kernel,
          [this] {
            entered();
            send_periodic_metadata_request();
          },
          &network_thread_),
      leader_metadata_timer_(
          kernel,
          [this] {
            entered();
            on_leader_metadata_response();
          },
          &network_thread_),
      periodic_metadata_timer_(
          kernel,
          [this] {
            entered();
            on_periodic_metadata_response();
          },
          &network_thread_),
      heartbeat_rng_(seed, "heartbeat-" + spec.name) {
  // Rebalance protocol: the highest one every configured assignor supports (CC:250-274).
  std::set<assignors::RebalanceProtocol> common{assignors::RebalanceProtocol::Eager,
                                                assignors::RebalanceProtocol::Cooperative};
  for (const auto& a : config_.partition_assignment_strategy) {
    const auto s = assignors::supported_protocols(a);
    std::set<assignors::RebalanceProtocol> next;
    for (const auto p : s)
      if (common.count(p) > 0) next.insert(p);
    common = std::move(next);
  }
  SIM_ASSERT(!common.empty());
  cooperative_ = *common.rbegin() == assignors::RebalanceProtocol::Cooperative;
  coordinator_reconnect_backoff_ = true;  // AbstractCoordinator over NetworkClient
}

// ---------------------------------------------------------------------------------------------
// Script

void ClassicConsumer::reset_client_state() {
  state_ = MemberState::UNJOINED;
  generation_ = Generation{};
  rejoin_needed_ = true;
  needs_join_prepare_ = true;
  join_future_ = JoinFuture::None;
  prepare_stage_ = PrepareStage::Start;
  complete_stage_ = CompleteStage::Start;
  coordinator_.reset();
  find_coordinator_in_flight_.reset();
  coordinator_lookup_attempts_ = 0;
  coordinator_lookup_not_before_ = kernel_.now();
  // a new process: no connection of the old one is in its reconnect backoff
  std::fill(coordinator_reconnect_at_.begin(), coordinator_reconnect_at_.end(), sim::SimTime{0});
  std::fill(coordinator_reconnect_failures_.begin(), coordinator_reconnect_failures_.end(), 0);
  coordinator_unavailable_attempts_ = 0;
  is_leader_ = false;
  owned_.clear();
  metadata_.clear();
  assignment_snapshot_.reset();
  leader_join_.reset();
  leader_metadata_ = MetadataRequest{};
  periodic_metadata_ = MetadataRequest{};
  quiet_pass_.valid = false;
  consumption_.clear();
  batch_.reset();
  commit_sync_waiting_ = false;
  lookups_.clear();
  committed_answer_.reset();
  all_fetch_positions_ = true;
  in_poll_ = false;
  busy_ = false;
  stop_requested_ = false;
  wakeup_pending_ = false;
  first_poll_pending_ = false;
  fatal_ = false;
  close_stage_ = CloseStage::None;
  prepare_commit_id_.reset();
  close_commit_id_.reset();
  close_commit_sent_ = false;
  leave_id_.reset();
  heartbeat_enabled_ = false;
  heartbeat_awaits_notify_ = false;
  heartbeat_failed_ = false;
  heartbeat_attempts_ = 0;
  in_flight_.clear();
  reset_metadata();
  reset_fetching();
  for (sim::Timer* t : {&poll_return_timer_, &retry_timer_, &auto_commit_timer_,
                        &heartbeat_due_timer_, &callback_timer_, &fetch_wake_timer_,
                        &processing_timer_, &commit_retry_timer_, &loop_timer_, &heartbeat_tick_,
                        &request_timeout_timer_, &metadata_timer_, &first_poll_timer_,
                        &fetch_response_timer_, &leader_metadata_timer_, &periodic_metadata_timer_})
    t->cancel();
  cancel_script_timers();
}

void ClassicConsumer::start() {
  entered();
  if (process_.alive()) return;
  reset_client_state();
  topics_ = spec_.topics;
  process_.start();
  const sim::SimTime latency = draw_start_latency();
  tracer_.publish(
      trace::ConsumerStart{.consumer = spec_.name,
                           .group = config_.group_id,
                           .topics = topics_,
                           .protocol = cooperative_ ? "classic-cooperative" : "classic-eager",
                           .start_latency_ms = trace::start_latency_ms(latency)});
  // The auto-commit timer starts when the consumer is built (CC:247-248).
  next_auto_commit_ = sim::saturating_add(kernel_.now(), sim::ms(config_.auto_commit_interval_ms));
  last_poll_ = kernel_.now();
  schedule_first_poll(latency);
}

void ClassicConsumer::first_poll() {
  last_poll_ = kernel_.now();
  refresh_metadata("subscribed");
  begin_poll();
}

void ClassicConsumer::refresh_metadata(const std::string& why) {
  refresh_leaders(why);
  std::map<std::string, std::int32_t> fresh;
  for (const auto& [topic, n] : cluster_.partitions_per_topic) fresh[topic] = n;
  if (fresh != metadata_) {
    nlohmann::ordered_json topics = nlohmann::ordered_json::object();
    for (const auto& [topic, n] : fresh) topics[topic] = n;
    tracer_.publish(
        trace::ConsumerMetadata{.consumer = spec_.name, .partitions = &topics, .reason = why});
  }
  metadata_ = std::move(fresh);
  // Metadata.timeToNextUpdate: the age limit, but never sooner than the refresh backoff
  // (retry.backoff.ms after a successful update); both 0 spin, a kSpinTurn per refresh.
  metadata_timer_.arm(at_least_a_turn(
      std::max(sim::ms(config_.metadata_max_age_ms), sim::ms(config_.retry_backoff_ms))));
}

bool ClassicConsumer::assignment_metadata_changed() const {
  if (!assignment_snapshot_) return false;
  for (const auto& [topic, n] : *assignment_snapshot_) {
    const auto it = metadata_.find(topic);
    if ((it == metadata_.end() ? 0 : it->second) != n) return true;
  }
  return false;
}

void ClassicConsumer::subscribe(std::vector<std::string> topics) {
  entered();
  if (!process_.alive()) {
    spec_.topics = std::move(topics);
    return;
  }
  topics_ = std::move(topics);
  spec_.topics = topics_;
  for (const auto& t : topics_)
    if (metadata_.count(t) == 0) {
      refresh_metadata("subscribed to a new topic");  // requestUpdateForNewTopics
      break;
    }
  request_rejoin("subscription changed");
  on_app_wake();
}

// ---------------------------------------------------------------------------------------------
// Application thread: poll() and what ConsumerCoordinator.poll does inside it

void ClassicConsumer::on_poll_loop_continue() {
  // The application's loop: poll() returned (with or without records, processed by now);
  // unless it was asked to stop, it calls poll() again.
  if (stop_requested_) {
    stop_requested_ = false;
    close_stage_ = CloseStage::Committing;
    close_deadline_ = sim::saturating_add(
        kernel_.now(), sim::ms(std::min<std::int64_t>(30000, config_.request_timeout_ms)));
    continue_close();
    return;
  }
  begin_poll();
}

void ClassicConsumer::on_app_wake() {
  if (!process_.alive() || busy_ || !app_.runnable()) return;
  if (close_stage_ != CloseStage::None) {
    continue_close();
    return;
  }
  if (in_poll_) pass();
}

void ClassicConsumer::pass(bool resumed) {
  if (!process_.alive() || busy_ || fatal_ || close_stage_ != CloseStage::None) return;
  last_poll_ = kernel_.now();  // Heartbeat.poll(): feeds max.poll.interval.ms
  // pollHeartbeat: notify() the heartbeat thread when a heartbeat is due (AC:370-385); it wakes
  // from its wait at once, instead of at the end of its current retry.backoff.ms step.
  if (heartbeat_enabled_ && heartbeat_awaits_notify_ && kernel_.now() >= heartbeat_due_) {
    heartbeat_awaits_notify_ = false;
    heartbeat_tick_.arm(sim::SimTime::zero());
  }
  if (heartbeat_failed_) {
    throw_heartbeat_failure();
    return;
  }
  // updateAssignmentMetadataIfNeeded: the coordinator's part, then positions when the group is
  // active; the fetch runs either way (CKC poll loop), for partitions that have a position.
  if (coordinator_poll()) update_fetch_positions(resumed);
  if (!process_.alive() || busy_ || fatal_ || close_stage_ != CloseStage::None) return;
  maybe_return_records();
}

void ClassicConsumer::throw_heartbeat_failure() {
  // pollHeartbeat (AC:370-385) throws the heartbeat thread's FencedInstanceIdException from
  // poll() and drops the thread; the next join starts a new one. The application catches it and
  // calls poll() again at once (no records, no loop time), as the oracle's loop does. The member
  // is not lost: the Heartbeat's FENCED_INSTANCE_ID reset its generation and member id and asked
  // for a rejoin (AbstractCoordinator's HeartbeatResponseHandler), so that poll() runs
  // onPartitionsLost and sends a JoinGroup with its group.instance.id, which takes the instance
  // back from whoever holds it now.
  heartbeat_failed_ = false;
  in_poll_ = false;
  poll_return_timer_.cancel();
  fetch_wake_timer_.cancel();
  on_poll_loop_continue();
}

bool ClassicConsumer::coordinator_poll() {
  if (!coordinator_) {
    ensure_coordinator();
    return false;
  }
  if (state_ == MemberState::STABLE && !rejoin_needed_ && join_future_ == JoinFuture::None &&
      assignment_metadata_changed()) {
    tracer_.publish(
        trace::ConsumerRejoin{.consumer = spec_.name, .reason = "cached metadata has changed"});
    request_rejoin("cached metadata has changed");
  }
  if (rejoin_needed_ || join_future_ != JoinFuture::None) {
    if (!join_group_if_needed()) return false;
  }
  maybe_auto_commit();
  return true;
}

bool ClassicConsumer::join_group_if_needed() {
  while (rejoin_needed_ || join_future_ != JoinFuture::None) {
    if (!coordinator_) {
      ensure_coordinator();
      return false;
    }
    if (needs_join_prepare_) {
      if (!on_join_prepare()) return false;
      needs_join_prepare_ = false;
    }
    if (join_future_ == JoinFuture::None) {
      initiate_join_group();
      return false;
    }
    if (join_future_ == JoinFuture::Pending) return false;
    if (join_future_ == JoinFuture::Succeeded) {
      if (generation_.id >= 0 && state_ == MemberState::STABLE) {
        if (!on_join_complete()) return false;
        join_future_ = JoinFuture::None;
        needs_join_prepare_ = true;
      } else {
        join_future_ = JoinFuture::None;
        state_ = MemberState::UNJOINED;
        request_rejoin("generation was reset while the join was completing");
        needs_join_prepare_ = true;
      }
      continue;
    }
    // The join failed.
    const ErrorCode error = join_error_;
    join_future_ = JoinFuture::None;
    if (error != ErrorCode::MEMBER_ID_REQUIRED) rejoin_needed_ = true;
    if (error == ErrorCode::UNKNOWN_MEMBER_ID || error == ErrorCode::ILLEGAL_GENERATION ||
        error == ErrorCode::REBALANCE_IN_PROGRESS || error == ErrorCode::MEMBER_ID_REQUIRED) {
      continue;  // retried at once, without backoff (AC:544-548)
    }
    if (error == ErrorCode::FENCED_INSTANCE_ID || error == ErrorCode::INCONSISTENT_GROUP_PROTOCOL ||
        error == ErrorCode::INVALID_SESSION_TIMEOUT || error == ErrorCode::GROUP_MAX_SIZE_REACHED ||
        error == ErrorCode::INVALID_GROUP_ID) {
      fail_fatally(error, "JoinGroup/SyncGroup");
      return false;
    }
    retry_timer_.arm(sim::ms(config_.retry_backoff_ms));  // fixed backoff (AC:558)
    return false;
  }
  return true;
}

bool ClassicConsumer::on_join_prepare() {
  if (prepare_stage_ == PrepareStage::Start) {
    // Commit before revocation (auto-commit only), asynchronously, and wait for it (CC:764-806).
    if (config_.enable_auto_commit && !owned_.empty() && state_ == MemberState::STABLE &&
        generation_.id >= 0) {
      // EAGER: everything owned is pending revocation, so no more records of it are returned.
      if (!is_cooperative()) consumption_.mark_pending_revocation(owned_);
      prepare_commit_id_ = send_offset_commit("before revocation");
      if (prepare_commit_id_) {
        prepare_stage_ = PrepareStage::Committing;
        return false;
      }
    }
    prepare_stage_ = PrepareStage::CommitDone;
  }
  if (prepare_stage_ == PrepareStage::Committing) return false;
  if (prepare_stage_ == PrepareStage::CommitDone) {
    const bool generation_reset = generation_.id < 0 || generation_.member_id.empty();
    const char* callback = nullptr;
    const sim::Distribution* duration = nullptr;
    if (generation_reset) {
      pending_revoked_ = owned_;
      if (!owned_.empty()) {
        callback = "onPartitionsLost";
        duration = &spec_.callbacks.lost;
      }
    } else if (!is_cooperative()) {
      pending_revoked_ = owned_;  // EAGER: everything, and the callback runs even when empty
      callback = "onPartitionsRevoked";
      duration = &spec_.callbacks.revoke;
    } else {
      pending_revoked_.clear();
      for (const auto& tp : owned_)
        if (std::find(topics_.begin(), topics_.end(), tp.topic) == topics_.end())
          pending_revoked_.push_back(tp);
      if (!pending_revoked_.empty()) {
        callback = "onPartitionsRevoked";
        duration = &spec_.callbacks.revoke;
      }
    }
    prepare_stage_ = PrepareStage::Revoking;
    if (callback != nullptr && !start_callback(callback, pending_revoked_, *duration)) return false;
  }
  if (prepare_stage_ == PrepareStage::Revoking) {
    if (!pending_revoked_.empty()) set_owned(minus(owned_, pending_revoked_));
    pending_revoked_.clear();
    is_leader_ = false;
    prepare_stage_ = PrepareStage::Start;
    return true;
  }
  return false;
}

void ClassicConsumer::initiate_join_group() {
  state_ = MemberState::PREPARING_REBALANCE;
  JoinGroupRequest r;
  r.group_id = config_.group_id;
  r.session_timeout_ms = static_cast<std::int32_t>(config_.session_timeout_ms);
  r.rebalance_timeout_ms = static_cast<std::int32_t>(config_.max_poll_interval_ms);
  r.member_id = generation_.member_id;
  r.group_instance_id = config_.group_instance_id;
  r.protocols = join_protocols();
  r.client_id = config_.client_id;
  join_future_ = JoinFuture::Pending;
  // JoinGroup may wait for the whole rebalance: its timeout is max(request.timeout.ms, R + 5 s).
  send_request(*coordinator_, std::move(r),
               std::max(config_.request_timeout_ms, config_.max_poll_interval_ms + 5000));
}

std::vector<JoinGroupProtocol> ClassicConsumer::join_protocols() const {
  std::vector<JoinGroupProtocol> out;
  for (const auto& a : config_.partition_assignment_strategy) {
    Subscription s;
    s.topics = topics_;
    // The eager StickyAssignor carries the owned partitions in its user data, which the leader
    // decodes grouped by topic in Java (computeIfAbsent) HashMap order.
    s.owned_partitions = a == "sticky" ? assignors::java::sticky_user_data_order(owned_) : owned_;
    s.generation_id = generation_.id;
    s.rack = config_.client_rack;
    out.push_back({a, std::move(s)});
  }
  return out;
}

bool ClassicConsumer::on_join_complete() {
  if (complete_stage_ == CompleteStage::Start) {
    if (!is_leader_) assignment_snapshot_.reset();  // only the leader watches metadata
    // KIP-429: under COOPERATIVE, what moves away is revoked first and a rejoin follows.
    pending_revoked_ = is_cooperative() ? minus(owned_, join_assignment_) : TopicPartitions{};
    complete_stage_ = CompleteStage::Revoking;
    if (!pending_revoked_.empty() &&
        !start_callback("onPartitionsRevoked", pending_revoked_, spec_.callbacks.revoke))
      return false;
  }
  if (complete_stage_ == CompleteStage::Revoking) {
    if (!pending_revoked_.empty()) {
      set_owned(minus(owned_, pending_revoked_));
      pending_revoked_.clear();
      request_rejoin("need to revoke partitions and re-join");
    }
    const TopicPartitions added = minus(join_assignment_, owned_);
    set_owned(join_assignment_);
    next_auto_commit_ =
        sim::saturating_add(kernel_.now(), sim::ms(config_.auto_commit_interval_ms));
    complete_stage_ = CompleteStage::Assigning;
    // onPartitionsAssigned is called even with an empty set (CC:468).
    if (!start_callback("onPartitionsAssigned", sorted(added), spec_.callbacks.assign))
      return false;
  }
  complete_stage_ = CompleteStage::Start;
  return true;
}

void ClassicConsumer::maybe_auto_commit() {
  if (!config_.enable_auto_commit || state_ != MemberState::STABLE) return;
  if (kernel_.now() >= next_auto_commit_) {
    // auto.commit.interval.ms=0: Kafka commits at every poll pass; here once per kSpinTurn.
    next_auto_commit_ = sim::saturating_add(
        kernel_.now(), at_least_a_turn(sim::ms(config_.auto_commit_interval_ms)));
    send_offset_commit("auto-commit");
  }
  auto_commit_timer_.arm_at(next_auto_commit_);
}

std::optional<std::int32_t> ClassicConsumer::send_offset_commit(const std::string& purpose) {
  if (!coordinator_) return std::nullopt;
  OffsetCommitRequest r;
  r.group_id = config_.group_id;
  r.generation_id = generation_.id;
  r.member_id = generation_.member_id;
  r.group_instance_id = config_.group_instance_id;
  r.offsets = consumption_.all_consumed();
  if (r.offsets.empty()) return std::nullopt;
  tracer_.publish(trace::Commit{.consumer = spec_.name,
                                .group = config_.group_id,
                                .phase = "sent",
                                .purpose = purpose,
                                .generation = generation_.id,
                                .offsets = r.offsets});
  auto_commit_send_ = purpose == "auto-commit";
  const std::int32_t id = send_request(*coordinator_, std::move(r), config_.request_timeout_ms);
  in_flight_.at(id).api = "OffsetCommit:" + purpose;
  return id;
}

// ---------------------------------------------------------------------------------------------
// Quiet returns of poll() and quiet chains (see the header; AsyncConsumer's, with the classic
// client's bounds: its heartbeat notification and auto-commit live in its own poll() pass)

auto ClassicConsumer::poll_state() const -> PollState {
  return {poll_return_timer_.armed(),
          poll_return_timer_.deadline(),
          auto_commit_timer_.armed(),
          auto_commit_timer_.deadline(),
          fetch_wake_timer_.armed(),
          fetch_wake_timer_.deadline(),
          last_poll_,
          in_poll_,
          all_fetch_positions_};
}

void ClassicConsumer::note_quiet_pass() {
  quiet_pass_.valid = false;
  const sim::SimTime now = kernel_.now();
  const auto& per_poll = spec_.processing.per_poll;
  // The next full return: poll() returns, the loop calls it again at once, and its pass
  // (coordinator poll, positions, fetch) finds nothing to do but re-arm its timers.
  if (!process_.alive() || close_stage_ != CloseStage::None || busy_ || batch_ || !in_poll_ ||
      stop_requested_ || wakeup_pending_ || fatal_ || heartbeat_failed_ || commit_sync_waiting_ ||
      !per_poll.is_constant() || per_poll.value != 0 || !coordinator_ ||
      state_ != MemberState::STABLE || rejoin_needed_ || join_future_ != JoinFuture::None ||
      fetches_in_flight_ != fetch_brokers_ || !consumption_.has_all_fetch_positions() ||
      !consumption_.finds_nothing() || assignment_metadata_changed())
    return;
  sim::SimTime until = sim::kNever;
  if (heartbeat_enabled_) {
    // pollHeartbeat notifies the heartbeat thread once the next heartbeat is due.
    if (heartbeat_due_ <= now) return;
    until = heartbeat_due_;
  }
  if (config_.enable_auto_commit) {
    if (next_auto_commit_ <= now) return;
    until = std::min(until, next_auto_commit_);
  }
  quiet_pass_.valid = true;
  quiet_pass_.entries = entries_;
  quiet_pass_.until = until;
  // The fetch wake-up has no bound but the records' (every position is valid).
  quiet_pass_.fixed_bound = sim::kNever;
  quiet_pass_.backoff_bound = false;
}

// ---------------------------------------------------------------------------------------------
// Records: positions, fetch, processing, commits after a batch

void ClassicConsumer::update_fetch_positions(bool resumed) {
  if (!resumed) {
    // Every position valid (most passes): none awaits validation either, and nothing is sent.
    all_fetch_positions_ = consumption_.has_all_fetch_positions();
    if (all_fetch_positions_) return;
    // validatePositionsIfNeeded: an OffsetForLeaderEpoch to each leader for the positions
    // awaiting validation (asynchronous: the answer completes them; they stay without a valid
    // position until then).
    send_position_validations(generation_context());
  }
  // initWithCommittedOffsetsIfNeeded: the answer of an OffsetFetch sent earlier.
  if (committed_answer_) {
    consumption_.on_committed(*committed_answer_);
    committed_answer_.reset();
  }
  // auto.offset.reset=none and no committed offset: poll() throws NoOffsetForPartitionException.
  if (const auto tp = consumption_.missing_offset()) {
    fatal_ = true;
    tracer_.publish(trace::ConsumerError{.consumer = spec_.name,
                                         .error = "NoOffsetForPartitionException",
                                         .where = "poll: " + tp->str()});
    process_.kill();
    reset_client_state();
    return;
  }
  // Committed offsets first (OffsetFetch to the coordinator), then ListOffsets for the rest.
  if (const TopicPartitions need = consumption_.awaiting_committed();
      !need.empty() && coordinator_) {
    OffsetFetchRequest r;
    r.group_id = config_.group_id;
    r.partitions = need;
    consumption_.lookup_sent(need);
    lookups_[send_request(*coordinator_, std::move(r), config_.request_timeout_ms)] = need;
  }
  send_list_offsets(generation_context());
}

void ClassicConsumer::maybe_return_records() {
  if (!in_poll_ || batch_) return;
  // pollForFetches: Fetches go to every leader without one in flight (none while records wait
  // to be returned), then poll() waits on the network.
  send_fetches();
  // Only a pass after the wait sends what validation needs.
  // While a position is missing the wait is capped at retry.backoff.ms (pollForFetches), so
  // that the next pass sends what the positions need. With retry.backoff.ms=0 Kafka's
  // client.poll(0) returns from the network at once and poll() loops again: a real spin that
  // takes CPU time, here a kSpinTurn per turn (not a loop at one instant).
  return_records_or_wait(
      all_fetch_positions_
          ? sim::kNever
          : sim::saturating_add(kernel_.now(), at_least_a_turn(sim::ms(config_.retry_backoff_ms))));
  // Records returned: the Fetches that brought them have ended.
  if (batch_) clear_fetches();
}

void ClassicConsumer::on_fetch_ended() {
  // The answer wakes poll()'s network wait; its loop passes again (and sends the next Fetch).
  if (process_.alive() && in_poll_ && !busy_ && !batch_ && close_stage_ == CloseStage::None &&
      app_.runnable())
    fetch_wake_timer_.arm(sim::SimTime::zero());
}

bool ClassicConsumer::commit_fails_locally(const std::string& purpose) {
  // A commit while the member is not in a stable generation fails locally (CC:1310-1331).
  if (state_ == MemberState::STABLE && generation_.id >= 0) return false;
  if (!consumption_.all_consumed().empty()) {
    tracer_.publish(
        trace::Commit{.consumer = spec_.name,
                      .group = config_.group_id,
                      .phase = "failed",
                      .purpose = purpose,
                      .error = rejoin_needed_ ? "REBALANCE_IN_PROGRESS" : "ILLEGAL_GENERATION"});
  }
  return true;
}

void ClassicConsumer::on_offset_fetch_response(std::int32_t id, const OffsetFetchResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    consumption_.lookup_failed(asked);
    if (r.error == ErrorCode::NOT_COORDINATOR || r.error == ErrorCode::COORDINATOR_NOT_AVAILABLE)
      mark_coordinator_unknown(std::string(error_name(r.error)));
    retry_timer_.arm(sim::ms(config_.retry_backoff_ms));
    return;
  }
  // The application thread blocks on this answer inside updateFetchPositions: that pass goes
  // on with it. Otherwise (poll() returned meanwhile) the next pass applies it.
  committed_answer_ = r.partitions;
  if (process_.alive() && !busy_ && app_.runnable() && close_stage_ == CloseStage::None && in_poll_)
    pass(/*resumed=*/true);
  else
    on_app_wake();
}

void ClassicConsumer::on_list_offsets_response(std::int32_t id, const ListOffsetsResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    consumption_.lookup_failed(asked);
    retry_timer_.arm(sim::ms(config_.retry_backoff_ms));
    return;
  }
  std::vector<std::pair<TopicPartition, std::int64_t>> offsets;
  for (const auto& p : r.partitions) offsets.emplace_back(p.partition, p.offset);
  consumption_.on_reset(offsets);
  on_app_wake();
}

void ClassicConsumer::on_offsets_for_leader_epoch_response(std::int32_t id,
                                                           const OffsetsForLeaderEpochResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    consumption_.lookup_failed(asked);  // validated again at a pass after the backoff
    retry_timer_.arm(sim::ms(config_.retry_backoff_ms));
    return;
  }
  consumption_.on_validated(r.partitions);
  on_app_wake();
}

// ---------------------------------------------------------------------------------------------
// close()

void ClassicConsumer::continue_close() {
  if (!process_.alive() || busy_) return;
  if (close_stage_ == CloseStage::Committing) {
    if (!close_commit_sent_ && config_.enable_auto_commit && coordinator_ && !owned_.empty() &&
        state_ == MemberState::STABLE && kernel_.now() < close_deadline_) {
      close_commit_sent_ = true;
      close_commit_id_ = send_offset_commit("close");  // commitSync of allConsumed()
      if (close_commit_id_) return;
    }
    if (close_commit_id_) return;  // waiting for the response
    // Stop the heartbeat thread, then onLeavePrepare (CC:884-911).
    heartbeat_enabled_ = false;
    heartbeat_tick_.cancel();
    heartbeat_due_timer_.cancel();
    close_stage_ = CloseStage::Revoking;
    pending_revoked_ = owned_;
    if (!owned_.empty()) {
      const bool valid =
          generation_.id >= 0 && !generation_.member_id.empty() && state_ == MemberState::STABLE;
      const bool done = valid
                            ? start_callback("onPartitionsRevoked", owned_, spec_.callbacks.revoke)
                            : start_callback("onPartitionsLost", owned_, spec_.callbacks.lost);
      if (!done) return;
    }
  }
  if (close_stage_ == CloseStage::Revoking) {
    if (!pending_revoked_.empty()) set_owned({});
    pending_revoked_.clear();
    close_stage_ = CloseStage::Leaving;
    maybe_leave_group("the consumer is being closed");
    if (leave_id_) return;  // wait (bounded) for the LeaveGroup response
  }
  if (close_stage_ == CloseStage::Leaving && !leave_id_) finish_close();
}

// ---------------------------------------------------------------------------------------------
// Heartbeat thread (AC:1464-1595)

void ClassicConsumer::enable_heartbeat() {
  // Enabling resets all three timers: this sets the phase of the generation's heartbeats. It
  // notifies the thread, which passes its loop now and waits from here.
  heartbeat_enabled_ = true;
  set_heartbeat_due(sim::saturating_add(kernel_.now(), sim::ms(config_.heartbeat_interval_ms)));
  session_deadline_ = sim::saturating_add(kernel_.now(), sim::ms(config_.session_timeout_ms));
  last_poll_ = kernel_.now();
  heartbeat_attempts_ = 0;
  heartbeat_wake_ = kernel_.now();
  arm_heartbeat_tick();
}

void ClassicConsumer::set_heartbeat_due(sim::SimTime due) {
  // A poll() blocked on the network returns at the due time, as late as a thread's timed wait
  // returns (heartbeat_wakeup_lateness_ms), and its pass notifies the heartbeat thread.
  heartbeat_due_ = due;
  heartbeat_due_timer_.arm_at(
      std::max(kernel_.now(),
               sim::saturating_add(due, spec_.heartbeat_wakeup_lateness.sample(heartbeat_rng_))));
}

void ClassicConsumer::arm_heartbeat_tick() {
  // The thread waits retry.backoff.ms at a time from its last pass (HeartbeatThread.run(): when no
  // heartbeat is due, wait(retryBackoffMs)), each wake heartbeat_wakeup_lateness_ms late; a
  // notify() wakes it earlier. A wake before one of its deadlines only checks and waits again,
  // so the tick is armed at the first wake at or after the earliest deadline.
  heartbeat_awaits_notify_ = true;
  if (config_.retry_backoff_ms <= 0) {
    heartbeat_tick_.cancel();  // Object.wait(0): until notified
    return;
  }
  const sim::SimTime poll_deadline =
      sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms));
  const sim::SimTime target =
      std::max(kernel_.now(), std::min({heartbeat_due_, session_deadline_, poll_deadline}));
  const sim::SimTime backoff = sim::ms(config_.retry_backoff_ms);
  const sim::Distribution& lateness = spec_.heartbeat_wakeup_lateness;
  if (target == sim::kNever) {
    heartbeat_tick_.cancel();
    return;
  }
  if (heartbeat_wake_ < target) {
    if (lateness.is_constant()) {
      const sim::SimTime step =
          backoff + lateness.sample(heartbeat_rng_);  // a constant draws nothing
      const auto steps = (target - heartbeat_wake_ + step - sim::SimTime{1}) / step;
      heartbeat_wake_ = sim::saturating_add(heartbeat_wake_, step * steps);
    } else {
      while (heartbeat_wake_ < target)
        heartbeat_wake_ =
            sim::saturating_add(heartbeat_wake_, backoff + lateness.sample(heartbeat_rng_));
    }
  }
  heartbeat_tick_.arm_at(std::max(kernel_.now(), heartbeat_wake_));
}

void ClassicConsumer::wait_one_backoff() {
  // One wait(retryBackoffMs) from this pass; wait(0) waits until notified.
  heartbeat_awaits_notify_ = true;
  if (config_.retry_backoff_ms <= 0) {
    heartbeat_tick_.cancel();
    return;
  }
  heartbeat_wake_ = sim::saturating_add(
      kernel_.now(),
      sim::ms(config_.retry_backoff_ms) + spec_.heartbeat_wakeup_lateness.sample(heartbeat_rng_));
  heartbeat_tick_.arm_at(heartbeat_wake_);
}

void ClassicConsumer::on_heartbeat_tick() {
  heartbeat_awaits_notify_ = false;
  if (!heartbeat_enabled_ || !process_.alive()) return;
  if (state_ == MemberState::UNJOINED || state_ == MemberState::PREPARING_REBALANCE) {
    heartbeat_enabled_ = false;
    heartbeat_due_timer_.cancel();
    return;
  }
  const sim::SimTime now = kernel_.now();
  heartbeat_wake_ = now;  // this pass: the next wait starts here
  if (!coordinator_) {
    ensure_coordinator();
    wait_one_backoff();
    return;
  }
  if (now >= session_deadline_) {
    mark_coordinator_unknown("session timed out without receiving a heartbeat response");
    wait_one_backoff();
    return;
  }
  if (now >= sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms))) {
    tracer_.publish(trace::ConsumerPollTimeout{
        .consumer = spec_.name, .max_poll_interval_ms = config_.max_poll_interval_ms});
    maybe_leave_group("consumer poll timeout has expired.");
    return;
  }
  if (now < heartbeat_due_) {
    arm_heartbeat_tick();
    return;
  }
  HeartbeatRequest r{config_.group_id, generation_.id, generation_.member_id,
                     config_.group_instance_id};
  send_request(*coordinator_, std::move(r), config_.request_timeout_ms);
  // Heartbeat.sentHeartbeat(now): the next one is due an interval after this send.
  set_heartbeat_due(sim::saturating_add(now, sim::ms(config_.heartbeat_interval_ms)));
  arm_heartbeat_tick();
}

void ClassicConsumer::maybe_leave_group(const std::string& reason) {
  // LeaveGroup only for a dynamic member in a group, with a known coordinator (AC:1168-1194).
  if (coordinator_ && state_ != MemberState::UNJOINED && !generation_.member_id.empty() &&
      !config_.group_instance_id) {
    LeaveGroupRequest r;
    r.group_id = config_.group_id;
    r.members.push_back({generation_.member_id, std::nullopt, reason});
    leave_id_ = send_request(*coordinator_, std::move(r), config_.request_timeout_ms);
  }
  reset_generation(true, reason);
  request_rejoin(reason);
}

// ---------------------------------------------------------------------------------------------
// Network client

std::int32_t ClassicConsumer::send_request(sim::NodeId to, Message request,
                                           std::int64_t timeout_ms) {
  return send_to(to, std::move(request), timeout_ms, generation_context());
}

void ClassicConsumer::fail_in_flight(std::int32_t id, const InFlight& req) {
  const ErrorCode e = ErrorCode::NETWORK_EXCEPTION;
  trace_rpc("recv", req.node, node_, req.api.substr(0, req.api.find(':')).c_str(), id, &e);
  const std::string api = req.api.substr(0, req.api.find(':'));
  if (api == "FindCoordinator")
    on_find_coordinator_response(FindCoordinatorResponse{e, -1});
  else if (api == "JoinGroup")
    on_join_group_response(req, JoinGroupResponse{.error = e});
  else if (api == "SyncGroup")
    on_sync_group_response(req, SyncGroupResponse{.error = e});
  else if (api == "Heartbeat")
    on_heartbeat_response(req, HeartbeatResponse{e});
  else if (api == "OffsetCommit") {
    const std::string purpose = req.api.size() > api.size() ? req.api.substr(api.size() + 1) : "";
    on_offset_commit_response(req, OffsetCommitResponse{e}, purpose);
  } else if (api == "LeaveGroup")
    on_leave_group_response(LeaveGroupResponse{.error = e});
  else if (api == "OffsetFetch")
    on_offset_fetch_response(id, OffsetFetchResponse{e, {}});
  else if (api == "ListOffsets")
    on_list_offsets_response(id, ListOffsetsResponse{e, {}});
  else if (api == "OffsetForLeaderEpoch")
    on_offsets_for_leader_epoch_response(id, OffsetsForLeaderEpochResponse{e, {}});
  if (id == prepare_commit_id_) prepare_commit_id_.reset();
}

void ClassicConsumer::on_message(sim::NodeId from, Envelope&& envelope) {
  if (!process_.alive()) return;
  const auto it = in_flight_.find(envelope.correlation_id);
  if (it == in_flight_.end()) return;  // it timed out or the connection was closed meanwhile
  const InFlight req = std::move(it->second);
  in_flight_.erase(it);
  broker_answered(from);
  const ErrorCode e = error_of(envelope.message);
  // A quiet Heartbeat's or auto-commit's answer causes nothing when it is NONE.
  const bool quiet = req.quiet && e == ErrorCode::NONE &&
                     (std::holds_alternative<HeartbeatResponse>(envelope.message) ||
                      std::holds_alternative<OffsetCommitResponse>(envelope.message));
  trace_rpc("recv", from, node_, api_name(envelope.message), envelope.correlation_id, &e, quiet);
  handling_id_ = envelope.correlation_id;
  handle_response(req, envelope.message);
}

void ClassicConsumer::handle_response(const InFlight& req, const Message& response) {
  std::visit(Overloaded{
                 [&](const FindCoordinatorResponse& r) { on_find_coordinator_response(r); },
                 [&](const JoinGroupResponse& r) { on_join_group_response(req, r); },
                 [&](const SyncGroupResponse& r) { on_sync_group_response(req, r); },
                 [&](const HeartbeatResponse& r) { on_heartbeat_response(req, r); },
                 [&](const LeaveGroupResponse& r) { on_leave_group_response(r); },
                 [&](const OffsetCommitResponse& r) {
                   const auto colon = req.api.find(':');
                   on_offset_commit_response(
                       req, r, colon == std::string::npos ? "" : req.api.substr(colon + 1));
                 },
                 [&](const FindCoordinatorRequest&) { SIM_ASSERT(false); },
                 [&](const JoinGroupRequest&) { SIM_ASSERT(false); },
                 [&](const SyncGroupRequest&) { SIM_ASSERT(false); },
                 [&](const HeartbeatRequest&) { SIM_ASSERT(false); },
                 [&](const LeaveGroupRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetCommitRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetFetchResponse& r) { on_offset_fetch_response(handling_id_, r); },
                 [&](const ListOffsetsResponse& r) { on_list_offsets_response(handling_id_, r); },
                 [&](const OffsetFetchRequest&) { SIM_ASSERT(false); },
                 [&](const ListOffsetsRequest&) { SIM_ASSERT(false); },
                 [&](const ConsumerGroupHeartbeatRequest&) { SIM_ASSERT(false); },
                 [&](const ConsumerGroupHeartbeatResponse&) {
                   SIM_ASSERT(false);
                 },  // classic never sends one
                 [&](const OffsetsForLeaderEpochResponse& r) {
                   on_offsets_for_leader_epoch_response(handling_id_, r);
                 },
                 [&](const OffsetsForLeaderEpochRequest&) { SIM_ASSERT(false); },
                 [&](const ShareGroupMessage auto&) { SIM_ASSERT(false); },
             },
             response);
}

void ClassicConsumer::on_join_group_response(const InFlight& req, const JoinGroupResponse& r) {
  if (join_future_ != JoinFuture::Pending) return;
  switch (r.error) {
    case ErrorCode::NONE: {
      if (state_ != MemberState::PREPARING_REBALANCE) {
        fail_join(ErrorCode::UNKNOWN_SERVER_ERROR);  // left meanwhile: retriable, backoff
        break;
      }
      state_ = MemberState::COMPLETING_REBALANCE;
      enable_heartbeat();
      generation_ = Generation{r.generation_id, r.member_id, r.protocol_name};
      if (r.leader == r.member_id) {
        is_leader_ = true;
        if (leader_needs_metadata(r)) {
          leader_join_ = r;
          send_leader_metadata_request();
          return;  // the SyncGroup goes with the metadata's answer
        }
      }
      send_sync_group(r);
      return;  // the join future completes with the SyncGroup response
    }
    case ErrorCode::MEMBER_ID_REQUIRED:
      generation_ = Generation{-1, r.member_id, ""};
      fail_join(r.error);
      break;
    case ErrorCode::UNKNOWN_MEMBER_ID:
      if (generation_ == generation_of(req)) reset_generation(true, "JoinGroup: UNKNOWN_MEMBER_ID");
      fail_join(r.error);
      break;
    default:
      fail_join(r.error);
      break;
  }
  if (state_ == MemberState::PREPARING_REBALANCE && join_future_ == JoinFuture::Failed)
    state_ = generation_.id >= 0 ? state_ : MemberState::UNJOINED;
  on_app_wake();
}

void ClassicConsumer::send_sync_group(const JoinGroupResponse& r) {
  SyncGroupRequest s;
  s.group_id = config_.group_id;
  s.generation_id = r.generation_id;
  s.member_id = r.member_id;
  s.group_instance_id = config_.group_instance_id;
  s.protocol_name = r.protocol_name;
  if (r.leader == r.member_id) {
    // A returning static leader (skipAssignment) keeps the stored assignment.
    if (r.skip_assignment)
      take_assignment_snapshot(r);
    else
      s.assignments = run_assignor(r);
  }
  send_request(*coordinator_, std::move(s), config_.request_timeout_ms);
}

bool ClassicConsumer::leader_needs_metadata(const JoinGroupResponse& r) const {
  // SubscriptionState.groupSubscribe: true when the group subscribes to a topic outside the
  // leader's own subscription (the group subscription is reset before every join), and then
  // Metadata.requestUpdateForNewTopics makes ensureFreshMetadata wait for an update.
  for (const auto& m : r.members)
    for (const auto& t : m.metadata.topics)
      if (std::find(topics_.begin(), topics_.end(), t) == topics_.end()) return true;
  return false;
}

void ClassicConsumer::send_metadata_request(MetadataRequest& req, sim::Timer& answer) {
  req.in_flight = true;
  const auto b = least_loaded_data_connection();
  if (!b) {
    // No broker to ask: awaitMetadataUpdate polls again after the refresh backoff.
    req.timed_out = true;
    req.broker = cluster_.broker_nodes.size();
    answer.arm(at_least_a_turn(sim::ms(config_.retry_backoff_ms)));
    return;
  }
  const sim::NodeId broker = cluster_.broker_nodes[*b];
  req.id = next_correlation_id_++;
  req.broker = *b;
  fetch_[*b].connected = true;
  trace_rpc("send", node_, broker, "Metadata", req.id, nullptr);
  if (network_.is_cut(node_, broker) || network_.is_cut(broker, node_)) {
    // No answer comes: the request times out and the update is asked for again.
    req.timed_out = true;
    answer.arm(sim::ms(config_.request_timeout_ms));
    return;
  }
  req.timed_out = false;
  // Mean latencies and handling time (no draw, as for the Fetches the request waits behind).
  const auto micros = [](double ms) {
    return sim::SimTime{static_cast<std::int64_t>(std::llround(ms * 1000.0))};
  };
  const sim::SimTime out = micros(network_.link_spec(node_, broker).latency.expected_ms());
  const sim::SimTime back = micros(network_.link_spec(broker, node_).latency.expected_ms());
  const sim::SimTime handling = micros(network_.handling(broker).expected_ms());
  const sim::SimTime read = std::max(kernel_.now() + out, data_connection_free_at(*b));
  answer.arm_at(read + handling + back);
}

bool ClassicConsumer::receive_metadata_answer(MetadataRequest& req) {
  req.in_flight = false;
  if (req.timed_out) {
    if (req.broker < cluster_.broker_nodes.size()) {
      const ErrorCode error = ErrorCode::REQUEST_TIMED_OUT;
      trace_rpc("recv", cluster_.broker_nodes[req.broker], node_, "Metadata", req.id, &error);
    }
    return false;
  }
  const ErrorCode none = ErrorCode::NONE;
  trace_rpc("recv", cluster_.broker_nodes[req.broker], node_, "Metadata", req.id, &none);
  return true;
}

void ClassicConsumer::send_leader_metadata_request() {
  send_metadata_request(leader_metadata_, leader_metadata_timer_);
}

void ClassicConsumer::send_periodic_metadata_request() {
  if (!process_.alive() || periodic_metadata_.in_flight) return;
  send_metadata_request(periodic_metadata_, periodic_metadata_timer_);
}

void ClassicConsumer::on_periodic_metadata_response() {
  if (!process_.alive()) return;
  if (!receive_metadata_answer(periodic_metadata_)) {
    send_periodic_metadata_request();
    return;
  }
  refresh_metadata("metadata.max.age.ms elapsed");
}

void ClassicConsumer::on_leader_metadata_response() {
  if (!process_.alive() || !leader_join_) return;
  if (!receive_metadata_answer(leader_metadata_)) {
    send_leader_metadata_request();
    return;
  }
  refresh_metadata("the group subscribes to a topic outside the leader's subscription");
  const JoinGroupResponse r = std::move(*leader_join_);
  leader_join_.reset();
  // The SyncGroup goes even if the generation was reset meanwhile: its answer fails the join.
  if (join_future_ != JoinFuture::Pending) return;
  if (!coordinator_) {
    fail_join(ErrorCode::COORDINATOR_NOT_AVAILABLE);
    on_app_wake();
    return;
  }
  send_sync_group(r);
}

void ClassicConsumer::take_assignment_snapshot(const JoinGroupResponse& r) {
  // The leader watches every topic of the group (updateGroupSubscription); the metadata it
  // assigns with is the cache, updated first when the group subscribes to a topic outside the
  // leader's own subscription (leader_needs_metadata).
  std::set<std::string> topics;
  for (const auto& m : r.members) topics.insert(m.metadata.topics.begin(), m.metadata.topics.end());
  assignment_snapshot_.emplace();
  for (const auto& t : topics) {
    const auto known = metadata_.find(t);
    (*assignment_snapshot_)[t] = known == metadata_.end() ? 0 : known->second;
  }
}

std::vector<SyncGroupAssignment> ClassicConsumer::run_assignor(const JoinGroupResponse& r) {
  take_assignment_snapshot(r);
  assignors::ClientAssignorInput input;
  for (const auto& m : r.members) {
    assignors::ClientMember cm;
    cm.member_id = m.member_id;
    cm.group_instance_id = m.group_instance_id;
    cm.topics = m.metadata.topics;
    cm.owned_partitions = m.metadata.owned_partitions;
    if (m.metadata.generation_id >= 0) cm.generation = m.metadata.generation_id;
    cm.rack = m.metadata.rack;
    for (const auto& t : m.metadata.topics) {
      const std::int32_t n = assignment_snapshot_->at(t);
      if (n > 0) input.partitions_per_topic[t] = n;
    }
    input.members.push_back(std::move(cm));
  }
  const auto assignment = assignors::assign_client(r.protocol_name, input);
  std::vector<SyncGroupAssignment> out;
  for (const auto& [member, tps] : assignment) out.push_back({member, tps});
  // Each partition goes to at most one member (checked here and again when installed).
  std::set<TopicPartition> seen;
  for (const auto& a : out)
    for (const auto& tp : a.assignment) SIM_ASSERT_MSG(seen.insert(tp).second, tp.str());
  return out;
}

void ClassicConsumer::on_sync_group_response(const InFlight& req, const SyncGroupResponse& r) {
  if (join_future_ != JoinFuture::Pending) return;
  switch (r.error) {
    case ErrorCode::NONE:
      if (generation_.id >= 0 && state_ == MemberState::COMPLETING_REBALANCE) {
        state_ = MemberState::STABLE;
        rejoin_needed_ = false;
        join_assignment_ = r.assignment;
        join_future_ = JoinFuture::Succeeded;
      } else {
        fail_join(ErrorCode::ILLEGAL_GENERATION);
      }
      break;
    case ErrorCode::REBALANCE_IN_PROGRESS:
      request_rejoin("SyncGroup: REBALANCE_IN_PROGRESS");
      fail_join(r.error);
      break;
    case ErrorCode::UNKNOWN_MEMBER_ID:
    case ErrorCode::ILLEGAL_GENERATION:
      if (generation_ == generation_of(req))
        reset_generation(r.error == ErrorCode::UNKNOWN_MEMBER_ID,
                         fmt::format("SyncGroup: {}", error_name(r.error)));
      fail_join(r.error);
      break;
    default:
      fail_join(r.error);
      break;
  }
  on_app_wake();
}

void ClassicConsumer::fail_join(ErrorCode error) {
  // COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or a disconnect: the coordinator is forgotten
  // before the join is retried (the JoinGroup/SyncGroup tables of kafka-classic-protocol.md §2.16).
  if (error == ErrorCode::COORDINATOR_NOT_AVAILABLE || error == ErrorCode::NOT_COORDINATOR ||
      error == ErrorCode::NETWORK_EXCEPTION)
    mark_coordinator_unknown(std::string(error_name(error)));
  join_error_ = error;
  join_future_ = JoinFuture::Failed;
}

void ClassicConsumer::on_heartbeat_response(const InFlight& req, const HeartbeatResponse& r) {
  switch (r.error) {
    case ErrorCode::NONE:
      session_deadline_ = sim::saturating_add(kernel_.now(), sim::ms(config_.session_timeout_ms));
      heartbeat_attempts_ = 0;
      break;
    case ErrorCode::REBALANCE_IN_PROGRESS:
      session_deadline_ = sim::saturating_add(kernel_.now(), sim::ms(config_.session_timeout_ms));
      heartbeat_attempts_ = 0;
      if (state_ == MemberState::STABLE) {
        request_rejoin("group is already rebalancing");
        on_app_wake();
      }
      break;
    case ErrorCode::ILLEGAL_GENERATION:
    case ErrorCode::UNKNOWN_MEMBER_ID:
    case ErrorCode::FENCED_INSTANCE_ID:
      if (generation_ == generation_of(req)) {
        // resetStateOnResponseError: the member id goes too, except on ILLEGAL_GENERATION.
        reset_generation(r.error != ErrorCode::ILLEGAL_GENERATION,
                         fmt::format("Heartbeat: {}", error_name(r.error)));
        request_rejoin(fmt::format("Heartbeat: {}", error_name(r.error)));
        if (r.error == ErrorCode::FENCED_INSTANCE_ID) heartbeat_failed_ = true;
        on_app_wake();
      }
      break;
    case ErrorCode::COORDINATOR_NOT_AVAILABLE:
    case ErrorCode::NOT_COORDINATOR:
      mark_coordinator_unknown(std::string(error_name(r.error)));
      fail_heartbeat();
      break;
    default:
      fail_heartbeat();
      break;
  }
}

void ClassicConsumer::fail_heartbeat() {
  // failHeartbeat(): the next heartbeat after the exponential backoff; then notify(), so the
  // thread passes now and waits from here.
  set_heartbeat_due(
      sim::saturating_add(kernel_.now(), sim::ms(exponential_backoff_ms(heartbeat_attempts_++))));
  if (!heartbeat_enabled_) return;
  heartbeat_wake_ = kernel_.now();
  arm_heartbeat_tick();
}

void ClassicConsumer::on_offset_commit_response(const InFlight& req, const OffsetCommitResponse& r,
                                                const std::string& purpose) {
  const ErrorCode e = r.error;
  if (e == ErrorCode::REBALANCE_IN_PROGRESS) request_rejoin("OffsetCommit: REBALANCE_IN_PROGRESS");
  if (e == ErrorCode::UNKNOWN_MEMBER_ID || e == ErrorCode::ILLEGAL_GENERATION) {
    if (generation_ == generation_of(req)) {
      reset_generation(e == ErrorCode::UNKNOWN_MEMBER_ID,
                       fmt::format("OffsetCommit: {}", error_name(e)));
      on_app_wake();
    }
  }
  if (e == ErrorCode::COORDINATOR_NOT_AVAILABLE || e == ErrorCode::NOT_COORDINATOR)
    mark_coordinator_unknown(std::string(error_name(e)));
  const bool retriable =
      retriable_coordinator_error(e) || e == ErrorCode::COORDINATOR_LOAD_IN_PROGRESS;
  tracer_.publish(trace::Commit{.consumer = spec_.name,
                                .group = config_.group_id,
                                .phase = "completed",
                                .purpose = purpose,
                                .error = error_name(e)});
  if (purpose == "commitSync") {
    if (!commit_sync_waiting_) return;
    // commitSync retries retriable errors until default.api.timeout.ms; any other error is
    // thrown to the application (CommitFailedException, RebalanceInProgressException), which
    // carries on with its loop.
    if (retriable && kernel_.now() < commit_sync_deadline_) {
      commit_retry_timer_.arm(sim::ms(config_.retry_backoff_ms));
      return;
    }
    after_batch();
    return;
  }
  if (purpose == "before revocation") {
    prepare_commit_id_.reset();
    // A retriable failure sends a fresh commit at the next pass; anything else proceeds.
    prepare_stage_ = retriable ? PrepareStage::Start : PrepareStage::CommitDone;
    on_app_wake();
  } else if (purpose == "close") {
    close_commit_id_.reset();
    if (retriable && kernel_.now() < close_deadline_) {
      close_commit_sent_ = false;  // commitSync retries with backoff until the close timeout
      retry_timer_.arm(sim::ms(exponential_backoff_ms(0)));
    } else {
      on_app_wake();
    }
  } else if (purpose == "auto-commit") {
    if (retriable) {
      next_auto_commit_ = sim::saturating_add(kernel_.now(), sim::ms(config_.retry_backoff_ms));
      auto_commit_timer_.arm_at(next_auto_commit_);
    }
  }
}

void ClassicConsumer::on_leave_group_response(const LeaveGroupResponse&) {
  // Errors are only logged (AC:1205-1221); the client has already reset itself.
  leave_id_.reset();
  if (close_stage_ == CloseStage::Leaving) continue_close();
}

// ---------------------------------------------------------------------------------------------
// Helpers

void ClassicConsumer::on_callback_end() {
  if (end_callback()) return;
  // The callback ran inside poll(): the same pass goes on.
  if (!in_poll_) {
    in_poll_ = true;
    poll_return_timer_.arm(at_least_a_turn(spec_.poll_timeout));
  }
  pass();
}

void ClassicConsumer::set_owned(TopicPartitions owned) {
  owned = sorted(std::move(owned));
  consumption_.revoke(minus(owned_, owned));
  consumption_.assign(minus(owned, owned_));
  if (owned == owned_) {
    tracer_.publish(trace::Assignment{.consumer = spec_.name, .owned = owned_});
    return;
  }
  owned_ = std::move(owned);
  tracer_.publish(trace::Assignment{.consumer = spec_.name, .owned = owned_});
}

void ClassicConsumer::reset_generation(bool reset_member_id, const std::string& why) {
  tracer_.publish(trace::ConsumerGenerationReset{
      .consumer = spec_.name, .reason = why, .member_id_reset = reset_member_id});
  const std::string member_id = reset_member_id ? "" : generation_.member_id;
  generation_ = Generation{-1, member_id, ""};
  state_ = MemberState::UNJOINED;
  // resetStateAndRejoin: every reset on a response error or a leave also asks for a rejoin.
  rejoin_needed_ = true;
  needs_join_prepare_ = true;
  heartbeat_enabled_ = false;
  heartbeat_tick_.cancel();
  heartbeat_due_timer_.cancel();
}

void ClassicConsumer::request_rejoin(const std::string&) {
  rejoin_needed_ = true;
}

void ClassicConsumer::fail_fatally(ErrorCode error, const std::string& where) {
  fatal_ = true;
  tracer_.publish(
      trace::ConsumerError{.consumer = spec_.name, .error = error_name(error), .where = where});
  process_.kill();
  reset_client_state();
}

}  // namespace rsim
