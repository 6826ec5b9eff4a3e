// The broker-side group coordinator for KIP-848 consumer groups (Kafka's GroupMetadataManager
// consumer-group paths): ConsumerGroupHeartbeat with group, target-assignment and member epochs,
// the target assignment (assign_server, throttled by group.consumer.assignment.interval.ms),
// per-member reconciliation (next_member_state) with partition epochs, the session and
// rebalance timers, leaves, static membership, and OffsetCommit validation by member epoch.
//
// As in Kafka, every state change is a record: the coordinator appends its records to the
// broker's OffsetsLog and changes its state only by replaying them (replay_record(); its
// current-assignment records through apply_current_assignment(), which does the same without
// reading the record back), so its state is always what replaying its `record` trace events gives.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/assignors/server_java_order.hpp"
#include "models/coordinator/group_conversion.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/group_records.hpp"
#include "models/protocol/group_snapshots.hpp"
#include "models/protocol/member_id_replay.hpp"
#include "models/protocol/messages.hpp"
#include "models/protocol/model_options.hpp"
#include "models/reconciliation/current_assignment_builder.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

/// A member that speaks the classic protocol in a consumer group (ConsumerGroupMemberMetadata's
/// ClassicMemberMetadata): its JoinGroup session timeout and protocols.
struct ClassicMemberMetadata {
  std::int32_t session_timeout_ms = 0;
  std::vector<JoinGroupProtocol> supported_protocols;
  bool operator==(const ClassicMemberMetadata&) const = default;
};

/// One member as its ConsumerGroupMemberMetadata and ConsumerGroupCurrentMemberAssignment
/// records define it.
struct ConsumerGroupMemberState {
  reconciliation::ConsumerGroupMember member;  // id, state, epochs, subscription, partitions
  std::string consumer;                        // the scenario's name for it
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::int32_t rebalance_timeout_ms = -1;
  std::optional<std::string> server_assignor;
  std::optional<ClassicMemberMetadata> classic;  // set for a member using the classic protocol
  bool operator==(const ConsumerGroupMemberState&) const = default;
};

/// A consumer group (Kafka's ConsumerGroup): what its records define, plus the maps Kafka
/// derives on replay (static members, partition epochs).
struct ConsumerGroupState {
  std::string group_id;
  std::int32_t group_epoch = 1;  // KAFKA-20268: a group starts at epoch 1 (the empty assignment)
  std::int64_t metadata_hash = 0;
  std::int32_t assignment_epoch = 1;
  std::int64_t assignment_timestamp_ms = 0;
  std::map<std::string, ConsumerGroupMemberState> members;
  /// Kafka's TimelineHashMap of the members, for its iteration order: a member is put by each
  /// replayed member record (ConsumerGroupMemberMetadata, ConsumerGroupCurrentMemberAssignment and
  /// its tombstone) and removed by its metadata tombstone. The target assignment walks it.
  assignors::server_java::TimelineTable member_table;
  std::map<std::string, reconciliation::TopicIdPartitions> target;  // member id -> target
  // Derived on replay.
  std::map<std::string, std::string> static_members;  // instance id -> member id
  /// (topic, partition) -> (owner member id, its member epoch) for every owned partition
  /// (assigned or pending revocation).
  std::map<std::pair<std::string, std::int32_t>, std::pair<std::string, std::int32_t>>
      partition_owners;
  /// Subscribed topic name -> number of members subscribing; server assignor -> members asking.
  std::map<std::string, std::int32_t> subscribed_topic_counts;
  std::map<std::string, std::int32_t> server_assignor_counts;
  /// Members STABLE at the assignment epoch (so that state() is O(1) per heartbeat).
  std::int32_t reconciled_members = 0;
  /// Committed offsets (OffsetMetadataManager's, for this group): what OffsetFetch reads. The
  /// coordinator stores an offset when its OffsetCommit record commits; a load replays them.
  std::map<TopicPartition, std::int64_t> offsets;
  std::map<TopicPartition, std::int32_t> offset_epochs;  // their committed leader epochs

  bool operator==(const ConsumerGroupState&) const = default;
  std::int32_t partition_epoch(const std::string& topic, std::int32_t partition) const;
  /// "empty", "assigning", "reconciling" or "stable" (ConsumerGroup.state, lower case).
  std::string state() const;
};

using ConsumerGroups = std::map<std::string, ConsumerGroupState>;

/// Applies one consumer-group record (the record the coordinator appends, or a `record` trace
/// event read back with trace::record_from_json(); other record types are ignored) to `groups`,
/// as Kafka's replay does. An OffsetCommit record sets (a tombstone removes) the offset of a
/// group already known. Throws sim::InvariantViolation if a partition would be owned by two
/// members at once (unless `bugs` injects a coordinator that skips revocation).
void replay_record(ConsumerGroups& groups, const records::GroupRecord& record,
                   const InjectedBugs& bugs = {});
/// What replay_record() does with the ConsumerGroupCurrentMemberAssignment record (not a
/// tombstone) of `member` in `g`, without building and reading the record: the member's epochs,
/// state and partitions (each topic's sorted, empty topics left out) and the partitions' owners.
/// The coordinator applies its own records so; a test holds it equal to replay_record().
/// Returns true when the record created the member (it was not one of `g`'s members).
bool apply_current_assignment(ConsumerGroupState& g,
                              const reconciliation::ConsumerGroupMember& member,
                              const InjectedBugs& bugs = {});

class ConsumerGroupCoordinator final : private OffsetsLog::CommitListener {
 public:
  using Sender = std::function<void(sim::NodeId to, Envelope reply)>;
  using NodeNamer = std::function<std::string(sim::NodeId)>;

  ConsumerGroupCoordinator(sim::Kernel& kernel, Tracer& tracer, BrokerConfig config,
                           OffsetsLog& log, const ClusterMetadata& cluster, Sender sender,
                           NodeNamer namer);
  ConsumerGroupCoordinator(const ConsumerGroupCoordinator&) = delete;
  ConsumerGroupCoordinator& operator=(const ConsumerGroupCoordinator&) = delete;

  void on_heartbeat(sim::NodeId from, std::int32_t correlation_id,
                    const ConsumerGroupHeartbeatRequest& request);
  void on_offset_commit(sim::NodeId from, std::int32_t correlation_id,
                        const OffsetCommitRequest& request);
  /// OffsetFetch for a consumer group (OffsetMetadataManager.fetchOffsets): the member id and
  /// epoch, when sent, are validated (ConsumerGroup.validateOffsetFetch): UNKNOWN_MEMBER_ID,
  /// STALE_MEMBER_EPOCH; -1 for a partition without a committed offset.
  void on_offset_fetch(sim::NodeId from, std::int32_t correlation_id,
                       const OffsetFetchRequest& request);
  /// Called for every offset stored (the World feeds its lag monitor with it).
  using OffsetListener =
      std::function<void(const std::string& group, const TopicPartition&, std::int64_t)>;
  void set_offset_listener(OffsetListener listener) { offset_listener_ = std::move(listener); }
  /// A recording's member ids to hand out in place of the seeded draws (the World's; may be null).
  void set_member_id_replay(MemberIdReplay* replay) { member_ids_ = replay; }

  // Classic members of a consumer group (GMM.classicGroup*ToConsumerGroup): JoinGroup reconciles
  // the member against the target assignment like a heartbeat, SyncGroup hands out its assigned
  // partitions, Heartbeat answers REBALANCE_IN_PROGRESS when it must rejoin, LeaveGroup fences.
  void on_classic_join(sim::NodeId from, std::int32_t correlation_id,
                       const JoinGroupRequest& request);
  void on_classic_sync(sim::NodeId from, std::int32_t correlation_id,
                       const SyncGroupRequest& request);
  void on_classic_heartbeat(sim::NodeId from, std::int32_t correlation_id,
                            const HeartbeatRequest& request);
  void on_classic_leave(sim::NodeId from, std::int32_t correlation_id,
                        const LeaveGroupRequest& request);

  // Online migration.
  /// Upgrade (ConsumerGroup.fromClassicGroup + createConsumerGroupRecords): the classic group's
  /// members become STABLE members at its generation with their assignments as target and
  /// current assignment; the records are written; each member's session timer starts with its
  /// classic session timeout.
  void adopt_classic(const ClassicGroupImage& image, const std::string& reason);
  /// An empty consumer group a classic member joins: its tombstones are written and it goes;
  /// returns its offsets (in an image without members).
  ClassicGroupImage release_empty_group(const std::string& group_id);
  /// An empty classic group a consumer-protocol member takes over: its offsets.
  void adopt_offsets(const std::string& group_id, std::map<TopicPartition, std::int64_t> offsets,
                     std::map<TopicPartition, std::int32_t> epochs);
  /// Where a downgraded group goes (the classic coordinator's adopt_group).
  using Downgrader = std::function<void(const ClassicGroupImage&, const std::string& reason)>;
  void set_downgrader(Downgrader d) { downgrader_ = std::move(d); }
  /// Test-only: the world's injected bugs (ModelOptions::bugs).
  void set_injected_bugs(const InjectedBugs& bugs) { bugs_ = bugs; }

  bool has_group(const std::string& group_id) const { return groups_.count(group_id) > 0; }
  bool is_empty(const std::string& group_id) const {
    const auto it = groups_.find(group_id);
    return it == groups_.end() || it->second.members.empty();
  }
  const ConsumerGroups& groups() const { return groups_; }
  /// Member timers alive: four per member that has had one, plus removed members' timers the
  /// kernel may still fire (for tests that memory follows the members, not their churn).
  std::size_t timers_held() const { return 4 * timers_.size() + retired_.size(); }

  /// Failover: the shard of a __consumer_offsets partition goes away with its broker; its
  /// consumer groups and their timers are dropped without answering anyone. Returns snapshots.
  GroupSnapshots unload_partition(std::int32_t partition);
  /// A new leader's load (Kafka's replay + onLoaded): replays the partition's committed records,
  /// then arms a full session timeout for every member and the rebalance timeout of every member
  /// in UNREVOKED_PARTITIONS, measured from now. Returns snapshots of the groups loaded.
  GroupSnapshots load_partition(std::int32_t partition,
                                const std::vector<records::GroupRecord>& records);
  /// Epochs, state and members (epoch, state, assigned) of a group, for trace events.
  ConsumerGroupSnapshot snapshot(const ConsumerGroupState& g) const;

 private:
  InjectedBugs bugs_;
  struct Reply {
    sim::NodeId node;
    std::int32_t correlation_id;
  };
  struct MemberTimers {
    std::unique_ptr<sim::Timer> session;
    std::unique_ptr<sim::Timer> rebalance;
    std::int32_t rebalance_epoch = 0;
    // Classic members only: rejoin after REBALANCE_IN_PROGRESS, and sync after a join, both
    // within the rebalance timeout.
    std::unique_ptr<sim::Timer> join;
    std::unique_ptr<sim::Timer> sync;
  };
  /// What one operation writes; emitted records are replayed at once (Kafka replays on append).
  struct Write {
    std::string group_id;
    std::vector<records::GroupRecord> records;
  };

  /// A KIP-848 heartbeat, or (`classic` set) a classic member's JoinGroup translated into one.
  /// GroupMetadataManager.throwIfConsumerGroupIsFull: `g` is at group.consumer.max.size and
  /// `member_id` is not one of its members (an existing static member is never refused).
  bool group_full(const ConsumerGroupState& g, const std::string& member_id,
                  const std::optional<std::string>& instance_id) const;
  void regular_heartbeat(const Reply& to, const ConsumerGroupHeartbeatRequest& r,
                         const JoinGroupRequest* classic = nullptr);
  /// regular_heartbeat of a heartbeat that changes nothing (a reconciled member at its epoch,
  /// its metadata unchanged, the group's target up to date), answered without copying the
  /// member: true when it was such a heartbeat and is answered, false (nothing done) otherwise.
  bool steady_heartbeat(const Reply& to, const ConsumerGroupHeartbeatRequest& r);
  /// A NONE answer to a member: its id, its epoch and group.consumer.heartbeat.interval.ms.
  ConsumerGroupHeartbeatResponse answer(const std::string& member_id,
                                        std::int32_t member_epoch) const;
  /// The member a heartbeat is from, as its group has it (a copy), or a new one.
  struct HeartbeatMember {
    ConsumerGroupMemberState member;
    bool new_member = false;
    std::optional<ConsumerGroupMemberState> replaced;  // a static member this join replaces
  };
  /// regular_heartbeat's member lookup: static (by instance id) or dynamic (by member id), and
  /// the member epoch check; NONE, or the error that refuses the heartbeat.
  ErrorCode lookup_member(const ConsumerGroupState& before, const ConsumerGroupHeartbeatRequest& r,
                          bool classic, HeartbeatMember& out) const;
  /// regular_heartbeat's target assignment (assign_server over the members in Java HashMap order):
  /// a ConsumerGroupTargetAssignmentMember record per changed target, then the metadata record.
  /// `base` is g.member_table's capacity and puts before the heartbeat's records: Kafka builds
  /// its HashMap of members from the group's members as they were (the TimelineHashMap's order),
  /// then the heartbeat's new member.
  void compute_target_assignment(Write& w, ConsumerGroupState& g, std::int64_t now_ms,
                                 std::pair<std::size_t, std::uint64_t> base);
  /// regular_heartbeat's reconciliation (CurrentAssignmentBuilder) of the heartbeat's member,
  /// with its rebalance timer.
  void reconcile_member(Write& w, ConsumerGroupState& g, const ConsumerGroupHeartbeatRequest& r,
                        bool subscription_changed, bool classic);
  /// Fences a member (leave, session/rebalance/join/sync timeout) or, when only classic members
  /// would remain, downgrades the group (GMM.consumerGroupFenceMembers).
  void fence_or_downgrade(const std::string& group_id, const std::string& member_id,
                          const std::optional<Reply>& to, Message response,
                          const std::string& reason);
  bool downgrade_allowed(const ConsumerGroupState& g, const std::string& leaving) const;
  void downgrade(const std::string& group_id, const std::string& leaving,
                 const std::optional<Reply>& to, Message response, const std::string& reason);
  void on_classic_timer(const std::string& group_id, const std::string& member_id, const char* why);
  /// ConsumerGroup.waitingOnUnreleasedPartition: a partition of the member's target is still
  /// owned by another member.
  bool waiting_on_unreleased(const ConsumerGroupState& g, const ConsumerGroupMemberState& m) const;
  /// Uuid.randomUuid().toString() for a classic member joining without an id (deterministic).
  /// A classic member's id in a consumer group; for `consumer` the recording's next id when one
  /// is replayed (set_member_id_replay).
  std::string new_member_id(const std::string& group_id, const std::string& client_id,
                            const std::string& consumer);
  void leave(const Reply& to, const ConsumerGroupHeartbeatRequest& r);
  void fence_member(Write& w, const std::string& member_id);
  void remove_member_records(Write& w, const ConsumerGroupMemberState& m);
  void on_session_timeout(const std::string& group_id, const std::string& member_id);
  void on_rebalance_timeout(const std::string& group_id, const std::string& member_id);
  MemberTimers& timers(const std::string& group_id, const std::string& member_id);
  /// Cancels a removed member's timers and lets them go (timers() makes new ones if it is back).
  void retire_timers(const std::string& group_id, const std::string& member_id);

  /// Replays `rec` into the group state and keeps it for the log.
  void emit(Write& w, records::GroupRecord rec);
  /// Appends the write's records; `response` goes out once they (and every earlier write)
  /// have committed. Emits group.state / group.epoch / member.epoch for what changed.
  void commit(Write& w, const std::optional<Reply>& to, Message response,
              const std::string& reason);
  void reply(const Reply& to, Message response);
  /// An OffsetCommit's records committed: its offsets are stored (OffsetFetch sees them), and
  /// the request is answered.
  void on_offsets_committed(const std::string& group_id, std::span<const CommittedOffset> offsets,
                            sim::NodeId node, std::int32_t correlation_id) override;

  records::ConsumerGroupMemberMetadata member_metadata_record(
      const std::string& group_id, const ConsumerGroupMemberState& m) const;
  records::ConsumerGroupCurrentMemberAssignment current_assignment_record(
      const std::string& group_id, const std::string& consumer,
      const reconciliation::ConsumerGroupMember& member) const;
  /// emit() of current_assignment_record(group_id, m), applied with apply_current_assignment().
  void emit_current_assignment(Write& w, const std::string& group_id,
                               const ConsumerGroupMemberState& m) {
    emit_current_assignment(w, group_id, m.consumer, m.member);
  }
  /// The same for the member `member` of consumer `consumer` (its other metadata unchanged):
  /// a reconciliation's next member, without copying the rest of the member's state.
  void emit_current_assignment(Write& w, const std::string& group_id, const std::string& consumer,
                               const reconciliation::ConsumerGroupMember& member);
  std::int64_t metadata_hash(const ConsumerGroupState& g) const;
  std::string preferred_assignor(const ConsumerGroupState& g) const;

  sim::Kernel& kernel_;
  Tracer& tracer_;
  BrokerConfig config_;
  OffsetsLog& log_;
  const ClusterMetadata& cluster_;
  Sender sender_;
  NodeNamer namer_;
  ConsumerGroups groups_;
  OffsetListener offset_listener_;
  /// (group id, member id), hashed and compared as views: a heartbeat finds its member's timers
  /// without building the pair of strings or walking a tree of 22-character member ids. Never
  /// iterated.
  using MemberKeyView = std::pair<std::string_view, std::string_view>;
  struct MemberKeyHash {
    using is_transparent = void;
    std::size_t operator()(const MemberKeyView& k) const {
      return std::hash<std::string_view>{}(k.first) * 1000003 ^
             std::hash<std::string_view>{}(k.second);
    }
    std::size_t operator()(const std::pair<std::string, std::string>& k) const {
      return (*this)(MemberKeyView{k.first, k.second});
    }
  };
  struct MemberKeyEqual {
    using is_transparent = void;
    static MemberKeyView view(const std::pair<std::string, std::string>& k) {
      return {k.first, k.second};
    }
    static MemberKeyView view(const MemberKeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
  std::unordered_map<std::pair<std::string, std::string>, MemberTimers, MemberKeyHash,
                     MemberKeyEqual>
      timers_;
  sim::RetiredTimers retired_;  // timers of removed members the kernel may still fire
  Downgrader downgrader_;
  std::uint64_t member_ids_issued_ = 0;
  MemberIdReplay* member_ids_ = nullptr;  // compare's replayed member ids (none: the seeded draw)
  // What the trace last said about each group and member, to emit only changes.
  struct Traced {
    std::string state;
    std::int32_t epoch = -1;
    std::int32_t assignment_epoch = -1;
  };
  std::map<std::string, Traced> traced_;
  /// Each group's members' consumer names in member-id order (group.epoch's `members`), kept up
  /// to date record by record (a memmove, not a walk of the members map per epoch bump).
  struct MemberNames {
    std::vector<std::string> ids;    // sorted
    std::vector<std::string> names;  // names[i] is the consumer of ids[i]
  };
  const std::vector<std::string>& member_names(const ConsumerGroupState& g);
  void sync_member_name(const std::string& group_id, const std::string& member_id);
  std::map<std::string, MemberNames> member_names_;
  /// commit()'s members with a new current assignment (reused: no allocation per write; taken
  /// out while a commit runs).
  std::vector<const std::pair<const std::string, ConsumerGroupMemberState>*> touched_;
};

}  // namespace rsim
