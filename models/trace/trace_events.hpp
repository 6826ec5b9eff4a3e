// The trace vocabulary: one struct per trace event kind, its `type` as trace.jsonl spells it and
// its fields in the order they are written (docs/writing-scenarios.md lists them for users). The
// bus (sim::TraceBus) carries them to sinks; fields are views into the publisher's state, valid
// for the duration of the call, so publishing allocates nothing. A sink that keeps a fact copies
// it. `fields(s, v)` calls v(name, field) for each field in order: one list for writing
// trace.jsonl and for reading it back.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/group_snapshots.hpp"
#include "models/protocol/messages.hpp"
#include "models/protocol/topic_partition.hpp"
#include "sim/trace.hpp"

namespace rsim {

/// Offsets delivered by one fetch: [first, last] of one partition.
struct FetchedRange {
  TopicPartition partition;
  std::int64_t first = 0;  // offsets, inclusive
  std::int64_t last = 0;
};

namespace trace {

using sv = std::string_view;
template <class T>
using Opt = std::optional<T>;  // written only when set
/// Always written; null when empty.
template <class T>
struct OrNull {
  std::optional<T> value;
};
using Number = std::variant<std::int64_t, double>;
using Partitions = std::span<const TopicPartition>;  // ["orders-0", ...]
using Names = std::span<const std::string>;
using Json = const nlohmann::ordered_json*;  // a nested value written as it is (rare events)
/// A nested value the model hands over typed (`typed`: group snapshots, leader moves) and the
/// writer turns into JSON (models/trace/group_records_json.hpp); an event read back from
/// trace.jsonl has `json` instead. Written only when one of them is set.
template <class T>
struct Typed {
  const T* typed = nullptr;
  const nlohmann::ordered_json* json = nullptr;
  Typed() = default;
  Typed(const T* t) : typed(t) {}  // NOLINT(google-explicit-constructor): `.groups = &loaded`
};
/// An OffsetCommit record's value (most of __consumer_offsets), typed: written as the members
/// "record": "OffsetCommit", "tombstone": false, "group", "topic", "partition_index",
/// "committed_offset", "leader_epoch", "commit_timestamp", in that order.
struct OffsetCommitValue {
  sv group, topic;
  std::int32_t partition_index = 0;
  std::int64_t committed_offset = 0;
  std::int32_t leader_epoch = -1;
  std::int64_t commit_timestamp = 0;
};
/// The members of a JSON object written in place (a `record`'s value),
/// or of a typed OffsetCommit value (`commit`, set instead of `object`). An event read back from
/// trace.jsonl always has `object`.
struct Splice {
  const nlohmann::ordered_json* object = nullptr;
  const OffsetCommitValue* commit = nullptr;
};

#define RSIM_TRACE_KIND(name) static constexpr std::string_view kType = name

// --- the run -----------------------------------------------------------------------------------
struct RunStart {
  RSIM_TRACE_KIND("run.start");
  sv scenario, protocol;
  std::uint64_t seed = 0;
  std::int64_t duration_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("scenario", s.scenario);
    v("protocol", s.protocol);
    v("seed", s.seed);
    v("duration_ms", s.duration_ms);
  }
};
struct RunEnd {
  RSIM_TRACE_KIND("run.end");
  std::uint64_t events = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("events", s.events);
  }
};
struct TopicPartitionCount {
  RSIM_TRACE_KIND("topic.partitions");
  sv topic;
  std::int32_t partitions = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("topic", s.topic);
    v("partitions", s.partitions);
  }
};
struct Produce {
  RSIM_TRACE_KIND("produce");
  sv topic;
  Opt<std::int64_t> initial_records;
  Opt<Number> records_per_sec;  // 0 (an integer) when production stops
  Opt<sv> gap_ms;               // a non-constant gap, described
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("topic", s.topic);
    v("initial_records", s.initial_records);
    v("records_per_sec", s.records_per_sec);
    v("gap_ms", s.gap_ms);
  }
};
struct LogEndOffset {
  RSIM_TRACE_KIND("log_end_offset");
  const TopicPartition* partition = nullptr;
  std::int64_t log_end_offset = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("partition", s.partition);
    v("log_end_offset", s.log_end_offset);
  }
};
struct Lag {
  RSIM_TRACE_KIND("lag");
  sv group;
  const TopicPartition* partition = nullptr;
  std::int64_t lag = 0, log_end_offset = 0, offset = 0;
  OrNull<sv> owner;
  sv reason;
  /// Not written: a number that names (group, partition) for the whole run, by which the
  /// `standard` writer remembers the last lag it wrote (trace::LevelFilter); 0: none (an event
  /// read back from trace.jsonl: always written).
  std::uint32_t slot = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("lag", s.lag);
    v("log_end_offset", s.log_end_offset);
    v("offset", s.offset);
    v("owner", s.owner);
    v("reason", s.reason);
  }
};

// --- consumers ---------------------------------------------------------------------------------
struct ConsumerStart {
  RSIM_TRACE_KIND("consumer.start");
  sv consumer, group;
  Names topics;
  sv protocol;
  Opt<sv> member_id;
  Opt<double> start_latency_ms;  // subscribe() and the first poll() come that much later
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("group", s.group);
    v("topics", s.topics);
    v("protocol", s.protocol);
    v("member_id", s.member_id);
    v("start_latency_ms", s.start_latency_ms);
  }
};
/// A start latency as consumer.start writes it: milliseconds, only when there is one.
inline Opt<double> start_latency_ms(sim::SimTime latency) {
  if (latency <= sim::SimTime::zero()) return std::nullopt;
  return static_cast<double>(latency.count()) / 1000.0;
}
/// A consumer process replaced by a new incarnation with changed configs (`config`: the
/// overrides, group.protocol included).
struct ConsumerConfig {
  RSIM_TRACE_KIND("consumer.config");
  sv consumer, protocol;
  std::int64_t incarnation = 0;
  Json config = nullptr;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("protocol", s.protocol);
    v("incarnation", s.incarnation);
    v("config", s.config);
  }
};
#define RSIM_TRACE_CONSUMER_ONLY(Name, kind) \
  struct Name {                              \
    RSIM_TRACE_KIND(kind);                   \
    sv consumer;                             \
    template <class S, class V>              \
    static void fields(S& s, V& v) {         \
      v("consumer", s.consumer);             \
    }                                        \
  }
RSIM_TRACE_CONSUMER_ONLY(ConsumerStop, "consumer.stop");
RSIM_TRACE_CONSUMER_ONLY(ConsumerCrash, "consumer.crash");
RSIM_TRACE_CONSUMER_ONLY(ConsumerClosed, "consumer.closed");
#undef RSIM_TRACE_CONSUMER_ONLY
struct ConsumerResume {
  RSIM_TRACE_KIND("consumer.resume");
  sv consumer;
  Opt<sv> after;  // share consumers: stall | pause
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("after", s.after);
  }
};
struct ConsumerStall {
  RSIM_TRACE_KIND("consumer.stall");
  sv consumer;
  std::int64_t for_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("for_ms", s.for_ms);
  }
};
struct ConsumerPause {
  RSIM_TRACE_KIND("consumer.pause");
  sv consumer;
  std::int64_t for_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("for_ms", s.for_ms);
  }
};
struct ConsumerSubscribe {
  RSIM_TRACE_KIND("consumer.subscribe");
  sv consumer;
  Names topics;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("topics", s.topics);
  }
};
struct ConsumerCoordinatorUnknown {
  RSIM_TRACE_KIND("consumer.coordinator_unknown");
  sv consumer, reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("reason", s.reason);
  }
};
struct ConsumerMetadata {
  RSIM_TRACE_KIND("consumer.metadata");
  sv consumer;
  Json partitions = nullptr;  // {"topic": partition count}
  sv reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("partitions", s.partitions);
    v("reason", s.reason);
  }
};
struct ConsumerRejoin {
  RSIM_TRACE_KIND("consumer.rejoin");
  sv consumer, reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("reason", s.reason);
  }
};
struct ConsumerGenerationReset {
  RSIM_TRACE_KIND("consumer.generation_reset");
  sv consumer, reason;
  bool member_id_reset = false;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("reason", s.reason);
    v("member_id_reset", s.member_id_reset);
  }
};
struct ConsumerError {
  RSIM_TRACE_KIND("consumer.error");
  sv consumer, error, where;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("error", s.error);
    v("where", s.where);
  }
};
struct ConsumerPollTimeout {
  RSIM_TRACE_KIND("consumer.poll_timeout");
  sv consumer;
  std::int64_t max_poll_interval_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("max_poll_interval_ms", s.max_poll_interval_ms);
  }
};
struct ConsumerMemberState {
  RSIM_TRACE_KIND("consumer.member_state");
  sv consumer, state;
  std::int64_t epoch = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("state", s.state);
    v("epoch", s.epoch);
  }
};
struct ConsumerReconcile {
  RSIM_TRACE_KIND("consumer.reconcile");
  sv consumer;
  std::int64_t epoch = 0;
  Partitions target, added, revoked;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("epoch", s.epoch);
    v("target", s.target);
    v("added", s.added);
    v("revoked", s.revoked);
  }
};
struct ConsumerFenced {
  RSIM_TRACE_KIND("consumer.fenced");
  sv consumer, error;
  std::int64_t epoch = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("error", s.error);
    v("epoch", s.epoch);
  }
};
struct Callback {
  RSIM_TRACE_KIND("callback");
  sv consumer, callback;
  Partitions partitions;
  sv phase;  // start | end
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("callback", s.callback);
    v("partitions", s.partitions);
    v("phase", s.phase);
  }
};
struct Assignment {
  RSIM_TRACE_KIND("assignment");
  sv consumer;
  Partitions owned;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("owned", s.owned);
  }
};
struct Commit {
  RSIM_TRACE_KIND("commit");
  sv consumer, group, phase, purpose;  // phase: sent | completed | failed
  Opt<std::int64_t> generation;
  Opt<std::span<const CommittedOffset>> offsets;  // {"orders-0": offset, ...}
  Opt<sv> error;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("group", s.group);
    v("phase", s.phase);
    v("purpose", s.purpose);
    v("generation", s.generation);
    v("offsets", s.offsets);
    v("error", s.error);
  }
};
struct Position {
  RSIM_TRACE_KIND("position");
  sv consumer, group;
  const TopicPartition* partition = nullptr;
  std::int64_t offset = 0;
  sv source, state;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("group", s.group);
    v("partition", s.partition);
    v("offset", s.offset);
    v("source", s.source);
    v("state", s.state);
  }
};
struct RecordsFetched {
  RSIM_TRACE_KIND("records.fetched");
  sv consumer, group;
  std::int64_t batch = 0, count = 0;
  std::span<const FetchedRange> ranges;
  /// Not written: a number that names `consumer` for the whole run (never another name), by
  /// which a sink may keep per-consumer state instead of hashing the name; 0: none (an event
  /// read back from trace.jsonl).
  std::uint32_t consumer_slot = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("group", s.group);
    v("batch", s.batch);
    v("count", s.count);
    v("ranges", s.ranges);
  }
};
struct RecordsProcessed {
  RSIM_TRACE_KIND("records.processed");
  sv consumer, group;
  std::int64_t batch = 0, count = 0;
  std::uint32_t consumer_slot = 0;  // as RecordsFetched's
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("group", s.group);
    v("batch", s.batch);
    v("count", s.count);
  }
};

// --- network -----------------------------------------------------------------------------------
struct Rpc {
  RSIM_TRACE_KIND("rpc");
  sv dir, from, to, api;  // dir: send | recv
  std::int32_t id = 0;
  Opt<sv> error;
  /// A request's own fields: a ConsumerGroupHeartbeat's member epoch and the optional fields it
  /// carries (Kafka's names: RebalanceTimeoutMs, SubscribedTopicNames, ServerAssignor, RackId,
  /// TopicPartitions), an OffsetFetch's member epoch (-1: none). Written only when set.
  Opt<std::int64_t> member_epoch;
  Opt<Names> sent_fields;  // written as "fields"
  /// Not written: a heartbeat that carries no news (a request with nothing new in it) or causes
  /// none (its response to such a request: NONE, no assignment, the same member epoch); only
  /// the `full` trace writes it.
  bool quiet = false;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("dir", s.dir);
    v("from", s.from);
    v("to", s.to);
    v("api", s.api);
    v("id", s.id);
    v("error", s.error);
    v("member_epoch", s.member_epoch);
    v("fields", s.sent_fields);
  }
};
/// What a client's next request says in its `rpc` line besides the header (Rpc::member_epoch,
/// Rpc::sent_fields), owned by the client while it sends the request.
struct RpcRequestFields {
  std::optional<std::int64_t> member_epoch;
  std::optional<std::vector<std::string>> fields;
};
struct NetDisconnect {
  RSIM_TRACE_KIND("net.disconnect");
  sv consumer, node, reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("node", s.node);
    v("reason", s.reason);
  }
};
struct NetDrop {
  RSIM_TRACE_KIND("net.drop");
  sv from, to, reason;  // reason: cut | loss
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("from", s.from);
    v("to", s.to);
    v("reason", s.reason);
  }
};
struct NetChange {
  RSIM_TRACE_KIND("net.change");
  Names between;
  bool one_way = false;
  std::int64_t for_ms = -1;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("between", s.between);
    v("one_way", s.one_way);
    v("for_ms", s.for_ms);
  }
};
struct NetRestore {
  RSIM_TRACE_KIND("net.restore");
  Names between;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("between", s.between);
  }
};
struct NetPartition {
  RSIM_TRACE_KIND("net.partition");
  Names between;
  std::int64_t for_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("between", s.between);
    v("for_ms", s.for_ms);
  }
};
struct NetHeal {
  RSIM_TRACE_KIND("net.heal");
  Names between;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("between", s.between);
  }
};

// --- brokers and coordinators ------------------------------------------------------------------
struct BrokerFail {
  RSIM_TRACE_KIND("broker.fail");
  sv group;
  OrNull<std::int32_t> broker;
  Opt<std::int32_t> partition;
  Opt<std::int64_t> down_ms;
  Opt<sv> reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("broker", s.broker);
    v("partition", s.partition);
    v("down_ms", s.down_ms);
    v("reason", s.reason);
  }
};
struct BrokerRecover {
  RSIM_TRACE_KIND("broker.recover");
  std::int32_t broker = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
  }
};
struct CoordinatorElected {
  RSIM_TRACE_KIND("coordinator.elected");
  std::int32_t partition = 0;
  OrNull<std::int32_t> broker;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("partition", s.partition);
    v("broker", s.broker);
  }
};
struct CoordinatorLoad {
  RSIM_TRACE_KIND("coordinator.load");
  std::int32_t broker = 0, partition = 0;
  std::uint64_t records = 0;
  std::int64_t load_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("partition", s.partition);
    v("records", s.records);
    v("load_ms", s.load_ms);
  }
};
struct CoordinatorLoaded {
  RSIM_TRACE_KIND("coordinator.loaded");
  std::int32_t broker = 0, partition = 0;
  Typed<GroupSnapshots> groups;  // the groups' snapshots
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("partition", s.partition);
    v("groups", s.groups);
  }
};
struct CoordinatorUnloaded {
  RSIM_TRACE_KIND("coordinator.unloaded");
  std::int32_t broker = 0, partition = 0;
  Typed<GroupSnapshots> groups;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("partition", s.partition);
    v("groups", s.groups);
  }
};
struct GroupStateChange {
  RSIM_TRACE_KIND("group.state");
  sv group, state;               // classic: Kafka's ClassicGroupState names; consumer: lower-case
  Opt<std::int64_t> generation;  // classic
  Opt<std::int64_t> epoch;       // consumer protocol
  Opt<sv> reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("state", s.state);
    v("generation", s.generation);
    v("epoch", s.epoch);
    v("reason", s.reason);
  }
};
/// An online migration between a classic and a consumer group (KIP-848's upgrade and downgrade),
/// or one refused (`refused` says why; nothing changes).
struct GroupMigration {
  RSIM_TRACE_KIND("group.migration");
  sv group, from, to;
  Opt<std::int64_t> generation;  // the group epoch carried over
  Opt<sv> reason, refused;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("from", s.from);
    v("to", s.to);
    v("generation", s.generation);
    v("reason", s.reason);
    v("refused", s.refused);
  }
};
struct GroupEpoch {
  RSIM_TRACE_KIND("group.epoch");
  sv group;
  Opt<std::int64_t> generation;        // classic
  Opt<std::int64_t> epoch;             // consumer protocol
  Opt<std::int64_t> assignment_epoch;  // consumer protocol, when it differs
  Opt<sv> protocol, leader;            // classic
  Names members;
  Opt<sv> reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("generation", s.generation);
    v("epoch", s.epoch);
    v("assignment_epoch", s.assignment_epoch);
    v("protocol", s.protocol);
    v("leader", s.leader);
    v("members", s.members);
    v("reason", s.reason);
  }
};
struct MemberEpoch {
  RSIM_TRACE_KIND("member.epoch");
  sv group, consumer, member_id;
  std::int64_t epoch = 0;
  sv state;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("consumer", s.consumer);
    v("member_id", s.member_id);
    v("epoch", s.epoch);
    v("state", s.state);
  }
};
struct MemberLeave {
  RSIM_TRACE_KIND("member.leave");
  sv group, consumer, member_id, reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("consumer", s.consumer);
    v("member_id", s.member_id);
    v("reason", s.reason);
  }
};
struct MemberReplaced {
  RSIM_TRACE_KIND("member.replaced");
  sv group, consumer, group_instance_id, old_member_id, member_id, state;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("consumer", s.consumer);
    v("group_instance_id", s.group_instance_id);
    v("old_member_id", s.old_member_id);
    v("member_id", s.member_id);
    v("state", s.state);
  }
};
/// A record appended to __consumer_offsets: its partition and offset, then the record's own
/// fields ("record": OffsetCommit, GroupMetadata, ConsumerGroup*, "group", ...).
struct Record {
  RSIM_TRACE_KIND("record");
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  Splice value;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("partition", s.partition);
    v("offset", s.offset);
    v("", s.value);
  }
};
struct LogTruncate {
  RSIM_TRACE_KIND("log.truncate");
  std::int32_t partition = 0;
  std::int64_t from_offset = 0, records = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("partition", s.partition);
    v("from_offset", s.from_offset);
    v("records", s.records);
  }
};

// --- broker processes and data-partition leadership ---------------------------------------------
struct BrokerStop {
  RSIM_TRACE_KIND("broker.stop");
  std::int32_t broker = 0;
  bool graceful = true;
  Opt<sv> reason;  // set when the stop does nothing
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("graceful", s.graceful);
    v("reason", s.reason);
  }
};
struct BrokerCrash {
  RSIM_TRACE_KIND("broker.crash");
  std::int32_t broker = 0;
  Opt<sv> reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("reason", s.reason);
  }
};
struct BrokerFenced {
  RSIM_TRACE_KIND("broker.fenced");
  std::int32_t broker = 0;
  Opt<std::int32_t> controller;       // the active controller that fences it
  Opt<std::int64_t> last_contact_us;  // its last heartbeat, or the controller's activation
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("controller", s.controller);
    v("last_contact_us", s.last_contact_us);
  }
};
struct BrokerStart {
  RSIM_TRACE_KIND("broker.start");
  std::int32_t broker = 0;
  Opt<sv> reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("reason", s.reason);
  }
};
struct PartitionLeaders {
  RSIM_TRACE_KIND("partition.leaders");
  Typed<LeaderMoves> leaders;  // {"orders-0": broker or null}
  sv reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("leaders", s.leaders);
    v("reason", s.reason);
  }
};
struct ConsumerLeaders {
  RSIM_TRACE_KIND("consumer.leaders");
  sv consumer;
  Typed<LeaderMoves> leaders;  // {"orders-0": broker or null}, the ones that changed
  sv reason;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("leaders", s.leaders);
    v("reason", s.reason);
  }
};
struct FetchError {
  RSIM_TRACE_KIND("fetch.error");
  sv consumer, broker;
  Partitions partitions;
  sv error;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("broker", s.broker);
    v("partitions", s.partitions);
    v("error", s.error);
  }
};
struct ConsumerWakeup {
  RSIM_TRACE_KIND("consumer.wakeup");
  sv consumer, exception;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("exception", s.exception);
  }
};
struct MemberJoin {
  RSIM_TRACE_KIND("member.join");
  sv group, consumer, member_id, client_id;
  Opt<sv> group_instance_id;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("consumer", s.consumer);
    v("member_id", s.member_id);
    v("client_id", s.client_id);
    v("group_instance_id", s.group_instance_id);
  }
};

// --- share groups (KIP-932)
// ------------------------------------------------------------------------
struct ShareConfig {
  RSIM_TRACE_KIND("share.config");
  std::int64_t record_lock_duration_ms = 0, delivery_count_limit = 0,
               partition_max_record_locks = 0, heartbeat_interval_ms = 0, session_timeout_ms = 0;
  Json groups = nullptr;  // {group: its own share.* configs}
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group.share.record.lock.duration.ms", s.record_lock_duration_ms);
    v("group.share.delivery.count.limit", s.delivery_count_limit);
    v("group.share.partition.max.record.locks", s.partition_max_record_locks);
    v("group.share.heartbeat.interval.ms", s.heartbeat_interval_ms);
    v("group.share.session.timeout.ms", s.session_timeout_ms);
    v("groups", s.groups);
  }
};
/// The share assignor threw: the heartbeat goes on without a new target assignment.
struct ShareAssignorError {
  RSIM_TRACE_KIND("share.assignor_error");
  sv group, error;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("error", s.error);
  }
};
/// A share session on a broker ended other than by the member (its connection closed).
struct ShareSession {
  RSIM_TRACE_KIND("share.session");
  std::int32_t broker = 0;
  sv group, consumer, member_id, event;  // event: disconnect
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("broker", s.broker);
    v("group", s.group);
    v("consumer", s.consumer);
    v("member_id", s.member_id);
    v("event", s.event);
  }
};
/// Records of one share-partition changing delivery state together.
struct ShareRecords {
  RSIM_TRACE_KIND("share.records");
  sv group;
  const TopicPartition* partition = nullptr;
  sv consumer, from, to;
  std::int64_t first_offset = 0, last_offset = 0, records = 0, delivery_count = 0;
  sv cause;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("consumer", s.consumer);
    v("from", s.from);
    v("to", s.to);
    v("first_offset", s.first_offset);
    v("last_offset", s.last_offset);
    v("records", s.records);
    v("delivery_count", s.delivery_count);
    v("cause", s.cause);
  }
};
struct ShareWindow {
  RSIM_TRACE_KIND("share.window");
  sv group;
  const TopicPartition* partition = nullptr;
  std::int64_t spso = 0, speo = 0, in_flight = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("spso", s.spso);
    v("speo", s.speo);
    v("in_flight", s.in_flight);
  }
};
struct SharePartitionInit {
  RSIM_TRACE_KIND("share.partition.init");
  sv group;
  const TopicPartition* partition = nullptr;
  std::int64_t spso = 0;
  sv reset;  // latest | none
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("spso", s.spso);
    v("reset", s.reset);
  }
};
struct SharePartitionEnd {
  RSIM_TRACE_KIND("share.partition.end");
  sv group;
  const TopicPartition* partition = nullptr;
  std::int64_t spso = 0, speo = 0, in_flight = 0, delivery_complete_count = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("spso", s.spso);
    v("speo", s.speo);
    v("in_flight", s.in_flight);
    v("delivery_complete_count", s.delivery_complete_count);
  }
};
struct ShareAckError {
  RSIM_TRACE_KIND("share.ack_error");
  sv group;
  const TopicPartition* partition = nullptr;
  sv consumer, type;
  std::int64_t first_offset = 0, last_offset = 0;
  sv error;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("group", s.group);
    v("partition", s.partition);
    v("consumer", s.consumer);
    v("type", s.type);
    v("first_offset", s.first_offset);
    v("last_offset", s.last_offset);
    v("error", s.error);
  }
};
struct ShareProcess {
  RSIM_TRACE_KIND("share.process");
  sv consumer;
  const TopicPartition* partition = nullptr;
  std::int64_t first_offset = 0, last_offset = 0, delivery_count = 0, records = 0, accepted = 0,
               released = 0, rejected = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("consumer", s.consumer);
    v("partition", s.partition);
    v("first_offset", s.first_offset);
    v("last_offset", s.last_offset);
    v("delivery_count", s.delivery_count);
    v("records", s.records);
    v("accepted", s.accepted);
    v("released", s.released);
    v("rejected", s.rejected);
  }
};
/// One state batch of a __share_group_state record.
struct ShareStateBatch {
  std::int64_t first_offset = 0, last_offset = 0;
  std::int32_t delivery_state = 0, delivery_count = 0;
};
/// A record appended to __share_group_state (ShareSnapshot or ShareUpdate).
struct ShareStateRecord {
  RSIM_TRACE_KIND("share_state.record");
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  sv record, group;
  const TopicPartition* topic_partition = nullptr;
  std::int64_t snapshot_epoch = 0;
  Opt<std::int64_t> state_epoch;  // ShareSnapshot
  std::int64_t leader_epoch = 0, start_offset = 0, delivery_complete_count = 0;
  std::span<const ShareStateBatch> state_batches;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("partition", s.partition);
    v("offset", s.offset);
    v("record", s.record);
    v("group", s.group);
    v("topic_partition", s.topic_partition);
    v("snapshot_epoch", s.snapshot_epoch);
    v("state_epoch", s.state_epoch);
    v("leader_epoch", s.leader_epoch);
    v("start_offset", s.start_offset);
    v("delivery_complete_count", s.delivery_complete_count);
    v("state_batches", s.state_batches);
  }
};

// --- fleets: Kubernetes pods and autoscalers (issue 38)
// -------------------------------------------
/// A pod bound to a node (`revision`: its ReplicaSet's or StatefulSet's revision, from 1).
struct PodScheduled {
  RSIM_TRACE_KIND("pod.scheduled");
  sv pod, deployment, node;
  std::int64_t revision = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("pod", s.pod);
    v("deployment", s.deployment);
    v("node", s.node);
    v("revision", s.revision);
  }
};
/// The pod's container runs (image pulled, JVM started): its consumer starts.
struct PodStarted {
  RSIM_TRACE_KIND("pod.started");
  sv pod, deployment;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("pod", s.pod);
    v("deployment", s.deployment);
  }
};
/// The pod reports ready: `by` "assignment" (its consumer's first assignment) or "probe".
struct PodReady {
  RSIM_TRACE_KIND("pod.ready");
  sv pod, deployment, by;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("pod", s.pod);
    v("deployment", s.deployment);
    v("by", s.by);
  }
};
/// The pod is deleted: preStop, then SIGTERM (close()), SIGKILL at grace_ms.
struct PodTerminating {
  RSIM_TRACE_KIND("pod.terminating");
  sv pod, deployment, reason;
  std::int64_t grace_ms = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("pod", s.pod);
    v("deployment", s.deployment);
    v("reason", s.reason);
    v("grace_ms", s.grace_ms);
  }
};
/// The pod is gone: `how` "closed" (its consumer's close() finished in time), "SIGKILL" (the
/// grace period ran out: the consumer crashed) or "not started".
struct PodKilled {
  RSIM_TRACE_KIND("pod.killed");
  sv pod, deployment, how;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("pod", s.pod);
    v("deployment", s.deployment);
    v("how", s.how);
  }
};
/// An autoscaler changes a deployment's replicas (`lag`: KEDA's metric at the decision).
struct AutoscalerDecision {
  RSIM_TRACE_KIND("autoscaler.decision");
  sv deployment, group;
  std::int64_t from = 0, to = 0;
  sv reason;
  std::int64_t lag = 0;
  template <class S, class V>
  static void fields(S& s, V& v) {
    v("deployment", s.deployment);
    v("group", s.group);
    v("from", s.from);
    v("to", s.to);
    v("reason", s.reason);
    v("lag", s.lag);
  }
};

#undef RSIM_TRACE_KIND

/// Every event kind; sim::RawTraceEvent is a line of a kind this build does not know, read back.
using Event = std::variant<
    RunStart, RunEnd, TopicPartitionCount, Produce, LogEndOffset, Lag, ConsumerStart, ConsumerStop,
    ConsumerCrash, ConsumerClosed, ConsumerResume, ConsumerStall, ConsumerPause, ConsumerSubscribe,
    ConsumerCoordinatorUnknown, ConsumerMetadata, ConsumerRejoin, ConsumerGenerationReset,
    ConsumerError, ConsumerPollTimeout, ConsumerMemberState, ConsumerReconcile, ConsumerFenced,
    Callback, Assignment, Commit, Position, RecordsFetched, RecordsProcessed, Rpc, NetDisconnect,
    NetDrop, NetChange, NetRestore, NetPartition, NetHeal, BrokerFail, BrokerRecover,
    CoordinatorElected, CoordinatorLoad, CoordinatorLoaded, CoordinatorUnloaded, GroupStateChange,
    GroupEpoch, MemberEpoch, MemberLeave, MemberReplaced, Record, LogTruncate, BrokerStop,
    BrokerCrash, BrokerFenced, BrokerStart, PartitionLeaders, ConsumerLeaders, FetchError,
    ConsumerWakeup, MemberJoin, ShareConfig, ShareRecords, ShareWindow, SharePartitionInit,
    SharePartitionEnd, ShareAckError, ShareProcess, ShareStateRecord, GroupMigration,
    ShareAssignorError, ShareSession, ConsumerConfig, PodScheduled, PodStarted, PodReady,
    PodTerminating, PodKilled, AutoscalerDecision, sim::RawTraceEvent>;

/// How much of the run the trace keeps (`--trace`): `standard` everything the summary and the
/// reports read (group-protocol rpcs, callbacks, assignments, commits, records, lag samples);
/// `full` also every data-path rpc (each Fetch request and response). `none` is `standard` on a
/// bus with no trace.jsonl sink.
enum class Detail : int { Standard = 1, Full = 2 };
inline bool wants(const sim::TraceBus<Event>& bus, Detail d) {
  return bus.wants(static_cast<int>(d));
}
/// The api names whose rpc events only the full trace keeps.
inline bool data_path_api(std::string_view api) {
  return api == "Fetch";
}

/// The `type` of an event as trace.jsonl writes it.
std::string_view type_of(const Event& e);

}  // namespace trace

using Tracer = sim::TraceBus<trace::Event>;
using TraceSink = sim::TraceSink<trace::Event>;

}  // namespace rsim

namespace sim {
/// Transitional: code written against the untyped tracer keeps compiling (new code: rsim::Tracer).
using Tracer = rsim::Tracer;
}  // namespace sim
