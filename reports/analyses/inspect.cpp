#include "reports/analyses/inspect.hpp"

#include <algorithm>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/trace_reader.hpp"
#include "sim/rng.hpp"

namespace rsim::inspect {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
namespace tr = rsim::trace;

constexpr const char* kMissing = "-";  // ConsumerGroupCommand.MISSING_COLUMN_VALUE

std::pair<std::string, std::int32_t> split_partition(const std::string& s) {
  const auto dash = s.rfind('-');
  return {s.substr(0, dash), static_cast<std::int32_t>(std::stol(s.substr(dash + 1)))};
}

// The fields of a __consumer_offsets record (after its partition and offset), as the describe
// and dump-log views read them.
json record_fields(const tr::Record& e) {
  return e.value.object != nullptr ? json(*e.value.object) : json::object();
}

// "orders-0", "orders-2", "other-1" ->
// [{"topic":"orders","partitions":[0,2]},{"topic":"other",...}]
ojson topic_partitions_json(const json& list) {
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& p : list) {
    const auto [topic, partition] = split_partition(p.get<std::string>());
    by_topic[topic].push_back(partition);
  }
  ojson out = ojson::array();
  for (auto& [topic, parts] : by_topic) {
    std::sort(parts.begin(), parts.end());
    out.push_back({{"topic", topic}, {"partitions", parts}});
  }
  return out;
}

std::string base64(const std::vector<std::uint8_t>& bytes, bool url) {
  const char* table = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                          : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    for (int k = 18; k >= 0; k -= 6) out += table[(v >> k) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = bytes[i] << 16;
    if (rest == 2) v |= bytes[i + 1] << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    if (rest == 2) out += table[(v >> 6) & 63];
    if (!url) out += rest == 2 ? "=" : "==";
  }
  return out;
}

// The user data a classic assignor puts in its subscription: CooperativeStickyAssignor encodes
// the member's generation as one int32; range and roundrobin send none. (The eager sticky
// assignor's user data, its previous assignment, is not reproduced: null.)
ojson subscription_user_data(const std::string& protocol, std::int32_t generation) {
  if (protocol != "cooperative-sticky") return nullptr;
  const auto g = static_cast<std::uint32_t>(generation);
  return base64({static_cast<std::uint8_t>(g >> 24), static_cast<std::uint8_t>(g >> 16),
                 static_cast<std::uint8_t>(g >> 8), static_cast<std::uint8_t>(g)},
                false);
}

// CoordinatorRecordType ids of the consumer-group records (the apiKey of their *Key.json).
int consumer_group_record_type(const std::string& name) {
  if (name == "ConsumerGroupMetadata") return 3;
  if (name == "ConsumerGroupPartitionMetadata") return 4;
  if (name == "ConsumerGroupMemberMetadata") return 5;
  if (name == "ConsumerGroupTargetAssignmentMetadata") return 6;
  if (name == "ConsumerGroupTargetAssignmentMember") return 7;
  if (name == "ConsumerGroupCurrentMemberAssignment") return 8;
  // KIP-932 share-group records.
  if (name == "ShareGroupMemberMetadata") return 10;
  if (name == "ShareGroupMetadata") return 11;
  if (name == "ShareGroupTargetAssignmentMetadata") return 12;
  if (name == "ShareGroupTargetAssignmentMember") return 13;
  if (name == "ShareGroupCurrentMemberAssignment") return 14;
  if (name == "ShareGroupStatePartitionMetadata") return 15;
  return -1;
}

// [{"topicId": ..., "partitions": [...]}] (and "assignmentEpochs" when `epochs` is given), one
// entry per topic in name order, from the record's "topic-partition" list.
ojson topic_id_partitions(const json& list, const json* epochs) {
  std::map<std::string, std::vector<std::pair<std::int32_t, std::int64_t>>> by_topic;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto [topic, partition] = split_partition(list[i].get<std::string>());
    const std::int64_t epoch =
        epochs != nullptr && i < epochs->size() ? (*epochs)[i].get<std::int64_t>() : -1;
    by_topic[topic].emplace_back(partition, epoch);
  }
  ojson out = ojson::array();
  for (auto& [topic, parts] : by_topic) {
    ojson partitions = ojson::array(), assignment_epochs = ojson::array();
    for (const auto& [p, e] : parts) {
      partitions.push_back(p);
      assignment_epochs.push_back(e);
    }
    ojson t{{"topicId", simulated_topic_id(topic)}, {"partitions", partitions}};
    if (epochs != nullptr) t["assignmentEpochs"] = assignment_epochs;
    out.push_back(t);
  }
  return out;
}

// The value of a consumer-group record as the generated *ValueJsonConverter writes version 0:
// fields in schema order, camelCase; nullable fields as null; tagged fields only when not their
// default (MetadataHash, AssignmentTimestamp 0; ClassicMemberMetadata null).
ojson consumer_group_value(const std::string& name, const json& r) {
  ojson data = ojson::object();
  const auto opt = [&](const char* key) {
    return r.contains(key) ? ojson(r.at(key)) : ojson(nullptr);
  };
  if (name == "ConsumerGroupMetadata") {
    data["epoch"] = r.at("epoch");
    if (r.value("metadata_hash", std::int64_t{0}) != 0)
      data["metadataHash"] = r.at("metadata_hash");
  } else if (name == "ConsumerGroupMemberMetadata") {
    data["instanceId"] = opt("instance_id");
    data["rackId"] = opt("rack_id");
    data["clientId"] = r.at("client_id");
    data["clientHost"] = r.value("client_host", "/" + r.value("consumer", std::string()));
    data["subscribedTopicNames"] = r.at("subscribed_topic_names");
    data["subscribedTopicRegex"] = nullptr;
    data["rebalanceTimeoutMs"] = r.at("rebalance_timeout_ms");
    data["serverAssignor"] = opt("server_assignor");
    if (const auto c = r.find("classic_member_metadata"); c != r.end()) {
      // The protocols' metadata are ConsumerProtocolSubscription bytes in Kafka; their names here.
      ojson protocols = ojson::array();
      for (const auto& p : c->at("supported_protocols"))
        protocols.push_back({{"name", p.at("name")}});
      data["classicMemberMetadata"] = {{"sessionTimeoutMs", c->at("session_timeout_ms")},
                                       {"supportedProtocols", protocols}};
    }
  } else if (name == "ConsumerGroupTargetAssignmentMetadata") {
    data["assignmentEpoch"] = r.at("assignment_epoch");
    if (r.value("assignment_timestamp", std::int64_t{0}) != 0)
      data["assignmentTimestamp"] = r.at("assignment_timestamp");
  } else if (name == "ConsumerGroupTargetAssignmentMember") {
    data["topicPartitions"] = topic_id_partitions(r.at("partitions"), nullptr);
  } else if (name == "ConsumerGroupCurrentMemberAssignment") {
    data["memberEpoch"] = r.at("member_epoch");
    data["previousMemberEpoch"] = r.at("previous_member_epoch");
    data["state"] = r.at("state");
    data["assignedPartitions"] = topic_id_partitions(
        r.at("assigned"), r.contains("assigned_epochs") ? &r.at("assigned_epochs") : nullptr);
    data["partitionsPendingRevocation"] = topic_id_partitions(
        r.at("pending_revocation"),
        r.contains("pending_revocation_epochs") ? &r.at("pending_revocation_epochs") : nullptr);
  } else if (name == "ShareGroupMemberMetadata") {
    data["rackId"] = opt("rack_id");
    data["clientId"] = r.at("client_id");
    data["clientHost"] = r.value("client_host", "/" + r.value("consumer", std::string()));
    data["subscribedTopicNames"] = r.at("subscribed_topic_names");
  } else if (name == "ShareGroupMetadata") {
    data["epoch"] = r.at("epoch");
    data["metadataHash"] = r.at("metadata_hash");
  } else if (name == "ShareGroupTargetAssignmentMetadata") {
    data["assignmentEpoch"] = r.at("assignment_epoch");
  } else if (name == "ShareGroupTargetAssignmentMember") {
    data["topicPartitions"] = topic_id_partitions(r.at("partitions"), nullptr);
  } else if (name == "ShareGroupCurrentMemberAssignment") {
    data["memberEpoch"] = r.at("member_epoch");
    data["previousMemberEpoch"] = r.at("previous_member_epoch");
    data["state"] = r.at("state");
    data["assignedPartitions"] = topic_id_partitions(r.at("assigned"), nullptr);
  } else if (name == "ShareGroupStatePartitionMetadata") {
    data["initializingTopics"] = topic_id_partitions(r.at("initializing_topics"), nullptr);
    data["initializedTopics"] = topic_id_partitions(r.at("initialized_topics"), nullptr);
    data["deletingTopics"] = topic_id_partitions(r.at("deleting_topics"), nullptr);
  }
  return data;
}

std::string key_json(const json& r) {
  ojson data;
  const std::string name = r.at("record").get<std::string>();
  ojson key;
  if (name == "OffsetCommit") {
    data = {
        {"group", r.at("group")}, {"topic", r.at("topic")}, {"partition", r.at("partition_index")}};
    key = {{"type", "1"}, {"data", data}};
  } else if (name == "GroupMetadata") {
    key = {{"type", "2"}, {"data", {{"group", r.at("group")}}}};
  } else {
    // KIP-848 records: the key's apiKey (CoordinatorRecordType) and its GroupId (and MemberId
    // for member records), as the generated *KeyJsonConverter writes them.
    data = {{"groupId", r.at("group")}};
    if (r.contains("member_id")) data["memberId"] = r.at("member_id");
    key = {{"type", std::to_string(consumer_group_record_type(name))}, {"data", data}};
  }
  return key.dump();
}

std::string group_metadata_payload(const json& r) {
  ojson data;
  data["protocolType"] = r.value("protocol_type", "");
  data["generation"] = r.at("generation");
  const json protocol = r.value("protocol", json(nullptr));
  data["protocol"] = protocol;
  // The record names the leader by the scenario's consumer name; Kafka stores its member id.
  json leader = r.value("leader", json(nullptr));
  for (const auto& m : r.at("members"))
    if (!leader.is_null() && m.value("consumer", "") == leader) leader = m.at("member_id");
  data["leader"] = leader;
  data["currentStateTimestamp"] = r.value("current_state_timestamp", std::int64_t{-1});
  ojson members = ojson::array();
  const std::string protocol_name = protocol.is_string() ? protocol.get<std::string>() : "";
  for (const auto& m : r.at("members")) {
    ojson mj;
    mj["memberId"] = m.at("member_id");
    mj["groupInstanceId"] = m.value("group_instance_id", json(nullptr));
    mj["clientId"] = m.value("client_id", "");
    mj["clientHost"] = m.value("client_host", "");
    mj["rebalanceTimeout"] = m.value("rebalance_timeout", -1);
    mj["sessionTimeout"] = m.value("session_timeout", 0);
    // The consumer protocol's bytes, decoded as the offsets decoder decodes them (version 3).
    if (m.contains("subscription")) {
      const auto generation = m.value("generation_id", -1);
      mj["subscription"] = {
          {"topics", m.at("subscription")},
          {"userData", subscription_user_data(protocol_name, generation)},
          {"ownedPartitions", topic_partitions_json(m.value("owned_partitions", json::array()))},
          {"generationId", generation},
          {"rackId", m.value("rack_id", json(nullptr))}};
    }
    mj["assignment"] = {{"assignedPartitions", topic_partitions_json(m.at("assignment"))},
                        {"userData", nullptr}};
    members.push_back(mj);
  }
  data["members"] = members;
  return ojson{{"version", "3"}, {"data", data}}.dump();
}

std::string offset_commit_payload(const json& r) {
  ojson data;
  data["offset"] = r.at("committed_offset");
  data["leaderEpoch"] = r.value("leader_epoch", -1);
  data["metadata"] = "";
  data["commitTimestamp"] = r.value("commit_timestamp", std::int64_t{-1});
  data["topicId"] = simulated_topic_id(r.at("topic").get<std::string>());
  return ojson{{"version", "4"}, {"data", data}}.dump();
}

std::string payload_json(const json& r) {
  if (r.value("tombstone", false)) return "<DELETE>";
  const std::string name = r.at("record").get<std::string>();
  if (name == "GroupMetadata") return group_metadata_payload(r);
  if (name == "OffsetCommit") return offset_commit_payload(r);
  return ojson{{"version", "0"}, {"data", consumer_group_value(name, r)}}.dump();
}

// Java's String.format("%-Ns", s).
std::string pad(const std::string& s, std::size_t width) {
  std::string out = s;
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

// The cells joined by one space, after `lead` (Java's format strings "%-Ns %-Ms ...").
std::string cells(const char* lead, std::initializer_list<std::string> parts) {
  std::string out = lead;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out += ' ';
    out += p;
    first = false;
  }
  return out;
}

std::string assignment_string(const std::set<std::pair<std::string, std::int32_t>>& tps) {
  // ConsumerGroupCommand.getAssignmentString: "topic:0,1,2;other:3", topics sorted.
  if (tps.empty()) return kMissing;
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& [t, p] : tps) by_topic[t].push_back(p);
  std::string out;
  for (const auto& [t, ps] : by_topic) {
    if (!out.empty()) out += ";";
    out += t + ":";
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (i > 0) out += ",";
      out += std::to_string(ps[i]);
    }
  }
  return out;
}

struct Member {
  std::string member_id;
  std::string consumer;
  std::string client_id;
  std::string host;
  std::string instance_id;
  std::set<std::pair<std::string, std::int32_t>> assignment;
  std::optional<std::int64_t> current_epoch;
  std::set<std::pair<std::string, std::int32_t>> target;
  std::string server_assignor;  // consumer protocol: group.remote.assignor, if sent
};

struct Group {
  bool exists = false;
  bool consumer_protocol = false;
  std::string state = "Dead";
  std::string protocol;  // assignment strategy
  std::optional<std::int64_t> group_epoch;
  std::optional<std::int64_t> target_epoch;
  std::map<std::string, Member> members;  // by member id
  std::map<std::pair<std::string, std::int32_t>, std::pair<std::int64_t, std::int64_t>>
      committed;  // -> offset, epoch
};

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

std::string simulated_topic_id(const std::string& topic) {
  std::uint64_t state = sim::fnv1a("topic-id:" + topic);
  const std::uint64_t hi = sim::splitmix64(state);
  const std::uint64_t lo = sim::splitmix64(state);
  std::vector<std::uint8_t> bytes;
  for (int i = 7; i >= 0; --i) bytes.push_back(static_cast<std::uint8_t>(hi >> (8 * i)));
  for (int i = 7; i >= 0; --i) bytes.push_back(static_cast<std::uint8_t>(lo >> (8 * i)));
  return base64(bytes, true);
}

std::vector<std::string> dump_offsets_partition(const std::vector<std::string>& trace_lines,
                                                std::int32_t partition) {
  std::vector<std::string> out{fmt::format("Dumping __consumer_offsets-{}", partition),
                               "Log starting offset: 0"};
  reports::TraceReader reader(trace_lines);
  while (reader.next()) {
    const auto* rec = std::get_if<tr::Record>(&reader.event());
    if (rec == nullptr || rec->partition != partition) continue;
    const json r = record_fields(*rec);
    out.push_back(fmt::format("| offset: {} CreateTime: {} key: {} payload: {}", rec->offset,
                              reader.t_us() / 1000, key_json(r), payload_json(r)));
  }
  return out;
}

namespace {

/// A coordinator record (GroupMetadata, OffsetCommit, the KIP-848 ConsumerGroup* records) applied
/// to the group it names, as the coordinator replays its log.
void apply_group_record(Group& g, const json& e) {
  const std::string name = e.at("record").get<std::string>();
  const bool tombstone = e.value("tombstone", false);
  if (name == "OffsetCommit") {
    const std::pair<std::string, std::int32_t> tp{e.at("topic").get<std::string>(),
                                                  e.at("partition_index").get<std::int32_t>()};
    if (tombstone)
      g.committed.erase(tp);
    else
      g.committed[tp] = {e.at("committed_offset").get<std::int64_t>(),
                         e.value("leader_epoch", std::int64_t{-1})};
  } else if (name == "GroupMetadata") {
    if (tombstone) return;
    // A classic group again (an online downgrade wrote the consumer group's tombstones).
    g.consumer_protocol = false;
    g.group_epoch.reset();
    g.target_epoch.reset();
    g.protocol =
        e.value("protocol", json(nullptr)).is_string() ? e.at("protocol").get<std::string>() : "";
    g.members.clear();
    for (const auto& m : e.at("members")) {
      Member mm;
      mm.member_id = m.at("member_id").get<std::string>();
      mm.consumer = m.value("consumer", "");
      mm.client_id = m.value("client_id", mm.consumer);
      mm.host = m.value("client_host", "/" + mm.consumer);
      mm.instance_id = m.value("group_instance_id", "");
      for (const auto& p : m.at("assignment"))
        mm.assignment.insert(split_partition(p.get<std::string>()));
      g.members[mm.member_id] = mm;
    }
  } else if (name.rfind("ConsumerGroup", 0) == 0) {
    // KIP-848 records (field names of writing-scenarios.md's `record` row).
    if (name == "ConsumerGroupMetadata" && tombstone) {
      // The consumer group is gone (deleted, or converted to a classic group).
      g.consumer_protocol = false;
      g.members.clear();
      g.group_epoch.reset();
      g.target_epoch.reset();
      return;
    }
    if (!g.consumer_protocol) g.members.clear();  // converted from a classic group
    g.consumer_protocol = true;
    if (g.protocol.empty()) g.protocol = "uniform";
    if (name == "ConsumerGroupMetadata" && !tombstone)
      g.group_epoch = e.value("epoch", std::int64_t{0});
    if (name == "ConsumerGroupTargetAssignmentMetadata" && !tombstone)
      g.target_epoch = e.value("assignment_epoch", std::int64_t{0});
    if (!e.contains("member_id")) return;
    const std::string id = e.at("member_id").get<std::string>();
    if (name == "ConsumerGroupMemberMetadata") {
      if (tombstone) {
        g.members.erase(id);
        return;
      }
      Member& m = g.members[id];
      m.member_id = id;
      m.consumer = e.value("consumer", "");
      m.client_id = e.value("client_id", m.consumer);
      m.host = e.value("client_host", "/" + m.consumer);
      m.instance_id = e.value("instance_id", "");
      m.server_assignor = e.value("server_assignor", "");
    } else if (name == "ConsumerGroupCurrentMemberAssignment" && !tombstone &&
               g.members.count(id)) {
      Member& m = g.members[id];
      m.current_epoch = e.value("member_epoch", std::int64_t{0});
      m.assignment.clear();
      for (const auto& p : e.value("assigned", json::array()))
        m.assignment.insert(split_partition(p.get<std::string>()));
    } else if (name == "ConsumerGroupTargetAssignmentMember" && !tombstone && g.members.count(id)) {
      Member& m = g.members[id];
      m.target.clear();
      for (const auto& p : e.value("partitions", json::array()))
        m.target.insert(split_partition(p.get<std::string>()));
    }
  }
}

/// The groups (and the log-end offsets) as the trace leaves them at `at_us`.
struct GroupsAt {
  std::map<std::string, Group> groups;
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> log_end;
};

// One event of the trace applied to the groups it names.
struct GroupsReplay {
  GroupsAt& at;
  void operator()(const tr::LogEndOffset& e) { log_end(e.partition, e.log_end_offset); }
  void operator()(const tr::Lag& e) { log_end(e.partition, e.log_end_offset); }
  void operator()(const tr::GroupStateChange& e) {
    Group& g = at.groups[std::string(e.group)];
    g.exists = true;
    g.state = capitalized(std::string(e.state));
    if (e.state == "dead" || e.state == "Dead") g.exists = false;
  }
  void operator()(const tr::MemberLeave& e) {
    Group& g = at.groups[std::string(e.group)];
    if (!g.consumer_protocol) g.members.erase(std::string(e.member_id));
  }
  void operator()(const tr::MemberJoin& e) {
    // A classic member the coordinator added: listed at once, as DescribeGroups does, though
    // the GroupMetadata record naming it comes only with its generation's assignment.
    Group& g = at.groups[std::string(e.group)];
    Member& m = g.members[std::string(e.member_id)];
    m.member_id = e.member_id;
    m.consumer = e.consumer;
    m.client_id = e.client_id;
    m.host = "/" + m.consumer;
    m.instance_id = e.group_instance_id.value_or("");
    m.assignment.clear();
  }
  void operator()(const tr::MemberReplaced& e) {
    Group& g = at.groups[std::string(e.group)];
    auto node = g.members.extract(std::string(e.old_member_id));
    if (!node.empty()) {
      node.key() = e.member_id;
      node.mapped().member_id = node.key();
      g.members.insert(std::move(node));
    }
  }
  void operator()(const tr::Record& e) {
    const json r = record_fields(e);
    apply_group_record(at.groups[r.at("group").get<std::string>()], r);
  }
  template <class Other>
  void operator()(const Other&) {}  // nothing describe shows

  void log_end(const TopicPartition* tp, std::int64_t offset) {
    if (tp != nullptr) at.log_end[{tp->topic, tp->partition}] = offset;
  }
};

GroupsAt replay_groups(const std::vector<std::string>& trace_lines, std::int64_t at_us) {
  GroupsAt at;
  reports::TraceReader reader(trace_lines);
  while (reader.next()) {
    if (reader.t_us() > at_us) break;
    std::visit(GroupsReplay{at}, reader.event());
  }
  return at;
}

/// shouldPrintMemberState's notes on stderr; whether there are rows to print.
bool note_state(DescribeOutput& result, const std::string& group_id, const Group& g,
                std::size_t rows) {
  if (g.state == "Empty")
    result.err += fmt::format("\nConsumer group '{}' has no active members.\n", group_id);
  else if (g.state != "Stable")
    result.err += fmt::format("\nWarning: Consumer group '{}' is rebalancing.\n", group_id);
  return rows > 0;
}

/// --state: one row per group (--verbose adds the epochs).
void describe_state(DescribeOutput& result, const std::string& group_id, const Group& g,
                    const std::vector<const Member*>& members, const DescribeOptions& options) {
  if (!note_state(result, group_id, g, 1)) return;
  const std::int32_t broker =
      options.coordinator_of.count(group_id) ? options.coordinator_of.at(group_id) : 0;
  const std::string coordinator = fmt::format("broker-{}:9092  ({})", broker, broker);
  const std::size_t cw = std::max<std::size_t>(25, coordinator.size());
  const std::size_t gw = std::max<std::size_t>(15, group_id.size());
  // An Empty classic group has no protocol; a consumer group always names its assignor.
  const std::string strategy =
      g.protocol.empty() || (g.state == "Empty" && !g.consumer_protocol) ? kMissing : g.protocol;
  const std::string n = std::to_string(members.size());
  if (options.verbose) {
    const auto row = [&](const std::string& a, const std::string& b, const std::string& c,
                         const std::string& d, const std::string& e, const std::string& f,
                         const std::string& h) {
      return cells("\n",
                   {pad(a, gw), pad(b, cw), pad(c, 20), pad(d, 20), pad(e, 15), pad(f, 25), h});
    };
    result.out += row("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                      "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS");
    result.out += row(group_id, coordinator, strategy, g.state,
                      g.group_epoch ? std::to_string(*g.group_epoch) : kMissing,
                      g.target_epoch ? std::to_string(*g.target_epoch) : kMissing, n);
  } else {
    const auto row = [&](const std::string& a, const std::string& b, const std::string& c,
                         const std::string& d, const std::string& e) {
      return cells("\n", {pad(a, gw), pad(b, cw), pad(c, 20), pad(d, 20), e});
    };
    result.out += row("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS");
    result.out += row(group_id, coordinator, strategy, g.state, n);
  }
  result.out += "\n";
}

/// --members: one row per member (--verbose adds epochs and assignments).
void describe_members(DescribeOutput& result, const std::string& group_id, const Group& g,
                      const std::vector<const Member*>& members, bool show_assignment,
                      const DescribeOptions& options) {
  note_state(result, group_id, g,
             members.size());  // the header is printed even with no member (as Kafka does)
  std::size_t gw = 15, cw = 15, iw = 17, hw = 15, clw = 15, caw = 20, taw = 20;
  bool with_instance = false;
  for (const Member* m : members) {
    gw = std::max(gw, group_id.size());
    cw = std::max(cw, m->member_id.size());
    iw = std::max(iw, m->instance_id.size());
    hw = std::max(hw, m->host.size());
    clw = std::max(clw, m->client_id.size());
    with_instance = with_instance || !m->instance_id.empty();
    caw = std::max(
        caw, assignment_string(show_assignment ? m->assignment : decltype(m->assignment){}).size());
    taw = std::max(taw, assignment_string(m->target).size());
  }
  const auto head = [&](const std::string& group, const std::string& id,
                        const std::string& instance, const std::string& host,
                        const std::string& client, const std::string& n) {
    if (with_instance)
      return cells("", {pad(group, gw), pad(id, cw), pad(instance, iw), pad(host, hw),
                        pad(client, clw), pad(n, 15), ""});
    return cells("",
                 {pad(group, gw), pad(id, cw), pad(host, hw), pad(client, clw), pad(n, 15), ""});
  };
  const auto tail = [&](const std::string& ce, const std::string& ca, const std::string& te,
                        const std::string& ta) {
    return cells("", {pad(ce, 15), pad(ca, caw), pad(te, 15), pad(ta, taw)});
  };
  result.out += "\n";
  result.out +=
      head("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS");
  if (options.verbose)
    result.out += tail("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT");
  result.out += "\n";
  for (const Member* m : members) {
    const auto assigned = show_assignment ? m->assignment : decltype(m->assignment){};
    result.out += head(group_id, m->member_id, m->instance_id, m->host, m->client_id,
                       std::to_string(assigned.size()));
    if (options.verbose) {
      result.out +=
          tail(m->current_epoch ? std::to_string(*m->current_epoch) : kMissing,
               assignment_string(assigned),
               g.target_epoch && g.consumer_protocol ? std::to_string(*g.target_epoch) : kMissing,
               assignment_string(m->target));
    }
    result.out += "\n";
  }
}

/// --offsets (the default): one row per partition.
void describe_offsets(DescribeOutput& result, const std::string& group_id, const Group& g,
                      const std::vector<const Member*>& members, bool show_assignment,
                      const DescribeOptions& options,
                      const std::map<std::pair<std::string, std::int32_t>, std::int64_t>& log_end) {
  // Offsets: each member's partitions (members with the most partitions first), then the
  // committed partitions nobody is assigned.
  struct Row {
    std::string topic;
    std::int32_t partition;
    std::string consumer_id, host, client_id;
  };
  std::vector<const Member*> by_size;
  for (const Member* m : members)
    if (show_assignment && !m->assignment.empty()) by_size.push_back(m);
  std::stable_sort(by_size.begin(), by_size.end(), [](const Member* a, const Member* b) {
    return a->assignment.size() > b->assignment.size();
  });
  std::vector<Row> rows;
  std::set<std::pair<std::string, std::int32_t>> assigned;
  for (const Member* m : by_size) {
    for (const auto& [t, p] : m->assignment) {
      rows.push_back({t, p, m->member_id, m->host, m->client_id});
      assigned.insert({t, p});
    }
  }
  for (const auto& [tp, offset] : g.committed)
    if (!assigned.count(tp)) rows.push_back({tp.first, tp.second, kMissing, kMissing, kMissing});
  if (!note_state(result, group_id, g, rows.size())) return;
  std::size_t gw = 15, tw = 15, cw = 15, hw = 15;
  for (const auto& r : rows) {
    gw = std::max(gw, group_id.size());
    tw = std::max(tw, r.topic.size());
    cw = std::max(cw, r.consumer_id.size());
    hw = std::max(hw, r.host.size());
  }
  const auto line = [&](const std::string& group, const std::string& topic,
                        const std::string& partition, const std::string& epoch,
                        const std::string& current, const std::string& end, const std::string& lag,
                        const std::string& id, const std::string& host, const std::string& client) {
    if (options.verbose)
      return cells(
          "\n", {pad(group, gw), pad(topic, tw), pad(partition, 10), pad(epoch, 15),
                 pad(current, 15), pad(end, 15), pad(lag, 15), pad(id, cw), pad(host, hw), client});
    return cells("\n", {pad(group, gw), pad(topic, tw), pad(partition, 10), pad(current, 15),
                        pad(end, 15), pad(lag, 15), pad(id, cw), pad(host, hw), client});
  };
  result.out += line("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET",
                     "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
  for (const auto& r : rows) {
    const auto c = g.committed.find({r.topic, r.partition});
    const auto l = log_end.find({r.topic, r.partition});
    const std::string current = c == g.committed.end() ? kMissing : std::to_string(c->second.first);
    const std::string epoch = c == g.committed.end() || c->second.second < 0
                                  ? kMissing
                                  : std::to_string(c->second.second);
    const std::string end = l == log_end.end() ? kMissing : std::to_string(l->second);
    const std::string lag = c == g.committed.end() || l == log_end.end()
                                ? kMissing
                                : std::to_string(l->second - c->second.first);
    result.out += line(group_id, r.topic, std::to_string(r.partition), epoch, current, end, lag,
                       r.consumer_id, r.host, r.client_id);
  }
  result.out += "\n";
}

}  // namespace

DescribeOutput describe_groups(const std::vector<std::string>& trace_lines,
                               const DescribeOptions& options) {
  GroupsAt at = replay_groups(trace_lines, options.at_us);
  auto& groups = at.groups;
  DescribeOutput result;
  for (const auto& group_id : options.groups) {
    const auto it = groups.find(group_id);
    if (it == groups.end() || !it->second.exists) {
      result.err += fmt::format("\nError: Consumer group '{}' does not exist.\n", group_id);
      continue;
    }
    Group& g = it->second;
    if (g.consumer_protocol) {
      // ConsumerGroupDescription.partitionAssignor: the server assignor most members ask for,
      // else the broker's default (the first of group.consumer.assignors: uniform).
      std::map<std::string, int> asked;
      for (const auto& [id, m] : g.members)
        if (!m.server_assignor.empty()) ++asked[m.server_assignor];
      g.protocol = "uniform";
      int best = 0;
      for (const auto& [name, n] : asked)
        if (n > best) {
          g.protocol = name;
          best = n;
        }
    }
    // A classic group shows its members' assignments only while Stable.
    const bool show_assignment = g.consumer_protocol || g.state == "Stable";
    std::vector<const Member*> members;
    if (g.state != "Empty" && g.state != "Dead")
      for (const auto& [id, m] : g.members) members.push_back(&m);

    if (options.view == DescribeView::State)
      describe_state(result, group_id, g, members, options);
    else if (options.view == DescribeView::Members)
      describe_members(result, group_id, g, members, show_assignment, options);
    else
      describe_offsets(result, group_id, g, members, show_assignment, options, at.log_end);
  }
  return result;
}

}  // namespace rsim::inspect
