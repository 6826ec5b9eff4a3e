#include "models/broker/share_partition_manager.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/broker/broker.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/share_group_coordinator.hpp"
#include "models/coordinator/share_partition.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {

/// (group, topic-partition): one share-partition.
struct ShareKey {
  std::string group;
  TopicPartition partition;
  auto operator<=>(const ShareKey&) const = default;
};

/// The share coordinator's side of __share_group_state: one log per state-topic partition, the
/// latest SPSO per share-partition, ShareUpdate records turning into a ShareSnapshot after
/// share.coordinator.snapshot.update.records.per.snapshot of them.
class ShareStateLog {
 public:
  ShareStateLog(Tracer& tracer, const BrokerConfig& config) : tracer_(tracer), config_(config) {}

  std::int32_t partition_of(const ShareKey& k) const {
    // SharePartitionKey "<group>:<topicId>:<partition>" (topic ids are names here).
    return coordinator_partition(
        fmt::format("{}:{}:{}", k.group, k.partition.topic, k.partition.partition),
        config_.share_coordinator_state_topic_num_partitions);
  }

  void initialize(const ShareKey& k, std::int32_t state_epoch, std::int64_t start_offset) {
    State& s = states_[k];
    s.snapshot_epoch = s.initialized ? s.snapshot_epoch + 1 : 0;
    s.initialized = true;
    s.state_epoch = state_epoch;
    s.start_offset = start_offset;
    s.updates = 0;
    append(k, "ShareSnapshot", s, {}, 0);
  }

  void write(const ShareKey& k, std::int64_t start_offset,
             const std::vector<PersistedBatch>& batches, std::int32_t delivery_complete) {
    State& s = states_[k];
    s.start_offset = start_offset;
    if (++s.updates >= config_.share_coordinator_snapshot_update_records_per_snapshot) {
      ++s.snapshot_epoch;
      s.updates = 0;
      append(k, "ShareSnapshot", s, batches, delivery_complete);
    } else {
      append(k, "ShareUpdate", s, batches, delivery_complete);
    }
  }

  /// ReadShareGroupState: the persisted SPSO (-1: never started).
  std::int64_t start_offset(const ShareKey& k) const {
    const auto it = states_.find(k);
    return it == states_.end() ? -1 : it->second.start_offset;
  }

 private:
  struct State {
    bool initialized = false;
    std::int32_t snapshot_epoch = 0;
    std::int32_t state_epoch = 0;
    std::int64_t start_offset = -1;
    std::int32_t updates = 0;
  };
  void append(const ShareKey& k, const char* type, const State& s,
              const std::vector<PersistedBatch>& batches, std::int32_t delivery_complete) {
    const std::int32_t p = partition_of(k);
    std::vector<trace::ShareStateBatch> list;
    for (const auto& b : batches)
      list.push_back(
          {b.first_offset, b.last_offset, static_cast<std::int32_t>(b.state), b.delivery_count});
    trace::ShareStateRecord f{.partition = p,
                              .offset = offsets_[p]++,
                              .record = type,
                              .group = k.group,
                              .topic_partition = &k.partition,
                              .snapshot_epoch = s.snapshot_epoch,
                              .leader_epoch = 0,
                              .start_offset = s.start_offset,
                              .delivery_complete_count = delivery_complete,
                              .state_batches = list};
    if (std::string_view(type) == "ShareSnapshot") f.state_epoch = s.state_epoch;
    tracer_.publish(f);
  }

  Tracer& tracer_;
  const BrokerConfig& config_;
  std::map<ShareKey, State> states_;
  std::map<std::int32_t, std::int64_t> offsets_;
};

}  // namespace

struct SharePartitionManager::Impl {
  Impl(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
       const ClusterMetadata& cluster, const BrokerConfig& config, Workload& workload,
       std::map<std::string, ShareGroupConfig> group_configs, sim::Distribution write_latency,
       sim::Distribution network_latency, std::uint64_t seed,
       std::function<std::string(sim::NodeId)> name_of)
      : kernel_(kernel),
        tracer_(tracer),
        net_(net),
        cluster_(cluster),
        workload_(workload),
        state_log_(tracer, config),
        persist_rng_(seed, "share-persister"),
        write_latency_(std::move(write_latency)),
        network_latency_(std::move(network_latency)),
        broker_group_config_(resolve_share_group_config(config, {})),
        group_configs_(std::move(group_configs)),
        name_of_(std::move(name_of)) {}

  struct Parked {
    std::uint64_t id = 0;
    std::int32_t broker = 0;
    sim::NodeId from = 0;
    std::int32_t correlation_id = 0;
    ShareFetchRequest request;
    sim::SimTime deadline{0};
  };
  /// A ShareFetch's answer waits for its fetch and for its acknowledgements' state writes.
  struct Response {
    std::int32_t broker = 0;
    sim::NodeId from = 0;
    std::int32_t correlation_id = 0;
    std::string member_id;
    bool acks_done = false;
    std::map<TopicPartition, ErrorCode> ack_errors;
    std::optional<ShareFetchResponse> fetched;
  };
  struct Leader {
    std::unique_ptr<SharePartition> sp;
    bool initializing = false;
    std::vector<std::function<void()>> waiting;  // requests that wait for the initialization
  };

  const ShareGroupConfig& group_config(const std::string& group) const {
    const auto it = group_configs_.find(group);
    return it == group_configs_.end() ? broker_group_config_ : it->second;
  }
  static std::string auto_offset_reset_text(const ShareGroupConfig& c) {
    return c.auto_offset_reset == "by_duration"
               ? fmt::format("by_duration:{}ms", c.auto_offset_reset_duration_ms)
               : c.auto_offset_reset;
  }
  SharePartitionConfig partition_config(const std::string& group) const {
    const ShareGroupConfig& c = group_config(group);
    SharePartitionConfig out;
    out.record_lock_duration = sim::ms(c.record_lock_duration_ms);
    out.delivery_count_limit = c.delivery_count_limit;
    out.max_record_locks = c.partition_max_record_locks;
    out.renew_acknowledge_enable = c.renew_acknowledge_enable;
    return out;
  }

  std::int32_t leader_broker(const TopicPartition& tp) const {
    return tp.partition % static_cast<std::int32_t>(cluster_.broker_nodes.size());
  }
  std::int32_t member_number(const std::string& member_id) {
    const auto [it, fresh] =
        members_.emplace(member_id, static_cast<std::int32_t>(members_.size()));
    if (fresh) member_names_.push_back(member_id);
    return it->second;
  }
  std::string consumer_of(sim::NodeId node) const { return name_of_(node); }

  /// One round trip from a share-partition leader to the share coordinator of `k` and its write.
  sim::SimTime persist_delay(std::int32_t broker, const ShareKey& k) {
    const std::int32_t sc =
        state_log_.partition_of(k) % static_cast<std::int32_t>(cluster_.broker_nodes.size());
    sim::SimTime d = write_latency_.sample(persist_rng_);
    if (sc != broker)
      d += network_latency_.sample(persist_rng_) + network_latency_.sample(persist_rng_);
    return d;
  }

  void initialize_state(const std::string& group, const TopicPartitions& partitions,
                        std::int32_t state_epoch, std::int64_t start, std::function<void()> done) {
    // InitializeShareGroupState from the group coordinator to each share coordinator.
    sim::SimTime longest{0};
    for (const auto& tp : partitions) {
      const ShareKey k{group, tp};
      longest = std::max(longest, persist_delay(leader_broker(tp), k));
    }
    kernel_.schedule_closure_after(
        longest, [this, group, partitions, state_epoch, start, done = std::move(done)] {
          for (const auto& tp : partitions) state_log_.initialize({group, tp}, state_epoch, start);
          done();
        });
  }

  void trace_changes(const ShareKey& k, const std::vector<StateChange>& changes,
                     const char* cause) {
    for (const auto& c : changes) {
      tracer_.publish(trace::ShareRecords{
          .group = k.group,
          .partition = &k.partition,
          .consumer = c.member >= 0
                          ? std::string_view(owner_names_.at(static_cast<std::size_t>(c.member)))
                          : std::string_view(),
          .from = to_string(c.from),
          .to = to_string(c.to),
          .first_offset = c.first_offset,
          .last_offset = c.last_offset,
          .records = c.last_offset - c.first_offset + 1,
          .delivery_count = c.delivery_count,
          .cause = cause});
    }
  }
  void trace_window(const ShareKey& k, const SharePartition& sp) {
    const std::pair<std::int64_t, std::int64_t> now{sp.start_offset(), sp.end_offset()};
    const auto [it, fresh] = windows_.emplace(k, now);
    if (!fresh && it->second == now) return;
    it->second = now;
    tracer_.publish(trace::ShareWindow{.group = k.group,
                                       .partition = &k.partition,
                                       .spso = now.first,
                                       .speo = now.second,
                                       .in_flight = sp.in_flight()});
  }

  /// Persists `change` for `k`, then commits it and runs `then`.
  void persist(std::int32_t broker, const ShareKey& k, ShareChange change,
               std::function<void()> then) {
    if (change.persist.empty()) {
      if (then) then();
      return;
    }
    const sim::SimTime delay = persist_delay(broker, k);
    kernel_.schedule_closure_after(delay, [this, broker, k, change = std::move(change),
                                           then = std::move(then)] {
      Leader& l = partitions_[k];
      const std::int64_t start = l.sp->start_offset();
      l.sp->commit(change.first_offset, change.last_offset);
      state_log_.write(k, l.sp->start_offset(), change.persist, l.sp->delivery_complete_count());
      trace_window(k, *l.sp);
      if (then) then();
      // SharePartition.rollbackOrProcessStateUpdates completes delayed share fetches after the
      // write only when it moved the cached state (maybeUpdateCachedStateAndOffsets: SPSO past
      // terminal records). The check SharePartitionManager makes at the acknowledgement or
      // release itself finds the records still mid-transition (hasOngoingStateTransition), so a
      // RELEASE or a closing session's release wakes no parked ShareFetch: the records go to the
      // next fetch that acquires (a parked one when new records arrive, or at its MaxWaitMs).
      if (l.sp->start_offset() != start) wake_parked(broker, k);
    });
  }

  void on_broker_message(std::int32_t broker, sim::NodeId from, Envelope&& e) {
    if (const auto* find = std::get_if<FindCoordinatorRequest>(&e.message)) {
      reply(broker, from, e.correlation_id, find_coordinator(cluster_, find->key));
      return;
    }
    if (const auto* hb = std::get_if<ShareGroupHeartbeatRequest>(&e.message)) {
      const sim::NodeId me = cluster_.broker_nodes.at(static_cast<std::size_t>(broker));
      group_coordinator_->on_heartbeat(
          *hb, consumer_of(from),
          [this, me, from, id = e.correlation_id](ShareGroupHeartbeatResponse r) {
            net_.send(me, from, Envelope{id, std::move(r)});
          });
    } else if (auto* fetch = std::get_if<ShareFetchRequest>(&e.message)) {
      on_share_fetch(broker, from, e.correlation_id, std::move(*fetch));
    } else if (auto* ack = std::get_if<ShareAcknowledgeRequest>(&e.message)) {
      on_share_acknowledge(broker, from, e.correlation_id, std::move(*ack));
    } else if (std::holds_alternative<ShareConnectionClosed>(e.message)) {
      on_connection_closed(broker, from);
    }
  }

  void reply(std::int32_t broker, sim::NodeId to, std::int32_t id, Message m) {
    net_.send(cluster_.broker_nodes.at(static_cast<std::size_t>(broker)), to,
              Envelope{id, std::move(m)});
  }

  /// Runs `ready` once the share-partition exists (first use: ReadShareGroupState round trip,
  /// SPSO from the persisted state or share.auto.offset.reset=latest).
  void with_partition(std::int32_t broker, const ShareKey& k, std::function<void()> ready) {
    Leader& l = partitions_[k];
    if (l.sp) {
      ready();
      return;
    }
    l.waiting.push_back(std::move(ready));
    if (l.initializing) return;
    l.initializing = true;
    kernel_.schedule_closure_after(persist_delay(broker, k), [this, k] {
      Leader& leader = partitions_[k];
      std::int64_t start = state_log_.start_offset(k);
      const bool reset = start < 0;
      const ShareGroupConfig& gc = group_config(k.group);
      if (reset) {
        // share.auto.offset.reset: the log end (latest), the log start (earliest), or the first
        // record appended at or after now minus the duration (by_duration).
        if (gc.auto_offset_reset == "earliest") {
          start = workload_.log_start_offset(k.partition);
        } else if (gc.auto_offset_reset == "by_duration") {
          const sim::SimTime since = kernel_.now() - sim::ms(gc.auto_offset_reset_duration_ms);
          start = since <= sim::SimTime::zero() ? workload_.log_start_offset(k.partition)
                                                : workload_.log_end_offset_at(k.partition, since);
        } else {
          start = workload_.log_end_offset(k.partition);
        }
      }
      leader.sp = std::make_unique<SharePartition>(partition_config(k.group), start);
      leader.initializing = false;
      const std::string reset_text = reset ? auto_offset_reset_text(gc) : "none";
      tracer_.publish(trace::SharePartitionInit{
          .group = k.group, .partition = &k.partition, .spso = start, .reset = reset_text});
      trace_window(k, *leader.sp);
      auto waiting = std::move(leader.waiting);
      leader.waiting.clear();
      for (auto& w : waiting) w();
    });
  }

  /// Applies one request's acknowledgements; `done` runs (with the errors) once persisted.
  void apply_acks(std::int32_t broker, sim::NodeId from, const std::string& group,
                  const std::string& member_id, const std::vector<PartitionAcknowledgements>& acks,
                  bool close_session,
                  std::function<void(std::map<TopicPartition, ErrorCode>)> done) {
    const std::int32_t member = member_number(member_id);
    if (owner_names_.size() < members_.size()) owner_names_.resize(members_.size());
    owner_names_[static_cast<std::size_t>(member)] = consumer_of(from);
    auto errors = std::make_shared<std::map<TopicPartition, ErrorCode>>();
    auto pending = std::make_shared<int>(1);
    auto finish = [pending, errors, done = std::move(done)] {
      if (--*pending == 0) done(*errors);
    };
    for (const auto& pa : acks) {
      const ShareKey k{group, pa.partition};
      Leader& l = partitions_[k];
      if (!l.sp) continue;
      for (const auto& b : pa.batches) {
        ShareChange c =
            l.sp->acknowledge(member, b.first_offset, b.last_offset, b.type, kernel_.now());
        if (c.error != ErrorCode::NONE) {
          (*errors)[pa.partition] = c.error;
          tracer_.publish(trace::ShareAckError{.group = group,
                                               .partition = &pa.partition,
                                               .consumer = consumer_of(from),
                                               .type = to_string(b.type),
                                               .first_offset = b.first_offset,
                                               .last_offset = b.last_offset,
                                               .error = error_name(c.error)});
          continue;
        }
        if (b.type == AcknowledgeType::RENEW)
          schedule_lock_expiry(broker, k, b.first_offset, b.last_offset);
        trace_changes(k, c.changes, to_string(b.type));
        ++*pending;
        persist(broker, k, std::move(c), finish);
      }
    }
    if (close_session) {
      // The share session ends: everything the member still holds on this broker is released.
      sessions_.erase({broker, group, member_id});
      release_session(broker, group, member_id, "session_close", [&](ShareKey k, ShareChange c) {
        ++*pending;
        persist(broker, k, std::move(c), finish);
      });
      for (auto it = parked_.begin(); it != parked_.end();) {
        if (it->second.request.member_id == member_id && it->second.broker == broker) {
          reply(broker, it->second.from, it->second.correlation_id, ShareFetchResponse{});
          responses_.erase(it->first);
          it = parked_.erase(it);
        } else {
          ++it;
        }
      }
    }
    finish();
  }

  /// SharePartitionManager.releaseSession's release step: every record `member_id` holds on the
  /// share-partitions this broker leads for `group` goes back (AVAILABLE, or ARCHIVED at the
  /// delivery limit), persisted like an acknowledgement; `write` persists each change.
  template <class Write>
  void release_session(std::int32_t broker, const std::string& group, const std::string& member_id,
                       const char* cause, Write write) {
    const auto m = members_.find(member_id);
    if (m == members_.end()) return;
    for (auto& [k, l] : partitions_) {
      if (k.group != group || !l.sp || leader_broker(k.partition) != broker) continue;
      ShareChange c = l.sp->release_member(m->second);
      if (c.changes.empty()) continue;
      trace_changes(k, c.changes, cause);
      write(k, std::move(c));
    }
  }

  /// The broker's socket server saw the connection from `from` close (ShareSessionCache's
  /// ClientConnectionDisconnectListener): each share session opened on it that the client had
  /// not closed itself is removed and the member's acquired records are released at once, not
  /// after their locks. A session whose member re-opened it on another connection is left.
  void on_connection_closed(std::int32_t broker, sim::NodeId from) {
    std::vector<std::pair<std::string, std::string>> ended;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (std::get<0>(it->first) == broker && it->second == from) {
        ended.emplace_back(std::get<1>(it->first), std::get<2>(it->first));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& [group, member_id] : ended) {
      tracer_.publish(trace::ShareSession{.broker = broker,
                                          .group = group,
                                          .consumer = consumer_of(from),
                                          .member_id = member_id,
                                          .event = "disconnect"});
      release_session(broker, group, member_id, "disconnect", [&](ShareKey k, ShareChange c) {
        persist(broker, k, std::move(c), nullptr);
      });
      // A fetch parked for that member, or one waiting for its acknowledgements' writes, has no
      // connection to answer on (what it acquired was released above).
      for (auto it = parked_.begin(); it != parked_.end();) {
        if (it->second.request.member_id == member_id && it->second.broker == broker) {
          it = parked_.erase(it);
        } else {
          ++it;
        }
      }
      // (clang 14 cannot capture a structured binding in a lambda: a plain reference instead.)
      const std::string& member = member_id;
      std::erase_if(responses_, [&](const auto& e) {
        return e.second.member_id == member && e.second.broker == broker;
      });
    }
  }

  void schedule_lock_expiry(std::int32_t broker, const ShareKey& k, std::int64_t first,
                            std::int64_t last) {
    const SharePartition& sp = *partitions_[k].sp;
    const sim::SimTime deadline = sp.lock_deadline(first);
    if (deadline == sim::kNever) return;
    kernel_.schedule_closure_after(
        deadline - kernel_.now(), [this, broker, k, first, last, deadline] {
          Leader& l = partitions_[k];
          ShareChange c = l.sp->expire_locks(first, last, deadline);
          if (c.changes.empty()) return;
          trace_changes(k, c.changes, "lock_timeout");
          wake_parked(broker, k);  // available again at once, before the write completes
          persist(broker, k, std::move(c), nullptr);
        });
  }

  void on_share_acknowledge(std::int32_t broker, sim::NodeId from, std::int32_t id,
                            ShareAcknowledgeRequest r) {
    const bool close = r.share_session_epoch == -1;
    apply_acks(broker, from, r.group_id, r.member_id, r.acknowledgements, close,
               [this, broker, from, id,
                acks = r.acknowledgements](std::map<TopicPartition, ErrorCode> errors) {
                 ShareAcknowledgeResponse response;
                 for (const auto& pa : acks) {
                   const auto it = errors.find(pa.partition);
                   response.partitions.push_back(
                       {pa.partition, it == errors.end() ? ErrorCode::NONE : it->second});
                 }
                 reply(broker, from, id, std::move(response));
               });
  }

  void on_share_fetch(std::int32_t broker, sim::NodeId from, std::int32_t id, ShareFetchRequest r) {
    const bool close = r.share_session_epoch == -1;
    // Epoch 0 opens a share session on this connection (a session of the same member is
    // replaced, as ShareSessionCache.maybeCreateSession does).
    if (r.share_session_epoch == 0) sessions_[{broker, r.group_id, r.member_id}] = from;
    const std::uint64_t pid = next_parked_++;
    responses_[pid] = Response{broker, from, id, r.member_id};
    // KafkaApis.handleShareFetchRequest starts the piggybacked acknowledgements and the fetch
    // together and answers when both are done (thenCombine): the records are acquired at once,
    // while the acknowledgements' state write is still under way (docs/fidelity.md, finding 37).
    // A closing request (epoch -1) acquires nothing before its session's release.
    auto fetch = [this, broker, from, id, pid, r] {
      // Every share-partition of the request must exist before records are acquired.
      auto remaining = std::make_shared<std::size_t>(r.partitions.size() + 1);
      auto go = [this, broker, from, id, pid, remaining, r] {
        if (--*remaining > 0) return;
        try_fetch(Parked{pid, broker, from, id, r, kernel_.now() + sim::ms(r.max_wait_ms)});
      };
      for (const auto& tp : r.partitions) with_partition(broker, {r.group_id, tp}, go);
      go();
    };
    apply_acks(broker, from, r.group_id, r.member_id, r.acknowledgements, close,
               [this, pid, close, fetch](std::map<TopicPartition, ErrorCode> errors) {
                 const auto it = responses_.find(pid);
                 if (it == responses_.end()) return;  // its connection is gone
                 it->second.ack_errors = std::move(errors);
                 it->second.acks_done = true;
                 if (close)
                   fetch();
                 else if (it->second.fetched)
                   send_response(pid);
               });
    if (!close) fetch();
  }

  /// The fetch of request `pid` is done: it answers now if the request's acknowledgements are
  /// written, else when they are.
  void on_fetched(std::uint64_t pid, ShareFetchResponse response) {
    const auto it = responses_.find(pid);
    if (it == responses_.end()) return;
    it->second.fetched = std::move(response);
    if (it->second.acks_done) send_response(pid);
  }

  void send_response(std::uint64_t pid) {
    const auto it = responses_.find(pid);
    Response done = std::move(it->second);
    responses_.erase(it);
    for (auto& out : done.fetched->partitions)
      if (const auto e = done.ack_errors.find(out.partition); e != done.ack_errors.end())
        out.acknowledge_error = e->second;
    reply(done.broker, done.from, done.correlation_id, std::move(*done.fetched));
  }

  /// Acquires for a (possibly parked) fetch; responds when something was acquired or the wait
  /// ended, else parks it until data arrives, a record comes back, or MaxWaitMs passes.
  void try_fetch(Parked p) {
    const std::int32_t member = member_number(p.request.member_id);
    if (owner_names_.size() < members_.size()) owner_names_.resize(members_.size());
    owner_names_[static_cast<std::size_t>(member)] = consumer_of(p.from);
    ShareFetchResponse response;
    response.acquisition_lock_timeout_ms =
        static_cast<std::int32_t>(group_config(p.request.group_id).record_lock_duration_ms);
    std::int32_t budget = p.request.max_records;
    bool any = false;
    sim::SimTime next_data = sim::kNever;
    for (const auto& tp : p.request.partitions) {
      const ShareKey k{p.request.group_id, tp};
      SharePartition& sp = *partitions_[k].sp;
      ShareFetchPartition out;
      out.partition = tp;
      if (budget > 0) {
        std::vector<StateChange> changes;
        out.acquired_records =
            sp.acquire(member, budget, workload_.log_end_offset(tp), kernel_.now(), &changes);
        for (const auto& a : out.acquired_records) {
          budget -= static_cast<std::int32_t>(a.last_offset - a.first_offset + 1);
          schedule_lock_expiry(p.broker, k, a.first_offset, a.last_offset);
          any = true;
        }
        if (!changes.empty()) {
          trace_changes(k, changes, "fetch");
          trace_window(k, sp);
        }
      }
      next_data = std::min(next_data, workload_.next_append(tp));
      response.partitions.push_back(std::move(out));
    }
    if (any || kernel_.now() >= p.deadline || p.request.partitions.empty()) {
      on_fetched(p.id, std::move(response));
      return;
    }
    // Delayed share fetch: wait for data, a released record, or the end of MaxWaitMs.
    const sim::SimTime wake = std::min(p.deadline, next_data);
    const std::uint64_t pid = p.id;
    parked_.emplace(pid, std::move(p));
    kernel_.schedule_closure_after(std::max(sim::SimTime::zero(), wake - kernel_.now()),
                                   [this, pid] {
                                     const auto it = parked_.find(pid);
                                     if (it == parked_.end()) return;
                                     Parked again = std::move(it->second);
                                     parked_.erase(it);
                                     try_fetch(std::move(again));
                                   });
  }

  /// SharePartition.maybeCompleteDelayedShareFetchRequest: the partition's change completes the
  /// delayed share fetches watched on its own key (DelayedShareFetchGroupKey: group and
  /// partition), i.e. the parked ShareFetches of `k`'s group that ask for `k`'s partition; a
  /// parked fetch for other partitions stays parked even where records of those are available.
  void wake_parked(std::int32_t broker, const ShareKey& k) {
    std::vector<std::uint64_t> ids;
    for (const auto& [id, p] : parked_)
      if (p.broker == broker && p.request.group_id == k.group &&
          std::find(p.request.partitions.begin(), p.request.partitions.end(), k.partition) !=
              p.request.partitions.end())
        ids.push_back(id);
    for (const std::uint64_t id : ids) {
      const auto it = parked_.find(id);
      if (it == parked_.end()) continue;
      bool ready = false;
      for (const auto& tp : it->second.request.partitions) {
        const auto& sp = partitions_[{it->second.request.group_id, tp}].sp;
        if (sp && sp->next_fetch_offset() < sp->start_offset() + sp->in_flight()) ready = true;
      }
      if (!ready) continue;
      Parked again = std::move(it->second);
      parked_.erase(it);
      try_fetch(std::move(again));
    }
  }

  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Network<Envelope>& net_;
  const ClusterMetadata& cluster_;
  Workload& workload_;
  ShareStateLog state_log_;
  sim::Rng persist_rng_;
  sim::Distribution write_latency_;
  sim::Distribution network_latency_;
  ShareGroupConfig broker_group_config_;
  std::map<std::string, ShareGroupConfig> group_configs_;
  std::function<std::string(sim::NodeId)> name_of_;
  ShareGroupCoordinator* group_coordinator_ = nullptr;
  std::map<ShareKey, Leader> partitions_;
  std::map<ShareKey, std::pair<std::int64_t, std::int64_t>> windows_;
  std::map<std::string, std::int32_t> members_;
  std::vector<std::string> member_names_;
  std::vector<std::string> owner_names_;
  std::map<std::uint64_t, Parked> parked_;
  /// Open share sessions: (broker, group, member id) -> the client's node (its connection).
  std::map<std::tuple<std::int32_t, std::string, std::string>, sim::NodeId> sessions_;
  /// ShareFetches not answered yet, by request: their fetch and their acknowledgements' writes.
  std::map<std::uint64_t, Response> responses_;
  std::uint64_t next_parked_ = 1;
};

SharePartitionManager::SharePartitionManager(sim::Kernel& kernel, Tracer& tracer,
                                             sim::Network<Envelope>& net,
                                             const ClusterMetadata& cluster,
                                             const BrokerConfig& config, Workload& workload,
                                             std::map<std::string, ShareGroupConfig> group_configs,
                                             sim::Distribution write_latency,
                                             sim::Distribution network_latency, std::uint64_t seed,
                                             std::function<std::string(sim::NodeId)> name_of)
    : impl_(std::make_unique<Impl>(kernel, tracer, net, cluster, config, workload,
                                   std::move(group_configs), std::move(write_latency),
                                   std::move(network_latency), seed, std::move(name_of))) {}

SharePartitionManager::~SharePartitionManager() = default;

void SharePartitionManager::set_group_coordinator(ShareGroupCoordinator* coordinator) {
  impl_->group_coordinator_ = coordinator;
}

void SharePartitionManager::on_message(std::int32_t broker, sim::NodeId from, Envelope&& e) {
  impl_->on_broker_message(broker, from, std::move(e));
}

void SharePartitionManager::initialize_state(const std::string& group,
                                             const TopicPartitions& partitions,
                                             std::int32_t state_epoch, std::int64_t start,
                                             std::function<void()> done) {
  impl_->initialize_state(group, partitions, state_epoch, start, std::move(done));
}

std::int32_t SharePartitionManager::leader_broker(const TopicPartition& tp) const {
  return impl_->leader_broker(tp);
}

const ShareGroupConfig& SharePartitionManager::group_config(const std::string& group) const {
  return impl_->group_config(group);
}

const std::map<std::string, ShareGroupConfig>& SharePartitionManager::group_configs() const {
  return impl_->group_configs_;
}

std::string SharePartitionManager::auto_offset_reset_text(const ShareGroupConfig& c) {
  return Impl::auto_offset_reset_text(c);
}

void SharePartitionManager::publish_end() {
  for (const auto& [key, leader] : impl_->partitions_) {
    if (!leader.sp) continue;
    impl_->tracer_.publish(
        trace::SharePartitionEnd{.group = key.group,
                                 .partition = &key.partition,
                                 .spso = leader.sp->start_offset(),
                                 .speo = leader.sp->end_offset(),
                                 .in_flight = leader.sp->in_flight(),
                                 .delivery_complete_count = leader.sp->delivery_complete_count()});
  }
}

}  // namespace rsim
