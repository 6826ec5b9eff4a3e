// The share-group (KIP-932) side of the group coordinator: ShareGroupHeartbeat (apiKey 76) after
// GroupMetadataManager.shareGroupHeartbeat (kafka-share-groups.md §2): member and group epochs as
// in KIP-848, the `simple` assignor over *initialized* share-partitions only, the
// group.share.assignment.interval.ms throttle, direct reconciliation (no revocation phase, no
// rebalance timeout, no static members), the session timeout, and the initialization handshake
// with the share coordinator. Records 10-15 go to __consumer_offsets through the OffsetsLog;
// the response leaves once they commit.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/assignors/server_assignor.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/protocol/cluster.hpp"
#include "models/protocol/config.hpp"
#include "models/protocol/share_messages.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"

namespace rsim {

class ShareGroupCoordinator {
 public:
  using Reply = std::function<void(ShareGroupHeartbeatResponse)>;
  /// Asks the share coordinator to initialize share-partitions of `group`
  /// (InitializeShareGroupState with `start_offset`: -1 for a topic new to the group); `done` runs
  /// when that completed.
  using Initializer = std::function<void(
      const std::string& group, const TopicPartitions& partitions, std::int32_t state_epoch,
      std::int64_t start_offset, std::function<void()> done)>;

  /// `group_configs`: the groups' own configs (share.session.timeout.ms, ...); other groups use
  /// the broker's group.share.* values.
  ShareGroupCoordinator(sim::Kernel& kernel, Tracer& tracer, const BrokerConfig& config,
                        OffsetsLog& log, const ClusterMetadata& cluster, Initializer initializer,
                        std::map<std::string, ShareGroupConfig> group_configs = {});
  ShareGroupCoordinator(const ShareGroupCoordinator&) = delete;
  ShareGroupCoordinator& operator=(const ShareGroupCoordinator&) = delete;

  /// One heartbeat of the member the scenario calls `consumer`.
  void on_heartbeat(const ShareGroupHeartbeatRequest& request, const std::string& consumer,
                    Reply reply);

  /// The group's epoch (0 if unknown), for tests.
  std::int32_t group_epoch(const std::string& group) const;

 private:
  struct Member {
    std::string member_id;
    std::string consumer;
    std::int32_t epoch = 0;
    std::int32_t previous_epoch = 0;
    std::vector<std::string> subscribed;  // sorted
    std::string client_id;
    std::optional<std::string> rack;
    TopicPartitions assigned;              // current assignment, sorted
    assignors::MemberAssignment target;    // target assignment (topic -> partitions)
    bool target_written = false;           // a ShareGroupTargetAssignmentMember exists
    std::uint64_t joined = 0;              // join order, for Java HashMap order of member ids
    std::uint64_t session_generation = 0;  // the latest heartbeat's session deadline
  };
  struct Group {
    std::string group_id;
    std::int32_t epoch = 1;
    std::int32_t assignment_epoch = 1;
    sim::SimTime assignment_time{0};
    bool assignment_computed = false;
    std::string metadata_hash;
    std::map<std::string, Member> members;
    std::map<std::string, std::set<std::int32_t>> initialized;
    std::map<std::string, std::set<std::int32_t>> initializing;
    std::map<std::string, sim::SimTime> initializing_since;  // topic -> when it started
    std::set<std::string> known_topics;                      // topics ever initialized
    std::string traced_state;
    std::uint64_t next_join = 0;
  };
  using Records = std::vector<records::GroupRecord>;

  std::string metadata_hash(const Group& g) const;
  bool initialized_pending(const Group& g) const;
  void update_target(Group& g, Records& records);
  void reconcile(Group& g, Member& m, Records& records);
  void remove_member(Group& g, const std::string& member_id, Records& records,
                     const std::string& reason);
  void start_initialization(Group& g, Records& records, std::vector<std::function<void()>>& after);
  void on_initialized(const std::string& group, const TopicPartitions& partitions);
  void on_session_expired(const std::string& group, const std::string& member_id,
                          std::uint64_t generation);
  void write(Group& g, Records records, std::function<void()> then);
  void trace_state(Group& g, const std::string& reason);
  records::ShareGroupStatePartitionMetadata state_partition_metadata(const Group& g) const;
  records::ShareGroupCurrentMemberAssignment current_assignment_record(const Group& g,
                                                                       const Member& m) const;

  sim::Kernel& kernel_;
  Tracer& tracer_;
  const BrokerConfig& config_;
  std::map<std::string, ShareGroupConfig> group_configs_;
  ShareGroupConfig broker_defaults_;
  const ShareGroupConfig& group_config(const std::string& group) const;
  OffsetsLog& log_;
  const ClusterMetadata& cluster_;
  Initializer initializer_;
  std::map<std::string, Group> groups_;
  std::uint64_t next_session_ = 0;  // session deadlines, numbered across all members
};

}  // namespace rsim
