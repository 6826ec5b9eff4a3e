// Typed Kafka configuration: the consumer configs of one consumer under one protocol variant,
// and the broker (cluster) configs, with Kafka 4.5's defaults. Keys are Kafka's, verbatim.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace rsim {

struct ConsumerConfig {
  std::string group_protocol = "classic";  // classic | consumer | share
  std::string group_id;
  std::string client_id;  // default: consumer-<group.id>-<n> (n: the process's sequence) or -<group.instance.id>
  std::optional<std::string> group_instance_id;
  std::optional<std::string> client_rack;
  std::int64_t session_timeout_ms = 45000;
  std::int64_t heartbeat_interval_ms = 3000;
  std::int64_t max_poll_interval_ms = 300000;
  std::int32_t max_poll_records = 500;
  bool enable_auto_commit = true;
  std::int64_t auto_commit_interval_ms = 5000;
  /// Client assignor short names in configured order: range, roundrobin, sticky, cooperative-sticky.
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
  std::int64_t group_coordinator_append_linger_ms = -1;  // -1: adaptive (4.5 default)
  std::int64_t broker_session_timeout_ms = 9000;  // KRaft: the controller fences a silent broker
  // KIP-848 (consumer protocol) group configs.
  std::int64_t group_consumer_session_timeout_ms = 45000;
  std::int64_t group_consumer_heartbeat_interval_ms = 5000;
  std::int64_t group_consumer_assignment_interval_ms = 1000;
  std::vector<std::string> group_consumer_assignors{"uniform", "range"};
  std::int32_t group_consumer_max_size = 2147483647;  // members per consumer group
  /// ConsumerGroupMigrationPolicy: bidirectional | upgrade | downgrade | disabled.
  std::string group_consumer_migration_policy = "bidirectional";
  bool upgrade_enabled() const {
    return group_consumer_migration_policy == "bidirectional" || group_consumer_migration_policy == "upgrade";
  }
  bool downgrade_enabled() const {
    return group_consumer_migration_policy == "bidirectional" || group_consumer_migration_policy == "downgrade";
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
  // The coordinator's write latency is a simulator knob, not a Kafka config: ClusterSpec::write_latency.
};

/// A share group's effective configs (what the group coordinator and the share-partition
/// leaders use): the broker's group.share.* values overridden by the group's own configs
/// (Kafka's GroupConfig, set per group with incrementalAlterConfigs on the GROUP resource, e.g.
/// `kafka-configs.sh --entity-type groups --entity-name G --alter --add-config ...`).
struct ShareGroupConfig {
  std::int64_t session_timeout_ms = 45000;        // share.session.timeout.ms
  std::int64_t heartbeat_interval_ms = 5000;      // share.heartbeat.interval.ms
  std::int64_t assignment_interval_ms = 1000;     // share.assignment.interval.ms
  std::int64_t record_lock_duration_ms = 30000;   // share.record.lock.duration.ms
  std::int32_t delivery_count_limit = 5;          // share.delivery.count.limit
  std::int32_t partition_max_record_locks = 2000; // share.partition.max.record.locks
  /// share.auto.offset.reset: "latest", "earliest" or "by_duration" (then the duration).
  std::string auto_offset_reset = "latest";
  std::int64_t auto_offset_reset_duration_ms = 0;
  std::string isolation_level = "read_uncommitted";  // share.isolation.level
  bool renew_acknowledge_enable = true;               // share.renew.acknowledge.enable
};

/// `broker`'s share-group values overridden by a group's (validated) configs.
ShareGroupConfig resolve_share_group_config(const BrokerConfig& broker,
                                            const std::map<std::string, nlohmann::json>& group_config);

/// `config` merged with `config_by_protocol[group_protocol_of(variant)]`, then the variant's
/// own settings (partition.assignment.strategy for classic-*), then defaults.
ConsumerConfig resolve_consumer_config(const ConsumerSpec& consumer, const std::string& variant,
                                       int client_sequence);
BrokerConfig resolve_broker_config(const ClusterSpec& cluster);

/// How a Kafka config value is written and checked. Values may be JSON numbers/booleans/arrays or
/// strings as in a Kafka .properties file ("45000", "true", "range,sticky").
enum class ConfigValueType { Int, Long, Bool, String, List };

/// One Kafka config key the simulator models, with Kafka's type, accepted range and default.
struct ConfigKeySpec {
  std::string key;
  ConfigValueType type = ConfigValueType::Int;
  std::int64_t min = 0;  // Int/Long only
  std::int64_t max = 0;  // Int/Long only
  /// String: the accepted values; List: the accepted items (after class names are shortened).
  std::vector<std::string> allowed;
  std::string kafka_default;  // as Kafka documents it, for docs and the schema
  std::string doc;            // one line
};

/// The consumer configs the simulator models (sorted by key). group.id and group.protocol are not
/// among them: the consumer's `group` and the protocol variant set those.
const std::vector<ConfigKeySpec>& consumer_config_specs();
/// The broker (cluster) configs the simulator models (sorted by key).
const std::vector<ConfigKeySpec>& broker_config_specs();
const ConfigKeySpec* find_consumer_config(const std::string& key);
const ConfigKeySpec* find_broker_config(const std::string& key);
/// The group configs the simulator models (Kafka 4.4 GroupConfig's share.* keys), sorted.
const std::vector<ConfigKeySpec>& group_config_specs();
const ConfigKeySpec* find_group_config(const std::string& key);
/// Real GroupConfig keys the simulator does not model (consumer.*, streams.*, DLQ).
bool is_unmodelled_group_config(const std::string& key);
/// java.time.Duration.parse of an ISO-8601 duration (PnDTnHnMn.nS), in whole milliseconds;
/// nullopt when it does not parse.
std::optional<std::int64_t> parse_iso8601_duration_ms(const std::string& text);
/// Kafka's GroupConfig.validate on normalized values: the broker's min/max bounds of each
/// share key and session > heartbeat; each problem is (key, Kafka's message).
std::vector<std::pair<std::string, std::string>> validate_share_group_config(
    const std::map<std::string, nlohmann::json>& config);
/// Real Kafka configs the simulator does not model (rejected with a message saying so).
bool is_unmodelled_consumer_config(const std::string& key);
bool is_unmodelled_broker_config(const std::string& key);
/// Consumer keys Kafka rejects under a group protocol ("classic", "consumer"); empty for others.
const std::vector<std::string>& consumer_keys_rejected_under(const std::string& group_protocol);

/// Checks one value and returns it normalized (integers as numbers, booleans as booleans, lists
/// as arrays, assignor class names as short names), or the problem as a short lowercase message.
/// `problem_suffix` receives e.g. "/1" when the bad item is element 1 of a JSON array.
struct ConfigValueResult {
  nlohmann::json value;
  std::string problem;  // empty when fine
  std::string problem_suffix;
};
ConfigValueResult normalize_config_value(const ConfigKeySpec& spec, const nlohmann::json& raw);
/// "range" for "range" or "org.apache.kafka.clients.consumer.RangeAssignor"; empty if unknown.
std::string client_assignor_short_name(const std::string& name);
/// "uniform" for "uniform" or "org.apache.kafka.coordinator.group.assignor.UniformAssignor".
std::string server_assignor_short_name(const std::string& name);

}  // namespace rsim
