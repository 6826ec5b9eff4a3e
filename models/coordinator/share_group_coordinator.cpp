#include "models/coordinator/share_group_coordinator.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/assignors/server_java_order.hpp"
#include "models/assignors/share_assignor.hpp"

namespace rsim {
namespace {

TopicPartitions partition_strings(const std::map<std::string, std::set<std::int32_t>>& by_topic) {
  TopicPartitions out;
  for (const auto& [topic, partitions] : by_topic)
    for (const std::int32_t p : partitions) out.push_back(TopicPartition{topic, p});
  return out;
}

/// The record's MetadataHash: a number, as Kafka's is (here an FNV-1a hash of the topics' names
/// and partition counts).
std::int64_t numeric_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : text) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h >> 1);
}

TopicPartitions flatten(const assignors::MemberAssignment& a) {
  TopicPartitions out;
  for (const auto& [topic, partitions] : a)
    for (const std::int32_t p : partitions) out.push_back({topic, p});
  return out;
}

}  // namespace

ShareGroupCoordinator::ShareGroupCoordinator(sim::Kernel& kernel, Tracer& tracer,
                                             const BrokerConfig& config, OffsetsLog& log,
                                             const ClusterMetadata& cluster,
                                             Initializer initializer,
                                             std::map<std::string, ShareGroupConfig> group_configs)
    : kernel_(kernel),
      tracer_(tracer),
      config_(config),
      group_configs_(std::move(group_configs)),
      broker_defaults_(resolve_share_group_config(config, {})),
      log_(log),
      cluster_(cluster),
      initializer_(std::move(initializer)) {}

const ShareGroupConfig& ShareGroupCoordinator::group_config(const std::string& group) const {
  const auto it = group_configs_.find(group);
  return it == group_configs_.end() ? broker_defaults_ : it->second;
}

std::int32_t ShareGroupCoordinator::group_epoch(const std::string& group) const {
  const auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.epoch;
}

std::string ShareGroupCoordinator::metadata_hash(const Group& g) const {
  // Kafka hashes the subscribed topics' metadata; a change of partition count changes it.
  std::set<std::string> topics;
  for (const auto& [id, m] : g.members) topics.insert(m.subscribed.begin(), m.subscribed.end());
  std::string hash;
  for (const auto& t : topics) {
    const auto it = cluster_.partitions_per_topic.find(t);
    hash += fmt::format("{}:{};", t, it == cluster_.partitions_per_topic.end() ? -1 : it->second);
  }
  return hash;
}

bool ShareGroupCoordinator::initialized_pending(const Group& g) const {
  // initializedAssignmentPending: initialized partitions of subscribed topics not in any target.
  std::map<std::string, std::set<std::int32_t>> targeted;
  std::set<std::string> subscribed;
  for (const auto& [id, m] : g.members) {
    subscribed.insert(m.subscribed.begin(), m.subscribed.end());
    for (const auto& [topic, partitions] : m.target)
      targeted[topic].insert(partitions.begin(), partitions.end());
  }
  for (const auto& [topic, partitions] : g.initialized) {
    if (subscribed.count(topic) == 0) continue;
    for (const std::int32_t p : partitions)
      if (targeted[topic].count(p) == 0) return true;
  }
  return false;
}

records::ShareGroupStatePartitionMetadata ShareGroupCoordinator::state_partition_metadata(
    const Group& g) const {
  return {.group = g.group_id,
          .initializing_topics = partition_strings(g.initializing),
          .initialized_topics = partition_strings(g.initialized),
          .deleting_topics = {}};
}

records::ShareGroupCurrentMemberAssignment ShareGroupCoordinator::current_assignment_record(
    const Group& g, const Member& m) const {
  return {.group = g.group_id,
          .member_id = m.member_id,
          .consumer = m.consumer,
          .member_epoch = m.epoch,
          .previous_member_epoch = m.previous_epoch,
          .state = 0,
          .assigned = m.assigned};
}

void ShareGroupCoordinator::update_target(Group& g, Records& records) {
  if (g.assignment_epoch >= g.epoch) return;
  // The same throttle as consumer groups: at most one computation per assignment interval.
  const sim::SimTime interval = sim::ms(group_config(g.group_id).assignment_interval_ms);
  if (g.assignment_computed && kernel_.now() < g.assignment_time + interval) return;
  assignors::ServerAssignorInput in;
  for (const auto& [topic, n] : cluster_.partitions_per_topic)
    in.topics.push_back({topic, topic, n});
  // GroupSpec.memberIds(): a HashMap of member ids, filled in join order.
  std::vector<const Member*> joined;
  for (const auto& [id, m] : g.members) joined.push_back(&m);
  std::sort(joined.begin(), joined.end(),
            [](const Member* a, const Member* b) { return a->joined < b->joined; });
  std::vector<std::int32_t> hashes;
  for (const Member* m : joined)
    hashes.push_back(assignors::server_java::string_hash(m->member_id));
  for (const std::size_t i : assignors::server_java::iteration_order(
           hashes, assignors::server_java::growth_capacity(joined.size()))) {
    const Member& m = *joined[i];
    in.members.push_back(
        {.member_id = m.member_id, .subscribed_topics = m.subscribed, .target = m.target});
  }
  in.subscription_type = assignors::subscription_type_by_names(in.members);
  std::map<std::string, std::vector<std::int32_t>> assignable;
  for (const auto& [topic, partitions] : g.initialized)
    assignable[topic].assign(partitions.begin(), partitions.end());
  assignors::ServerAssignment result;
  try {
    result = assignors::assign_share_simple(in, assignable);
  } catch (const std::runtime_error& e) {
    // Kafka 4.4.0's SimpleAssignor can throw (NoSuchElementException, see share_assignor.hpp);
    // the coordinator then fails that heartbeat's write with UNKNOWN_SERVER_ERROR and the
    // target stays as it was. Here the heartbeat goes on without a new target; a later one
    // tries again.
    tracer_.publish(trace::ShareAssignorError{.group = g.group_id, .error = e.what()});
    return;
  }
  for (auto& [id, m] : g.members) {
    const auto it = result.find(id);
    assignors::MemberAssignment next =
        it == result.end() ? assignors::MemberAssignment{} : it->second;
    for (auto t = next.begin(); t != next.end();)
      t = t->second.empty() ? next.erase(t) : std::next(t);
    if (next == m.target && m.target_written)
      continue;  // a new member's empty target is written too
    m.target = std::move(next);
    m.target_written = true;
    records.push_back(records::ShareGroupTargetAssignmentMember{.group = g.group_id,
                                                                .member_id = id,
                                                                .consumer = m.consumer,
                                                                .partitions = flatten(m.target)});
  }
  g.assignment_epoch = g.epoch;
  g.assignment_time = kernel_.now();
  g.assignment_computed = true;
  records.push_back(records::ShareGroupTargetAssignmentMetadata{
      .group = g.group_id,
      .assignment_epoch = g.assignment_epoch,
      .assignment_timestamp = sim::to_ms(kernel_.now())});
}

void ShareGroupCoordinator::reconcile(Group& g, Member& m, Records& records) {
  // ShareGroupAssignmentBuilder: straight to the target epoch with the target's partitions of
  // subscribed topics; no revocation, no waiting for other members.
  TopicPartitions next;
  for (const auto& tp : flatten(m.target))
    if (std::binary_search(m.subscribed.begin(), m.subscribed.end(), tp.topic)) next.push_back(tp);
  std::sort(next.begin(), next.end());
  const bool epoch_moves = m.epoch != g.assignment_epoch;
  if (!epoch_moves && next == m.assigned) return;
  if (epoch_moves) {
    m.previous_epoch = m.epoch;
    m.epoch = g.assignment_epoch;
  }
  m.assigned = std::move(next);
  records.push_back(current_assignment_record(g, m));
}

void ShareGroupCoordinator::remove_member(Group& g, const std::string& member_id, Records& records,
                                          const std::string& reason) {
  const auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  const std::string consumer = it->second.consumer;
  for (const auto type : {records::RecordType::ShareGroupCurrentMemberAssignment,
                          records::RecordType::ShareGroupTargetAssignmentMember,
                          records::RecordType::ShareGroupMemberMetadata}) {
    records.push_back(records::Tombstone{
        .type = type, .group = g.group_id, .member_id = member_id, .consumer = consumer});
  }
  g.members.erase(it);
  ++g.epoch;
  records.push_back(records::ShareGroupMetadata{
      .group = g.group_id, .epoch = g.epoch, .metadata_hash = numeric_hash(metadata_hash(g))});
  g.metadata_hash = metadata_hash(g);
  if (g.members.empty()) {
    g.assignment_epoch = g.epoch;
    g.assignment_time = sim::SimTime{0};
    g.assignment_computed = false;
    records.push_back(records::ShareGroupTargetAssignmentMetadata{
        .group = g.group_id, .assignment_epoch = g.assignment_epoch, .assignment_timestamp = 0});
  }
  tracer_.publish(trace::MemberLeave{
      .group = g.group_id, .consumer = consumer, .member_id = member_id, .reason = reason});
  std::vector<std::string> members;
  for (const auto& [id, m] : g.members) members.push_back(m.consumer);
  trace::GroupEpoch f{.group = g.group_id, .epoch = g.epoch, .members = members, .reason = reason};
  if (g.members.empty()) f.assignment_epoch = g.assignment_epoch;
  tracer_.publish(f);
}

void ShareGroupCoordinator::start_initialization(Group& g, Records& records,
                                                 std::vector<std::function<void()>>& after) {
  // maybeCreateInitializeShareGroupStateRequest: partitions of subscribed topics neither
  // initialized nor initializing recently (group.share.initialize.retry.interval.ms, 30000).
  std::set<std::string> subscribed;
  for (const auto& [id, m] : g.members) subscribed.insert(m.subscribed.begin(), m.subscribed.end());
  TopicPartitions fresh_topics;
  TopicPartitions new_partitions;
  for (const auto& topic : subscribed) {
    const auto n = cluster_.partitions_per_topic.find(topic);
    if (n == cluster_.partitions_per_topic.end()) continue;
    const auto since = g.initializing_since.find(topic);
    const bool recent =
        since != g.initializing_since.end() && kernel_.now() < since->second + sim::ms(30000);
    for (std::int32_t p = 0; p < n->second; ++p) {
      if (g.initialized[topic].count(p) > 0) continue;
      if (g.initializing[topic].count(p) > 0 && recent) continue;
      g.initializing[topic].insert(p);
      (g.known_topics.count(topic) > 0 ? new_partitions : fresh_topics).push_back({topic, p});
    }
    if (!g.initializing[topic].empty() && !recent) g.initializing_since[topic] = kernel_.now();
  }
  for (auto it = g.initialized.begin(); it != g.initialized.end();)
    it = it->second.empty() ? g.initialized.erase(it) : std::next(it);
  for (auto it = g.initializing.begin(); it != g.initializing.end();)
    it = it->second.empty() ? g.initializing.erase(it) : std::next(it);
  if (fresh_topics.empty() && new_partitions.empty()) return;
  records.push_back(state_partition_metadata(g));
  for (const auto& tp : fresh_topics) g.known_topics.insert(tp.topic);
  const std::string group = g.group_id;
  const std::int32_t state_epoch = g.epoch;
  // A plain pair, not a structured binding: clang 14 (the fuzz build) cannot capture bindings.
  for (const auto& batch : {std::make_pair(fresh_topics, std::int64_t{-1}),
                            std::make_pair(new_partitions, std::int64_t{0})}) {
    const TopicPartitions& partitions = batch.first;
    const std::int64_t start = batch.second;
    if (partitions.empty()) continue;
    after.push_back([this, group, partitions, state_epoch, start] {
      initializer_(group, partitions, state_epoch, start,
                   [this, group, partitions] { on_initialized(group, partitions); });
    });
  }
}

void ShareGroupCoordinator::on_initialized(const std::string& group,
                                           const TopicPartitions& partitions) {
  const auto it = groups_.find(group);
  if (it == groups_.end()) return;
  Group& g = it->second;
  for (const auto& tp : partitions) {
    g.initializing[tp.topic].erase(tp.partition);
    g.initialized[tp.topic].insert(tp.partition);
  }
  for (auto t = g.initializing.begin(); t != g.initializing.end();)
    t = t->second.empty() ? g.initializing.erase(t) : std::next(t);
  // Nothing recomputes the assignment here: the next heartbeat sees initialized partitions
  // missing from the target.
  write(g, {state_partition_metadata(g)}, nullptr);
}

void ShareGroupCoordinator::on_session_expired(const std::string& group,
                                               const std::string& member_id,
                                               std::uint64_t generation) {
  const auto it = groups_.find(group);
  if (it == groups_.end()) return;
  const auto m = it->second.members.find(member_id);
  if (m == it->second.members.end() || m->second.session_generation != generation) return;
  Group& g = it->second;
  Records records;
  remove_member(g, member_id, records, "session timeout");
  write(g, std::move(records), nullptr);
  trace_state(g, "session timeout");
}

void ShareGroupCoordinator::write(Group& /*g*/, Records records, std::function<void()> then) {
  if (!records.empty()) {
    log_.append(std::move(records), std::move(then));
  } else if (then) {
    log_.after_pending_writes(std::move(then));
  }
}

void ShareGroupCoordinator::trace_state(Group& g, const std::string& reason) {
  const std::string state = g.members.empty() ? "empty" : "stable";
  if (state == g.traced_state) return;
  g.traced_state = state;
  trace::GroupStateChange f{.group = g.group_id, .state = state, .epoch = g.epoch};
  if (!reason.empty()) f.reason = reason;
  tracer_.publish(f);
}

void ShareGroupCoordinator::on_heartbeat(const ShareGroupHeartbeatRequest& r,
                                         const std::string& consumer, Reply reply) {
  ShareGroupHeartbeatResponse response;
  response.member_id = r.member_id;
  const auto refuse = [&](ErrorCode error) {
    response.error = error;
    log_.after_pending_writes([reply, response] { reply(response); });
  };
  // GroupCoordinatorService validation.
  if (r.member_id.empty() || r.group_id.empty() || r.member_epoch < -1 ||
      (r.member_epoch == 0 && (!r.subscribed_topic_names || r.subscribed_topic_names->empty()))) {
    refuse(ErrorCode::INVALID_REQUEST);
    return;
  }
  auto git = groups_.find(r.group_id);
  if (git == groups_.end()) {
    if (r.member_epoch != 0) {
      refuse(r.member_epoch == -1 ? ErrorCode::NONE : ErrorCode::UNKNOWN_MEMBER_ID);
      return;
    }
    git = groups_.emplace(r.group_id, Group{}).first;
    git->second.group_id = r.group_id;
  }
  Group& g = git->second;
  Records records;
  std::vector<std::function<void()>> after;
  const auto mit = g.members.find(r.member_id);

  if (r.member_epoch == -1) {  // leave
    if (mit != g.members.end()) remove_member(g, r.member_id, records, "leave");
    response.member_epoch = -1;
    write(g, std::move(records), [reply, response] { reply(response); });
    trace_state(g, "leave");
    return;
  }
  if (r.member_epoch == 0) {
    if (mit == g.members.end() &&
        static_cast<std::int32_t>(g.members.size()) >= config_.group_share_max_size) {
      refuse(ErrorCode::GROUP_MAX_SIZE_REACHED);
      return;
    }
  } else if (mit == g.members.end()) {
    refuse(ErrorCode::UNKNOWN_MEMBER_ID);
    return;
  } else if (r.member_epoch > mit->second.epoch ||
             (r.member_epoch < mit->second.epoch && r.member_epoch != mit->second.previous_epoch)) {
    refuse(ErrorCode::FENCED_MEMBER_EPOCH);
    return;
  }

  bool joining = mit == g.members.end();
  Member& m = g.members[r.member_id];
  if (joining) {
    m.member_id = r.member_id;
    m.consumer = consumer;
    m.joined = g.next_join++;
  }
  bool bump = false;
  bool changed = joining;
  if (r.subscribed_topic_names) {
    std::vector<std::string> topics = *r.subscribed_topic_names;
    std::sort(topics.begin(), topics.end());
    topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
    if (topics != m.subscribed) {
      m.subscribed = std::move(topics);
      bump = changed = true;
    }
  }
  if (r.rack_id && r.rack_id != m.rack) {
    m.rack = r.rack_id;
    changed = true;
  }
  if (!r.client_id.empty() && r.client_id != m.client_id) {
    m.client_id = r.client_id;
    changed = true;
  }
  if (changed) {
    records.push_back(records::ShareGroupMemberMetadata{.group = g.group_id,
                                                        .member_id = m.member_id,
                                                        .consumer = m.consumer,
                                                        .client_id = m.client_id,
                                                        .rack_id = m.rack,
                                                        .subscribed_topic_names = m.subscribed});
  }
  std::string reason = joining ? "join" : bump ? "subscription change" : "";
  if (g.assignment_epoch >= g.epoch && initialized_pending(g)) {
    if (!bump) reason = "partitions initialized";
    bump = true;
  }
  const std::string hash = metadata_hash(g);
  if (hash != g.metadata_hash) {
    g.metadata_hash = hash;
    if (!bump) reason = "metadata change";
    bump = true;
  }
  const std::int32_t epoch_before = g.epoch;
  if (bump) {
    ++g.epoch;
    records.push_back(records::ShareGroupMetadata{
        .group = g.group_id, .epoch = g.epoch, .metadata_hash = numeric_hash(g.metadata_hash)});
  }
  const std::int32_t assignment_before = g.assignment_epoch;
  update_target(g, records);
  const TopicPartitions assigned_before = m.assigned;
  const std::int32_t member_epoch_before = m.epoch;
  reconcile(g, m, records);
  // The session timer restarts with every heartbeat; a stale expiry finds a newer generation.
  kernel_.schedule_closure_after(
      sim::ms(group_config(g.group_id).session_timeout_ms),
      [this, group = g.group_id, id = m.member_id, gen = m.session_generation = ++next_session_] {
        on_session_expired(group, id, gen);
      });

  response.member_epoch = m.epoch;
  response.heartbeat_interval_ms =
      static_cast<std::int32_t>(group_config(g.group_id).heartbeat_interval_ms);
  if (r.member_epoch == 0 || r.subscribed_topic_names || m.assigned != assigned_before) {
    response.assignment = m.assigned;
  }
  start_initialization(g, records, after);

  if (g.epoch != epoch_before || g.assignment_epoch != assignment_before) {
    std::vector<std::string> members;
    for (const auto& [id, mm] : g.members) members.push_back(mm.consumer);
    trace::GroupEpoch f{.group = g.group_id, .epoch = g.epoch, .members = members};
    if (g.assignment_epoch != assignment_before) f.assignment_epoch = g.assignment_epoch;
    if (g.epoch != epoch_before && !reason.empty()) f.reason = reason;
    tracer_.publish(f);
  }
  if (m.epoch != member_epoch_before || joining) {
    tracer_.publish(trace::MemberEpoch{.group = g.group_id,
                                       .consumer = m.consumer,
                                       .member_id = m.member_id,
                                       .epoch = m.epoch,
                                       .state = "STABLE"});
  }
  // The response and the initialization request go out once the heartbeat's write committed.
  write(g, std::move(records), [reply, response, after = std::move(after)] {
    reply(response);
    for (const auto& f : after) f();
  });
  trace_state(g, joining ? "join" : "");
}

}  // namespace rsim
