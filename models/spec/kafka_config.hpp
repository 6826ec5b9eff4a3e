// Typed Kafka configuration: the consumer configs of one consumer under one protocol variant,
// and the broker (cluster) and share-group configs, with Kafka 4.5's defaults. Keys are Kafka's,
// verbatim. Plain data: resolving them from a scenario is models/protocol/config.hpp's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

struct ConsumerConfig {
  std::string group_protocol = "classic";  // classic | consumer | share
  std::string group_id;
  std::string client_id;  // default: consumer-<group.id>-<n> (n: the process's sequence) or
                          // -<group.instance.id>
  std::optional<std::string> group_instance_id;
  std::optional<std::string> client_rack;
  std::int64_t session_timeout_ms = 45000;
  std::int64_t heartbeat_interval_ms = 3000;
  std::int64_t max_poll_interval_ms = 300000;
  std::int32_t max_poll_records = 500;
  bool enable_auto_commit = true;
  std::int64_t auto_commit_interval_ms = 5000;
  /// Client assignor short names in configured order: range, roundrobin, sticky,
  /// cooperative-sticky.
  std::vector<std::string> partition_assignment_strategy{"range", "cooperative-sticky"};
  std::optional<std::string> group_remote_assignor;  // consumer protocol: uniform | range
  std::int64_t retry_backoff_ms = 100;
  std::int64_t retry_backoff_max_ms = 1000;
  std::int64_t reconnect_backoff_ms = 50;
  std::int64_t reconnect_backoff_max_ms = 1000;
  std::int64_t request_timeout_ms = 30000;
  std::int64_t default_api_timeout_ms = 60000;
  std::int64_t metadata_max_age_ms = 300000;
  std::int64_t fetch_max_wait_ms = 500;
  std::string auto_offset_reset = "latest";
  // KIP-932 share consumer (group.protocol=share).
  std::string share_acknowledgement_mode = "implicit";  // implicit | explicit
  std::string share_acquire_mode = "batch_optimized";   // batch_optimized | record_limit
};

struct BrokerConfig {
  std::int64_t group_initial_rebalance_delay_ms = 3000;
  std::int64_t group_min_session_timeout_ms = 6000;
  std::int64_t group_max_session_timeout_ms = 1800000;
  std::int32_t group_max_size = 2147483647;
  std::int32_t offsets_topic_num_partitions = 50;
  std::int32_t offsets_topic_replication_factor = 3;
  std::int64_t offsets_commit_timeout_ms = 5000;
  // Replication of __consumer_offsets (models/broker/replication.hpp).
  std::int64_t replica_fetch_wait_max_ms = 500;
  std::int64_t replica_lag_time_max_ms = 30000;
  std::int64_t group_coordinator_append_linger_ms = -1;  // -1: adaptive (4.5 default)
  std::int64_t broker_session_timeout_ms = 9000;  // KRaft: the controller fences a silent broker
  // The KRaft controller quorum (models/broker/controller_quorum.hpp), Kafka's defaults.
  std::int64_t broker_heartbeat_interval_ms = 2000;
  std::int64_t controller_quorum_fetch_timeout_ms = 2000;
  std::int64_t controller_quorum_election_timeout_ms = 1000;
  std::int64_t controller_quorum_election_backoff_max_ms = 1000;
  /// How long the active controller's batch accumulator waits for more records before it
  /// appends and flushes a batch (a CreatePartitions is committed that much later).
  std::int64_t controller_quorum_append_linger_ms = 25;
  // KIP-848 (consumer protocol) group configs.
  std::int64_t group_consumer_session_timeout_ms = 45000;
  std::int64_t group_consumer_heartbeat_interval_ms = 5000;
  std::int64_t group_consumer_assignment_interval_ms = 1000;
  std::vector<std::string> group_consumer_assignors{"uniform", "range"};
  std::int32_t group_consumer_max_size = 2147483647;  // members per consumer group
  /// ConsumerGroupMigrationPolicy: bidirectional | upgrade | downgrade | disabled.
  std::string group_consumer_migration_policy = "bidirectional";
  bool upgrade_enabled() const {
    return group_consumer_migration_policy == "bidirectional" ||
           group_consumer_migration_policy == "upgrade";
  }
  bool downgrade_enabled() const {
    return group_consumer_migration_policy == "bidirectional" ||
           group_consumer_migration_policy == "downgrade";
  }
  // Bounds Kafka enforces at broker start-up on the two values above (GroupCoordinatorConfig).
  std::int64_t group_consumer_min_session_timeout_ms = 45000;
  std::int64_t group_consumer_max_session_timeout_ms = 60000;
  std::int64_t group_consumer_min_heartbeat_interval_ms = 5000;
  std::int64_t group_consumer_max_heartbeat_interval_ms = 15000;
  // KIP-932 share-group configs (GroupCoordinatorConfig, ShareGroupConfig).
  std::int64_t group_share_session_timeout_ms = 45000;
  std::int64_t group_share_heartbeat_interval_ms = 5000;
  std::int64_t group_share_assignment_interval_ms = 1000;
  std::int32_t group_share_max_size = 200;
  std::int64_t group_share_record_lock_duration_ms = 30000;
  std::int32_t group_share_delivery_count_limit = 5;
  std::int32_t group_share_partition_max_record_locks = 2000;
  std::int32_t share_coordinator_state_topic_num_partitions = 50;
  std::int32_t share_coordinator_snapshot_update_records_per_snapshot = 500;
  // The coordinator's write latency is a simulator knob, not a Kafka config:
  // ClusterSpec::write_latency.
};

/// A share group's effective configs (what the group coordinator and the share-partition
/// leaders use): the broker's group.share.* values overridden by the group's own configs
/// (Kafka's GroupConfig, set per group with incrementalAlterConfigs on the GROUP resource, e.g.
/// `kafka-configs.sh --entity-type groups --entity-name G --alter --add-config ...`).
struct ShareGroupConfig {
  std::int64_t session_timeout_ms = 45000;         // share.session.timeout.ms
  std::int64_t heartbeat_interval_ms = 5000;       // share.heartbeat.interval.ms
  std::int64_t assignment_interval_ms = 1000;      // share.assignment.interval.ms
  std::int64_t record_lock_duration_ms = 30000;    // share.record.lock.duration.ms
  std::int32_t delivery_count_limit = 5;           // share.delivery.count.limit
  std::int32_t partition_max_record_locks = 2000;  // share.partition.max.record.locks
  /// share.auto.offset.reset: "latest", "earliest" or "by_duration" (then the duration).
  std::string auto_offset_reset = "latest";
  std::int64_t auto_offset_reset_duration_ms = 0;
  std::string isolation_level = "read_uncommitted";  // share.isolation.level
  bool renew_acknowledge_enable = true;              // share.renew.acknowledge.enable
};

}  // namespace rsim
