// Typed Kafka configuration: the consumer configs of one consumer under one protocol variant,
// and the broker (cluster) configs, with Kafka 4.5's defaults. Keys are Kafka's, verbatim.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace rsim {

struct ConsumerConfig {
  std::string group_protocol = "classic";  // classic | consumer | share
  std::string group_id;
  std::string client_id;  // default: consumer-<group.id>-<n> as Kafka numbers them
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
  // KIP-848 (consumer protocol) group configs.
  std::int64_t group_consumer_session_timeout_ms = 45000;
  std::int64_t group_consumer_heartbeat_interval_ms = 5000;
  std::int64_t group_consumer_assignment_interval_ms = 1000;
  std::vector<std::string> group_consumer_assignors{"uniform", "range"};
  /// Simulator setting, not a Kafka key: time from appending a __consumer_offsets record to its
  /// commit (replication). 0 = a single-replica idle shard, as in the reference runs.
  double sim_write_latency_ms = 0;
};

/// `config` merged with `config_by_protocol[group_protocol_of(variant)]`, then the variant's
/// own settings (partition.assignment.strategy for classic-*), then defaults.
ConsumerConfig resolve_consumer_config(const ConsumerSpec& consumer, const std::string& variant,
                                       int client_sequence);
BrokerConfig resolve_broker_config(const ClusterSpec& cluster);

}  // namespace rsim
