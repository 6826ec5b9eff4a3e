// Kafka configuration: how the typed configs (models/spec/kafka_config.hpp) are resolved from a
// scenario's specs, and the config keys the simulator models with their types, ranges and Kafka's
// defaults. Keys are Kafka's, verbatim.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/spec/config_value.hpp"
#include "models/spec/kafka_config.hpp"
#include "models/spec/scenario_spec.hpp"

namespace rsim {

/// `broker`'s share-group values overridden by a group's (validated) configs.
ShareGroupConfig resolve_share_group_config(const BrokerConfig& broker,
                                            const ConfigMap& group_config);

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
    const ConfigMap& config);
/// Real Kafka configs the simulator does not model (rejected with a message saying so).
bool is_unmodelled_consumer_config(const std::string& key);
bool is_unmodelled_broker_config(const std::string& key);
/// Consumer keys Kafka rejects under a group protocol ("classic", "consumer"); empty for others.
const std::vector<std::string>& consumer_keys_rejected_under(const std::string& group_protocol);

/// Checks one value and returns it normalized (integers as numbers, booleans as booleans, lists
/// as arrays, assignor class names as short names), or the problem as a short lowercase message.
/// `problem_suffix` receives e.g. "/1" when the bad item is element 1 of a JSON array.
struct ConfigValueResult {
  ConfigValue value;
  std::string problem;  // empty when fine
  std::string problem_suffix;
};
ConfigValueResult normalize_config_value(const ConfigKeySpec& spec, const nlohmann::json& raw);
/// A normalized value as JSON (nlohmann's to_json hook, found by argument-dependent lookup: `j =
/// v`): an integer, a boolean, a string or an array of strings, as normalize_config_value read it.
template <class BasicJson>
void to_json(BasicJson& j, const ConfigValue& v) {
  std::visit([&](const auto& x) { j = x; }, v.variant());
}

/// "range" for "range" or "org.apache.kafka.clients.consumer.RangeAssignor"; empty if unknown.
std::string client_assignor_short_name(const std::string& name);
/// "uniform" for "uniform" or "org.apache.kafka.coordinator.group.assignor.UniformAssignor".
std::string server_assignor_short_name(const std::string& name);

}  // namespace rsim
