// The broker-side group coordinator for classic groups: JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup and OffsetCommit handling, the join/sync/heartbeat timers, and the records it
// appends to __consumer_offsets (GroupMetadata, OffsetCommit). One instance serves every group
// of the partitions its broker leads; requests are handled one at a time, in arrival order.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/coordinator/classic_group.hpp"
#include "models/coordinator/group_conversion.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/group_snapshots.hpp"
#include "models/protocol/member_id_replay.hpp"
#include "models/protocol/messages.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"
#include "sim/rng.hpp"

namespace rsim {

/// Kafka's coordinator partition for a group: Utils.abs(groupId.hashCode()) % partitions,
/// with Java's String.hashCode over UTF-16 code units.
std::int32_t java_string_hash(const std::string& s);
std::int32_t coordinator_partition(const std::string& group_id, std::int32_t num_partitions);

class GroupCoordinator final : private OffsetsLog::CommitListener {
 public:
  using Sender = std::function<void(sim::NodeId to, Envelope reply)>;
  /// Maps a client node to the scenario's consumer name (for trace events).
  using NodeNamer = std::function<std::string(sim::NodeId)>;

  GroupCoordinator(sim::Kernel& kernel, Tracer& tracer, sim::Rng rng, BrokerConfig config,
                   OffsetsLog& log, Sender sender, NodeNamer namer);
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  void on_request(sim::NodeId from, const Envelope& request);

  const ClassicGroup* group(const std::string& group_id) const;
  /// Timers of removed members still held (until the kernel can no longer fire them).
  std::size_t retired_timers() const { return retired_timers_.size(); }
  /// The committed offsets of a group (what an OffsetFetch reads): stored when the OffsetCommit
  /// records commit.
  const std::map<TopicPartition, std::int64_t>* committed_offsets(
      const std::string& group_id) const;
  /// Called for every offset stored (the World feeds its lag monitor with it).
  using OffsetListener =
      std::function<void(const std::string& group, const TopicPartition&, std::int64_t)>;
  void set_offset_listener(OffsetListener listener) { offset_listener_ = std::move(listener); }
  /// A recording's member ids to hand out in place of the seeded draws (the World's; may be null).
  void set_member_id_replay(MemberIdReplay* replay) { member_ids_ = replay; }

  // Online migration (group.consumer.migration.policy; the World's Broker routes the requests).
  /// Why a classic group may not be upgraded to a consumer group now (GMM.validateOnlineUpgrade),
  /// or "" when it may.
  std::string upgrade_refusal(const std::string& group_id) const;
  /// The group leaves this coordinator (upgrade, or an empty group a consumer-protocol member
  /// takes over): parked JoinGroup/SyncGroup answers get REBALANCE_IN_PROGRESS, its timers stop,
  /// a GroupMetadata tombstone is written. Returns what the consumer-group coordinator builds on.
  ClassicGroupImage release_group(const std::string& group_id, const std::string& reason);
  /// Downgrade (ClassicGroup.fromConsumerGroup + createClassicGroupRecords): the group arrives
  /// Stable at `image.generation_id` with its members' assignments, a GroupMetadata record is
  /// written, every member's session timer starts, and a rebalance begins (prepareRebalance).
  void adopt_group(const ClassicGroupImage& image, const std::string& reason);
  /// An empty consumer group became classic (a classic member joined it): its offsets.
  void adopt_offsets(const std::string& group_id, std::map<TopicPartition, std::int64_t> offsets,
                     std::map<TopicPartition, std::int32_t> epochs);

  /// Failover. The shard of a __consumer_offsets partition goes away with its broker: its groups
  /// and their timers are dropped without answering anyone (the connections died with it).
  /// Returns the snapshots of the groups dropped.
  GroupSnapshots unload_partition(std::int32_t partition);
  /// A new leader's load: rebuilds the partition's groups by replaying its committed records
  /// (last GroupMetadata per group, OffsetCommit records in order), as Kafka restores them:
  /// Stable with the recorded generation and members (Empty without), each member with a fresh
  /// session timer. Returns the snapshots of the groups loaded.
  GroupSnapshots load_partition(std::int32_t partition,
                                const std::vector<records::GroupRecord>& records);
  /// What is durable of a group: state, generation, protocol, leader, members (id, instance id,
  /// client id, timeouts, subscription, assignment) and committed offsets.
  ClassicGroupSnapshot snapshot(const ClassicGroup& g) const;

 private:
  struct Reply {
    sim::NodeId node;
    std::int32_t correlation_id;
  };
  void reply(const Reply& to, Message response);
  /// Replies once every record appended so far has committed (Heartbeat, LeaveGroup).
  void reply_after_pending_writes(const Reply& to, Message response);

  void on_join_group(const Reply& from, const JoinGroupRequest& r);
  void on_sync_group(const Reply& from, const SyncGroupRequest& r);
  void on_heartbeat(const Reply& from, const HeartbeatRequest& r);
  void on_leave_group(const Reply& from, const LeaveGroupRequest& r);
  void on_offset_commit(const Reply& from, const OffsetCommitRequest& r);
  void on_offset_fetch(const Reply& from, const OffsetFetchRequest& r);

  void join_new_member(ClassicGroup& g, const Reply& from, const JoinGroupRequest& r);
  void join_existing_member(ClassicGroup& g, const Reply& from, const JoinGroupRequest& r);
  void add_member_then_rebalance_or_complete_join(ClassicGroup& g, const Reply& from,
                                                  const JoinGroupRequest& r,
                                                  const std::string& member_id);
  void update_member_then_rebalance_or_complete_join(ClassicGroup& g, ClassicGroupMember& m,
                                                     const Reply& from, const JoinGroupRequest& r,
                                                     const std::string& reason);
  /// KIP-345: a known group.instance.id joined with an empty member id (a restart).
  void update_static_member_then_rebalance_or_complete_join(ClassicGroup& g, const Reply& from,
                                                            const JoinGroupRequest& r,
                                                            const std::string& old_id,
                                                            const std::string& new_id);
  ClassicGroupMember& replace_static_member(ClassicGroup& g, const std::string& old_id,
                                            const std::string& new_id, const std::string& consumer);
  void maybe_prepare_rebalance_or_complete_join(ClassicGroup& g, const std::string& reason);
  void prepare_rebalance(ClassicGroup& g, const std::string& reason);
  void maybe_complete_join_phase(ClassicGroup& g);
  void on_join_timer(const std::string& group_id);
  void complete_join(ClassicGroup& g);
  void on_sync_timer(const std::string& group_id, std::int32_t generation);
  void on_member_heartbeat_expired(const std::string& group_id, const std::string& member_id);
  void on_pending_member_expired(const std::string& group_id, const std::string& member_id);
  void remove_member(ClassicGroup& g, const std::string& member_id, const std::string& reason);
  /// GroupMetadataManager.acceptJoiningMember: whether group.max.size lets `member_id` join.
  bool accept_joining_member(const ClassicGroup& g, const std::string& member_id) const;
  void rearm_heartbeat(ClassicGroup& g, ClassicGroupMember& m, std::int64_t timeout_ms);
  void answer_join(ClassicGroup& g, ClassicGroupMember& m, bool skip_assignment = false);
  void transition(ClassicGroup& g, ClassicGroupState to, const std::string& reason);
  /// Retires every timer of a group (cancelled; freed once the kernel no longer holds them).
  void retire_timers(ClassicGroup& g);
  /// Kafka's member validation (CG:798-818): UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID / NONE.
  ErrorCode validate_member(const ClassicGroup& g, const std::string& member_id,
                            const std::optional<std::string>& instance_id) const;
  /// `<group.instance.id or client.id>-<UUID>`; for `consumer` the recording's next id when one
  /// is replayed (set_member_id_replay).
  std::string generate_member_id(const std::string& client_id,
                                 const std::optional<std::string>& instance_id,
                                 const std::string& consumer);

  /// An OffsetCommit's records committed: its offsets are stored (OffsetFetch sees them), and
  /// the request is answered.
  void on_offsets_committed(const std::string& group_id, std::span<const CommittedOffset> offsets,
                            sim::NodeId node, std::int32_t correlation_id) override;
  void append(std::vector<records::GroupRecord> records, std::function<void()> on_commit) {
    log_.append(std::move(records), std::move(on_commit));
  }
  records::GroupMetadata group_metadata_record(const ClassicGroup& g) const;

  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Rng rng_;
  BrokerConfig config_;
  OffsetsLog& log_;
  Sender sender_;
  NodeNamer namer_;
  MemberIdReplay* member_ids_ = nullptr;  // compare's replayed member ids (none: the seeded draw)
  std::map<std::string, std::unique_ptr<ClassicGroup>> groups_;
  OffsetListener offset_listener_;
  // Timers of removed members: kept while the kernel may still fire them (removal can happen
  // inside their own callback, and cancelled entries stay queued).
  sim::RetiredTimers retired_timers_;
};

}  // namespace rsim
