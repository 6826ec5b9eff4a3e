#include "models/protocol/config.hpp"
#include "models/protocol/closest_match.hpp"
#include "models/protocol/variant.hpp"
#include "sim/assert.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace rsim {
namespace {

using nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<std::int32_t>::max();
// Long-valued ms configs take Kafka's whole range (Long.MAX_VALUE included). The models see at
// most kLongMsInModel (10^15 ms, about 31,700 years: far beyond the 7 days a run may last), so
// that ms -> µs and the backoff arithmetic on it never overflow; a larger value behaves the same.
constexpr std::int64_t kLongMsMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kLongMsInModel = 1'000'000'000'000'000;

ConfigKeySpec int_key(std::string key, std::int64_t min, std::int64_t max, std::string def,
                      std::string doc) {
  return ConfigKeySpec{std::move(key), ConfigValueType::Int, min, max, {},
                       std::move(def), std::move(doc)};
}
ConfigKeySpec long_key(std::string key, std::int64_t min, std::string def, std::string doc) {
  return ConfigKeySpec{std::move(key), ConfigValueType::Long, min, kLongMsMax, {},
                       std::move(def), std::move(doc)};
}
ConfigKeySpec string_key(std::string key, std::vector<std::string> allowed, std::string def,
                         std::string doc) {
  return ConfigKeySpec{std::move(key), ConfigValueType::String, 0, 0, std::move(allowed),
                       std::move(def), std::move(doc)};
}

std::vector<ConfigKeySpec> sorted(std::vector<ConfigKeySpec> v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return v;
}

std::string trim(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Kafka parses integers from properties strings with Integer.parseInt / Long.parseLong after
// trimming; we accept the same (an optional sign and digits, nothing else).
std::optional<std::int64_t> parse_integer(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  std::size_t i = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  if (i == t.size()) return std::nullopt;
  for (std::size_t j = i; j < t.size(); ++j) {
    if (std::isdigit(static_cast<unsigned char>(t[j])) == 0) return std::nullopt;
  }
  // Long.parseLong's range exactly: Long.MAX_VALUE parses, one more does not.
  std::int64_t v = 0;
  const char* first = t.data() + (t[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(first, t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::string shorten(const json& raw) {
  std::string s = raw.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string normalize_assignor(const ConfigKeySpec& spec, const std::string& name) {
  if (spec.key == "partition.assignment.strategy") return client_assignor_short_name(name);
  if (spec.key == "group.remote.assignor" || spec.key == "group.consumer.assignors") {
    return server_assignor_short_name(name);
  }
  return name;
}

bool is_assignor_key(const std::string& key) {
  return key == "partition.assignment.strategy" || key == "group.remote.assignor" ||
         key == "group.consumer.assignors";
}

std::string unknown_value_message(const ConfigKeySpec& spec, const std::string& value) {
  const bool assignor = is_assignor_key(spec.key);
  std::string msg =
      assignor ? fmt::format("unknown assignor \"{}\"", value)
               : fmt::format("must be one of {}, got \"{}\"", fmt::join(spec.allowed, ", "), value);
  if (assignor) {
    const std::string guess = closest_match(value, spec.allowed);
    if (!guess.empty()) msg += fmt::format("; did you mean \"{}\"?", guess);
  }
  return msg;
}

}  // namespace

const std::vector<ConfigKeySpec>& consumer_config_specs() {
  static const std::vector<ConfigKeySpec> specs = sorted({
      string_key("group.instance.id", {}, "null", "static membership id; absent = dynamic member"),
      string_key(
          "client.id", {}, "consumer-<group.id>-1",
          "client id sent with requests (static member: consumer-<group.id>-<group.instance.id>)"),
      string_key("client.rack", {}, "\"\"", "rack of the client (rack-aware assignors)"),
      int_key("session.timeout.ms", 1, kIntMax, "45000",
              "classic: member session timeout sent in JoinGroup"),
      int_key("heartbeat.interval.ms", 1, kIntMax, "3000",
              "classic: heartbeat period; must be lower than session.timeout.ms"),
      int_key("max.poll.interval.ms", 1, kIntMax, "300000",
              "max time between poll() calls; also the rebalance timeout"),
      int_key("max.poll.records", 1, kIntMax, "500", "records returned by one poll()"),
      ConfigKeySpec{"enable.auto.commit",
                    ConfigValueType::Bool,
                    0,
                    0,
                    {},
                    "true",
                    "commit positions in the background"},
      int_key("auto.commit.interval.ms", 0, kIntMax, "5000", "auto-commit period"),
      ConfigKeySpec{"partition.assignment.strategy",
                    ConfigValueType::List,
                    0,
                    0,
                    {"range", "roundrobin", "sticky", "cooperative-sticky"},
                    "range, cooperative-sticky",
                    "classic: client assignors in preference order"},
      string_key("group.remote.assignor", {"uniform", "range"}, "null (broker default uniform)",
                 "consumer protocol: server assignor the member asks for"),
      long_key("retry.backoff.ms", 0, "100", "initial backoff before retrying a request"),
      long_key("retry.backoff.max.ms", 0, "1000", "maximum retry backoff"),
      long_key("reconnect.backoff.ms", 0, "50", "initial backoff before reconnecting"),
      long_key("reconnect.backoff.max.ms", 0, "1000", "maximum reconnect backoff"),
      int_key("request.timeout.ms", 0, kIntMax, "30000", "timeout of one request"),
      int_key("default.api.timeout.ms", 0, kIntMax, "60000",
              "default timeout of blocking calls such as commitSync()"),
      long_key("metadata.max.age.ms", 0, "300000", "metadata refresh period"),
      int_key("fetch.max.wait.ms", 0, kIntMax, "500", "max time a fetch waits for data"),
      string_key("auto.offset.reset", {"latest", "earliest", "none"}, "latest",
                 "where to start without a committed offset"),
      string_key(
          "share.acknowledgement.mode", {"implicit", "explicit"}, "implicit",
          "share: implicit accepts every record at the next poll(); explicit acknowledges each"),
      string_key(
          "share.acquire.mode", {"batch_optimized", "record_limit"}, "batch_optimized",
          "share: how the broker sizes acquired batches (both acquire at most max.poll.records)"),
  });
  return specs;
}

const std::vector<ConfigKeySpec>& broker_config_specs() {
  static const std::vector<ConfigKeySpec> specs = sorted({
      int_key("broker.session.timeout.ms", 1, kIntMax, "9000",
              "KRaft: a broker not heard from for this long is fenced and loses its leaderships"),
      int_key("broker.heartbeat.interval.ms", 1, kIntMax, "2000",
              "KRaft: how often a broker heartbeats the active controller"),
      int_key(
          "controller.quorum.fetch.timeout.ms", 0, kIntMax, "2000",
          "KRaft: a voter without a Fetch answer from the leader for this long starts an election"),
      int_key("controller.quorum.election.timeout.ms", 0, kIntMax, "1000",
              "KRaft: a voter's election timeout (drawn in [t, 2t))"),
      int_key("controller.quorum.append.linger.ms", 0, kIntMax, "25",
              "KRaft: the active controller waits this long for more records before it appends "
              "and flushes a batch (new partitions are seen that much later)"),
      int_key("controller.quorum.election.backoff.max.ms", 0, kIntMax, "1000",
              "KRaft: most backoff before a new election (not reached by the modelled elections)"),
      int_key("group.initial.rebalance.delay.ms", 0, kIntMax, "3000",
              "classic: delay of the first rebalance of an empty group"),
      int_key("group.min.session.timeout.ms", 0, kIntMax, "6000",
              "classic: smallest session.timeout.ms a member may use"),
      int_key("group.max.session.timeout.ms", 0, kIntMax, "1800000",
              "classic: largest session.timeout.ms a member may use"),
      int_key("group.max.size", 1, kIntMax, "2147483647",
              "classic: members per group (a new member beyond it: GROUP_MAX_SIZE_REACHED)"),
      int_key("offsets.topic.num.partitions", 1, 100000, "50",
              "partitions of __consumer_offsets (coordinator shards)"),
      int_key("offsets.topic.replication.factor", 1, 32767, "3",
              "replication factor of __consumer_offsets"),
      int_key("offsets.commit.timeout.ms", 1, kIntMax, "5000", "timeout of a coordinator write"),
      int_key("replica.fetch.wait.max.ms", 0, kIntMax, "500",
              "longest a follower's Fetch waits at the leader for new records"),
      int_key("replica.lag.time.max.ms", 1, kIntMax, "30000",
              "a follower not caught up for longer leaves the ISR"),
      int_key("group.coordinator.append.linger.ms", -1, kIntMax, "-1",
              "coordinator write batching linger; -1 = adaptive"),
      int_key("group.consumer.session.timeout.ms", 1, kIntMax, "45000",
              "consumer protocol: member session timeout"),
      int_key("group.consumer.min.session.timeout.ms", 1, kIntMax, "45000",
              "consumer protocol: lower bound of group.consumer.session.timeout.ms"),
      int_key("group.consumer.max.session.timeout.ms", 1, kIntMax, "60000",
              "consumer protocol: upper bound of group.consumer.session.timeout.ms"),
      int_key(
          "group.consumer.max.size", 1, kIntMax, "2147483647",
          "consumer protocol: members per group (a new member beyond it: GROUP_MAX_SIZE_REACHED)"),
      int_key("group.consumer.heartbeat.interval.ms", 1, kIntMax, "5000",
              "consumer protocol: heartbeat interval given to members"),
      int_key("group.consumer.min.heartbeat.interval.ms", 1, kIntMax, "5000",
              "consumer protocol: lower bound of group.consumer.heartbeat.interval.ms"),
      int_key("group.consumer.max.heartbeat.interval.ms", 1, kIntMax, "15000",
              "consumer protocol: upper bound of group.consumer.heartbeat.interval.ms"),
      int_key("group.share.session.timeout.ms", 1, kIntMax, "45000",
              "share groups: member session timeout"),
      int_key("group.share.heartbeat.interval.ms", 1, kIntMax, "5000",
              "share groups: heartbeat interval given to members"),
      int_key("group.share.assignment.interval.ms", 0, 15000, "1000",
              "share groups: minimum time between target assignment computations"),
      int_key("group.share.max.size", 1, 1000, "200", "share groups: members per group"),
      int_key("group.share.record.lock.duration.ms", 1000, 3600000, "30000",
              "share groups: acquisition lock of a delivered record"),
      int_key("group.share.delivery.count.limit", 2, 10, "5",
              "share groups: deliveries after which a record is archived"),
      int_key("group.share.partition.max.record.locks", 100, 10000, "2000",
              "share groups: in-flight records per share-partition (SPEO - SPSO + 1)"),
      int_key("share.coordinator.state.topic.num.partitions", 1, 100000, "50",
              "partitions of __share_group_state"),
      int_key("share.coordinator.snapshot.update.records.per.snapshot", 0, 500, "500",
              "ShareUpdate records per share-partition before a ShareSnapshot"),
      string_key("group.consumer.migration.policy",
                 {"bidirectional", "upgrade", "downgrade", "disabled"}, "bidirectional",
                 "online migration between the classic and consumer protocols: which directions"),
      int_key("group.consumer.assignment.interval.ms", 0, kIntMax, "1000",
              "consumer protocol: minimum time between target assignment computations"),
      ConfigKeySpec{"group.consumer.assignors",
                    ConfigValueType::List,
                    0,
                    0,
                    {"uniform", "range"},
                    "uniform, range",
                    "consumer protocol: server assignors; the first is the default"},
  });
  return specs;
}

const ConfigKeySpec* find_consumer_config(const std::string& key) {
  for (const auto& s : consumer_config_specs()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const ConfigKeySpec* find_broker_config(const std::string& key) {
  for (const auto& s : broker_config_specs()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

bool is_unmodelled_consumer_config(const std::string& key) {
  // ConsumerConfig / CommonClientConfigs keys of Kafka 4.5 that change nothing the simulator
  // models (bytes, serialization, security, metrics).
  static const std::vector<std::string> keys{"allow.auto.create.topics",
                                             "auto.include.jmx.reporter",
                                             "bootstrap.servers",
                                             "check.crcs",
                                             "client.dns.lookup",
                                             "connections.max.idle.ms",
                                             "enable.metrics.push",
                                             "exclude.internal.topics",
                                             "fetch.max.bytes",
                                             "fetch.min.bytes",
                                             "interceptor.classes",
                                             "isolation.level",
                                             "key.deserializer",
                                             "max.partition.fetch.bytes",
                                             "metadata.recovery.rebootstrap.trigger.ms",
                                             "metadata.recovery.strategy",
                                             "metric.reporters",
                                             "metrics.num.samples",
                                             "metrics.recording.level",
                                             "metrics.sample.window.ms",
                                             "receive.buffer.bytes",
                                             "security.protocol",
                                             "security.providers",
                                             "send.buffer.bytes",
                                             "socket.connection.setup.timeout.max.ms",
                                             "socket.connection.setup.timeout.ms",
                                             "value.deserializer"};
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
  return key.starts_with("ssl.") || key.starts_with("sasl.");
}

const std::vector<ConfigKeySpec>& group_config_specs() {
  // GroupConfig's CONFIG_DEF (Kafka 4.4): types and atLeast() bounds; the broker's min/max
  // bounds are checked by validate_share_group_config, with Kafka's messages.
  static const std::vector<ConfigKeySpec> specs = sorted({
      int_key("share.session.timeout.ms", 1, kIntMax, "45000",
              "share group: session timeout (broker bounds 45000-60000)"),
      int_key("share.heartbeat.interval.ms", 1, kIntMax, "5000",
              "share group: heartbeat interval (broker bounds 5000-15000)"),
      int_key("share.assignment.interval.ms", 0, kIntMax, "1000",
              "share group: minimum time between target assignment computations (0-15000)"),
      int_key("share.record.lock.duration.ms", 1000, kIntMax, "30000",
              "share group: acquisition lock of a delivered record (broker bounds 15000-60000)"),
      int_key("share.delivery.count.limit", 2, kIntMax, "5",
              "share group: deliveries of a record before it is archived (broker bounds 2-10)"),
      int_key("share.partition.max.record.locks", 100, kIntMax, "2000",
              "share group: in-flight window (SPEO - SPSO + 1) per share-partition (100-4000)"),
      string_key(
          "share.auto.offset.reset", {}, "latest",
          "share group: where a share-partition that never started begins: latest, earliest, "
          "by_duration:<PnDTnHnMn.nS>"),
      string_key("share.isolation.level", {"read_committed", "read_uncommitted"},
                 "read_uncommitted",
                 "share group: how transactional records are read (no transactions are simulated)"),
      ConfigKeySpec{"share.renew.acknowledge.enable",
                    ConfigValueType::Bool,
                    0,
                    0,
                    {},
                    "true",
                    "share group: whether RENEW acknowledgements are accepted"},
  });
  return specs;
}

const ConfigKeySpec* find_group_config(const std::string& key) {
  for (const auto& s : group_config_specs()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

bool is_unmodelled_group_config(const std::string& key) {
  return key.starts_with("consumer.") || key.starts_with("streams.") ||
         key.starts_with("errors.deadletterqueue.") || key == "share.assignor.offload.enable";
}

std::optional<std::int64_t> parse_iso8601_duration_ms(const std::string& text) {
  // [-]P[nD][T[nH][nM][n[.n]S]], case-insensitive, at least one part, as Duration.parse.
  std::size_t i = 0;
  const auto upper = [&](std::size_t k) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(text[k])));
  };
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i >= text.size() || upper(i) != 'P') return std::nullopt;
  ++i;
  double ms = 0;
  bool any = false;
  bool in_time = false;
  while (i < text.size()) {
    if (upper(i) == 'T') {
      if (in_time) return std::nullopt;
      in_time = true;
      ++i;
      if (i >= text.size()) return std::nullopt;
      continue;
    }
    const std::size_t start = i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (i == start || i >= text.size()) return std::nullopt;
    double value = 0;
    try {
      value = std::stod(text.substr(start, i - start));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    const char unit = upper(i++);
    if (!in_time && unit == 'D')
      ms += value * 86400000.0;
    else if (in_time && unit == 'H')
      ms += value * 3600000.0;
    else if (in_time && unit == 'M')
      ms += value * 60000.0;
    else if (in_time && unit == 'S')
      ms += value * 1000.0;
    else
      return std::nullopt;
    any = true;
  }
  if (!any || ms > 9.0e15) return std::nullopt;
  const auto out = static_cast<std::int64_t>(ms);
  return negative ? -out : out;
}

std::vector<std::pair<std::string, std::string>> validate_share_group_config(
    const ConfigMap& config) {
  std::vector<std::pair<std::string, std::string>> problems;
  const auto int_of = [&](const char* key) -> std::optional<std::int64_t> {
    const auto it = config.find(key);
    if (it == config.end() || !it->second.is_integer()) return std::nullopt;
    return it->second.get<std::int64_t>();
  };
  // The broker's bounds (group.share.min/max.*, their Kafka defaults).
  const std::vector<std::tuple<const char*, std::int64_t, std::int64_t>> ranges{
      {"share.heartbeat.interval.ms", 5000, 15000},    {"share.session.timeout.ms", 45000, 60000},
      {"share.record.lock.duration.ms", 15000, 60000}, {"share.delivery.count.limit", 2, 10},
      {"share.partition.max.record.locks", 100, 4000}, {"share.assignment.interval.ms", 0, 15000}};
  for (const auto& [key, lo, hi] : ranges) {
    if (const auto v = int_of(key); v && (*v < lo || *v > hi)) {
      problems.emplace_back(
          key, fmt::format("{} must be in the range {} to {} inclusive.", key, lo, hi));
    }
  }
  const auto session = int_of("share.session.timeout.ms");
  const auto heartbeat = int_of("share.heartbeat.interval.ms");
  if ((session || heartbeat) && session.value_or(45000) <= heartbeat.value_or(5000)) {
    problems.emplace_back(
        session ? "share.session.timeout.ms" : "share.heartbeat.interval.ms",
        "share.session.timeout.ms must be greater than share.heartbeat.interval.ms");
  }
  if (const auto it = config.find("share.auto.offset.reset");
      it != config.end() && it->second.is_string()) {
    const std::string v = lower(it->second.get<std::string>());
    bool ok = v == "latest" || v == "earliest";
    if (v.starts_with("by_duration:")) {
      const auto d = parse_iso8601_duration_ms(v.substr(12));
      ok = d && *d >= 0;
    }
    if (!ok) {
      problems.emplace_back(
          "share.auto.offset.reset",
          fmt::format("Invalid value `{}` for configuration share.auto.offset.reset. The value "
                      "must be either 'earliest', 'latest' or of the format "
                      "'by_duration:<PnDTnHnMn.nS>'.",
                      it->second.get<std::string>()));
    }
  }
  return problems;
}

bool is_unmodelled_broker_config(const std::string& key) {
  static const std::vector<std::string> keys{"group.consumer.assignor.offload.enable",
                                             "group.consumer.max.assignment.interval.ms",
                                             "group.consumer.min.assignment.interval.ms",
                                             "group.consumer.regex.refresh.interval.ms",
                                             "group.coordinator.background.threads",
                                             "group.coordinator.rebalance.protocols",
                                             "group.coordinator.threads",
                                             "offset.metadata.max.bytes",
                                             "offsets.load.buffer.size",
                                             "offsets.retention.check.interval.ms",
                                             "offsets.retention.minutes",
                                             "offsets.topic.compression.codec",
                                             "offsets.topic.segment.bytes"};
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
  return key.starts_with("group.share.") && find_broker_config(key) == nullptr;
}

const std::vector<std::string>& consumer_keys_rejected_under(const std::string& group_protocol) {
  // ConsumerConfig: CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS / CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS.
  static const std::vector<std::string> classic{"group.remote.assignor"};
  static const std::vector<std::string> consumer{
      "heartbeat.interval.ms", "partition.assignment.strategy", "session.timeout.ms"};
  // ShareConsumerConfig.SHARE_GROUP_UNSUPPORTED_CONFIGS, as far as they are modelled.
  static const std::vector<std::string> share{
      "auto.offset.reset",     "enable.auto.commit",    "group.instance.id",
      "group.remote.assignor", "heartbeat.interval.ms", "partition.assignment.strategy",
      "session.timeout.ms"};
  static const std::vector<std::string> none;
  if (group_protocol == "classic") return classic;
  if (group_protocol == "consumer") return consumer;
  if (group_protocol == "share") return share;
  return none;
}

std::string client_assignor_short_name(const std::string& name) {
  static const std::vector<std::pair<std::string, std::string>> names{
      {"range", "range"},
      {"roundrobin", "roundrobin"},
      {"sticky", "sticky"},
      {"cooperative-sticky", "cooperative-sticky"},
      {"org.apache.kafka.clients.consumer.RangeAssignor", "range"},
      {"org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin"},
      {"org.apache.kafka.clients.consumer.StickyAssignor", "sticky"},
      {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky"}};
  for (const auto& [k, v] : names) {
    if (k == name) return v;
  }
  return {};
}

std::string server_assignor_short_name(const std::string& name) {
  static const std::vector<std::pair<std::string, std::string>> names{
      {"uniform", "uniform"},
      {"range", "range"},
      {"org.apache.kafka.coordinator.group.assignor.UniformAssignor", "uniform"},
      {"org.apache.kafka.coordinator.group.assignor.RangeAssignor", "range"}};
  for (const auto& [k, v] : names) {
    if (k == name) return v;
  }
  return {};
}

ConfigValueResult normalize_config_value(const ConfigKeySpec& spec, const json& raw) {
  ConfigValueResult r;
  switch (spec.type) {
    case ConfigValueType::Int:
    case ConfigValueType::Long: {
      std::optional<std::int64_t> v;
      if (raw.is_number_integer()) {
        if (raw.is_number_unsigned() &&
            raw.get<std::uint64_t>() > static_cast<std::uint64_t>(spec.max)) {
          r.problem = fmt::format("must be <= {}, got {}", spec.max, shorten(raw));
          return r;
        }
        v = raw.get<std::int64_t>();
      } else if (raw.is_string()) {
        v = parse_integer(raw.get<std::string>());
      }
      if (!v) {
        r.problem = fmt::format("must be an integer, got {}", shorten(raw));
      } else if (*v < spec.min) {
        r.problem = fmt::format("must be >= {}, got {}", spec.min, *v);
      } else if (*v > spec.max) {
        r.problem = fmt::format("must be <= {}, got {}", spec.max, *v);
      } else {
        r.value = *v;
      }
      return r;
    }
    case ConfigValueType::Bool: {
      if (raw.is_boolean()) {
        r.value = raw.get<bool>();
      } else if (raw.is_string() && (lower(trim(raw.get<std::string>())) == "true" ||
                                     lower(trim(raw.get<std::string>())) == "false")) {
        r.value = lower(trim(raw.get<std::string>())) == "true";
      } else {
        r.problem = fmt::format("must be true or false, got {}", shorten(raw));
      }
      return r;
    }
    case ConfigValueType::String: {
      if (!raw.is_string()) {
        r.problem = fmt::format("must be a string, got {}", shorten(raw));
        return r;
      }
      const std::string text = trim(raw.get<std::string>());
      if (spec.allowed.empty()) {
        if (text.empty()) {
          r.problem = "must not be empty";
        } else {
          r.value = text;
        }
        return r;
      }
      const std::string v = is_assignor_key(spec.key) ? normalize_assignor(spec, text) : text;
      if (std::find(spec.allowed.begin(), spec.allowed.end(), v) == spec.allowed.end()) {
        r.problem = unknown_value_message(spec, text);
      } else {
        r.value = v;
      }
      return r;
    }
    case ConfigValueType::List: {
      std::vector<std::string> items;
      bool from_array = false;
      if (raw.is_array()) {
        from_array = true;
        for (std::size_t i = 0; i < raw.size(); ++i) {
          if (!raw[i].is_string()) {
            r.problem = fmt::format("must be a string, got {}", shorten(raw[i]));
            r.problem_suffix = fmt::format("/{}", i);
            return r;
          }
          items.push_back(trim(raw[i].get<std::string>()));
        }
      } else if (raw.is_string()) {
        // A Kafka LIST in a .properties file: comma-separated, blanks around items ignored.
        const std::string text = raw.get<std::string>();
        std::size_t start = 0;
        while (start <= text.size()) {
          const std::size_t comma = std::min(text.find(',', start), text.size());
          const std::string item = trim(text.substr(start, comma - start));
          if (!item.empty()) items.push_back(item);
          start = comma + 1;
        }
      } else {
        r.problem =
            fmt::format("must be a list (array or comma-separated string), got {}", shorten(raw));
        return r;
      }
      if (items.empty()) {
        r.problem = "must not be empty";
        return r;
      }
      ConfigValue::List out;
      for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string v = normalize_assignor(spec, items[i]);
        if (std::find(spec.allowed.begin(), spec.allowed.end(), v) == spec.allowed.end()) {
          r.problem = unknown_value_message(spec, items[i]);
          if (from_array) r.problem_suffix = fmt::format("/{}", i);
          return r;
        }
        if (std::find(out.begin(), out.end(), v) != out.end()) {
          r.problem = fmt::format("lists \"{}\" twice", v);
          if (from_array) r.problem_suffix = fmt::format("/{}", i);
          return r;
        }
        out.push_back(v);
      }
      r.value = std::move(out);
      return r;
    }
  }
  return r;
}

namespace {

// The shape a key's normalized value has.
bool has_shape(const ConfigKeySpec& spec, const ConfigValue& v) {
  switch (spec.type) {
    case ConfigValueType::Int:
    case ConfigValueType::Long:
      return v.is_integer();
    case ConfigValueType::Bool:
      return v.is_bool();
    case ConfigValueType::String:
      return v.is_string();
    case ConfigValueType::List:
      return v.is_list();
  }
  return false;
}

// Reads one normalized value; a value of another shape is a bug of the caller (the loader
// normalizes every value), so it throws rather than falling back to a default.
template <typename T>
void read_into(const ConfigMap& config, const std::string& key, const ConfigKeySpec* spec, T& out) {
  const auto it = config.find(key);
  if (it == config.end()) return;
  if (spec == nullptr) throw std::logic_error("unmodelled config " + key);
  const ConfigValue& v = it->second;
  if (!has_shape(*spec, v))
    throw std::invalid_argument(fmt::format("{}: not a normalized value", key));
  if constexpr (std::is_same_v<T, std::optional<std::string>> || std::is_same_v<T, std::string>) {
    out = v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    out = v.get<bool>();
  } else if constexpr (std::is_same_v<T, ConfigValue::List>) {
    out = v.get<ConfigValue::List>();
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    out = spec->type == ConfigValueType::Long ? std::min(v.get<std::int64_t>(), kLongMsInModel)
                                              : v.get<std::int64_t>();
  } else {
    static_assert(std::is_same_v<T, std::int32_t>);
    out = static_cast<std::int32_t>(v.get<std::int64_t>());  // an INT config: in int32 range
  }
}

}  // namespace

ConsumerConfig resolve_consumer_config(const ConsumerSpec& consumer, const std::string& variant,
                                       int client_sequence) {
  const std::optional<Variant> v = variant_named(variant);
  SIM_ASSERT_MSG(v.has_value(), "not a protocol variant: " + variant);
  const std::string protocol = group_protocol_name(group_protocol(*v));
  ConfigMap merged = consumer.config;
  if (const auto it = consumer.config_by_protocol.find(protocol);
      it != consumer.config_by_protocol.end()) {
    for (const auto& [k, v] : it->second) merged[k] = v;
  }
  const auto read = [&](const std::string& key, auto& out) {
    read_into(merged, key, find_consumer_config(key), out);
  };

  ConsumerConfig c;
  c.group_protocol = protocol;
  c.group_id = consumer.group;
  read("group.instance.id", c.group_instance_id);
  // ConsumerConfig.maybeOverrideClientId: consumer-<group.id>-<group.instance.id>, or the
  // process's client-id sequence number for a dynamic member.
  c.client_id = c.group_instance_id
                    ? fmt::format("consumer-{}-{}", consumer.group, *c.group_instance_id)
                    : fmt::format("consumer-{}-{}", consumer.group, client_sequence);
  read("client.id", c.client_id);
  read("client.rack", c.client_rack);
  read("session.timeout.ms", c.session_timeout_ms);
  read("heartbeat.interval.ms", c.heartbeat_interval_ms);
  read("max.poll.interval.ms", c.max_poll_interval_ms);
  read("max.poll.records", c.max_poll_records);
  // An application that commits itself (`commit`: sync / async) turns auto-commit off, unless
  // its config says otherwise.
  c.enable_auto_commit = consumer.commit == CommitMode::Auto;
  read("enable.auto.commit", c.enable_auto_commit);
  read("auto.commit.interval.ms", c.auto_commit_interval_ms);
  // The classic variants choose the assignors unless the consumer does (contract table).
  if (*v == Variant::ClassicCooperative) {
    c.partition_assignment_strategy = {"cooperative-sticky"};
  } else {
    c.partition_assignment_strategy = {"range", "cooperative-sticky"};
  }
  read("partition.assignment.strategy", c.partition_assignment_strategy);
  read("group.remote.assignor", c.group_remote_assignor);
  read("retry.backoff.ms", c.retry_backoff_ms);
  read("retry.backoff.max.ms", c.retry_backoff_max_ms);
  read("reconnect.backoff.ms", c.reconnect_backoff_ms);
  read("reconnect.backoff.max.ms", c.reconnect_backoff_max_ms);
  read("request.timeout.ms", c.request_timeout_ms);
  read("default.api.timeout.ms", c.default_api_timeout_ms);
  read("metadata.max.age.ms", c.metadata_max_age_ms);
  read("fetch.max.wait.ms", c.fetch_max_wait_ms);
  read("auto.offset.reset", c.auto_offset_reset);
  read("share.acknowledgement.mode", c.share_acknowledgement_mode);
  read("share.acquire.mode", c.share_acquire_mode);
  return c;
}

BrokerConfig resolve_broker_config(const ClusterSpec& cluster) {
  const auto read = [&](const std::string& key, auto& out) {
    read_into(cluster.config, key, find_broker_config(key), out);
  };
  BrokerConfig b;
  read("broker.session.timeout.ms", b.broker_session_timeout_ms);
  read("broker.heartbeat.interval.ms", b.broker_heartbeat_interval_ms);
  read("controller.quorum.fetch.timeout.ms", b.controller_quorum_fetch_timeout_ms);
  read("controller.quorum.append.linger.ms", b.controller_quorum_append_linger_ms);
  read("controller.quorum.election.timeout.ms", b.controller_quorum_election_timeout_ms);
  read("controller.quorum.election.backoff.max.ms", b.controller_quorum_election_backoff_max_ms);
  read("group.initial.rebalance.delay.ms", b.group_initial_rebalance_delay_ms);
  read("group.min.session.timeout.ms", b.group_min_session_timeout_ms);
  read("group.max.session.timeout.ms", b.group_max_session_timeout_ms);
  read("group.max.size", b.group_max_size);
  read("offsets.topic.num.partitions", b.offsets_topic_num_partitions);
  read("offsets.topic.replication.factor", b.offsets_topic_replication_factor);
  read("offsets.commit.timeout.ms", b.offsets_commit_timeout_ms);
  read("replica.fetch.wait.max.ms", b.replica_fetch_wait_max_ms);
  read("replica.lag.time.max.ms", b.replica_lag_time_max_ms);
  read("group.coordinator.append.linger.ms", b.group_coordinator_append_linger_ms);
  read("group.consumer.session.timeout.ms", b.group_consumer_session_timeout_ms);
  read("group.consumer.min.session.timeout.ms", b.group_consumer_min_session_timeout_ms);
  read("group.consumer.max.session.timeout.ms", b.group_consumer_max_session_timeout_ms);
  read("group.consumer.heartbeat.interval.ms", b.group_consumer_heartbeat_interval_ms);
  read("group.consumer.min.heartbeat.interval.ms", b.group_consumer_min_heartbeat_interval_ms);
  read("group.consumer.max.heartbeat.interval.ms", b.group_consumer_max_heartbeat_interval_ms);
  read("group.consumer.assignment.interval.ms", b.group_consumer_assignment_interval_ms);
  read("group.consumer.assignors", b.group_consumer_assignors);
  read("group.consumer.max.size", b.group_consumer_max_size);
  read("group.consumer.migration.policy", b.group_consumer_migration_policy);
  read("group.share.session.timeout.ms", b.group_share_session_timeout_ms);
  read("group.share.heartbeat.interval.ms", b.group_share_heartbeat_interval_ms);
  read("group.share.assignment.interval.ms", b.group_share_assignment_interval_ms);
  read("group.share.max.size", b.group_share_max_size);
  read("group.share.record.lock.duration.ms", b.group_share_record_lock_duration_ms);
  read("group.share.delivery.count.limit", b.group_share_delivery_count_limit);
  read("group.share.partition.max.record.locks", b.group_share_partition_max_record_locks);
  read("share.coordinator.state.topic.num.partitions",
       b.share_coordinator_state_topic_num_partitions);
  read("share.coordinator.snapshot.update.records.per.snapshot",
       b.share_coordinator_snapshot_update_records_per_snapshot);
  return b;
}

ShareGroupConfig resolve_share_group_config(const BrokerConfig& broker,
                                            const ConfigMap& group_config) {
  ShareGroupConfig c;
  c.session_timeout_ms = broker.group_share_session_timeout_ms;
  c.heartbeat_interval_ms = broker.group_share_heartbeat_interval_ms;
  c.assignment_interval_ms = broker.group_share_assignment_interval_ms;
  c.record_lock_duration_ms = broker.group_share_record_lock_duration_ms;
  c.delivery_count_limit = broker.group_share_delivery_count_limit;
  c.partition_max_record_locks = broker.group_share_partition_max_record_locks;
  const auto read = [&](const std::string& key, auto& out) {
    read_into(group_config, key, find_group_config(key), out);
  };
  read("share.session.timeout.ms", c.session_timeout_ms);
  read("share.heartbeat.interval.ms", c.heartbeat_interval_ms);
  read("share.assignment.interval.ms", c.assignment_interval_ms);
  read("share.record.lock.duration.ms", c.record_lock_duration_ms);
  read("share.delivery.count.limit", c.delivery_count_limit);
  read("share.partition.max.record.locks", c.partition_max_record_locks);
  read("share.isolation.level", c.isolation_level);
  read("share.renew.acknowledge.enable", c.renew_acknowledge_enable);
  std::string reset = c.auto_offset_reset;
  read("share.auto.offset.reset", reset);
  reset = lower(reset);
  if (reset.starts_with("by_duration:")) {
    c.auto_offset_reset = "by_duration";
    c.auto_offset_reset_duration_ms = parse_iso8601_duration_ms(reset.substr(12)).value_or(0);
  } else {
    c.auto_offset_reset = reset;
  }
  return c;
}

}  // namespace rsim
