#include "models/client/async_consumer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/client/lag_monitor.hpp"
#include "models/protocol/uuid.hpp"
#include "models/spec/overloaded.hpp"
#include "models/workload/workload.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {
using State = ConsumerMemberState;

TopicPartitions sorted(TopicPartitions tps) {
  std::sort(tps.begin(), tps.end());
  tps.erase(std::unique(tps.begin(), tps.end()), tps.end());
  return tps;
}

std::vector<ConsumerGroupHeartbeatTopicPartitions> to_wire(const TopicPartitions& tps) {
  std::vector<ConsumerGroupHeartbeatTopicPartitions> out;
  for (const auto& tp : tps) {
    if (out.empty() || out.back().topic_id != tp.topic) out.push_back({tp.topic, {}});
    out.back().partitions.push_back(tp.partition);
  }
  return out;
}

TopicPartitions from_wire(const std::vector<ConsumerGroupHeartbeatTopicPartitions>& tps) {
  TopicPartitions out;
  for (const auto& t : tps)
    for (const auto p : t.partitions) out.push_back({t.topic_id, p});
  return sorted(std::move(out));
}

bool fatal_heartbeat_error(ErrorCode e) {
  return e == ErrorCode::UNRELEASED_INSTANCE_ID || e == ErrorCode::FENCED_INSTANCE_ID ||
         e == ErrorCode::GROUP_MAX_SIZE_REACHED || e == ErrorCode::UNSUPPORTED_ASSIGNOR ||
         e == ErrorCode::INVALID_REQUEST || e == ErrorCode::UNKNOWN_SERVER_ERROR ||
         e == ErrorCode::GROUP_ID_NOT_FOUND;
}
}  // namespace

const char* member_state_name(ConsumerMemberState s) {
  switch (s) {
    case State::UNSUBSCRIBED:
      return "UNSUBSCRIBED";
    case State::JOINING:
      return "JOINING";
    case State::RECONCILING:
      return "RECONCILING";
    case State::ACKNOWLEDGING:
      return "ACKNOWLEDGING";
    case State::STABLE:
      return "STABLE";
    case State::FENCED:
      return "FENCED";
    case State::PREPARE_LEAVING:
      return "PREPARE_LEAVING";
    case State::LEAVING:
      return "LEAVING";
    case State::FATAL:
      return "FATAL";
    case State::STALE:
      return "STALE";
  }
  return "UNKNOWN";
}

AsyncConsumer::AsyncConsumer(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& network,
                             const ClusterMetadata& cluster, const ConsumerSpec& spec,
                             ConsumerConfig config, std::uint64_t seed, Workload& workload,
                             LagMonitor* lag)
    : QuietReturns(kernel, tracer, network, cluster, spec, std::move(config), seed, workload, lag,
                   "network"),
      close_retry_timer_(
          kernel,
          [this] {
            entered();
            continue_close();
          },
          &app_),
      heartbeat_timer_(
          kernel,
          [this] {
            entered();
            maybe_heartbeat();
            settled();
          },
          &network_thread_),
      poll_timer_(
          kernel,
          [this] {
            entered();
            on_poll_timer_expired();
          },
          &network_thread_),
      coordinator_retry_timer_(
          kernel,
          [this] {
            entered();
            maybe_heartbeat();
          },
          &network_thread_),
      reconcile_commit_timer_(
          kernel,
          [this] {
            entered();
            retry_reconcile_commit();
          },
          &network_thread_) {
  lookup_backoff_after_success_ = true;  // CoordinatorRequestManager's RequestState
  // A poll() that finds nothing returns poll_return_lateness_ms after its timeout (finding 27).
  poll_return_lateness_ = spec.poll_return_lateness;
}

// ---------------------------------------------------------------------------------------------
// Script

void AsyncConsumer::reset_client_state() {
  state_ = State::UNSUBSCRIBED;
  member_epoch_ = 0;
  target_.reset();
  has_current_ = false;
  owned_.clear();
  subscription_updated_ = false;
  leaving_due_to_poll_timer_ = false;
  closing_leave_ = false;
  reconcile_ = Reconcile::Idle;
  ++reconciliation_;
  rec_commit_id_.reset();
  rec_commit_attempts_ = 0;
  auto_commit_in_flight_.reset();
  consumption_.clear();
  batch_.reset();
  commit_sync_waiting_ = false;
  commit_sync_attempts_ = 0;
  lookups_.clear();
  lookup_not_before_ = kernel_.now();
  reset_fetching();
  buffer_woken_ = false;
  spinning_ = false;
  loop_at_once_ = false;
  network_woke_ = kernel_.now();
  pass_wait_ = false;
  heartbeat_interval_ms_ = 0;
  next_heartbeat_ = kernel_.now();
  backoff_until_ = kernel_.now();
  retry_now_not_before_ = kernel_.now();
  heartbeat_attempts_ = 0;
  heartbeat_in_flight_.reset();
  sent_valid_ = false;
  app_events_.clear();
  drain_remaining_ = 0;
  running_event_.reset();
  in_poll_ = false;
  busy_ = false;
  stop_requested_ = false;
  wakeup_pending_ = false;
  first_poll_pending_ = false;
  close_stage_ = CloseStage::None;
  close_commit_id_.reset();
  close_commit_sent_ = false;
  leave_id_.reset();
  coordinator_.reset();
  find_coordinator_in_flight_.reset();
  coordinator_lookup_attempts_ = 0;
  coordinator_lookup_not_before_ = kernel_.now();
  in_flight_.clear();
  reset_metadata();
  for (sim::Timer* t :
       {&poll_return_timer_, &callback_timer_, &close_retry_timer_, &heartbeat_timer_, &poll_timer_,
        &request_timeout_timer_, &coordinator_retry_timer_, &first_poll_timer_, &fetch_wake_timer_,
        &processing_timer_, &commit_retry_timer_, &reconcile_commit_timer_, &loop_timer_,
        &fetch_response_timer_})
    t->cancel();
  cancel_script_timers();
}

std::string AsyncConsumer::generate_member_id() {
  return MemberIdReplay::replayed_or(member_ids_, spec_.name,
                                     random_uuid_string([this] { return rng_.next(); }));
}

void AsyncConsumer::start() {
  entered();
  if (process_.alive()) return;
  reset_client_state();
  topics_ = spec_.topics;
  process_.start();
  member_id_ = generate_member_id();  // once per process, kept across fencing and rejoins
  const sim::SimTime latency = draw_start_latency();
  tracer_.publish(trace::ConsumerStart{.consumer = spec_.name,
                                       .group = config_.group_id,
                                       .topics = topics_,
                                       .protocol = "consumer",
                                       .member_id = member_id_,
                                       .start_latency_ms = trace::start_latency_ms(latency)});
  subscription_updated_ = true;  // subscribe(): the first poll() joins
  next_auto_commit_ = sim::saturating_add(kernel_.now(), sim::ms(config_.auto_commit_interval_ms));
  last_poll_ = kernel_.now();
  schedule_first_poll(latency);
}

void AsyncConsumer::first_poll() {
  last_poll_ = kernel_.now();
  begin_poll();
}

void AsyncConsumer::subscribe(std::vector<std::string> topics) {
  entered();
  spec_.topics = topics;
  if (!process_.alive()) return;
  // The new names go out with the next heartbeat (only a member not in the group joins at the
  // next poll(): AbstractMembershipManager.onSubscriptionUpdated).
  topics_ = std::move(topics);
  subscription_updated_ = true;
  if (!topics_.empty()) return;
  // subscribe([]) is unsubscribe(): release the assignment (onPartitionsRevoked, or Lost without
  // an epoch) on the application thread, then leave (AbstractMembershipManager.leaveGroup).
  subscription_updated_ = false;
  if (!in_group()) {
    if (state_ == State::FENCED) {
      std::erase_if(app_events_, [](const AppEvent& e) { return e.kind == AppEvent::Kind::Lost; });
      set_owned({});
      transition(State::UNSUBSCRIBED);
    }
    return;
  }
  if (state_ == State::PREPARE_LEAVING || state_ == State::LEAVING) return;
  abort_reconciliation();
  transition(State::PREPARE_LEAVING);
  app_events_.push_back({AppEvent::Kind::Leave, owned_, 0});
}

// ---------------------------------------------------------------------------------------------
// Application thread

void AsyncConsumer::on_poll_loop_continue() {
  // The application's loop: poll() returned (its records processed by now); unless it was asked
  // to stop, it calls poll() again.
  if (stop_requested_) {
    stop_requested_ = false;
    start_close();
    return;
  }
  begin_poll();
}

auto AsyncConsumer::poll_state() const -> PollState {
  return {poll_return_timer_.armed(),
          poll_return_timer_.deadline(),
          poll_timer_.armed(),
          poll_timer_.deadline(),
          fetch_wake_timer_.armed(),
          fetch_wake_timer_.deadline(),
          last_poll_,
          in_poll_,
          spinning_,
          drain_remaining_};
}

void AsyncConsumer::note_quiet_pass() {
  quiet_pass_.valid = false;
  const sim::SimTime now = kernel_.now();
  const auto& per_poll = spec_.processing.per_poll;
  if (!process_.alive() || close_stage_ != CloseStage::None || busy_ || batch_ || !in_poll_ ||
      stop_requested_ || wakeup_pending_ || buffer_woken_ || spinning_ || !per_poll.is_constant() ||
      per_poll.value != 0 || state_ != State::STABLE || !coordinator_ ||
      reconcile_ != Reconcile::Idle || subscription_updated_ || !app_events_.empty() ||
      running_event_ || next_heartbeat_ <= now || fetches_in_flight_ != fetch_brokers_ ||
      !consumption_.has_all_fetch_positions() || !consumption_.finds_nothing())
    return;
  sim::SimTime until = next_heartbeat_;
  if (config_.enable_auto_commit) {
    if (next_auto_commit_ <= now || auto_commit_in_flight_ || rec_commit_id_) return;
    until = std::min(until, next_auto_commit_);
  }
  quiet_pass_.valid = true;
  quiet_pass_.entries = entries_;
  quiet_pass_.until = until;
  // wait_bound() in this state: the next heartbeat and auto-commit, and retry.backoff.ms when a
  // partition is fetchable (or no Fetch is in flight).
  quiet_pass_.fixed_bound = until;
  quiet_pass_.backoff_bound =
      owned_.empty() || consumption_.any_fetchable() || fetches_in_flight_ == 0;
}

void AsyncConsumer::on_positions_changed() {
  // The AsyncPollEvent that asked for the positions goes on to create the Fetch requests
  // (updateFetchPositions, then createFetchRequests), whose answers wake a poll() waiting on the
  // fetch buffer; records already there are returned at once. It is no new AsyncPollEvent: what
  // the remaining positions need (validation, a retry) waits for the next pass.
  send_fetches();
  if (!process_.alive() || busy_ || !app_.runnable() || close_stage_ != CloseStage::None) return;
  maybe_return_records();
}

void AsyncConsumer::on_app_wake() {
  // A record reached the fetch buffer, or positions were found: the waiting poll() goes on.
  if (!process_.alive() || busy_ || !app_.runnable() || close_stage_ != CloseStage::None) return;
  if (in_poll_ && !batch_) pass();
}

void AsyncConsumer::pass() {
  if (!process_.alive() || busy_ || close_stage_ != CloseStage::None) return;
  // Each pass of poll() submits an AsyncPollEvent (when the previous one completed), which the
  // background thread handles at once, then runs the callbacks queued for it so far, then
  // returns the records fetched, if any.
  // The callbacks run are those queued before the pass: what the background thread queues while
  // it handles this pass's AsyncPollEvent (a reconciliation whose commit was empty, say) waits
  // for the next pass, as the application thread drains its queue right after submitting the
  // event.
  // The event wakes the network thread: the wait below reads the maximumTimeToWait of its loop
  // that started at its previous wake, with the deadlines as they were (see wait_bound()).
  pass_wake_ = network_wake();
  pass_auto_commit_ = next_auto_commit_;
  pass_wait_ = true;
  last_poll_ = kernel_.now();
  drain_remaining_ = app_events_.size();
  // A RECONCILING member's pass waits for its event's reconciliation check (collectFetch), so
  // it reads that value for sure: 0 when the auto-commit timer had expired by that wake with no
  // commit in flight (CommitRequestManager.AutoCommitState.remainingMs). poll() then loops
  // again at once.
  loop_at_once_ = state_ == State::RECONCILING && config_.enable_auto_commit &&
                  pass_wake_ >= next_auto_commit_ && !auto_commit_in_flight_ && !rec_commit_id_;
  on_poll_event();
  if (!process_.alive()) return;
  drain_app_events();
  maybe_return_records();
}

sim::SimTime AsyncConsumer::wait_bound() {
  const sim::SimTime now = kernel_.now();
  spinning_ = false;
  // The pass's own wait reads the network thread's loop from its wake before the pass (see
  // wait_bound() in the header); later ones read it afresh.
  const bool pass_wait = pass_wait_ && last_poll_ == now;
  pass_wait_ = false;
  const sim::SimTime wake = pass_wait ? pass_wake_ : now;
  const sim::SimTime auto_commit = pass_wait ? pass_auto_commit_ : next_auto_commit_;
  if (buffer_woken_) {
    buffer_woken_ = false;
    return now;
  }
  if (loop_at_once_) {
    loop_at_once_ = false;
    if (last_poll_ == now) return now;  // later (a callback ran), the network thread has updated it
  }
  // retry.backoff.ms=0: the background thread spins; a kSpinTurn per turn here.
  const sim::SimTime backoff =
      sim::saturating_add(now, at_least_a_turn(sim::ms(config_.retry_backoff_ms)));
  sim::SimTime bound = sim::kNever;
  if (owned_.empty() || !consumption_.has_all_fetch_positions() || consumption_.any_fetchable())
    bound = backoff;
  // maximumTimeToWait: FetchRequestManager (nothing in flight), CommitRequestManager (the next
  // auto-commit), the heartbeat manager (the next heartbeat).
  if (fetches_in_flight_ == 0) bound = std::min(bound, backoff);
  // (expired by the wake: the value was 0, which only a RECONCILING pass is sure to read,
  // loop_at_once_; the timer the event restarted bounds the wait then.)
  if (config_.enable_auto_commit && auto_commit > wake)
    bound = std::min(bound, sim::saturating_add(auto_commit, now - wake));
  else if (config_.enable_auto_commit && next_auto_commit_ > now)
    bound = std::min(bound, next_auto_commit_);
  if (state_ != State::UNSUBSCRIBED) {
    sim::SimTime heartbeat;
    if (!coordinator_ || state_ == State::FATAL || state_ == State::STALE ||
        state_ == State::FENCED)
      heartbeat = sim::saturating_add(now, sim::ms(heartbeat_interval_ms_));
    else if ((state_ == State::JOINING || state_ == State::ACKNOWLEDGING) && !heartbeat_in_flight_)
      heartbeat = std::max(now, retry_now_not_before_);
    else if (next_heartbeat_ > now)
      heartbeat = sim::saturating_add(next_heartbeat_, now - wake);
    else
      heartbeat = std::max(now, backoff_until_);
    if (heartbeat <= now)
      spinning_ = true;
    else
      bound = std::min(bound, heartbeat);
  }
  // A wait that would end at or after poll()'s timer ends with it (pollForFetches waits at most
  // the timer's remainder): poll() returns, poll_return_lateness_ms later.
  if (poll_return_timer_.armed() && bound >= poll_return_timer_.deadline() - poll_return_lateness_)
    bound = sim::kNever;
  return bound;
}

void AsyncConsumer::wake_app() {
  if (!process_.alive()) return;
  const bool waiting =
      in_poll_ && !busy_ && !batch_ && close_stage_ == CloseStage::None && app_.runnable();
  if (waiting)
    fetch_wake_timer_.arm(sim::SimTime::zero());
  else
    buffer_woken_ = true;
}

// ---------------------------------------------------------------------------------------------
// Records: fetch, processing, commits after a batch

void AsyncConsumer::maybe_return_records() {
  if (!process_.alive() || !in_poll_ || batch_ || busy_ || close_stage_ != CloseStage::None) return;
  return_records_or_wait(wait_bound());
  // Records returned: the Fetch that brought them has ended, and the next pass sends another.
  if (batch_) clear_fetches();
}

void AsyncConsumer::drain_app_events() {
  while (drain_remaining_ > 0 && !busy_ && !app_events_.empty() && process_.alive()) {
    --drain_remaining_;
    AppEvent e = std::move(app_events_.front());
    app_events_.pop_front();
    run_app_event(e);
  }
}

void AsyncConsumer::run_app_event(const AppEvent& e) {
  running_event_ = e;
  bool done = true;
  switch (e.kind) {
    case AppEvent::Kind::Revoke:
      done = start_callback("onPartitionsRevoked", e.partitions, spec_.callbacks.revoke);
      break;
    case AppEvent::Kind::Assign:
      // The new assignment is applied, then onPartitionsAssigned(added), even when empty.
      if (e.reconciliation == reconciliation_) set_owned(rec_target_);
      done = start_callback("onPartitionsAssigned", e.partitions, spec_.callbacks.assign);
      break;
    case AppEvent::Kind::Lost:
      done = start_callback("onPartitionsLost", e.partitions, spec_.callbacks.lost);
      break;
    case AppEvent::Kind::Leave:
      if (e.partitions.empty()) break;
      done = member_epoch_ > 0
                 ? start_callback("onPartitionsRevoked", e.partitions, spec_.callbacks.revoke)
                 : start_callback("onPartitionsLost", e.partitions, spec_.callbacks.lost);
      break;
  }
  if (done) {
    running_event_.reset();
    on_app_event_done(e);
  }
}

void AsyncConsumer::on_callback_end() {
  if (end_callback()) return;
  if (running_event_) {
    const AppEvent e = *running_event_;
    running_event_.reset();
    on_app_event_done(e);
  }
  if (!in_poll_) {
    // poll() returned while the callback ran: the loop goes on.
    continue_loop();
    return;
  }
  drain_app_events();
  maybe_return_records();
}

void AsyncConsumer::on_app_event_done(const AppEvent& e) {
  // The completion goes back to the background thread, which wakes: a wait after it reads
  // maximumTimeToWait afresh (see wait_bound()).
  network_woke_ = kernel_.now();
  pass_wait_ = false;
  switch (e.kind) {
    case AppEvent::Kind::Revoke:
      if (e.reconciliation != reconciliation_ || reconcile_ != Reconcile::Revoking) return;
      set_owned(minus(owned_, rec_revoked_));
      reconcile_ = Reconcile::Assigning;
      // The network thread queues onPartitionsAssigned when it handles this completion
      // (revokeAndAssign's revocationResult.thenCompose → assignPartitions); a queued background
      // event wakes no wait (BackgroundEventHandler.add), and the application thread drains the
      // queue only when poll() loops (checkInflightPoll). So the pass that ran the revocation
      // does not loop into it, even with a cached wait of 0: by the time it reads that value the
      // network thread has mostly refreshed it, or has not yet queued the callback. It runs at
      // the application thread's next wake: a Fetch's end, records, the next call (finding 33).
      loop_at_once_ = false;
      app_events_.push_back({AppEvent::Kind::Assign, rec_added_, reconciliation_});
      return;
    case AppEvent::Kind::Assign:
      if (e.reconciliation != reconciliation_ || reconcile_ != Reconcile::Assigning) return;
      reconcile_ = Reconcile::Idle;
      has_current_ = true;
      next_auto_commit_ =
          sim::saturating_add(kernel_.now(), sim::ms(config_.auto_commit_interval_ms));
      if (state_ == State::RECONCILING) {
        transition(State::ACKNOWLEDGING);
        maybe_heartbeat();  // the ack goes out at once
      }
      return;
    case AppEvent::Kind::Leave:
      set_owned({});
      has_current_ = false;
      if (state_ != State::PREPARE_LEAVING) return;
      transition(State::LEAVING);
      if (coordinator_)
        send_leave_heartbeat(config_.group_instance_id ? -2 : -1);
      else
        transition(State::UNSUBSCRIBED);
      member_epoch_ = 0;
      return;
    case AppEvent::Kind::Lost:
      set_owned({});
      has_current_ = false;
      if (state_ == State::FENCED) {
        transition_to_joining();
      } else if (state_ == State::STALE &&
                 kernel_.now() <
                     sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms))) {
        transition_to_joining();  // maybeRejoinStaleMember: the poll timer was reset
      }
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// close()

void AsyncConsumer::start_close() {
  close_stage_ = CloseStage::Committing;
  close_deadline_ = sim::saturating_add(
      kernel_.now(), sim::ms(std::min<std::int64_t>(30000, config_.request_timeout_ms)));
  continue_close();
}

void AsyncConsumer::continue_close() {
  if (!process_.alive() || busy_) return;
  if (close_stage_ == CloseStage::Committing) {
    // (1) commitSync of the consumed offsets.
    if (!close_commit_sent_ && config_.enable_auto_commit && coordinator_ && !owned_.empty() &&
        member_epoch_ > 0 && kernel_.now() < close_deadline_) {
      close_commit_sent_ = true;
      close_commit_id_ = send_offset_commit("close");  // commitSync of all consumed offsets
      if (close_commit_id_) return;
    }
    if (close_commit_id_) return;
    // (3) onPartitionsRevoked (or Lost when the member has no epoch) on the calling thread.
    abort_reconciliation();
    close_stage_ = CloseStage::Revoking;
    if (!owned_.empty()) {
      const bool done = member_epoch_ > 0
                            ? start_callback("onPartitionsRevoked", owned_, spec_.callbacks.revoke)
                            : start_callback("onPartitionsLost", owned_, spec_.callbacks.lost);
      if (!done) return;
    }
  }
  if (close_stage_ == CloseStage::Revoking) {
    set_owned({});
    close_stage_ = CloseStage::Leaving;
    // (4) the leave heartbeat: -1, or -2 for a static member (it keeps its partitions).
    if (coordinator_ && in_group() && member_epoch_ > 0) {
      closing_leave_ = true;
      transition(State::PREPARE_LEAVING);
      transition(State::LEAVING);
      send_leave_heartbeat(config_.group_instance_id ? -2 : -1);
      close_retry_timer_.arm_at(close_deadline_);
      return;
    }
  }
  if (close_stage_ == CloseStage::Leaving && (!leave_id_ || kernel_.now() >= close_deadline_))
    finish_close();
}

// ---------------------------------------------------------------------------------------------
// Background thread: membership (ConsumerMembershipManager)

bool AsyncConsumer::in_group() const {
  return state_ != State::UNSUBSCRIBED && state_ != State::FENCED && state_ != State::FATAL &&
         state_ != State::STALE;
}

void AsyncConsumer::transition(ConsumerMemberState to) {
  if (state_ == to) return;
  state_ = to;
  tracer_.publish(trace::ConsumerMemberState{
      .consumer = spec_.name, .state = member_state_name(to), .epoch = member_epoch_});
}

void AsyncConsumer::transition_to_joining() {
  member_epoch_ = 0;
  sent_valid_ = false;  // a join sends every field
  target_.reset();
  leaving_due_to_poll_timer_ = false;
  transition(State::JOINING);
  backoff_until_ = kernel_.now();
  maybe_heartbeat();
}

void AsyncConsumer::on_poll_event() {
  // onConsumerPoll: a member not in the group joins with the updated subscription.
  if (subscription_updated_ && state_ == State::UNSUBSCRIBED && !topics_.empty()) {
    subscription_updated_ = false;
    transition_to_joining();
  }
  if (state_ == State::STALE &&
      std::none_of(app_events_.begin(), app_events_.end(),
                   [](const AppEvent& e) { return e.kind == AppEvent::Kind::Lost; }) &&
      !(running_event_ && running_event_->kind == AppEvent::Kind::Lost)) {
    transition_to_joining();
  }
  maybe_reconcile(true);
  // Interval auto-commits are checked on every application poll() (updateTimerAndMaybeCommit):
  // once the timer expired and no auto-commit is in flight, all consumed offsets go out and the
  // timer restarts from the interval, whatever the outcome (a failed auto-commit waits for the
  // next interval: its error is not a RetriableCommitFailedException).
  // The commit before a reconciliation counts as an auto-commit in flight (requestAutoCommit):
  // an interval auto-commit due meanwhile waits for a pass after its answer.
  if (config_.enable_auto_commit && kernel_.now() >= next_auto_commit_ && !auto_commit_in_flight_ &&
      !rec_commit_id_) {
    next_auto_commit_ =
        sim::saturating_add(kernel_.now(), sim::ms(config_.auto_commit_interval_ms));
    auto_commit_in_flight_ = send_offset_commit("auto-commit");
  }
  poll_timer_.arm_at(sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms)));
  update_fetch_positions();
  send_fetches();
}

void AsyncConsumer::maybe_reconcile(bool can_commit) {
  if (state_ != State::RECONCILING || reconcile_ != Reconcile::Idle || !target_) return;
  const TopicPartitions target = *target_;
  const TopicPartitions revoked = minus(owned_, target);
  const TopicPartitions added = minus(target, owned_);
  // With auto-commit on, or anything to revoke, only an application poll() may proceed.
  if ((config_.enable_auto_commit || !revoked.empty()) && !can_commit) return;
  ++reconciliation_;
  rec_target_ = target;
  rec_added_ = added;
  rec_revoked_ = revoked;
  tracer_.publish(trace::ConsumerReconcile{.consumer = spec_.name,
                                           .epoch = member_epoch_,
                                           .target = target,
                                           .added = added,
                                           .revoked = revoked});
  // Revoked partitions stop fetching now (markPendingRevocationToPauseFetching).
  consumption_.mark_pending_revocation(revoked);
  // The commit of all consumed offsets, retried until the rebalance timeout.
  if (config_.enable_auto_commit) {
    rec_commit_deadline_ =
        sim::saturating_add(kernel_.now(), sim::ms(config_.max_poll_interval_ms));
    rec_commit_attempts_ = 0;
    rec_commit_id_ = send_offset_commit("before revocation");
    if (rec_commit_id_) {
      reconcile_ = Reconcile::Committing;
      return;
    }
  }
  after_reconcile_commit();  // an empty offset map completes at once
}

void AsyncConsumer::after_reconcile_commit() {
  rec_commit_id_.reset();
  reconcile_commit_timer_.cancel();
  if (!rec_revoked_.empty()) {
    reconcile_ = Reconcile::Revoking;
    app_events_.push_back({AppEvent::Kind::Revoke, rec_revoked_, reconciliation_});
  } else {
    reconcile_ = Reconcile::Assigning;
    app_events_.push_back({AppEvent::Kind::Assign, rec_added_, reconciliation_});
  }
}

void AsyncConsumer::abort_reconciliation() {
  if (reconcile_ == Reconcile::Idle) return;
  reconcile_ = Reconcile::Idle;
  ++reconciliation_;
  rec_commit_id_.reset();
  reconcile_commit_timer_.cancel();
  std::erase_if(app_events_, [](const AppEvent& e) { return e.kind != AppEvent::Kind::Lost; });
}

void AsyncConsumer::transition_to_fenced(ErrorCode why) {
  tracer_.publish(trace::ConsumerFenced{
      .consumer = spec_.name, .error = error_name(why), .epoch = member_epoch_});
  abort_reconciliation();
  transition(State::FENCED);
  member_epoch_ = 0;
  target_.reset();
  sent_valid_ = false;
  backoff_until_ = kernel_.now();
  if (!owned_.empty()) {
    app_events_.push_back({AppEvent::Kind::Lost, owned_, 0});  // the application runs it in poll()
  } else {
    has_current_ = false;
    transition_to_joining();
  }
}

void AsyncConsumer::on_poll_timer_expired() {
  if (!process_.alive() || close_stage_ != CloseStage::None) return;
  if (kernel_.now() < sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms)))
    return;
  if (!in_group() || state_ == State::PREPARE_LEAVING || state_ == State::LEAVING) return;
  // Nothing wakes the background thread at the poll timer's expiry: the heartbeat manager's
  // poll() (AbstractHeartbeatRequestManager.poll) checks the timer when the thread next runs,
  // and what it waits for is the next heartbeat (its PollResult is timeToNextHeartbeatMs; the
  // poll timer only bounds the application thread's wait, maximumTimeToWait). So the leave goes
  // out at the next heartbeat's time, or at the in-flight heartbeat's answer; maybe_heartbeat()
  // sends it then. Only a heartbeat due now, or no coordinator to heartbeat to, acts here.
  if (coordinator_) {
    if (heartbeat_in_flight_ || kernel_.now() < heartbeat_due()) return;
  }
  leave_on_poll_timeout();
}

bool AsyncConsumer::leave_if_poll_timer_expired() {
  if (close_stage_ != CloseStage::None || !in_group() || state_ == State::PREPARE_LEAVING ||
      state_ == State::LEAVING)
    return false;
  if (kernel_.now() < sim::saturating_add(last_poll_, sim::ms(config_.max_poll_interval_ms)))
    return false;
  leave_on_poll_timeout();
  return true;
}

void AsyncConsumer::leave_on_poll_timeout() {
  tracer_.publish(trace::ConsumerPollTimeout{.consumer = spec_.name,
                                             .max_poll_interval_ms = config_.max_poll_interval_ms});
  // The member leaves (response ignored), becomes STALE and loses its partitions; the next
  // poll() rejoins.
  abort_reconciliation();
  leaving_due_to_poll_timer_ = true;
  transition(State::PREPARE_LEAVING);
  transition(State::LEAVING);
  if (coordinator_)
    send_leave_heartbeat(config_.group_instance_id ? -2 : -1);
  else
    transition(State::STALE);
  member_epoch_ = -1;
  has_current_ = false;  // the current assignment is NONE again: the rejoin reconciles from scratch
  if (!owned_.empty()) app_events_.push_back({AppEvent::Kind::Lost, owned_, 0});
}

// ---------------------------------------------------------------------------------------------
// Heartbeats (ConsumerHeartbeatRequestManager)

void AsyncConsumer::maybe_heartbeat() {
  if (!process_.alive()) return;
  if (!coordinator_) {
    ensure_coordinator();
    return;
  }
  // the poll timer first, whether or not a heartbeat is in flight (see on_poll_timer_expired)
  if (leave_if_poll_timer_expired()) return;
  if (state_ == State::UNSUBSCRIBED || state_ == State::FATAL || state_ == State::STALE ||
      state_ == State::FENCED || state_ == State::PREPARE_LEAVING || state_ == State::LEAVING)
    return;
  if (heartbeat_in_flight_) return;  // at most one in flight
  const sim::SimTime due = heartbeat_due();
  if (kernel_.now() >= due) {
    send_heartbeat();
  } else {
    heartbeat_timer_.arm_at(due);
  }
}

sim::SimTime AsyncConsumer::heartbeat_due() const {
  // AbstractHeartbeatRequestManager.poll: a member that must heartbeat now (JOINING,
  // ACKNOWLEDGING: shouldHeartbeatNow) sends whenever none is in flight, ignoring the interval
  // and the backoff of HeartbeatRequestState (issue 40, model error 2); the others wait for both.
  if (state_ == State::JOINING || state_ == State::ACKNOWLEDGING)
    return std::max(kernel_.now(), retry_now_not_before_);
  return std::max(next_heartbeat_, backoff_until_);
}

void AsyncConsumer::send_heartbeat() {
  ConsumerGroupHeartbeatRequest r;
  r.group_id = config_.group_id;
  r.member_id = member_id_;
  r.member_epoch = member_epoch_;
  r.instance_id = config_.group_instance_id;
  r.client_id = config_.client_id;
  const bool all = !sent_valid_ || state_ == State::JOINING;
  if (all) {
    r.rebalance_timeout_ms = static_cast<std::int32_t>(config_.max_poll_interval_ms);
    r.rack_id = config_.client_rack;
    r.server_assignor = config_.group_remote_assignor;
  }
  if (all || topics_ != sent_topics_) r.subscribed_topic_names = topics_;
  // The owned partitions: empty on a join, and in the first heartbeat after a reconciliation.
  const TopicPartitions owned = state_ == State::JOINING ? TopicPartitions{} : owned_;
  if (all || !sent_owned_ || *sent_owned_ != owned) r.topic_partitions = to_wire(owned);
  sent_valid_ = true;
  sent_topics_ = topics_;
  sent_owned_ = owned;
  rpc_fields_.member_epoch = r.member_epoch;
  auto& fields = rpc_fields_.fields.emplace();
  if (r.rebalance_timeout_ms != -1) fields.emplace_back("RebalanceTimeoutMs");
  if (r.subscribed_topic_names) fields.emplace_back("SubscribedTopicNames");
  if (r.server_assignor) fields.emplace_back("ServerAssignor");
  if (r.rack_id) fields.emplace_back("RackId");
  if (r.topic_partitions) fields.emplace_back("TopicPartitions");
  heartbeat_in_flight_ =
      send_request(*coordinator_, std::move(r), config_.request_timeout_ms, member_epoch_);
  rpc_fields_ = {};
  next_heartbeat_ =
      sim::saturating_add(kernel_.now(), sim::ms(heartbeat_interval_ms_));  // reset on every send
  if (state_ == State::ACKNOWLEDGING) {
    transition(target_ && has_current_ && *target_ == owned_ ? State::STABLE : State::RECONCILING);
    maybe_reconcile(false);
  }
}

void AsyncConsumer::send_leave_heartbeat(std::int32_t epoch) {
  ConsumerGroupHeartbeatRequest r;
  r.group_id = config_.group_id;
  r.member_id = member_id_;
  r.member_epoch = epoch;
  r.instance_id = config_.group_instance_id;
  r.client_id = config_.client_id;
  rpc_fields_.member_epoch = epoch;
  rpc_fields_.fields.emplace();
  const std::int32_t id =
      send_request(*coordinator_, std::move(r), config_.request_timeout_ms, epoch);
  rpc_fields_ = {};
  if (closing_leave_) leave_id_ = id;
  // Sending the leave ends membership: UNSUBSCRIBED, or STALE after a poll-timer leave.
  transition(leaving_due_to_poll_timer_ ? State::STALE : State::UNSUBSCRIBED);
}

void AsyncConsumer::on_heartbeat_response(const InFlight& req,
                                          const ConsumerGroupHeartbeatResponse& r) {
  const bool leave = req.context.epoch < 0;
  if (!leave) heartbeat_in_flight_.reset();
  if (leave) {
    // A leave's answer only matters to close(), which waits for it.
    if (closing_leave_) {
      leave_id_.reset();
      if (close_stage_ == CloseStage::Leaving) continue_close();
    }
    return;
  }
  if (r.error == ErrorCode::NONE) {
    heartbeat_attempts_ = 0;
    if (!in_group() || state_ == State::LEAVING || state_ == State::PREPARE_LEAVING) return;
    member_epoch_ = r.member_epoch;
    if (r.heartbeat_interval_ms != heartbeat_interval_ms_) {
      heartbeat_interval_ms_ = r.heartbeat_interval_ms;
      next_heartbeat_ = sim::saturating_add(kernel_.now(), sim::ms(heartbeat_interval_ms_));
    }
    if (r.assignment) {
      const TopicPartitions next = from_wire(*r.assignment);
      if (!target_ || *target_ != next) target_ = next;
      if (!has_current_ || *target_ != owned_ || reconcile_ != Reconcile::Idle) {
        transition(State::RECONCILING);
      } else if (state_ != State::ACKNOWLEDGING) {
        transition(State::STABLE);
      }
    } else if (state_ == State::JOINING) {
      // A join is always answered with an assignment; nothing to do otherwise.
    }
    maybe_reconcile(false);
    maybe_heartbeat();
    return;
  }
  // Any failure: the next heartbeat is full, its timer is set to 0, and it waits for the
  // exponential backoff (HeartbeatRequestState.onFailedAttempt) unless the error resets it.
  sent_valid_ = false;
  next_heartbeat_ = kernel_.now();
  backoff_until_ =
      sim::saturating_add(kernel_.now(), sim::ms(exponential_backoff_ms(heartbeat_attempts_++)));
  retry_now_not_before_ = kernel_.now() + kSpinTurn;
  switch (r.error) {
    case ErrorCode::FENCED_MEMBER_EPOCH:
    case ErrorCode::UNKNOWN_MEMBER_ID:
      heartbeat_attempts_ = 0;
      backoff_until_ = kernel_.now();
      if (in_group()) transition_to_fenced(r.error);
      return;
    case ErrorCode::NOT_COORDINATOR:
    case ErrorCode::COORDINATOR_NOT_AVAILABLE:
      // Sent again as soon as the new coordinator is known, without backoff.
      heartbeat_attempts_ = 0;
      backoff_until_ = kernel_.now();
      mark_coordinator_unknown(std::string(error_name(r.error)));
      maybe_heartbeat();
      return;
    case ErrorCode::NETWORK_EXCEPTION:
    case ErrorCode::REQUEST_TIMED_OUT:
      mark_coordinator_unknown(std::string(error_name(r.error)));  // handleCoordinatorDisconnect
      maybe_heartbeat();
      return;
    default:
      if (fatal_heartbeat_error(r.error)) {
        if (r.error == ErrorCode::GROUP_ID_NOT_FOUND && !in_group()) return;
        fail_fatally(r.error);
        return;
      }
      maybe_heartbeat();  // COORDINATOR_LOAD_IN_PROGRESS and the like: after the backoff
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Commits (CommitRequestManager)

std::optional<std::int32_t> AsyncConsumer::send_offset_commit(const std::string& purpose) {
  if (!coordinator_) return std::nullopt;
  OffsetCommitRequest r;
  r.group_id = config_.group_id;
  // generation_id_or_member_epoch: the member epoch while the member has one (> 0), else -1
  // (CommitRequestManager's MemberInfo without an epoch); the member id always.
  r.generation_id = member_epoch_ > 0 ? member_epoch_ : -1;
  r.member_id = member_id_;
  r.group_instance_id = config_.group_instance_id;
  r.offsets = consumption_.all_consumed();
  if (r.offsets.empty()) return std::nullopt;
  tracer_.publish(trace::Commit{.consumer = spec_.name,
                                .group = config_.group_id,
                                .phase = "sent",
                                .purpose = purpose,
                                .generation = r.generation_id,
                                .offsets = r.offsets});
  const std::int32_t epoch = r.generation_id;
  auto_commit_send_ = purpose == "auto-commit";
  const std::int32_t id =
      send_request(*coordinator_, std::move(r), config_.request_timeout_ms, epoch);
  in_flight_.at(id).api = "OffsetCommit:" + purpose;
  return id;
}

void AsyncConsumer::on_offset_commit_response(const InFlight& req, const OffsetCommitResponse& r,
                                              const std::string& purpose) {
  const ErrorCode e = r.error;
  if (e == ErrorCode::NOT_COORDINATOR || e == ErrorCode::COORDINATOR_NOT_AVAILABLE ||
      e == ErrorCode::REQUEST_TIMED_OUT)
    mark_coordinator_unknown(std::string(error_name(e)));
  tracer_.publish(trace::Commit{.consumer = spec_.name,
                                .group = config_.group_id,
                                .phase = "completed",
                                .purpose = purpose,
                                .error = error_name(e)});
  // Kafka's RetriableException among the OffsetCommit errors (a disconnect included).
  const bool retriable = e == ErrorCode::COORDINATOR_LOAD_IN_PROGRESS ||
                         e == ErrorCode::NOT_COORDINATOR ||
                         e == ErrorCode::COORDINATOR_NOT_AVAILABLE ||
                         e == ErrorCode::REQUEST_TIMED_OUT || e == ErrorCode::NETWORK_EXCEPTION;
  if (purpose == "before revocation") {
    if (reconcile_ != Reconcile::Committing) return;
    rec_commit_id_.reset();
    // Retriable errors, and a stale epoch while the member has a valid one, are retried with the
    // latest offsets (after the request's backoff) until the rebalance timeout; anything else,
    // or the deadline, lets the reconciliation go on (autoCommitSyncBeforeRebalanceWithRetries).
    const bool stale_retry = e == ErrorCode::STALE_MEMBER_EPOCH && member_epoch_ > 0;
    if (e != ErrorCode::NONE && (retriable || stale_retry) &&
        kernel_.now() < rec_commit_deadline_) {
      // The stale epoch's retry goes out at once with the new epoch (it raced with the bump).
      const bool at_once = stale_retry && member_epoch_ != req.context.epoch && coordinator_;
      reconcile_commit_timer_.arm(
          at_once ? sim::SimTime::zero() : sim::ms(exponential_backoff_ms(rec_commit_attempts_++)));
      return;
    }
    after_reconcile_commit();
  } else if (purpose == "auto-commit") {
    auto_commit_in_flight_.reset();
  } else if (purpose == "commitSync") {
    if (!commit_sync_waiting_) return;
    // commitSync retries retriable errors until default.api.timeout.ms; anything else is thrown
    // to the application (CommitFailedException), which carries on with its loop.
    if (retriable && kernel_.now() < commit_sync_deadline_) {
      commit_retry_timer_.arm(sim::ms(exponential_backoff_ms(commit_sync_attempts_++)));
      return;
    }
    after_batch();
  } else if (purpose == "close") {
    close_commit_id_.reset();
    continue_close();
  }
}

void AsyncConsumer::retry_reconcile_commit() {
  if (reconcile_ != Reconcile::Committing || rec_commit_id_) return;
  if (kernel_.now() >= rec_commit_deadline_) {
    after_reconcile_commit();
    return;
  }
  if (!coordinator_) {
    // Sent once the coordinator is known again (the request waits in the queue).
    reconcile_commit_timer_.arm(at_least_a_turn(sim::ms(config_.retry_backoff_ms)));
    return;
  }
  rec_commit_id_ = send_offset_commit("before revocation");
  if (!rec_commit_id_) after_reconcile_commit();
}

// ---------------------------------------------------------------------------------------------
// Positions (OffsetsRequestManager.updateFetchPositions)

void AsyncConsumer::update_fetch_positions() {
  if (!process_.alive()) return;
  // auto.offset.reset=none and no committed offset: poll() throws NoOffsetForPartitionException.
  if (const auto tp = consumption_.missing_offset()) {
    tracer_.publish(trace::ConsumerError{.consumer = spec_.name,
                                         .error = "NoOffsetForPartitionException",
                                         .where = "poll: " + tp->str()});
    transition(State::FATAL);
    process_.kill();
    reset_client_state();
    return;
  }
  // validatePositionsIfNeeded: an OffsetForLeaderEpoch to each leader for the positions awaiting
  // validation (a committed offset with a leader epoch, found by an earlier pass); its answer
  // completes them. With every position valid there is nothing more to do.
  send_position_validations(lookup_context());
  if (consumption_.has_all_fetch_positions()) return;
  // Committed offsets: OffsetFetch to the coordinator with the member id and epoch (only while
  // the member has an epoch), require_stable; then ListOffsets for the rest.
  if (const TopicPartitions need = consumption_.awaiting_committed();
      !need.empty() && coordinator_ && kernel_.now() >= lookup_not_before_) {
    OffsetFetchRequest r;
    r.group_id = config_.group_id;
    if (member_epoch_ > 0) {
      r.member_id = member_id_;
      r.member_epoch = member_epoch_;
    }
    r.partitions = need;
    consumption_.lookup_sent(need);
    rpc_fields_.member_epoch = r.member_epoch;
    lookups_[send_request(*coordinator_, std::move(r), config_.request_timeout_ms)] = need;
    rpc_fields_ = {};
  }
  send_list_offsets(lookup_context());
}

void AsyncConsumer::on_offset_fetch_response(std::int32_t id, const OffsetFetchResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    // Asked again by a later poll() once the request's backoff has passed.
    consumption_.lookup_failed(asked);
    if (r.error == ErrorCode::NOT_COORDINATOR || r.error == ErrorCode::COORDINATOR_NOT_AVAILABLE)
      mark_coordinator_unknown(std::string(error_name(r.error)));
    lookup_not_before_ = sim::saturating_add(kernel_.now(), sim::ms(config_.retry_backoff_ms));
    return;
  }
  // Positions with a leader epoch await validation at the next pass (refreshOffsets).
  consumption_.on_committed(r.partitions);
  // The reset of the partitions without a committed offset follows at once (thenCompose).
  send_list_offsets(lookup_context());
  on_positions_changed();
}

void AsyncConsumer::on_list_offsets_response(std::int32_t id, const ListOffsetsResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    consumption_.lookup_failed(asked);
    return;
  }
  std::vector<std::pair<TopicPartition, std::int64_t>> offsets;
  for (const auto& p : r.partitions) offsets.emplace_back(p.partition, p.offset);
  consumption_.on_reset(offsets);
  on_positions_changed();
}

void AsyncConsumer::on_offsets_for_leader_epoch_response(std::int32_t id,
                                                         const OffsetsForLeaderEpochResponse& r) {
  const auto found = take_lookup(id);
  if (!found) return;
  const TopicPartitions& asked = *found;
  if (r.error != ErrorCode::NONE) {
    consumption_.lookup_failed(asked);  // validated again at a later pass
    return;
  }
  consumption_.on_validated(r.partitions);
  on_positions_changed();
}

void AsyncConsumer::fail_fatally(ErrorCode error) {
  transition(State::FATAL);
  tracer_.publish(trace::ConsumerError{
      .consumer = spec_.name, .error = error_name(error), .where = "ConsumerGroupHeartbeat"});
  process_.kill();
  reset_client_state();
}

// ---------------------------------------------------------------------------------------------
// Network client

std::int32_t AsyncConsumer::send_request(sim::NodeId to, Message request, std::int64_t timeout_ms,
                                         std::int32_t epoch) {
  network_woke_ = kernel_.now();  // a loop of the network thread sends it (see wait_bound())
  return send_to(to, std::move(request), timeout_ms, RequestContext{epoch, {}, {}});
}

void AsyncConsumer::fail_in_flight(std::int32_t id, const InFlight& req) {
  const ErrorCode e = ErrorCode::NETWORK_EXCEPTION;
  const std::string api = req.api.substr(0, req.api.find(':'));
  trace_rpc("recv", req.node, node_, api.c_str(), id, &e);
  if (api == "FindCoordinator")
    handle_response(req, id, FindCoordinatorResponse{e, -1});
  else if (api == "ConsumerGroupHeartbeat")
    handle_response(req, id, ConsumerGroupHeartbeatResponse{.error = e});
  else if (api == "OffsetCommit")
    handle_response(req, id, OffsetCommitResponse{e});
  else if (api == "OffsetFetch")
    handle_response(req, id, OffsetFetchResponse{e, {}});
  else if (api == "ListOffsets")
    handle_response(req, id, ListOffsetsResponse{e, {}});
  else if (api == "OffsetForLeaderEpoch")
    handle_response(req, id, OffsetsForLeaderEpochResponse{e, {}});
}

void AsyncConsumer::on_message(sim::NodeId from, Envelope&& envelope) {
  if (!process_.alive()) return;
  const auto it = in_flight_.find(envelope.correlation_id);
  if (it == in_flight_.end()) return;
  const InFlight req = std::move(it->second);
  in_flight_.erase(it);
  const ErrorCode e = error_of(envelope.message);
  // A quiet heartbeat's answer causes nothing: NONE, no assignment (the same one), at most a new
  // member epoch (its `member.epoch` line and member record say so); a quiet auto-commit's: NONE.
  const auto* hb = std::get_if<ConsumerGroupHeartbeatResponse>(&envelope.message);
  const bool quiet = req.quiet && e == ErrorCode::NONE &&
                     ((hb != nullptr && !hb->assignment) ||
                      std::holds_alternative<OffsetCommitResponse>(envelope.message));
  trace_rpc("recv", from, node_, api_name(envelope.message), envelope.correlation_id, &e, quiet);
  handle_response(req, envelope.correlation_id, envelope.message);
}

void AsyncConsumer::handle_response(const InFlight& req, std::int32_t id, const Message& response) {
  network_woke_ = kernel_.now();  // the network thread wakes for it (see wait_bound())
  std::visit(Overloaded{
                 [&](const FindCoordinatorResponse& r) { on_find_coordinator_response(r); },
                 [&](const ConsumerGroupHeartbeatResponse& r) { on_heartbeat_response(req, r); },
                 [&](const OffsetCommitResponse& r) {
                   const auto colon = req.api.find(':');
                   on_offset_commit_response(
                       req, r, colon == std::string::npos ? "" : req.api.substr(colon + 1));
                 },
                 [&](const JoinGroupResponse&) { SIM_ASSERT(false); },
                 [&](const SyncGroupResponse&) { SIM_ASSERT(false); },
                 [&](const HeartbeatResponse&) { SIM_ASSERT(false); },
                 [&](const LeaveGroupResponse&) { SIM_ASSERT(false); },
                 [&](const FindCoordinatorRequest&) { SIM_ASSERT(false); },
                 [&](const JoinGroupRequest&) { SIM_ASSERT(false); },
                 [&](const SyncGroupRequest&) { SIM_ASSERT(false); },
                 [&](const HeartbeatRequest&) { SIM_ASSERT(false); },
                 [&](const LeaveGroupRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetCommitRequest&) { SIM_ASSERT(false); },
                 [&](const ConsumerGroupHeartbeatRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetFetchRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetFetchResponse& r) { on_offset_fetch_response(id, r); },
                 [&](const ListOffsetsRequest&) { SIM_ASSERT(false); },
                 [&](const ListOffsetsResponse& r) { on_list_offsets_response(id, r); },
                 [&](const OffsetsForLeaderEpochRequest&) { SIM_ASSERT(false); },
                 [&](const OffsetsForLeaderEpochResponse& r) {
                   on_offsets_for_leader_epoch_response(id, r);
                 },
                 [&](const ShareGroupMessage auto&) { SIM_ASSERT(false); },
             },
             response);
  // An application thread in a busy loop sees what the response changed at once.
  if (spinning_ && process_.alive() && in_poll_ && !busy_ && !batch_ &&
      close_stage_ == CloseStage::None && app_.runnable()) {
    spinning_ = false;
    fetch_wake_timer_.arm(sim::SimTime::zero());
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

void AsyncConsumer::set_owned(TopicPartitions owned) {
  owned = sorted(std::move(owned));
  consumption_.revoke(minus(owned_, owned));
  consumption_.assign(minus(owned, owned_));
  owned_ = std::move(owned);
  tracer_.publish(trace::Assignment{.consumer = spec_.name, .owned = owned_});
}

}  // namespace rsim
