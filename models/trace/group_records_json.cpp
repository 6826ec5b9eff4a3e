#include "models/trace/group_records_json.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rsim::trace {
namespace {

using ojson = nlohmann::ordered_json;
using namespace rsim::records;

ojson names(const std::vector<std::string>& v) {
  ojson out = ojson::array();
  for (const auto& s : v) out.push_back(s);
  return out;
}
ojson or_null(const std::optional<std::string>& s) {
  return s ? ojson(*s) : ojson(nullptr);
}

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

// --- one field list per record ----------------------------------------------------------------
// `fields(r, v)` calls v(name, member) for each member after "record", "tombstone" and "group",
// in the order the trace writes them: one list for writing a record (Write) and for reading it
// back (Read). A plain member is always written and must be there when read; the wrappers say
// otherwise:
enum class How {
  Defaulted,  // always written; a line without it keeps the default (older traces)
  Omitted,    // a std::optional left out when unset
  Nullable,   // a std::optional written null when unset
  Inline,     // a std::optional struct whose members are written in place, only when set
};
template <How H, class T>
struct Marked {
  T& x;
};
template <How H>
constexpr auto marked = []<class T>(T& x) { return Marked<H, T>{x}; };
constexpr auto defaulted = marked<How::Defaulted>;
constexpr auto omitted = marked<How::Omitted>;
constexpr auto nullable = marked<How::Nullable>;
constexpr auto in_place = marked<How::Inline>;

// A record type whose field list this is: one list serves the consumer-group and share-group
// records of the same shape.
template <class S, class... T>
concept one_of = (std::is_same_v<std::remove_const_t<S>, T> || ...);
#define RSIM_RECORD_FIELDS(...)   \
  template <class S, class V>     \
  requires one_of<S, __VA_ARGS__> \
  void fields(S& r, V& v)

RSIM_RECORD_FIELDS(OffsetCommit) {
  v("topic", r.topic);
  v("partition_index", r.partition_index);
  v("committed_offset", r.committed_offset);
  v("leader_epoch", defaulted(r.leader_epoch));
  v("commit_timestamp", defaulted(r.commit_timestamp));
}
RSIM_RECORD_FIELDS(ClassicSubscriptionDetail) {
  v("owned_partitions", r.owned_partitions);
  v("generation_id", r.generation_id);
  v("rack_id", nullable(r.rack_id));
}
RSIM_RECORD_FIELDS(GroupMetadataMember) {
  v("member_id", r.member_id);
  v("consumer", r.consumer);
  v("group_instance_id", omitted(r.group_instance_id));
  v("client_id", r.client_id);
  v("client_host", defaulted(r.client_host));
  v("rebalance_timeout", r.rebalance_timeout);
  v("session_timeout", r.session_timeout);
  v("subscription", r.subscription);
  v("owned_partitions", in_place(r.detail));  // named by its first member
  v("assignment", r.assignment);
}
RSIM_RECORD_FIELDS(GroupMetadata) {
  v("protocol_type", r.protocol_type);
  v("generation", r.generation);
  v("protocol", nullable(r.protocol));
  v("leader", nullable(r.leader));
  v("current_state_timestamp", defaulted(r.current_state_timestamp));
  v("members", r.members);
}
RSIM_RECORD_FIELDS(ConsumerGroupMetadata, ShareGroupMetadata) {
  v("epoch", r.epoch);
  v("metadata_hash", defaulted(r.metadata_hash));
}
RSIM_RECORD_FIELDS(ClassicProtocol) {
  v("name", r.name);
  v("topics", r.topics);
  v("owned_partitions", r.owned_partitions);
  v("generation_id", r.generation_id);
  v("rack_id", nullable(r.rack_id));
}
RSIM_RECORD_FIELDS(ClassicMemberMetadataValue) {
  v("session_timeout_ms", r.session_timeout_ms);
  v("supported_protocols", r.supported_protocols);
}
RSIM_RECORD_FIELDS(ConsumerGroupMemberMetadata) {
  v("member_id", r.member_id);
  v("consumer", r.consumer);
  v("instance_id", omitted(r.instance_id));
  v("rack_id", omitted(r.rack_id));
  v("client_id", r.client_id);
  v("subscribed_topic_names", r.subscribed_topic_names);
  v("rebalance_timeout_ms", r.rebalance_timeout_ms);
  v("server_assignor", omitted(r.server_assignor));
  v("classic_member_metadata", omitted(r.classic_member_metadata));
}
RSIM_RECORD_FIELDS(ConsumerGroupTargetAssignmentMetadata, ShareGroupTargetAssignmentMetadata) {
  v("assignment_epoch", r.assignment_epoch);
  v("assignment_timestamp", r.assignment_timestamp);
}
RSIM_RECORD_FIELDS(ConsumerGroupTargetAssignmentMember, ShareGroupTargetAssignmentMember) {
  v("member_id", r.member_id);
  v("consumer", defaulted(r.consumer));
  v("partitions", r.partitions);
}
RSIM_RECORD_FIELDS(ConsumerGroupCurrentMemberAssignment, ShareGroupCurrentMemberAssignment) {
  v("member_id", r.member_id);
  v("consumer", defaulted(r.consumer));
  v("member_epoch", r.member_epoch);
  v("previous_member_epoch", r.previous_member_epoch);
  v("state", r.state);
  v("assigned", r.assigned);
  if constexpr (requires { r.pending_revocation; }) {  // a share member revokes nothing
    v("assigned_epochs", defaulted(r.assigned_epochs));
    v("pending_revocation", r.pending_revocation);
    v("pending_revocation_epochs", defaulted(r.pending_revocation_epochs));
  }
}
RSIM_RECORD_FIELDS(ShareGroupMemberMetadata) {
  v("member_id", r.member_id);
  v("consumer", defaulted(r.consumer));
  v("client_id", r.client_id);
  v("rack_id", omitted(r.rack_id));
  v("subscribed_topic_names", r.subscribed_topic_names);
}
RSIM_RECORD_FIELDS(ShareGroupStatePartitionMetadata) {
  v("initializing_topics", r.initializing_topics);
  v("initialized_topics", r.initialized_topics);
  v("deleting_topics", r.deleting_topics);
}
RSIM_RECORD_FIELDS(Tombstone) {  // the rest of the deleted record's key
  v("member_id", omitted(r.member_id));
  v("consumer", omitted(r.consumer));
  v("topic", omitted(r.topic));
  v("partition_index", omitted(r.partition_index));
}
#undef RSIM_RECORD_FIELDS

// --- writing -----------------------------------------------------------------------------------

struct Write {
  ojson& j;

  template <class T>
  static ojson value(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      return ojson(x);
    } else if constexpr (std::is_same_v<T, TopicPartitions>) {
      return partition_list(x);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      return names(x);
    } else if constexpr (requires(const T& t, Write& w) { fields(t, w); }) {
      ojson o = ojson::object();
      Write w{o};
      fields(x, w);
      return o;
    } else if constexpr (requires { typename T::value_type; }) {
      ojson a = ojson::array();
      for (const auto& e : x) a.push_back(value(e));
      return a;
    } else {
      return ojson(x);
    }
  }
  template <class T>
  void operator()(const char* name, const T& x) {
    j[name] = value(x);
  }
  template <class T>
  void operator()(const char* name, Marked<How::Defaulted, T> d) {
    (*this)(name, d.x);
  }
  template <class T>
  void operator()(const char* name, Marked<How::Omitted, T> o) {
    if (o.x) (*this)(name, *o.x);
  }
  template <class T>
  void operator()(const char* name, Marked<How::Nullable, T> n) {
    j[name] = or_null(n.x);
  }
  template <class T>
  void operator()(const char*, Marked<How::Inline, T> i) {
    if (i.x) fields(*i.x, *this);
  }
};

// --- reading -----------------------------------------------------------------------------------

template <class J>
struct Read {
  const J& j;

  template <class T>
  static void value(const J& from, T& x) {
    if constexpr (std::is_same_v<T, TopicPartitions>) {
      x.clear();
      for (const auto& p : from) x.push_back(partition_named(p.template get<std::string>()));
    } else if constexpr (requires(T & t, Read & r) { fields(t, r); }) {
      Read r{from};
      fields(x, r);
    } else if constexpr (std::is_same_v<T, std::string> ||
                         std::is_same_v<T, std::vector<std::string>> ||
                         std::is_same_v<T, std::vector<std::int32_t>>) {
      x = from.template get<T>();
    } else if constexpr (requires { typename T::value_type; }) {
      x.clear();
      for (const auto& e : from) value(e, x.emplace_back());
    } else {
      x = from.template get<T>();
    }
  }
  // A member the record must have.
  template <class T>
  void operator()(const char* name, T& x) {
    value(j.at(name), x);
  }
  template <class T>
  void operator()(const char* name, Marked<How::Defaulted, T> d) {
    if (const auto it = j.find(name); it != j.end()) value(*it, d.x);
  }
  // Left out or null: unset.
  template <class T>
  void operator()(const char* name, Marked<How::Omitted, T> o) {
    if (const auto it = j.find(name); it != j.end() && !it->is_null()) value(*it, o.x.emplace());
  }
  template <class T>
  void operator()(const char* name, Marked<How::Nullable, T> n) {
    (*this)(name, omitted(n.x));
  }
  template <class T>
  void operator()(const char* name, Marked<How::Inline, T> i) {
    if (j.contains(name)) fields(i.x.emplace(), *this);
  }
};

template <class R, class J>
R read_record(const J& j, const std::string& group) {
  R r{};
  r.group = group;
  Read<J> reader{j};
  fields(r, reader);
  return r;
}

// The alternative (from the I-th on) whose kType is `type`.
template <class J, std::size_t I = 0>
GroupRecord read_typed(const J& j, RecordType type, const std::string& group) {
  if constexpr (I == std::variant_size_v<GroupRecord>) {
    throw std::runtime_error("unknown record type \"" + std::string(record_name(type)) + "\"");
  } else {
    using R = std::variant_alternative_t<I, GroupRecord>;
    if constexpr (!std::is_same_v<R, Tombstone>)
      if (R::kType == type) return read_record<R>(j, group);
    return read_typed<J, I + 1>(j, type, group);
  }
}

template <class J>
GroupRecord read(const J& j) {
  if (!j.is_object()) throw std::runtime_error("a record is a JSON object");
  const auto name = j.at("record").template get<std::string>();
  const auto type = record_type_named(name);
  if (!type) throw std::runtime_error("unknown record type \"" + name + "\"");
  const auto group = j.at("group").template get<std::string>();
  const auto tombstone = j.find("tombstone");
  if (tombstone != j.end() && tombstone->template get<bool>()) {
    Tombstone t = read_record<Tombstone>(j, group);
    t.type = *type;
    return t;
  }
  return read_typed(j, *type, group);
}

// --- group snapshots and leader moves (coordinator.loaded/unloaded, partition.leaders) ---------

ojson offsets_json(const SnapshotOffsets& offsets) {
  ojson out = ojson::object();
  for (const auto& [tp, offset] : offsets) out[tp.str()] = offset;
  return out;
}

struct SnapshotJson {
  ojson operator()(const ClassicGroupSnapshot& g) const {
    ojson members = ojson::array();
    for (const auto& m : g.members)
      members.push_back({{"member_id", m.member_id},
                         {"consumer", m.consumer},
                         {"group_instance_id", or_null(m.group_instance_id)},
                         {"client_id", m.client_id},
                         {"rebalance_timeout", m.rebalance_timeout},
                         {"session_timeout", m.session_timeout},
                         {"subscription", names(m.subscription)},
                         {"assignment", partition_list(m.assignment)}});
    return ojson{{"group", g.group},
                 {"state", g.state},
                 {"generation", g.generation},
                 {"protocol_type", g.protocol_type},
                 {"protocol", or_null(g.protocol)},
                 {"leader", or_null(g.leader)},
                 {"members", std::move(members)},
                 {"offsets", offsets_json(g.offsets)}};
  }
  ojson operator()(const ConsumerGroupSnapshot& g) const {
    ojson members = ojson::array();
    for (const auto& m : g.members)
      members.push_back({{"member_id", m.member_id},
                         {"consumer", m.consumer},
                         {"member_epoch", m.member_epoch},
                         {"state", m.state},
                         {"assigned", partition_list(m.assigned)}});
    return ojson{{"group", g.group},
                 {"protocol", "consumer"},
                 {"state", g.state},
                 {"epoch", g.epoch},
                 {"assignment_epoch", g.assignment_epoch},
                 {"members", std::move(members)},
                 {"offsets", offsets_json(g.offsets)}};
  }
};

}  // namespace

ojson snapshots_json(const GroupSnapshots& groups) {
  ojson out = ojson::array();
  for (const auto& g : groups) out.push_back(std::visit(SnapshotJson{}, g));
  return out;
}

ojson leaders_json(const LeaderMoves& moves) {
  ojson out = ojson::object();
  for (const auto& m : moves) out[m.partition.str()] = m.leader ? ojson(*m.leader) : ojson(nullptr);
  return out;
}

ojson record_json(const GroupRecord& record) {
  return std::visit(
      [](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        ojson j;
        if constexpr (std::is_same_v<R, Tombstone>)
          j = {{"record", record_name(r.type)}, {"tombstone", true}, {"group", r.group}};
        else
          j = {{"record", record_name(R::kType)}, {"tombstone", false}, {"group", r.group}};
        Write w{j};
        fields(r, w);
        return j;
      },
      record);
}
GroupRecord record_from_json(const nlohmann::json& j) {
  return read(j);
}
GroupRecord record_from_json(const nlohmann::ordered_json& j) {
  return read(j);
}

}  // namespace rsim::trace
