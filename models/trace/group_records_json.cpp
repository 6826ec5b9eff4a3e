#include "models/trace/group_records_json.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace rsim::trace {
namespace {

using ojson = nlohmann::ordered_json;
using namespace rsim::records;

ojson names(const std::vector<std::string>& v) {
  ojson out = ojson::array();
  for (const auto& s : v) out.push_back(s);
  return out;
}
ojson epochs(const std::vector<std::int32_t>& v) {
  ojson out = ojson::array();
  for (const auto e : v) out.push_back(e);
  return out;
}
ojson or_null(const std::optional<std::string>& s) {
  return s ? ojson(*s) : ojson(nullptr);
}

ojson head(RecordType type, bool tombstone, const std::string& group) {
  return ojson{{"record", record_name(type)}, {"tombstone", tombstone}, {"group", group}};
}

struct ToJson {
  ojson operator()(const OffsetCommit& r) const {
    ojson j = head(r.kType, false, r.group);
    j["topic"] = r.topic;
    j["partition_index"] = r.partition_index;
    j["committed_offset"] = r.committed_offset;
    j["leader_epoch"] = r.leader_epoch;
    j["commit_timestamp"] = r.commit_timestamp;
    return j;
  }
  ojson operator()(const GroupMetadata& r) const {
    ojson members = ojson::array();
    for (const auto& m : r.members) {
      ojson mj{{"member_id", m.member_id}, {"consumer", m.consumer}};
      if (m.group_instance_id) mj["group_instance_id"] = *m.group_instance_id;
      mj["client_id"] = m.client_id;
      mj["client_host"] = m.client_host;
      mj["rebalance_timeout"] = m.rebalance_timeout;
      mj["session_timeout"] = m.session_timeout;
      mj["subscription"] = names(m.subscription);
      if (m.detail) {
        mj["owned_partitions"] = partition_list(m.detail->owned_partitions);
        mj["generation_id"] = m.detail->generation_id;
        mj["rack_id"] = or_null(m.detail->rack_id);
      }
      mj["assignment"] = partition_list(m.assignment);
      members.push_back(std::move(mj));
    }
    ojson j = head(r.kType, false, r.group);
    j["protocol_type"] = r.protocol_type;
    j["generation"] = r.generation;
    j["protocol"] = or_null(r.protocol);
    j["leader"] = or_null(r.leader);
    j["current_state_timestamp"] = r.current_state_timestamp;
    j["members"] = std::move(members);
    return j;
  }
  ojson operator()(const ConsumerGroupMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["epoch"] = r.epoch;
    j["metadata_hash"] = r.metadata_hash;
    return j;
  }
  ojson operator()(const ConsumerGroupMemberMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    if (r.instance_id) j["instance_id"] = *r.instance_id;
    if (r.rack_id) j["rack_id"] = *r.rack_id;
    j["client_id"] = r.client_id;
    j["subscribed_topic_names"] = names(r.subscribed_topic_names);
    j["rebalance_timeout_ms"] = r.rebalance_timeout_ms;
    if (r.server_assignor) j["server_assignor"] = *r.server_assignor;
    if (r.classic_member_metadata) {
      ojson protocols = ojson::array();
      for (const auto& p : r.classic_member_metadata->supported_protocols)
        protocols.push_back({{"name", p.name},
                             {"topics", names(p.topics)},
                             {"owned_partitions", partition_list(p.owned_partitions)},
                             {"generation_id", p.generation_id},
                             {"rack_id", or_null(p.rack_id)}});
      j["classic_member_metadata"] = {
          {"session_timeout_ms", r.classic_member_metadata->session_timeout_ms},
          {"supported_protocols", std::move(protocols)}};
    }
    return j;
  }
  ojson operator()(const ConsumerGroupTargetAssignmentMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["assignment_epoch"] = r.assignment_epoch;
    j["assignment_timestamp"] = r.assignment_timestamp;
    return j;
  }
  ojson operator()(const ConsumerGroupTargetAssignmentMember& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    j["partitions"] = partition_list(r.partitions);
    return j;
  }
  ojson operator()(const ConsumerGroupCurrentMemberAssignment& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    j["member_epoch"] = r.member_epoch;
    j["previous_member_epoch"] = r.previous_member_epoch;
    j["state"] = r.state;
    j["assigned"] = partition_list(r.assigned);
    j["assigned_epochs"] = epochs(r.assigned_epochs);
    j["pending_revocation"] = partition_list(r.pending_revocation);
    j["pending_revocation_epochs"] = epochs(r.pending_revocation_epochs);
    return j;
  }
  ojson operator()(const ShareGroupMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["epoch"] = r.epoch;
    j["metadata_hash"] = r.metadata_hash;
    return j;
  }
  ojson operator()(const ShareGroupMemberMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    j["client_id"] = r.client_id;
    if (r.rack_id) j["rack_id"] = *r.rack_id;
    j["subscribed_topic_names"] = names(r.subscribed_topic_names);
    return j;
  }
  ojson operator()(const ShareGroupTargetAssignmentMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["assignment_epoch"] = r.assignment_epoch;
    j["assignment_timestamp"] = r.assignment_timestamp;
    return j;
  }
  ojson operator()(const ShareGroupTargetAssignmentMember& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    j["partitions"] = partition_list(r.partitions);
    return j;
  }
  ojson operator()(const ShareGroupCurrentMemberAssignment& r) const {
    ojson j = head(r.kType, false, r.group);
    j["member_id"] = r.member_id;
    j["consumer"] = r.consumer;
    j["member_epoch"] = r.member_epoch;
    j["previous_member_epoch"] = r.previous_member_epoch;
    j["state"] = r.state;
    j["assigned"] = partition_list(r.assigned);
    return j;
  }
  ojson operator()(const ShareGroupStatePartitionMetadata& r) const {
    ojson j = head(r.kType, false, r.group);
    j["initializing_topics"] = partition_list(r.initializing_topics);
    j["initialized_topics"] = partition_list(r.initialized_topics);
    j["deleting_topics"] = partition_list(r.deleting_topics);
    return j;
  }
  ojson operator()(const Tombstone& r) const {
    ojson j = head(r.type, true, r.group);
    if (r.member_id) j["member_id"] = *r.member_id;
    if (r.consumer) j["consumer"] = *r.consumer;
    if (r.topic) j["topic"] = *r.topic;
    if (r.partition_index) j["partition_index"] = *r.partition_index;
    return j;
  }
};

// --- reading -----------------------------------------------------------------------------------

TopicPartition partition_named(const std::string& s) {
  const auto dash = s.rfind('-');
  if (dash == std::string::npos || dash + 1 == s.size())
    throw std::runtime_error("\"" + s + "\" is not a partition (TOPIC-N)");
  std::size_t used = 0;
  const int p = std::stoi(s.substr(dash + 1), &used);
  if (used != s.size() - dash - 1)
    throw std::runtime_error("\"" + s + "\" is not a partition (TOPIC-N)");
  return {s.substr(0, dash), static_cast<std::int32_t>(p)};
}

template <class J>
struct Reader {
  const J& j;
  std::string str(const char* k) const { return j.at(k).template get<std::string>(); }
  std::optional<std::string> opt(const char* k) const {
    const auto it = j.find(k);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->template get<std::string>();
  }
  template <class T>
  T num(const char* k) const {
    return j.at(k).template get<T>();
  }
  template <class T>
  T num_or(const char* k, T fallback) const {
    const auto it = j.find(k);
    return it == j.end() ? fallback : it->template get<T>();
  }
  std::vector<std::string> strings(const char* k) const {
    return j.at(k).template get<std::vector<std::string>>();
  }
  static TopicPartitions partitions_of(const J& list) {
    TopicPartitions out;
    for (const auto& p : list) out.push_back(partition_named(p.template get<std::string>()));
    return out;
  }
  TopicPartitions partitions(const char* k) const { return partitions_of(j.at(k)); }
  std::vector<std::int32_t> epochs_or_none(const char* k) const {
    const auto it = j.find(k);
    return it == j.end() ? std::vector<std::int32_t>{}
                         : it->template get<std::vector<std::int32_t>>();
  }
};

/// A classic group's GroupMetadata value, its members included.
template <class J>
GroupMetadata read_group_metadata(const J& j, const Reader<J>& r, const std::string& group) {
  GroupMetadata g{
      .group = group,
      .protocol_type = r.str("protocol_type"),
      .generation = r.template num<std::int32_t>("generation"),
      .protocol = r.opt("protocol"),
      .leader = r.opt("leader"),
      .current_state_timestamp = r.template num_or<std::int64_t>("current_state_timestamp", 0)};
  for (const auto& mj : j.at("members")) {
    const Reader<J> m{mj};
    GroupMetadataMember member{
        .member_id = m.str("member_id"),
        .consumer = m.str("consumer"),
        .group_instance_id = m.opt("group_instance_id"),
        .client_id = m.str("client_id"),
        .client_host = m.opt("client_host").value_or(""),
        .rebalance_timeout = m.template num<std::int32_t>("rebalance_timeout"),
        .session_timeout = m.template num<std::int32_t>("session_timeout"),
        .subscription = m.strings("subscription"),
        .detail = std::nullopt,
        .assignment = m.partitions("assignment")};
    if (mj.contains("owned_partitions"))
      member.detail =
          ClassicSubscriptionDetail{.owned_partitions = m.partitions("owned_partitions"),
                                    .generation_id = m.template num<std::int32_t>("generation_id"),
                                    .rack_id = m.opt("rack_id")};
    g.members.push_back(std::move(member));
  }
  return g;
}

/// A ConsumerGroupMemberMetadata value, with a classic member's metadata when it has one.
template <class J>
ConsumerGroupMemberMetadata read_member_metadata(const J& j, const Reader<J>& r,
                                                 const std::string& group) {
  ConsumerGroupMemberMetadata m{
      .group = group,
      .member_id = r.str("member_id"),
      .consumer = r.str("consumer"),
      .instance_id = r.opt("instance_id"),
      .rack_id = r.opt("rack_id"),
      .client_id = r.str("client_id"),
      .subscribed_topic_names = r.strings("subscribed_topic_names"),
      .rebalance_timeout_ms = r.template num<std::int32_t>("rebalance_timeout_ms"),
      .server_assignor = r.opt("server_assignor"),
      .classic_member_metadata = std::nullopt};
  if (const auto c = j.find("classic_member_metadata"); c != j.end()) {
    ClassicMemberMetadataValue cm{
        .session_timeout_ms = c->at("session_timeout_ms").template get<std::int32_t>(),
        .supported_protocols = {}};
    for (const auto& pj : c->at("supported_protocols")) {
      const Reader<J> p{pj};
      cm.supported_protocols.push_back(
          ClassicProtocol{.name = p.str("name"),
                          .topics = p.strings("topics"),
                          .owned_partitions = p.partitions("owned_partitions"),
                          .generation_id = p.template num<std::int32_t>("generation_id"),
                          .rack_id = p.opt("rack_id")});
    }
    m.classic_member_metadata = std::move(cm);
  }
  return m;
}

template <class J>
GroupRecord read(const J& j) {
  if (!j.is_object()) throw std::runtime_error("a record is a JSON object");
  const Reader<J> r{j};
  const std::string name = r.str("record");
  const auto type = record_type_named(name);
  if (!type) throw std::runtime_error("unknown record type \"" + name + "\"");
  const std::string group = r.str("group");
  if (r.template num_or<bool>("tombstone", false))
    return Tombstone{.type = *type,
                     .group = group,
                     .member_id = r.opt("member_id"),
                     .consumer = r.opt("consumer"),
                     .topic = r.opt("topic"),
                     .partition_index = j.contains("partition_index")
                                            ? std::optional<std::int32_t>(
                                                  r.template num<std::int32_t>("partition_index"))
                                            : std::nullopt};
  switch (*type) {
    case RecordType::OffsetCommit:
      return OffsetCommit{
          .group = group,
          .topic = r.str("topic"),
          .partition_index = r.template num<std::int32_t>("partition_index"),
          .committed_offset = r.template num<std::int64_t>("committed_offset"),
          .leader_epoch = r.template num_or<std::int32_t>("leader_epoch", -1),
          .commit_timestamp = r.template num_or<std::int64_t>("commit_timestamp", 0)};
    case RecordType::GroupMetadata:
      return read_group_metadata(j, r, group);
    case RecordType::ConsumerGroupMetadata:
      return ConsumerGroupMetadata{
          .group = group,
          .epoch = r.template num<std::int32_t>("epoch"),
          .metadata_hash = r.template num_or<std::int64_t>("metadata_hash", 0)};
    case RecordType::ConsumerGroupMemberMetadata:
      return read_member_metadata(j, r, group);
    case RecordType::ConsumerGroupTargetAssignmentMetadata:
      return ConsumerGroupTargetAssignmentMetadata{
          .group = group,
          .assignment_epoch = r.template num<std::int32_t>("assignment_epoch"),
          .assignment_timestamp = r.template num<std::int64_t>("assignment_timestamp")};
    case RecordType::ConsumerGroupTargetAssignmentMember:
      return ConsumerGroupTargetAssignmentMember{.group = group,
                                                 .member_id = r.str("member_id"),
                                                 .consumer = r.opt("consumer").value_or(""),
                                                 .partitions = r.partitions("partitions")};
    case RecordType::ConsumerGroupCurrentMemberAssignment:
      return ConsumerGroupCurrentMemberAssignment{
          .group = group,
          .member_id = r.str("member_id"),
          .consumer = r.opt("consumer").value_or(""),
          .member_epoch = r.template num<std::int32_t>("member_epoch"),
          .previous_member_epoch = r.template num<std::int32_t>("previous_member_epoch"),
          .state = r.template num<std::int32_t>("state"),
          .assigned = r.partitions("assigned"),
          .assigned_epochs = r.epochs_or_none("assigned_epochs"),
          .pending_revocation = r.partitions("pending_revocation"),
          .pending_revocation_epochs = r.epochs_or_none("pending_revocation_epochs")};
    case RecordType::ShareGroupMetadata:
      return ShareGroupMetadata{
          .group = group,
          .epoch = r.template num<std::int32_t>("epoch"),
          .metadata_hash = r.template num_or<std::int64_t>("metadata_hash", 0)};
    case RecordType::ShareGroupMemberMetadata:
      return ShareGroupMemberMetadata{
          .group = group,
          .member_id = r.str("member_id"),
          .consumer = r.opt("consumer").value_or(""),
          .client_id = r.str("client_id"),
          .rack_id = r.opt("rack_id"),
          .subscribed_topic_names = r.strings("subscribed_topic_names")};
    case RecordType::ShareGroupTargetAssignmentMetadata:
      return ShareGroupTargetAssignmentMetadata{
          .group = group,
          .assignment_epoch = r.template num<std::int32_t>("assignment_epoch"),
          .assignment_timestamp = r.template num<std::int64_t>("assignment_timestamp")};
    case RecordType::ShareGroupTargetAssignmentMember:
      return ShareGroupTargetAssignmentMember{.group = group,
                                              .member_id = r.str("member_id"),
                                              .consumer = r.opt("consumer").value_or(""),
                                              .partitions = r.partitions("partitions")};
    case RecordType::ShareGroupCurrentMemberAssignment:
      return ShareGroupCurrentMemberAssignment{
          .group = group,
          .member_id = r.str("member_id"),
          .consumer = r.opt("consumer").value_or(""),
          .member_epoch = r.template num<std::int32_t>("member_epoch"),
          .previous_member_epoch = r.template num<std::int32_t>("previous_member_epoch"),
          .state = r.template num<std::int32_t>("state"),
          .assigned = r.partitions("assigned")};
    case RecordType::ShareGroupStatePartitionMetadata:
      return ShareGroupStatePartitionMetadata{
          .group = group,
          .initializing_topics = r.partitions("initializing_topics"),
          .initialized_topics = r.partitions("initialized_topics"),
          .deleting_topics = r.partitions("deleting_topics")};
  }
  throw std::runtime_error("unknown record type \"" + name + "\"");
}

}  // namespace

ojson record_json(const GroupRecord& record) {
  return std::visit(ToJson{}, record);
}
GroupRecord record_from_json(const nlohmann::json& j) {
  return read(j);
}
GroupRecord record_from_json(const nlohmann::ordered_json& j) {
  return read(j);
}

}  // namespace rsim::trace
