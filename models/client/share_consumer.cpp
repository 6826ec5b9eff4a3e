#include "models/client/share_consumer.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace rsim {

ShareConsumer::ShareConsumer(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
                             const ConsumerSpec& spec, ConsumerConfig config, std::uint64_t seed,
                             std::function<sim::NodeId(const TopicPartition&)> leader_of,
                             std::function<sim::NodeId()> coordinator, sim::NodeId bootstrap)
    : ConsumerProcess(kernel, tracer, spec.name, "background", "pause"),
      net_(net),
      spec_(spec),
      config_(std::move(config)),
      rng_(seed, "consumer-" + spec.name),
      start_rng_(seed, "start-" + spec.name),
      connection_rng_(seed, "connection-" + spec.name),
      reconcile_rng_(seed, "reconcile-" + spec.name),
      leader_of_(std::move(leader_of)),
      coordinator_(std::move(coordinator)),
      bootstrap_(bootstrap),
      heartbeat_timer_(
          kernel, [this] { heartbeat(); }, &network_thread_),
      app_timer_(
          kernel, [this] { app_step(); }, &app_),
      reconcile_timer_(
          kernel, [this] { reconciled(std::move(reconciling_), woken_while_reconciling_); },
          &network_thread_),
      topics_(spec.topics) {
  node_ = net.add_node(spec.name, &network_thread_,
                       [this](sim::NodeId from, Envelope&& e) { on_message(from, std::move(e)); });
  explicit_ = config_.share_acknowledgement_mode == "explicit";
}

std::string ShareConsumer::new_member_id() {
  // Uuid.randomUuid() in Kafka's url-safe base64 form.
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string id;
  std::uint64_t bits = rng_.next();
  std::uint64_t more = rng_.next();
  for (int i = 0; i < 22; ++i) {
    if (i == 10) bits = more;
    id.push_back(kAlphabet[bits & 63U]);
    bits >>= 6;
  }
  return MemberIdReplay::replayed_or(member_ids_, spec_.name, std::move(id));
}

void ShareConsumer::reset() {
  heartbeat_timer_.cancel();
  app_timer_.cancel();
  reconcile_timer_.cancel();
  reconciling_.clear();
  woken_while_reconciling_ = false;
  cancel_script_timers();
  member_epoch_ = 0;
  heartbeat_interval_ms_ = 0;
  heartbeat_in_flight_ = false;
  quiet_heartbeat_ = false;
  heartbeat_again_ = false;
  leaving_ = false;
  leave_in_flight_ = false;
  stopping_ = false;
  processing_ = false;
  assigned_.clear();
  has_assignment_ = false;
  acknowledging_ = false;
  sessions_.clear();
  buffer_.clear();
  current_.reset();
  current_acks_.clear();
  closes_pending_ = 0;
  closing_sessions_ = false;
  topics_changed_ = true;
  // A new process: no coordinator known, no connection open.
  coordinator_known_ = false;
  find_coordinator_in_flight_ = false;
  for (auto& ready : connection_ready_) ready.clear();
}

void ShareConsumer::send(sim::NodeId to, Message message, bool quiet) {
  const std::int32_t id = ++next_correlation_;
  tracer_.publish(trace::Rpc{.dir = "send",
                             .from = spec_.name,
                             .to = net_.name(to),
                             .api = api_name(message),
                             .id = id,
                             .quiet = quiet});
  const bool coordinator = std::holds_alternative<ShareGroupHeartbeatRequest>(message);
  net_.send(node_, to, Envelope{id, std::move(message)}, connection_wait(to, coordinator));
}

sim::SimTime ShareConsumer::connection_wait(sim::NodeId to, bool coordinator) {
  const sim::SimTime now = kernel_.now();
  auto [it, opened] = connection_ready_[coordinator ? 1 : 0].try_emplace(to, now);
  if (opened) it->second = now + spec_.connection_setup.sample(connection_rng_);
  return it->second > now ? it->second - now : sim::SimTime{0};
}

void ShareConsumer::find_coordinator() {
  if (find_coordinator_in_flight_) return;
  find_coordinator_in_flight_ = true;
  send(bootstrap_, FindCoordinatorRequest{spec_.group});
}

void ShareConsumer::on_find_coordinator_response(const FindCoordinatorResponse& r) {
  find_coordinator_in_flight_ = false;
  if (r.error != ErrorCode::NONE) {
    schedule_heartbeat(sim::ms(config_.retry_backoff_ms));
    return;
  }
  coordinator_known_ = true;
  heartbeat();
}

void ShareConsumer::start() {
  if (process_.alive()) return;
  reset();
  process_.start();
  member_id_ = new_member_id();
  const sim::SimTime drawn = spec_.start_latency.sample(start_rng_);
  const std::size_t k = starts_++;
  const sim::SimTime latency = k < spec_.start_latencies.size() ? spec_.start_latencies[k] : drawn;
  // start_latency_ms: subscribe() and the first poll() come that much later.
  tracer_.publish(trace::ConsumerStart{.consumer = spec_.name,
                                       .group = spec_.group,
                                       .topics = topics_,
                                       .protocol = "share",
                                       .member_id = member_id_,
                                       .start_latency_ms = trace::start_latency_ms(latency)});
  if (latency > sim::SimTime::zero()) {
    heartbeat_timer_.arm(latency);
    app_timer_.arm(latency);
    return;
  }
  heartbeat();
  app_timer_.arm(sim::SimTime::zero());
}

void ShareConsumer::subscribe(std::vector<std::string> topics) {
  topics_ = std::move(topics);
  topics_changed_ = true;
  if (process_.alive() && !heartbeat_in_flight_)
    heartbeat();
  else
    heartbeat_again_ = true;
}

void ShareConsumer::schedule_heartbeat(sim::SimTime delay) {
  heartbeat_timer_.arm(delay);
}

void ShareConsumer::heartbeat() {
  if (!process_.alive()) return;
  // The heartbeat manager sends nothing until the coordinator is known; the background thread
  // asks for it first (at the consumer's construction, which a start is here).
  if (!coordinator_known_) {
    find_coordinator();
    return;
  }
  if (heartbeat_in_flight_) {
    heartbeat_again_ = true;
    return;
  }
  ShareGroupHeartbeatRequest r;
  r.group_id = spec_.group;
  r.member_id = member_id_;
  r.member_epoch = leaving_ ? -1 : member_epoch_;
  r.client_id = config_.client_id;
  if (!leaving_ && (member_epoch_ == 0 || topics_changed_)) {
    r.subscribed_topic_names = topics_;
    if (config_.client_rack) r.rack_id = config_.client_rack;
  }
  topics_changed_ = false;
  acknowledging_ = false;  // any heartbeat acknowledges (onHeartbeatRequestGenerated)
  heartbeat_in_flight_ = true;
  leave_in_flight_ = leaving_;
  heartbeat_timer_.cancel();
  // A steady heartbeat carries no news (a member at a positive epoch sending no subscription):
  // only the `full` trace writes it, and its answer when that causes none.
  quiet_heartbeat_ = !leaving_ && member_epoch_ > 0 && !r.subscribed_topic_names;
  send(coordinator_(), std::move(r), quiet_heartbeat_);
}

void ShareConsumer::on_heartbeat_response(const ShareGroupHeartbeatResponse& r) {
  heartbeat_in_flight_ = false;
  if (leaving_) {
    // The answer to the leave ends the close; a heartbeat sent before the close had ended its
    // share sessions is answered first, and the leave goes then.
    if (leave_in_flight_)
      finish_stop();
    else
      heartbeat();
    return;
  }
  if (r.error == ErrorCode::UNKNOWN_MEMBER_ID || r.error == ErrorCode::FENCED_MEMBER_EPOCH) {
    // Fenced: rejoin with epoch 0 and the same member id, giving up the assignment.
    member_epoch_ = 0;
    topics_changed_ = true;
    has_assignment_ = false;
    reconcile_timer_.cancel();  // the reconciliation is no longer relevant (aborted)
    reconciling_.clear();
    if (!assigned_.empty()) {
      assigned_.clear();
      tracer_.publish(trace::Assignment{.consumer = spec_.name});
    }
    heartbeat();
    return;
  }
  if (r.error != ErrorCode::NONE) {
    schedule_heartbeat(sim::ms(config_.retry_backoff_ms));
    return;
  }
  member_epoch_ = r.member_epoch;
  heartbeat_interval_ms_ = r.heartbeat_interval_ms;
  bool acknowledge = false;
  // A reconciliation that adds partitions keeps the background thread busy for
  // reconciliation_ms (resolving and assigning them, building the first ShareFetch for them),
  // after which the assignment takes effect (docs/fidelity.md, finding 38).
  bool deferred = false;
  if (r.assignment) {
    TopicPartitions next = *r.assignment;
    std::sort(next.begin(), next.end());
    if (reconcile_timer_.armed()) {
      // A reconciliation in progress: the newest target is applied when it ends.
      reconciling_ = std::move(next);
    } else {
      // The first assignment after a join is reconciled even when empty (the current one is
      // NONE), and then acknowledged.
      acknowledge = !has_assignment_ || next != assigned_;
      const bool adds = std::any_of(next.begin(), next.end(), [this](const TopicPartition& tp) {
        return !std::binary_search(assigned_.begin(), assigned_.end(), tp);
      });
      const sim::SimTime cost =
          adds ? spec_.reconciliation.sample(reconcile_rng_) : sim::SimTime::zero();
      if (cost > sim::SimTime::zero()) {
        deferred = true;
        acknowledge = false;
        reconciling_ = std::move(next);
        woken_while_reconciling_ = false;
        reconcile_timer_.arm(cost);
      } else if (next != assigned_) {
        assigned_ = std::move(next);
        tracer_.publish(trace::Assignment{.consumer = spec_.name, .owned = assigned_});
      }
    }
    has_assignment_ = true;
  }
  // The background thread's loop after this answer polls the heartbeat manager (the member is
  // RECONCILING: nothing to send), then ShareMembershipManager.poll reconciles (ACKNOWLEDGING),
  // then ShareConsumeRequestManager.poll, and blocks until its next wake-up; the heartbeat
  // manager sends the acknowledgement there (docs/fidelity.md, finding 35).
  acknowledging_ = acknowledge;
  if (heartbeat_again_) {
    heartbeat_again_ = false;
    heartbeat();
  } else {
    schedule_heartbeat(sim::ms(heartbeat_interval_ms_));
  }
  if (deferred) return;
  // The same loop fetches the new partitions when the application waits in poll() for records
  // (fetchMoreRecords); a request sent makes the thread loop again at once.
  if (acknowledging_ && !processing_ && !stopping_ && buffer_.empty() && maybe_fetch())
    network_wake();
}

void ShareConsumer::reconciled(TopicPartitions next, bool woken) {
  if (!process_.alive() || leaving_) return;  // the reconciliation was aborted
  if (next != assigned_) {
    assigned_ = std::move(next);
    tracer_.publish(trace::Assignment{.consumer = spec_.name, .owned = assigned_});
  }
  acknowledging_ = true;
  // The loop's ShareFetch for the new partitions, when the application waits in poll(); a
  // request sent, or a wake-up while the thread was busy, makes it loop again at once.
  const bool fetched = !processing_ && !stopping_ && buffer_.empty() && maybe_fetch();
  if (fetched || woken) network_wake();
}

void ShareConsumer::network_wake() {
  // While it reconciles, the thread is busy: it loops again once the reconciliation is done.
  if (reconcile_timer_.armed()) woken_while_reconciling_ = true;
  if (acknowledging_ && process_.alive() && !leaving_) heartbeat();
}

void ShareConsumer::app_step() {
  if (processing_) {
    finish_batch();
    return;
  }
  poll();
}

void ShareConsumer::poll() {
  if (!process_.alive() || leaving_) return;
  network_wake();  // a poll() call's SharePollEvent wakes the background thread
  if (stopping_) {
    close_sessions_and_leave();
    return;
  }
  if (buffer_.empty()) {
    maybe_fetch();
    for (auto& [leader, s] : sessions_) flush_acks(leader);
    app_timer_.arm(spec_.poll_timeout);
    return;
  }
  current_ = buffer_.front();
  buffer_.pop_front();
  const AcquiredRecords& a = current_->records;
  // The application's time for this batch, and what it does with each record.
  sim::SimTime spent =
      spec_.processing.per_batch.sample(rng_) + spec_.processing.per_poll.sample(rng_);
  current_acks_.clear();
  current_released_ = 0;
  current_rejected_ = 0;
  for (std::int64_t offset = a.first_offset; offset <= a.last_offset; ++offset) {
    spent += spec_.processing.per_record.sample(rng_);
    AcknowledgeType type = AcknowledgeType::ACCEPT;
    if (explicit_) {
      const double u = rng_.uniform01();
      if (u < spec_.outcomes.reject)
        type = AcknowledgeType::REJECT;
      else if (u < spec_.outcomes.reject + spec_.outcomes.release)
        type = AcknowledgeType::RELEASE;
    }
    if (type == AcknowledgeType::REJECT) ++current_rejected_;
    if (type == AcknowledgeType::RELEASE) ++current_released_;
    if (!current_acks_.empty() && current_acks_.back().type == type &&
        current_acks_.back().last_offset + 1 == offset) {
      current_acks_.back().last_offset = offset;
    } else {
      current_acks_.push_back({offset, offset, type});
    }
  }
  processing_ = true;
  app_timer_.arm(spent);
}

void ShareConsumer::finish_batch() {
  processing_ = false;
  if (!current_) return;
  const Batch b = *current_;
  current_.reset();
  const std::int64_t n = b.records.last_offset - b.records.first_offset + 1;
  tracer_.publish(trace::ShareProcess{.consumer = spec_.name,
                                      .partition = &b.partition,
                                      .first_offset = b.records.first_offset,
                                      .last_offset = b.records.last_offset,
                                      .delivery_count = b.records.delivery_count,
                                      .records = n,
                                      .accepted = n - current_released_ - current_rejected_,
                                      .released = current_released_,
                                      .rejected = current_rejected_});
  queue_acks(b.partition, std::move(current_acks_));
  current_acks_.clear();
  if (spec_.commit != CommitMode::Auto) flush_acks(leader_of_(b.partition));  // commitSync/Async
  poll();
}

void ShareConsumer::queue_acks(const TopicPartition& tp, std::vector<AcknowledgementBatch> acks) {
  if (acks.empty()) return;
  Session& s = sessions_[leader_of_(tp)];
  for (auto& p : s.pending_acks) {
    if (p.partition == tp) {
      p.batches.insert(p.batches.end(), acks.begin(), acks.end());
      return;
    }
  }
  s.pending_acks.push_back({tp, std::move(acks)});
}

bool ShareConsumer::maybe_fetch() {
  std::set<sim::NodeId> leaders;
  for (const auto& tp : assigned_) leaders.insert(leader_of_(tp));
  bool sent = false;
  for (const sim::NodeId leader : leaders) {
    if (sessions_[leader].fetch_in_flight) continue;
    send_fetch(leader);
    sent = true;
  }
  return sent;
}

void ShareConsumer::send_fetch(sim::NodeId leader) {
  Session& s = sessions_[leader];
  ShareFetchRequest r;
  r.group_id = spec_.group;
  r.member_id = member_id_;
  r.share_session_epoch = s.epoch;
  r.max_wait_ms = static_cast<std::int32_t>(config_.fetch_max_wait_ms);
  r.max_records = config_.max_poll_records;
  for (const auto& tp : assigned_)
    if (leader_of_(tp) == leader) r.partitions.push_back(tp);
  // Acknowledgements ride on a fetch of an open session, never on the one that opens it.
  if (s.epoch > 0) r.acknowledgements = std::move(s.pending_acks);
  s.pending_acks.clear();
  ++s.epoch;
  s.fetch_in_flight = true;
  send(leader, std::move(r));
}

void ShareConsumer::flush_acks(sim::NodeId leader) {
  Session& s = sessions_[leader];
  if (s.pending_acks.empty() || s.fetch_in_flight || s.ack_in_flight) return;
  if (s.epoch == 0) {
    send_fetch(leader);  // opens the session; the acknowledgements wait for the next request
    return;
  }
  ShareAcknowledgeRequest r;
  r.group_id = spec_.group;
  r.member_id = member_id_;
  r.share_session_epoch = s.epoch++;
  r.acknowledgements = std::move(s.pending_acks);
  s.pending_acks.clear();
  s.ack_in_flight = true;
  send(leader, std::move(r));
}

void ShareConsumer::on_fetch_response(sim::NodeId from, const ShareFetchResponse& r) {
  Session& s = sessions_[from];
  s.fetch_in_flight = false;
  if (s.close_waiting) {  // closing: what this fetch acquired, the close releases
    maybe_send_close(from);
    return;
  }
  bool got = false;
  for (const auto& p : r.partitions) {
    for (const auto& a : p.acquired_records) {
      buffer_.push_back({p.partition, a});
      got = true;
    }
  }
  if (!s.pending_acks.empty()) flush_acks(from);
  if (got && !processing_ && !stopping_) app_timer_.arm(sim::SimTime::zero());
}

void ShareConsumer::on_message(sim::NodeId from, Envelope&& e) {
  if (!process_.alive()) return;
  trace::Rpc f{.dir = "recv",
               .from = net_.name(from),
               .to = spec_.name,
               .api = api_name(e.message),
               .id = e.correlation_id};
  std::visit(
      [&](const auto& m) {
        if constexpr (requires { m.error; }) f.error = error_name(m.error);
      },
      e.message);
  // A quiet heartbeat's answer causes nothing: NONE, no assignment (the same one), at most a new
  // member epoch (its `member.epoch` line and member record say so).
  if (const auto* hb = std::get_if<ShareGroupHeartbeatResponse>(&e.message))
    f.quiet = quiet_heartbeat_ && hb->error == ErrorCode::NONE && !hb->assignment;
  tracer_.publish(f);
  // A response wakes the background thread: a pending acknowledgement goes in its next loop,
  // whose heartbeat manager is polled before the consume manager sends what this answer causes.
  network_wake();
  if (const auto* hb = std::get_if<ShareGroupHeartbeatResponse>(&e.message)) {
    on_heartbeat_response(*hb);
  } else if (const auto* find = std::get_if<FindCoordinatorResponse>(&e.message)) {
    on_find_coordinator_response(*find);
  } else if (const auto* fetch = std::get_if<ShareFetchResponse>(&e.message)) {
    on_fetch_response(from, *fetch);
  } else if (std::holds_alternative<ShareAcknowledgeResponse>(e.message)) {
    Session& s = sessions_[from];
    s.ack_in_flight = false;
    if (s.close_waiting) {  // a commit's ShareAcknowledge answered: the close may go now
      maybe_send_close(from);
      return;
    }
    if (closes_pending_ > 0 && s.epoch == -1) {
      on_close_answered();
      return;
    }
    if (!s.pending_acks.empty()) flush_acks(from);
  }
}

void ShareConsumer::begin_close() {
  stopping_ = true;
  if (!processing_) app_timer_.arm(sim::SimTime::zero());
}

void ShareConsumer::close_sessions_and_leave() {
  // close(): acknowledge what is pending and end every share session with epoch -1, which
  // releases the records still acquired (buffered ones included); then leave the group. Once:
  // a later poll() pass while the closes are answered changes nothing.
  if (closing_sessions_) return;
  closing_sessions_ = true;
  buffer_.clear();
  std::vector<sim::NodeId> leaders;
  for (const auto& [leader, s] : sessions_)
    if (s.epoch > 0) leaders.push_back(leader);
  for (const sim::NodeId leader : leaders) {
    sessions_[leader].close_waiting = true;
    ++closes_pending_;
  }
  for (const sim::NodeId leader : leaders) maybe_send_close(leader);
  if (closes_pending_ == 0) {
    leaving_ = true;
    heartbeat_in_flight_ = false;
    heartbeat();
  }
}

void ShareConsumer::maybe_send_close(sim::NodeId leader) {
  // ShareConsumeRequestManager.processAcknowledgements sends nothing to a node with a request
  // in flight (nodesWithPendingRequests): the closing ShareAcknowledge waits for the ShareFetch
  // parked in the broker's purgatory (or a commit's ShareAcknowledge) to be answered. What that
  // ShareFetch acquired counted a delivery; the close releases it.
  Session& s = sessions_[leader];
  if (!s.close_waiting || s.fetch_in_flight || s.ack_in_flight) return;
  s.close_waiting = false;
  ShareAcknowledgeRequest r;
  r.group_id = spec_.group;
  r.member_id = member_id_;
  r.share_session_epoch = -1;
  r.acknowledgements = std::move(s.pending_acks);
  s.pending_acks.clear();
  s.epoch = -1;
  s.ack_in_flight = true;
  send(leader, std::move(r));
}

void ShareConsumer::on_close_answered() {
  if (--closes_pending_ > 0) return;
  leaving_ = true;
  heartbeat();
}

void ShareConsumer::finish_stop() {
  end_after_close();
}

void ShareConsumer::on_crash() {
  // No close(), no leave heartbeat. Its OS closes its sockets, so every broker it had a share
  // session with sees the connection end (a FIN behind whatever was already on the wire; lost on
  // a cut link) and releases the records the member acquired there (ShareSessionCache's
  // disconnect listener). Its membership still ends only with the session timeout. A paused
  // process or a cut network closes nothing: those records wait for their acquisition locks to
  // expire.
  for (const auto& [leader, s] : sessions_) {
    if (s.epoch != 0) net_.send(node_, leader, Envelope{0, ShareConnectionClosed{}});
  }
}

}  // namespace rsim
