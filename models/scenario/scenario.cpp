#include "models/scenario/scenario.hpp"
#include "models/scenario/fleet_parse.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#ifdef RSIM_NO_OPENSSL
#include "models/scenario/sha256_portable.hpp"
#else
#include <openssl/evp.h>
#endif

#include "models/protocol/config.hpp"
#include "models/scenario/json_guard.hpp"
#include "models/scenario/spec_json.hpp"
#include "models/spec/overloaded.hpp"

namespace rsim {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxDurationMs = 7LL * 24 * 3600 * 1000;  // 7 days
constexpr std::int64_t kMaxPartitions = 100000;
constexpr std::int64_t kMaxBrokers = 1000;
constexpr std::int64_t kMaxInitialRecords = 1'000'000'000;
constexpr double kMaxRecordsPerSec = 1'000'000;
constexpr std::size_t kMaxScenarioFileBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxConsumers = 10'000;
constexpr std::int64_t kMaxTotalPartitions = 1'000'000;
constexpr double kMaxConsumerHours = 20'000;
constexpr double kMaxPartitionHours = 200'000;
// Lists a scenario can grow (docs/writing-scenarios.md "Limits of one run").
constexpr std::size_t kMaxTopics = 10'000;
constexpr std::size_t kMaxEvents = 100'000;
constexpr std::size_t kMaxExpectations = 1'000;
constexpr std::size_t kMaxListEntries =
    10'000;  // any other list (a subscription, a protocols list)

// The most entries the array `key` of the object at `ptr` may have, and why.
std::pair<std::size_t, const char*> list_limit(const std::string& ptr, const std::string& key) {
  if (ptr.empty()) {
    if (key == "consumers") return {kMaxConsumers, "memory and time grow with the consumers"};
    if (key == "topics") return {kMaxTopics, "each subscription is checked against every topic"};
    if (key == "events") return {kMaxEvents, "each event is scheduled and traced"};
    if (key == "expect")
      return {kMaxExpectations, "each expectation is checked against the whole run"};
  }
  return {kMaxListEntries, "a longer list has no use in a scenario"};
}

using KeyLists = std::map<std::string, std::vector<std::string>>;

// RFC 6901: "~" and "/" inside a key are escaped in a JSON pointer.
std::string escape_key(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + escape_key(key);
}
std::string child(const std::string& ptr, std::size_t index) {
  return fmt::format("{}/{}", ptr, index);
}

// One event as read, every verb's fields side by side; to_verb() keeps the fields of its verb.
struct RawEvent {
  sim::SimTime at{0};
  std::string kind;
  std::size_t index = 0;
  std::string consumer;
  std::int32_t broker = -1;
  std::string topic;
  std::string group;
  std::vector<std::string> topics;
  std::int32_t partitions = 0;
  sim::SimTime after{0};
  sim::SimTime for_{0};
  bool has_for = false;
  bool graceful = true;
  bool one_way = false;
  sim::SimTime down{0};
  bool has_down = false;
  std::vector<std::string> between;
  std::optional<sim::Distribution> latency;
  std::optional<double> drop_rate;
  std::optional<sim::Distribution> produce_gap;
  double records_per_sec = 0;
  ConfigMap config;
  bool has_config = false;
  std::string deployment;
  std::string node;
};

// The typed event of a checked RawEvent whose kind is a known verb.
EventSpec to_event(RawEvent&& r) {
  EventSpec e{.at = r.at, .index = r.index, .verb = *verb_named(r.kind)};
  std::visit(Overloaded{
                 [&](verb::Start& v) {
                   v.consumer = std::move(r.consumer);
                   v.config = std::move(r.config);
                   v.has_config = r.has_config;
                 },
                 [&](verb::Stop& v) { v.consumer = std::move(r.consumer); },
                 [&](verb::Crash& v) { v.consumer = std::move(r.consumer); },
                 [&](verb::Restart& v) {
                   v.consumer = std::move(r.consumer);
                   v.after = r.after;
                   v.graceful = r.graceful;
                   v.config = std::move(r.config);
                   v.has_config = r.has_config;
                 },
                 [&](verb::Stall& v) {
                   v.consumer = std::move(r.consumer);
                   v.for_ = r.for_;
                 },
                 [&](verb::Pause& v) {
                   v.consumer = std::move(r.consumer);
                   v.for_ = r.for_;
                 },
                 [&](verb::Subscribe& v) {
                   v.consumer = std::move(r.consumer);
                   v.topics = std::move(r.topics);
                 },
                 [&](verb::AddPartitions& v) {
                   v.topic = std::move(r.topic);
                   v.partitions = r.partitions;
                 },
                 [&](verb::Network& v) {
                   v.between = std::move(r.between);
                   v.one_way = r.one_way;
                   v.latency = r.latency;
                   v.drop_rate = r.drop_rate;
                   v.for_ = r.for_;
                   v.has_for = r.has_for;
                 },
                 [&](verb::PartitionNetwork& v) {
                   v.between = std::move(r.between);
                   v.for_ = r.for_;
                 },
                 [&](verb::FailCoordinator& v) {
                   v.group = std::move(r.group);
                   v.down = r.down;
                   v.has_down = r.has_down;
                 },
                 [&](verb::Produce& v) {
                   v.topic = std::move(r.topic);
                   v.produce_gap = r.produce_gap;
                   v.records_per_sec = r.records_per_sec;
                 },
                 [&](verb::StopBroker& v) { v.broker = r.broker; },
                 [&](verb::CrashBroker& v) { v.broker = r.broker; },
                 [&](verb::StartBroker& v) { v.broker = r.broker; },
                 [&](verb::RestartBroker& v) {
                   v.broker = r.broker;
                   v.after = r.after;
                   v.graceful = r.graceful;
                 },
                 [&](verb::Rollout& v) {
                   v.deployment = std::move(r.deployment);
                   v.config = std::move(r.config);
                   v.has_config = r.has_config;
                 },
                 [&](verb::DrainNode& v) { v.node = std::move(r.node); },
             },
             e.verb);
  return e;
}

// The offending value as written, cut short so that one message stays one line.
std::string shown(const json& v) {
  return shown_value(v, 40);
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string guess = closest_match(word, candidates);
  return guess.empty() ? std::string() : fmt::format("; did you mean \"{}\"?", guess);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<std::string> config_keys(const std::vector<ConfigKeySpec>& specs) {
  std::vector<std::string> keys;
  for (const auto& s : specs) keys.push_back(s.key);
  return keys;
}

bool valid_topic_name(const std::string& name) {
  // Kafka's Topic.validate: 1..249 characters of [a-zA-Z0-9._-].
  if (name.empty() || name.size() > 249) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

const std::vector<std::string>& expect_ops() {
  static const std::vector<std::string> ops{"==", "!=", "<", "<=", ">", ">=", "within", "between"};
  return ops;
}

const std::vector<std::string>& commit_modes() {
  static const std::vector<std::string> modes{"auto", "sync", "async"};
  return modes;
}

const std::vector<std::string>& stop_modes() {
  static const std::vector<std::string> modes{"wakeup", "after_poll"};
  return modes;
}

// Collects every problem of one document; each check reports and carries on.
class Parser {
 public:
  std::vector<std::string> problems;

  void problem(const std::string& ptr, const std::string& what) {
    problems.push_back(ptr.empty() ? what : fmt::format("{}: {}", ptr, what));
  }

  /// Reports a non-object, unknown keys and missing required keys of `level`.
  bool check_object(const json& v, const std::string& ptr, const std::string& level) {
    if (!v.is_object()) {
      problem(ptr, fmt::format("must be an object, got {}", shown(v)));
      return false;
    }
    const auto& accepted = scenario_accepted_keys().at(level);
    for (const auto& [key, value] : v.items()) {
      if (contains(accepted, key)) continue;
      if (level.starts_with("event:") && is_event_field(key)) {
        problem(child(ptr, key), fmt::format("not a field of a \"{}\" event", level.substr(6)));
      } else {
        problem(child(ptr, key), "unknown key" + suggestion(key, accepted));
      }
    }
    if (const auto it = scenario_required_keys().find(level);
        it != scenario_required_keys().end()) {
      for (const auto& key : it->second) {
        if (!v.contains(key)) problem(child(ptr, key), "missing");
      }
    }
    return true;
  }

  static bool is_event_field(const std::string& key) {
    for (const auto& kind : event_kinds()) {
      if (contains(scenario_accepted_keys().at("event:" + kind), key)) return true;
    }
    return false;
  }

  std::optional<std::string> read_string(const json& obj, const std::string& key,
                                         const std::string& ptr, bool allow_empty = false) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_string()) {
      problem(child(ptr, key), fmt::format("must be a string, got {}", shown(*it)));
      return std::nullopt;
    }
    if (!allow_empty && it->get<std::string>().empty()) {
      problem(child(ptr, key), "must not be empty");
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  std::optional<bool> read_bool(const json& obj, const std::string& key, const std::string& ptr) {
    return rsim::read_bool(obj, key, child(ptr, key), problems, 40);
  }

  /// An integer in [min, max]; `max_note` explains the upper bound ("7 days").
  std::optional<std::int64_t> read_int(const json& obj, const std::string& key,
                                       const std::string& ptr, std::int64_t min, std::int64_t max,
                                       const char* max_note = nullptr) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    return check_int(*it, child(ptr, key), min, max, max_note);
  }

  std::optional<std::int64_t> check_int(const json& v, const std::string& ptr, std::int64_t min,
                                        std::int64_t max, const char* max_note = nullptr) {
    if (!v.is_number_integer()) {
      problem(ptr, fmt::format("must be an integer, got {}", shown(v)));
      return std::nullopt;
    }
    const bool too_big = v.is_number_unsigned()
                             ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                             : v.get<std::int64_t>() > max;
    if (too_big) {
      problem(ptr, max_note == nullptr
                       ? fmt::format("must be <= {}, got {}", max, shown(v))
                       : fmt::format("must be <= {} ({}), got {}", max, max_note, shown(v)));
      return std::nullopt;
    }
    const std::int64_t n = v.get<std::int64_t>();
    if (n < min) {
      problem(ptr, min == 1 ? fmt::format("must be > 0, got {}", n)
                            : fmt::format("must be >= {}, got {}", min, n));
      return std::nullopt;
    }
    return n;
  }

  /// A number (integer or fractional) >= min (> min if `exclusive`) and <= max.
  std::optional<double> check_number(const json& v, const std::string& ptr, double min,
                                     bool exclusive, double max) {
    if (!v.is_number()) {
      problem(ptr, fmt::format("must be a number, got {}", shown(v)));
      return std::nullopt;
    }
    const double d = v.get<double>();
    if (exclusive ? d <= min : d < min) {
      problem(ptr, fmt::format("must be {} {}, got {}", exclusive ? ">" : ">=", min, shown(v)));
      return std::nullopt;
    }
    if (d > max) {
      problem(ptr, fmt::format("must be <= {}, got {}", max, shown(v)));
      return std::nullopt;
    }
    return d;
  }

  std::optional<double> read_number(const json& obj, const std::string& key, const std::string& ptr,
                                    double min, bool exclusive, double max) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    return check_number(*it, child(ptr, key), min, exclusive, max);
  }

  /// A number means a constant; an object picks a distribution. Values are in ms.
  std::optional<sim::Distribution> check_distribution(const json& v, const std::string& ptr) {
    const double max = static_cast<double>(kMaxDurationMs);
    if (v.is_number()) {
      const auto c = check_number(v, ptr, 0, false, max);
      if (!c) return std::nullopt;
      return sim::Distribution::constant(*c);
    }
    if (!v.is_object()) {
      problem(ptr, fmt::format("must be a number or a distribution object, got {}", shown(v)));
      return std::nullopt;
    }
    const auto dist = v.find("dist");
    if (dist == v.end()) {
      problem(child(ptr, "dist"), "missing");
      return std::nullopt;
    }
    if (!dist->is_string()) {
      problem(child(ptr, "dist"), fmt::format("must be a string, got {}", shown(*dist)));
      return std::nullopt;
    }
    const std::string kind = dist->get<std::string>();
    if (!contains(distribution_kinds(), kind)) {
      problem(child(ptr, "dist"), fmt::format("unknown distribution \"{}\"", kind) +
                                      suggestion(kind, distribution_kinds()));
      return std::nullopt;
    }
    const std::size_t before = problems.size();
    check_object(v, ptr, "distribution:" + kind);
    sim::Distribution d;
    const auto num = [&](const char* key, double min, bool exclusive) {
      return read_number(v, key, ptr, min, exclusive, max).value_or(0);
    };
    if (kind == "constant") {
      d = sim::Distribution::constant(num("value", 0, false));
    } else if (kind == "uniform") {
      d.kind = sim::Distribution::Kind::Uniform;
      d.min = num("min", 0, false);
      d.max = num("max", 0, false);
      if (problems.size() == before && d.min > d.max) {
        problem(ptr, fmt::format("uniform min must be <= max, got {} > {}", shown(v["min"]),
                                 shown(v["max"])));
      }
    } else if (kind == "exponential") {
      d.kind = sim::Distribution::Kind::Exponential;
      d.mean = num("mean", 0, true);
    } else if (kind == "normal") {
      d.kind = sim::Distribution::Kind::Normal;
      d.mean = num("mean", 0, false);
      d.stddev = num("stddev", 0, false);
      d.has_min = v.contains("min");
      d.has_max = v.contains("max");
      if (d.has_min) d.min = num("min", 0, false);
      if (d.has_max) d.max = num("max", 0, false);
      if (problems.size() == before && d.has_min && d.has_max && d.min > d.max) {
        problem(ptr, fmt::format("normal min must be <= max, got {} > {}", shown(v["min"]),
                                 shown(v["max"])));
      }
    } else {
      d.kind = sim::Distribution::Kind::Lognormal;
      d.median = num("median", 0, true);
      d.sigma = num("sigma", 0, false);
    }
    if (problems.size() != before) return std::nullopt;
    return d;
  }

  std::optional<sim::Distribution> read_distribution(const json& obj, const std::string& key,
                                                     const std::string& ptr) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    return check_distribution(*it, child(ptr, key));
  }

  /// A JSON array; reports anything else, and an array longer than its limit (whose entries
  /// are then not read: the time and memory a list costs stay bounded).
  const json* read_array(const json& obj, const std::string& key, const std::string& ptr) {
    const auto it = obj.find(key);
    if (it == obj.end()) return nullptr;
    if (!it->is_array()) {
      problem(child(ptr, key), fmt::format("must be an array, got {}", shown(*it)));
      return nullptr;
    }
    const auto [limit, why] = list_limit(ptr, key);
    if (it->size() > limit) {
      problem(child(ptr, key),
              fmt::format("{} entries; the simulator's limit is {} ({})", it->size(), limit, why));
      return nullptr;
    }
    return &*it;
  }

  /// A list of known topic names (subscription), each at most once.
  std::vector<std::string> read_topic_list(const json& obj, const std::string& key,
                                           const std::string& ptr,
                                           const std::vector<std::string>& topics) {
    std::vector<std::string> out;
    const json* arr = read_array(obj, key, ptr);
    if (arr == nullptr) return out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const json& t = (*arr)[i];
      const std::string p = child(child(ptr, key), i);
      if (!t.is_string()) {
        problem(p, fmt::format("must be a string, got {}", shown(t)));
        continue;
      }
      const std::string name = t.get<std::string>();
      if (!contains(topics, name)) {
        problem(p, fmt::format("unknown topic \"{}\"", name) + suggestion(name, topics));
      } else if (contains(out, name)) {
        problem(p, fmt::format("lists topic \"{}\" twice", name));
      } else {
        out.push_back(name);
      }
    }
    return out;
  }

  /// Kafka consumer configs: modelled keys normalized into `out`; `protocol` is the
  /// config_by_protocol entry being read ("" for the common `config`).
  /// `event_config`: a start/restart event's config, where group.protocol may change the
  /// protocol of the new incarnation.
  void read_consumer_config(const json& v, const std::string& ptr, const std::string& protocol,
                            ConfigMap& out, bool event_config = false) {
    if (!v.is_object()) {
      problem(ptr, fmt::format("must be an object, got {}", shown(v)));
      return;
    }
    for (const auto& [key, raw] : v.items()) {
      const std::string p = child(ptr, key);
      if (key == "group.protocol" && event_config) {
        const std::string value = raw.is_string() ? raw.get<std::string>() : "";
        if (value == "classic" || value == "consumer") {
          out[key] = value;
        } else if (value == "share") {
          problem(p,
                  "share groups are their own variant (a share consumer is a different client); "
                  "use \"protocols\"");
        } else {
          problem(p, fmt::format("must be \"classic\" or \"consumer\", got {}", shown(raw)) +
                         (raw.is_string() ? suggestion(value, {"classic", "consumer"}) : ""));
        }
      } else if (key == "group.protocol") {
        problem(p,
                "is set by the protocol variant; use \"protocols\" (or a start/restart "
                "event's \"config\" to change it for one incarnation)");
      } else if (key == "group.id") {
        problem(p, "is set by the consumer's \"group\"");
      } else if (const ConfigKeySpec* spec = find_consumer_config(key)) {
        const ConfigValueResult r = normalize_config_value(*spec, raw);
        if (!r.problem.empty()) {
          problem(p + r.problem_suffix, r.problem);
        } else if (!protocol.empty() && contains(consumer_keys_rejected_under(protocol), key)) {
          problem(p, fmt::format("kafka rejects this key with group.protocol={}", protocol));
        } else {
          out[key] = r.value;
        }
      } else if (is_unmodelled_consumer_config(key)) {
        problem(p, "is a kafka consumer config the simulator does not model");
      } else {
        problem(p, "unknown kafka consumer config" +
                       suggestion(key, config_keys(consumer_config_specs())));
      }
    }
  }

  void read_broker_config(const json& v, const std::string& ptr, ConfigMap& out) {
    if (!v.is_object()) {
      problem(ptr, fmt::format("must be an object, got {}", shown(v)));
      return;
    }
    for (const auto& [key, raw] : v.items()) {
      const std::string p = child(ptr, key);
      if (const ConfigKeySpec* spec = find_broker_config(key)) {
        const ConfigValueResult r = normalize_config_value(*spec, raw);
        if (!r.problem.empty()) {
          problem(p + r.problem_suffix, r.problem);
        } else {
          out[key] = r.value;
        }
      } else if (is_unmodelled_broker_config(key)) {
        problem(p, "is a kafka broker config the simulator does not model");
      } else if (find_consumer_config(key) != nullptr) {
        problem(p, "is a kafka consumer config; set it in a consumer's \"config\"");
      } else {
        problem(
            p, "unknown kafka broker config" + suggestion(key, config_keys(broker_config_specs())));
      }
    }
  }
};

std::int64_t int_or(const ConfigMap& config, const std::string& key, std::int64_t fallback) {
  const auto it = config.find(key);
  return it == config.end() ? fallback : it->second.get<std::int64_t>();
}

// Kafka's GroupCoordinatorConfig refuses to start a broker whose consumer-group timeouts are out
// of their bounds, and the classic session bounds must be ordered.
void check_broker_bounds(Parser& p, const ConfigMap& config, const std::string& ptr) {
  const BrokerConfig d;
  const auto v = [&](const char* key, std::int64_t fallback) {
    return int_or(config, key, fallback);
  };
  const std::int64_t min_s =
      v("group.consumer.min.session.timeout.ms", d.group_consumer_min_session_timeout_ms);
  const std::int64_t max_s =
      v("group.consumer.max.session.timeout.ms", d.group_consumer_max_session_timeout_ms);
  const std::int64_t s =
      v("group.consumer.session.timeout.ms", d.group_consumer_session_timeout_ms);
  const std::int64_t min_h =
      v("group.consumer.min.heartbeat.interval.ms", d.group_consumer_min_heartbeat_interval_ms);
  const std::int64_t max_h =
      v("group.consumer.max.heartbeat.interval.ms", d.group_consumer_max_heartbeat_interval_ms);
  const std::int64_t h =
      v("group.consumer.heartbeat.interval.ms", d.group_consumer_heartbeat_interval_ms);
  const auto at = [&](const char* key) { return child(ptr, key); };
  if (min_s > max_s) {
    p.problem(
        at("group.consumer.min.session.timeout.ms"),
        fmt::format("must be <= group.consumer.max.session.timeout.ms ({}), got {}", max_s, min_s));
  } else if (s < min_s) {
    p.problem(
        at("group.consumer.session.timeout.ms"),
        fmt::format("must be >= group.consumer.min.session.timeout.ms ({}), got {}", min_s, s));
  } else if (s > max_s) {
    p.problem(
        at("group.consumer.session.timeout.ms"),
        fmt::format("must be <= group.consumer.max.session.timeout.ms ({}), got {}", max_s, s));
  }
  if (min_h > max_h) {
    p.problem(at("group.consumer.min.heartbeat.interval.ms"),
              fmt::format("must be <= group.consumer.max.heartbeat.interval.ms ({}), got {}", max_h,
                          min_h));
  } else if (h < min_h) {
    p.problem(
        at("group.consumer.heartbeat.interval.ms"),
        fmt::format("must be >= group.consumer.min.heartbeat.interval.ms ({}), got {}", min_h, h));
  } else if (h > max_h) {
    p.problem(
        at("group.consumer.heartbeat.interval.ms"),
        fmt::format("must be <= group.consumer.max.heartbeat.interval.ms ({}), got {}", max_h, h));
  }
  if (h >= s) {
    p.problem(at("group.consumer.heartbeat.interval.ms"),
              fmt::format("must be < group.consumer.session.timeout.ms ({}), got {}", s, h));
  }
  const std::int64_t cmin = v("group.min.session.timeout.ms", d.group_min_session_timeout_ms);
  const std::int64_t cmax = v("group.max.session.timeout.ms", d.group_max_session_timeout_ms);
  if (cmin > cmax) {
    p.problem(at("group.min.session.timeout.ms"),
              fmt::format("must be <= group.max.session.timeout.ms ({}), got {}", cmax, cmin));
  }
}

// The simulator's limits on the size of one run (memory and time grow with consumers x duration
// and partitions x duration). They leave room for 10,000 consumers x 100,000 partitions x 1 h.
void check_scenario_size(Parser& p, const ScenarioSpec& s) {
  if (s.consumers.size() > kMaxConsumers) {
    p.problem("/consumers", fmt::format("{} consumers; the simulator's limit is {}",
                                        s.consumers.size(), kMaxConsumers));
  }
  std::int64_t partitions = 0;
  std::map<std::string, std::int64_t> largest;
  for (const auto& t : s.topics) largest[t.name] = t.partitions;
  for (const auto& e : s.events)
    if (const auto* add = e.as<verb::AddPartitions>())
      largest[add->topic] = std::max<std::int64_t>(largest[add->topic], add->partitions);
  for (const auto& [name, n] : largest) partitions += n;
  if (partitions > kMaxTotalPartitions) {
    p.problem("/topics", fmt::format("{} partitions in all; the simulator's limit is {}",
                                     partitions, kMaxTotalPartitions));
  }
  // Compared exactly, in integers (consumer-ms against the limit's consumer-ms), and printed
  // exactly: a scenario one millisecond past the limit is not shown as being at it.
  const std::int64_t duration_ms = sim::to_ms(s.duration);
  const auto exact_hours = [](std::int64_t units_ms) {
    // units_ms / 3,600,000 as a decimal of at most 9 places when it is one, else "about" and
    // 9 places (3,600,000 has a factor 9: a third of an hour has no finite decimal).
    const std::int64_t whole = units_ms / 3'600'000, rest = units_ms % 3'600'000;
    if (rest == 0) return fmt::format("{}", whole);
    for (int digits = 1; digits <= 9; ++digits) {
      std::int64_t scale = 1;
      for (int k = 0; k < digits; ++k) scale *= 10;
      if ((rest * scale) % 3'600'000 == 0)
        return fmt::format("{}.{:0{}}", whole, rest * scale / 3'600'000, digits);
    }
    return fmt::format("about {}.{:09}", whole, rest * 1'000'000'000 / 3'600'000);
  };
  const auto consumers = static_cast<std::int64_t>(s.consumers.size());
  if (consumers * duration_ms > static_cast<std::int64_t>(kMaxConsumerHours) * 3'600'000) {
    p.problem("/duration_ms",
              fmt::format("{} consumers for {} h is {} consumer-hours; the simulator's "
                          "limit is {:.0f} (e.g. 10000 consumers for 2 h): shorten duration_ms or "
                          "run fewer consumers",
                          s.consumers.size(), exact_hours(duration_ms),
                          exact_hours(consumers * duration_ms), kMaxConsumerHours));
  }
  // (Past kMaxTotalPartitions the count is refused above, and the product could overflow.)
  if (partitions <= kMaxTotalPartitions &&
      partitions * duration_ms > static_cast<std::int64_t>(kMaxPartitionHours) * 3'600'000) {
    p.problem("/duration_ms",
              fmt::format("{} partitions for {} h is {} partition-hours; the simulator's "
                          "limit is {:.0f} (e.g. 100000 partitions for 2 h): shorten duration_ms "
                          "or use fewer partitions",
                          partitions, exact_hours(duration_ms),
                          exact_hours(partitions * duration_ms), kMaxPartitionHours));
  }
}

}  // namespace

std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

std::string escaped_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    out += one_line(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

ScenarioError::ScenarioError(std::string file, std::vector<std::string> problems)
    : file_(std::move(file)), problems_(std::move(problems)) {
  // One problem, one line: a newline inside a value or a key cannot forge another error line.
  for (auto& p : problems_) p = one_line(p);
  for (std::size_t i = 0; i < problems_.size(); ++i) {
    if (i > 0) message_ += '\n';
    message_ += fmt::format("{}: {}", one_line(file_), problems_[i]);
  }
}

const std::vector<std::string>& event_kinds() {
  // The verbs of the closed variant, in its order.
  static const std::vector<std::string> kinds = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<std::string>{std::variant_alternative_t<I, Verb>::kDo...};
  }
  (std::make_index_sequence<std::variant_size_v<Verb>>{});
  return kinds;
}

const std::vector<std::string>& distribution_kinds() {
  static const std::vector<std::string> kinds{"constant", "uniform", "exponential", "normal",
                                              "lognormal"};
  return kinds;
}

const std::map<std::string, std::vector<std::string>>& scenario_accepted_keys() {
  static const KeyLists keys = [] {
    KeyLists k{
        {"scenario",
         {"$schema", "cluster", "consumers", "description", "duration_ms", "events", "expect",
          "groups", "lag_sample_ms", "name", "network", "protocols", "regression", "seed", "topics",
          "deployments", "autoscalers", "variants", "lesson"}},
        {"group", {"config"}},
        {"lesson", {"rebalance_from_ms", "watch_for"}},
        {"cluster",
         {"brokers", "config", "coordinator_load", "purgatory_lateness_ms", "request_handling_ms",
          "write_latency_ms"}},
        {"coordinator_load", {"base_ms", "us_per_record"}},
        {"network", {"drop_rate", "latency_ms"}},
        {"topic", {"initial_records", "name", "partitions", "produce"}},
        {"produce", {"gap_ms", "records_per_sec"}},
        {"consumer",
         {"callbacks", "commit", "config", "config_by_protocol", "connection_setup_ms", "group",
          "heartbeat_wakeup_lateness_ms", "name", "on_stop", "outcomes", "poll_return_lateness_ms",
          "poll_timeout_ms", "processing", "reconciliation_ms", "start_latency_ms", "topics"}},
        {"outcomes", {"reject", "release"}},
        {"config_by_protocol", {"classic", "consumer", "share"}},
        {"processing", {"per_batch_ms", "per_poll_ms", "per_record_ms"}},
        {"callbacks", {"assign_ms", "lost_ms", "revoke_ms"}},
        {"expect",
         {"consumer", "from_ms", "id", "message", "metric", "op", "partition", "protocol", "to_ms",
          "tolerance", "value", "window"}},
        {"expect:order",
         {"expect", "first", "from_ms", "id", "message", "protocol", "then", "to_ms"}},
        {"event:start", {"at_ms", "config", "consumer", "do"}},
        {"event:stop", {"at_ms", "consumer", "do"}},
        {"event:crash", {"at_ms", "consumer", "do"}},
        {"event:restart", {"after_ms", "at_ms", "config", "consumer", "do", "graceful"}},
        {"event:stall", {"at_ms", "consumer", "do", "for_ms"}},
        {"event:pause", {"at_ms", "consumer", "do", "for_ms"}},
        {"event:subscribe", {"at_ms", "consumer", "do", "topics"}},
        {"event:add-partitions", {"at_ms", "do", "partitions", "topic"}},
        {"event:network",
         {"at_ms", "between", "do", "drop_rate", "for_ms", "latency_ms", "one_way"}},
        {"event:partition-network", {"at_ms", "between", "do", "for_ms"}},
        {"event:fail-coordinator", {"at_ms", "do", "down_ms", "group"}},
        {"event:produce", {"at_ms", "do", "gap_ms", "records_per_sec", "topic"}},
        {"event:stop-broker", {"at_ms", "broker", "do"}},
        {"event:crash-broker", {"at_ms", "broker", "do"}},
        {"event:start-broker", {"at_ms", "broker", "do"}},
        {"event:restart-broker", {"after_ms", "at_ms", "broker", "do", "graceful"}},
        {"event:rollout", {"at_ms", "config", "deployment", "do"}},
        {"event:drain-node", {"at_ms", "do", "node"}},
        // Fleets (issue 38): Kubernetes and KEDA spellings.
        {"deployment",
         {"kind", "minReadySeconds", "name", "nodes", "podDisruptionBudget", "podManagementPolicy",
          "pod_start_ms", "preStop_ms", "readinessProbe", "replicas", "strategy", "template",
          "terminationGracePeriodSeconds"}},
        {"strategy", {"rollingUpdate", "type"}},
        {"rollingUpdate", {"maxSurge", "maxUnavailable"}},
        {"pod_start", {"image_pull", "jvm_start", "scheduling"}},
        {"readinessProbe", {"initialDelaySeconds"}},
        {"podDisruptionBudget", {"maxUnavailable", "minAvailable"}},
        {"autoscaler",
         {"activationLagThreshold", "allowIdleConsumers", "consumerGroup", "cooldownPeriod",
          "deployment", "hpa", "lagThreshold", "limitToPartitionsWithLag", "maxReplicaCount",
          "minReplicaCount", "name", "offsetResetPolicy", "pollingInterval",
          "scaleToZeroOnInvalidOffset", "topic"}},
        {"hpa", {"behavior", "syncPeriodSeconds", "tolerance"}},
        {"behavior", {"scaleDown", "scaleUp"}},
        {"scaling_rules", {"policies", "selectPolicy", "stabilizationWindowSeconds"}},
        {"hpa_policy", {"periodSeconds", "type", "value"}},
        {"distribution:constant", {"dist", "value"}},
        {"distribution:uniform", {"dist", "max", "min"}},
        {"distribution:exponential", {"dist", "mean"}},
        {"distribution:normal", {"dist", "max", "mean", "min", "stddev"}},
        {"distribution:lognormal", {"dist", "median", "sigma"}},
    };
    for (auto& [level, list] : k) std::sort(list.begin(), list.end());
    return k;
  }();
  return keys;
}

const std::map<std::string, std::vector<std::string>>& scenario_required_keys() {
  static const KeyLists keys = [] {
    KeyLists k{
        {"scenario", {"name"}},
        {"topic", {"name", "partitions"}},
        {"consumer", {"group", "name", "topics"}},
        {"expect", {"metric", "op", "value"}},
        {"expect:order", {"expect", "first", "then"}},
        {"event:start", {"at_ms", "consumer", "do"}},
        {"event:stop", {"at_ms", "consumer", "do"}},
        {"event:crash", {"at_ms", "consumer", "do"}},
        {"event:restart", {"after_ms", "at_ms", "consumer", "do"}},
        {"event:stall", {"at_ms", "consumer", "do", "for_ms"}},
        {"event:pause", {"at_ms", "consumer", "do", "for_ms"}},
        {"event:subscribe", {"at_ms", "consumer", "do", "topics"}},
        {"event:add-partitions", {"at_ms", "do", "partitions", "topic"}},
        {"event:network", {"at_ms", "between", "do"}},
        {"event:partition-network", {"at_ms", "between", "do", "for_ms"}},
        {"event:fail-coordinator", {"at_ms", "do", "group"}},
        {"event:produce", {"at_ms", "do", "topic"}},
        {"event:stop-broker", {"at_ms", "broker", "do"}},
        {"event:crash-broker", {"at_ms", "broker", "do"}},
        {"event:start-broker", {"at_ms", "broker", "do"}},
        {"event:restart-broker", {"after_ms", "at_ms", "broker", "do"}},
        {"event:rollout", {"at_ms", "deployment", "do"}},
        {"event:drain-node", {"at_ms", "do", "node"}},
        {"deployment", {"name", "template"}},
        {"autoscaler", {"deployment", "name"}},
        {"hpa_policy", {"periodSeconds", "type", "value"}},
        {"distribution:constant", {"dist", "value"}},
        {"distribution:uniform", {"dist", "max", "min"}},
        {"distribution:exponential", {"dist", "mean"}},
        {"distribution:normal", {"dist", "mean", "stddev"}},
        {"distribution:lognormal", {"dist", "median", "sigma"}},
    };
    for (auto& [level, list] : k) std::sort(list.begin(), list.end());
    return k;
  }();
  return keys;
}

/// A lesson of the playground (scenarios/lessons/): what to watch for, step by step, and the
/// rebalance it is about (`rebalance_from_ms`, below the run's duration, kept in `s`). Checked
/// here; the run does not read it, the page and report.html's step control show it.
static void check_lesson(Parser& p, const json& doc, ScenarioSpec& s, bool duration_ok) {
  std::optional<std::int64_t> from;
  if (const auto it = doc.find("lesson");
      it != doc.end() && p.check_object(*it, "/lesson", "lesson")) {
    from = p.read_int(*it, "rebalance_from_ms", "/lesson", 0, kMaxDurationMs, "7 days");
    if (const auto w = it->find("watch_for"); w != it->end()) {
      if (!w->is_array() || w->empty()) {
        p.problem("/lesson/watch_for",
                  fmt::format("must be a non-empty list of strings, got {}", shown(*w)));
      } else {
        for (std::size_t i = 0; i < w->size(); ++i) {
          const json& step = (*w)[i];
          if (!step.is_string() || step.get<std::string>().empty())
            p.problem(fmt::format("/lesson/watch_for/{}", i),
                      fmt::format("must be a non-empty string, got {}", shown(step)));
        }
      }
    }
  }
  if (from && duration_ok && sim::ms(*from) >= s.duration)
    p.problem("/lesson/rebalance_from_ms",
              fmt::format("must be < duration_ms ({}), got {}: no rebalance starts after the run",
                          sim::to_ms(s.duration), *from));
  else
    s.lesson_rebalance_from_ms = from;
}

namespace {

// parse_scenario's sections, in the order of the file format (and of the problems reported):
// each reads its part of the document into `s` and reports into `p`; what a later section needs
// from an earlier one (topic, consumer and group names, the group protocols) is kept here.
class ScenarioReader {
 public:
  ScenarioReader(const json& doc, ScenarioSpec& s) : doc(doc), s(s) {}

  Parser p;
  const json& doc;
  ScenarioSpec& s;
  bool duration_ok = true;  // duration_ms is valid: event times are checked against it
  std::set<std::string> group_protocols;  // of the variants the scenario runs
  std::vector<std::string> topic_names, consumer_names, groups;

  /// name, description, lesson, $schema, seed, duration_ms, lag_sample_ms.
  void header() {
    if (auto v = p.read_string(doc, "name", "")) s.name = *v;
    if (auto v = p.read_string(doc, "description", "", true)) s.description = *v;
    p.read_string(doc, "$schema", "", true);
    if (const auto it = doc.find("seed"); it != doc.end()) {
      if (it->is_number_unsigned()) {
        s.seed = it->get<std::uint64_t>();
      } else if (it->is_number_integer() && it->get<std::int64_t>() == 0) {
        s.seed = 0;  // "-0" is zero: a JSON parser reads it as a signed integer
      } else if (it->is_number_integer()) {
        p.problem("/seed", fmt::format("must be >= 0, got {}", shown(*it)));
      } else {
        p.problem("/seed", fmt::format("must be an integer, got {}", shown(*it)));
      }
    }
    if (doc.contains("duration_ms")) {
      const auto v = p.read_int(doc, "duration_ms", "", 1, kMaxDurationMs, "7 days");
      duration_ok = v.has_value();
      if (v) s.duration = sim::ms(*v);
    }
    check_lesson(p, doc, s, duration_ok);
    if (doc.contains("lag_sample_ms")) {
      if (const auto v = p.read_int(doc, "lag_sample_ms", "", 0, kMaxDurationMs, "7 days")) {
        s.lag_sample = sim::ms(*v);
      }
    }
  }

  /// Protocol variants; the group protocols they run decide which consumer keys Kafka rejects.
  void protocols() {
    if (const json* arr = p.read_array(doc, "protocols", "")) {
      s.protocols.clear();
      if (arr->empty()) p.problem("/protocols", "must not be empty");
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const json& v = (*arr)[i];
        const std::string ptr = child("/protocols", i);
        if (!v.is_string()) {
          p.problem(ptr, fmt::format("must be a string, got {}", shown(v)));
          continue;
        }
        const std::string name = v.get<std::string>();
        if (!contains(protocol_variants(), name)) {
          p.problem(ptr, fmt::format("unknown protocol variant \"{}\"", name) +
                             suggestion(name, protocol_variants()));
        } else if (contains(s.protocols, name)) {
          p.problem(ptr, fmt::format("lists \"{}\" twice", name));
        } else {
          s.protocols.push_back(name);
        }
      }
    }
    for (const auto& v : s.protocols) group_protocols.insert(group_protocol_of(v));
  }

  void cluster() {
    const auto it = doc.find("cluster");
    if (it == doc.end() || !p.check_object(*it, "/cluster", "cluster")) return;
    if (auto v = p.read_int(*it, "brokers", "/cluster", 1, kMaxBrokers)) {
      s.cluster.brokers = static_cast<std::int32_t>(*v);
    }
    if (const auto c = it->find("config"); c != it->end()) {
      const std::size_t before = p.problems.size();
      p.read_broker_config(*c, "/cluster/config", s.cluster.config);
      if (p.problems.size() == before) check_broker_bounds(p, s.cluster.config, "/cluster/config");
    }
    if (auto d = p.read_distribution(*it, "write_latency_ms", "/cluster")) {
      s.cluster.write_latency = *d;
    }
    if (auto d = p.read_distribution(*it, "request_handling_ms", "/cluster")) {
      s.cluster.request_handling = *d;
    }
    if (auto d = p.read_distribution(*it, "purgatory_lateness_ms", "/cluster")) {
      s.cluster.purgatory_lateness = *d;
    }
    if (const auto cl = it->find("coordinator_load"); cl != it->end()) {
      if (p.check_object(*cl, "/cluster/coordinator_load", "coordinator_load")) {
        if (auto v = p.read_int(*cl, "base_ms", "/cluster/coordinator_load", 0, 3600000))
          s.cluster.coordinator_load.base_ms = *v;
        if (auto v = p.read_int(*cl, "us_per_record", "/cluster/coordinator_load", 0, 1000000))
          s.cluster.coordinator_load.us_per_record = *v;
      }
    }
  }

  void network() {
    if (const auto it = doc.find("network"); it != doc.end()) {
      if (p.check_object(*it, "/network", "network")) {
        if (auto d = p.read_distribution(*it, "latency_ms", "/network")) s.network.latency = *d;
        if (auto v = p.read_number(*it, "drop_rate", "/network", 0, false, 1)) {
          s.network.drop_rate = *v;
        }
      }
    }
  }

  void topics() {
    const json* arr = p.read_array(doc, "topics", "");
    if (arr == nullptr) return;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const json& t = (*arr)[i];
      const std::string ptr = child("/topics", i);
      if (!p.check_object(t, ptr, "topic")) continue;
      TopicSpec topic;
      if (auto v = p.read_string(t, "name", ptr)) {
        topic.name = *v;
        if (!valid_topic_name(topic.name)) {
          p.problem(child(ptr, "name"),
                    fmt::format("must be a kafka topic name ([a-zA-Z0-9._-], at most 249), got {}",
                                shown(t["name"])));
        } else if (contains(topic_names, topic.name)) {
          p.problem(child(ptr, "name"), fmt::format("duplicate topic name \"{}\"", topic.name));
        } else {
          topic_names.push_back(topic.name);
        }
      }
      if (auto v = p.read_int(t, "partitions", ptr, 1, kMaxPartitions)) {
        topic.partitions = static_cast<std::int32_t>(*v);
      }
      if (auto v = p.read_int(t, "initial_records", ptr, 0, kMaxInitialRecords)) {
        topic.initial_records = *v;
      }
      if (const auto pr = t.find("produce"); pr != t.end())
        topic_produce(*pr, child(ptr, "produce"), topic);
      s.topics.push_back(std::move(topic));
    }
  }

  /// A topic's `produce`: a rate, or an object with records_per_sec or gap_ms.
  void topic_produce(const json& pr, const std::string& pp, TopicSpec& topic) {
    if (pr.is_number()) {
      if (auto r = p.check_number(pr, pp, 0, true, kMaxRecordsPerSec)) {
        topic.records_per_sec = *r;
        topic.produce_gap = sim::Distribution::constant(1000.0 / *r);
      }
      return;
    }
    if (!p.check_object(pr, pp, "produce")) return;
    const bool has_rate = pr.contains("records_per_sec");
    const bool has_gap = pr.contains("gap_ms");
    if (has_rate && has_gap) {
      p.problem(pp, "give records_per_sec or gap_ms, not both");
    } else if (!has_rate && !has_gap) {
      p.problem(pp, "needs records_per_sec or gap_ms");
    } else if (has_rate) {
      if (auto r = p.read_number(pr, "records_per_sec", pp, 0, true, kMaxRecordsPerSec)) {
        topic.records_per_sec = *r;
        topic.produce_gap = sim::Distribution::constant(1000.0 / *r);
      }
    } else if (auto d = p.read_distribution(pr, "gap_ms", pp)) {
      if (d->is_constant() && d->value <= 0) {
        p.problem(child(pp, "gap_ms"), "must be > 0, got 0");
      } else {
        topic.produce_gap = *d;
        topic.records_per_sec = d->expected_ms() > 0 ? 1000.0 / d->expected_ms() : 0;
      }
    }
  }

  void consumers() {
    const json* arr = p.read_array(doc, "consumers", "");
    if (arr == nullptr) return;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const json& c = (*arr)[i];
      const std::string ptr = child("/consumers", i);
      if (!p.check_object(c, ptr, "consumer")) continue;
      ConsumerSpec consumer;
      if (auto v = p.read_string(c, "name", ptr)) {
        consumer.name = *v;
        if (*v == "coordinator" || *v == "*" || v->starts_with("broker-")) {
          p.problem(child(ptr, "name"),
                    fmt::format("\"{}\" is reserved for network endpoints", *v));
        } else if (contains(consumer_names, *v)) {
          p.problem(child(ptr, "name"), fmt::format("duplicate consumer name \"{}\"", *v));
        } else {
          consumer_names.push_back(*v);
        }
      }
      if (auto v = p.read_string(c, "group", ptr)) {
        consumer.group = *v;
        if (!contains(groups, *v)) groups.push_back(*v);
      }
      consumer.topics = p.read_topic_list(c, "topics", ptr, topic_names);
      consumer_configs(c, ptr, consumer);
      if (auto v = p.read_int(c, "poll_timeout_ms", ptr, 0, kMaxDurationMs, "7 days")) {
        consumer.poll_timeout = sim::ms(*v);
      }
      if (auto d = p.read_distribution(c, "start_latency_ms", ptr)) consumer.start_latency = *d;
      if (auto d = p.read_distribution(c, "heartbeat_wakeup_lateness_ms", ptr))
        consumer.heartbeat_wakeup_lateness = *d;
      if (auto d = p.read_distribution(c, "connection_setup_ms", ptr))
        consumer.connection_setup = *d;
      if (auto v = p.read_number(c, "poll_return_lateness_ms", ptr, 0, false, 1000))
        consumer.poll_return_lateness = sim::SimTime{std::llround(*v * 1000.0)};
      if (auto d = p.read_distribution(c, "reconciliation_ms", ptr)) consumer.reconciliation = *d;
      consumer_times(c, ptr, consumer);
      if (const auto oc = c.find("outcomes"); oc != c.end())
        consumer_outcomes(*oc, child(ptr, "outcomes"), consumer);
      consumer_modes(c, ptr, consumer);
      s.consumers.push_back(std::move(consumer));
    }
  }

  /// A consumer's `config` and `config_by_protocol`, and the heartbeat interval they give against
  /// the session timeout.
  void consumer_configs(const json& c, const std::string& ptr, ConsumerSpec& consumer) {
    if (const auto cfg = c.find("config"); cfg != c.end()) {
      p.read_consumer_config(*cfg, child(ptr, "config"), "", consumer.config);
      // Kafka refuses these keys under a protocol the scenario runs (ConsumerConfig's
      // *_PROTOCOL_UNSUPPORTED_CONFIGS); config_by_protocol keeps one file valid for all.
      for (const auto& gp : group_protocols) {
        for (const auto& key : consumer_keys_rejected_under(gp)) {
          if (consumer.config.count(key) == 0) continue;
          const char* home = gp == "classic" ? "consumer" : "classic";
          p.problem(child(child(ptr, "config"), key),
                    fmt::format("kafka rejects this key with group.protocol={}; move it into "
                                "config_by_protocol.{}",
                                gp, home));
        }
      }
    }
    if (const auto byp = c.find("config_by_protocol"); byp != c.end()) {
      const std::string bp = child(ptr, "config_by_protocol");
      if (p.check_object(*byp, bp, "config_by_protocol")) {
        for (const auto& [gp, cfg] : byp->items()) {
          if (!contains(scenario_accepted_keys().at("config_by_protocol"), gp)) continue;
          p.read_consumer_config(cfg, child(bp, gp), gp, consumer.config_by_protocol[gp]);
        }
      }
    }
    // Kafka (classic Heartbeat): the heartbeat interval must be lower than the session timeout.
    ConfigMap merged = consumer.config;
    const auto classic = consumer.config_by_protocol.find("classic");
    if (classic != consumer.config_by_protocol.end()) {
      for (const auto& [k, v] : classic->second) merged[k] = v;
    }
    const auto source = [&](const std::string& key) {
      if (classic != consumer.config_by_protocol.end() && classic->second.count(key) > 0) {
        return child(child(child(ptr, "config_by_protocol"), "classic"), key);
      }
      return child(child(ptr, "config"), key);
    };
    const ConsumerConfig d;
    const std::int64_t hb = int_or(merged, "heartbeat.interval.ms", d.heartbeat_interval_ms);
    const std::int64_t st = int_or(merged, "session.timeout.ms", d.session_timeout_ms);
    if (hb >= st) {
      if (merged.count("heartbeat.interval.ms") > 0) {
        p.problem(source("heartbeat.interval.ms"),
                  fmt::format("must be < session.timeout.ms ({}), got {}", st, hb));
      } else {
        p.problem(source("session.timeout.ms"),
                  fmt::format("must be > heartbeat.interval.ms ({}), got {}", hb, st));
      }
    }
  }

  /// A consumer's application times: `processing` and `callbacks`.
  void consumer_times(const json& c, const std::string& ptr, ConsumerSpec& consumer) {
    if (const auto pr = c.find("processing"); pr != c.end()) {
      const std::string pp = child(ptr, "processing");
      if (p.check_object(*pr, pp, "processing")) {
        if (auto d = p.read_distribution(*pr, "per_record_ms", pp)) {
          consumer.processing.per_record = *d;
        }
        if (auto d = p.read_distribution(*pr, "per_batch_ms", pp)) {
          consumer.processing.per_batch = *d;
        }
        if (auto d = p.read_distribution(*pr, "per_poll_ms", pp)) {
          consumer.processing.per_poll = *d;
        }
      }
    }
    if (const auto cb = c.find("callbacks"); cb != c.end()) {
      const std::string cp = child(ptr, "callbacks");
      if (p.check_object(*cb, cp, "callbacks")) {
        if (auto d = p.read_distribution(*cb, "revoke_ms", cp)) consumer.callbacks.revoke = *d;
        if (auto d = p.read_distribution(*cb, "assign_ms", cp)) consumer.callbacks.assign = *d;
        if (auto d = p.read_distribution(*cb, "lost_ms", cp)) consumer.callbacks.lost = *d;
      }
    }
  }

  /// A share consumer's `outcomes`: fractions of the records it REJECTs and RELEASEs.
  void consumer_outcomes(const json& oc, const std::string& op, ConsumerSpec& consumer) {
    if (!p.check_object(oc, op, "outcomes")) return;
    if (auto v = p.read_number(oc, "reject", op, 0, false, 1)) consumer.outcomes.reject = *v;
    if (auto v = p.read_number(oc, "release", op, 0, false, 1)) consumer.outcomes.release = *v;
    if (consumer.outcomes.reject + consumer.outcomes.release > 1) {
      p.problem(op, "reject + release must not exceed 1 (they are fractions of the records)");
    }
    // Only an explicit-mode share consumer chooses how each record is acknowledged.
    std::string mode = "implicit";
    const auto share_cfg = consumer.config_by_protocol.find("share");
    for (const auto* cfg :
         {&consumer.config,
          share_cfg == consumer.config_by_protocol.end() ? nullptr : &share_cfg->second}) {
      if (cfg == nullptr) continue;
      const auto m = cfg->find("share.acknowledgement.mode");
      if (m != cfg->end() && m->second.is_string()) mode = m->second.get<std::string>();
    }
    if (mode != "explicit" && (consumer.outcomes.reject > 0 || consumer.outcomes.release > 0)) {
      p.problem(op,
                "outcomes other than ACCEPT need share.acknowledgement.mode=explicit; set it in "
                "config (or config_by_protocol.share)");
    }
  }

  /// How the application commits (`commit`) and stops (`on_stop`).
  void consumer_modes(const json& c, const std::string& ptr, ConsumerSpec& consumer) {
    if (auto v = p.read_string(c, "commit", ptr)) {
      if (*v == "auto") {
        consumer.commit = CommitMode::Auto;
      } else if (*v == "sync") {
        consumer.commit = CommitMode::Sync;
      } else if (*v == "async") {
        consumer.commit = CommitMode::Async;
      } else {
        p.problem(child(ptr, "commit"),
                  fmt::format("unknown commit mode \"{}\"", *v) + suggestion(*v, commit_modes()));
      }
    }
    if (auto v = p.read_string(c, "on_stop", ptr)) {
      if (*v == "wakeup") {
        consumer.on_stop = StopMode::Wakeup;
      } else if (*v == "after_poll") {
        consumer.on_stop = StopMode::AfterPoll;
      } else {
        p.problem(child(ptr, "on_stop"),
                  fmt::format("unknown on_stop \"{}\"", *v) + suggestion(*v, stop_modes()));
      }
    }
  }

  /// Group configs (Kafka's GroupConfig, set per group with incrementalAlterConfigs on the GROUP
  /// resource); only share-group keys are modelled.
  void group_configs() {
    const auto it = doc.find("groups");
    if (it == doc.end()) return;
    if (!it->is_object()) {
      p.problem("/groups",
                fmt::format("must be an object: group id -> {{\"config\": {{...}}}}, got {}",
                            shown(*it)));
      return;
    }
    std::vector<std::string> known;  // the consumers' groups
    for (const auto& c : s.consumers) {
      if (!contains(known, c.group)) known.push_back(c.group);
    }
    for (const auto& [group, g] : it->items()) {
      const std::string ptr = child("/groups", group);
      if (!contains(known, group)) {
        const std::string guess = suggestion(group, known);
        p.problem(ptr, guess.empty()
                           ? fmt::format("no consumer is in this group (the consumers' groups: {})",
                                         fmt::join(known, ", "))
                           : "no consumer is in this group" + guess);
        continue;
      }
      if (!p.check_object(g, ptr, "group")) continue;
      const auto c = g.find("config");
      if (c == g.end()) continue;
      group_config(group, *c, child(ptr, "config"));
    }
  }

  /// One group's `config`: each key normalized, then Kafka's GroupConfig.validate when all are.
  void group_config(const std::string& group, const json& c, const std::string& cptr) {
    if (!c.is_object()) {
      p.problem(cptr, fmt::format("must be an object, got {}", shown(c)));
      return;
    }
    ConfigMap& out = s.group_configs[group];
    bool ok = true;
    for (const auto& [key, raw] : c.items()) {
      const std::string kp = child(cptr, key);
      if (const ConfigKeySpec* spec = find_group_config(key)) {
        const ConfigValueResult r = normalize_config_value(*spec, raw);
        if (!r.problem.empty()) {
          p.problem(kp + r.problem_suffix, r.problem);
          ok = false;
        } else {
          out[key] = r.value;
        }
      } else if (is_unmodelled_group_config(key)) {
        p.problem(kp, "is a kafka group config the simulator does not model");
        ok = false;
      } else if (find_broker_config("group." + key) != nullptr) {
        p.problem(kp,
                  fmt::format("unknown kafka group config; \"group.{}\" is the broker's default, "
                              "set in \"cluster.config\"",
                              key));
        ok = false;
      } else {
        p.problem(
            kp, "unknown kafka group config" + suggestion(key, config_keys(group_config_specs())));
        ok = false;
      }
    }
    if (ok) {
      for (const auto& [key, why] : validate_share_group_config(out))
        p.problem(child(cptr, key), why);
    }
  }

  /// A network endpoint: a consumer's name, "coordinator", "broker-N" (N < brokers) or "*".
  bool check_endpoint(const json& v, const std::string& ptr) {
    if (!v.is_string()) {
      p.problem(ptr, fmt::format("must be a string, got {}", shown(v)));
      return false;
    }
    const std::string e = v.get<std::string>();
    if (e == "*" || e == "coordinator" || contains(consumer_names, e)) return true;
    if (e.starts_with("broker-")) {
      const std::string n = e.substr(7);
      const bool digits =
          !n.empty() && n.size() <= 6 &&
          std::all_of(n.begin(), n.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (digits && std::stoll(n) < s.cluster.brokers) return true;
      if (digits) {
        p.problem(ptr, fmt::format("unknown endpoint \"{}\": cluster.brokers is {}", e,
                                   s.cluster.brokers));
        return false;
      }
    }
    std::vector<std::string> known = consumer_names;
    known.push_back("coordinator");
    p.problem(ptr, fmt::format("unknown endpoint \"{}\"", e) + suggestion(e, known));
    return false;
  }

  /// The script: every event checked, the good ones kept in time order.
  void events() {
    if (const json* arr = p.read_array(doc, "events", "")) {
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const json& e = (*arr)[i];
        const std::string ptr = child("/events", i);
        if (!e.is_object()) {
          p.problem(ptr, fmt::format("must be an object, got {}", shown(e)));
          continue;
        }
        const std::size_t before = p.problems.size();
        RawEvent ev;
        ev.index = i;
        if (!event_head(e, ptr, ev)) continue;
        event_subjects(e, ptr, ev);
        event_times(e, ptr, ev);
        event_network(e, ptr, ev);
        if (ev.kind == "produce") event_produce(e, ptr, ev);
        if (p.problems.size() == before) s.events.push_back(to_event(std::move(ev)));
      }
    }
    // Equal times keep file order: the script reads top to bottom.
    std::stable_sort(s.events.begin(), s.events.end(),
                     [](const EventSpec& a, const EventSpec& b) { return a.at < b.at; });
  }

  /// An event's `do` and `at_ms`; false when the verb is unknown (its fields are not read).
  bool event_head(const json& e, const std::string& ptr, RawEvent& ev) {
    const auto kind = p.read_string(e, "do", ptr);
    if (!e.contains("do")) p.problem(child(ptr, "do"), "missing");
    bool known_kind = false;
    if (kind) {
      known_kind = contains(event_kinds(), *kind);
      if (!known_kind) {
        p.problem(child(ptr, "do"), fmt::format("unknown event kind \"{}\"", *kind) +
                                        suggestion(*kind, event_kinds()));
      }
    }
    if (known_kind) {
      ev.kind = *kind;
      p.check_object(e, ptr, "event:" + ev.kind);
    } else if (!e.contains("at_ms")) {
      p.problem(child(ptr, "at_ms"), "missing");
    }
    if (auto v = p.read_int(e, "at_ms", ptr, 0, kMaxDurationMs, "7 days")) {
      ev.at = sim::ms(*v);
      if (duration_ok && ev.at > s.duration) {
        p.problem(child(ptr, "at_ms"),
                  fmt::format("must be <= duration_ms ({}), got {}", sim::to_ms(s.duration), *v));
      }
    }
    return known_kind;
  }

  /// Whether the event's verb takes `key` and the event has it.
  static bool has(const json& e, const RawEvent& ev, const char* key) {
    return contains(scenario_accepted_keys().at("event:" + ev.kind), key) && e.contains(key);
  }

  /// What an event acts on: a consumer, deployment, node, broker, topic(s) or group, and a
  /// start/restart/rollout's config.
  void event_subjects(const json& e, const std::string& ptr, RawEvent& ev) {
    if (has(e, ev, "consumer")) {
      if (auto v = p.read_string(e, "consumer", ptr)) {
        ev.consumer = *v;
        if (!contains(consumer_names, *v)) {
          p.problem(child(ptr, "consumer"),
                    fmt::format("unknown consumer \"{}\"", *v) + suggestion(*v, consumer_names));
        }
      }
    }
    if (has(e, ev, "deployment")) {
      if (auto v = p.read_string(e, "deployment", ptr))
        ev.deployment = *v;  // checked by parse_fleet
    }
    if (has(e, ev, "node")) {
      if (auto v = p.read_string(e, "node", ptr)) ev.node = *v;
    }
    if (has(e, ev, "after_ms")) {
      if (auto v = p.read_int(e, "after_ms", ptr, 0, kMaxDurationMs, "7 days")) {
        ev.after = sim::ms(*v);
      }
    }
    if (has(e, ev, "config")) {
      ev.has_config = true;
      p.read_consumer_config(e["config"], child(ptr, "config"), "", ev.config, true);
    }
    if (has(e, ev, "broker")) {
      const std::string note = fmt::format("broker ids are 0..{}: cluster.brokers is {}",
                                           s.cluster.brokers - 1, s.cluster.brokers);
      if (auto v = p.read_int(e, "broker", ptr, 0, s.cluster.brokers - 1, note.c_str())) {
        ev.broker = static_cast<std::int32_t>(*v);
      }
    }
    if (has(e, ev, "graceful")) {
      if (auto v = p.read_bool(e, "graceful", ptr)) ev.graceful = *v;
    }
  }

  /// An event's durations (for_ms, down_ms) and its topics, partitions and group.
  void event_times(const json& e, const std::string& ptr, RawEvent& ev) {
    if (has(e, ev, "for_ms")) {
      if (auto v = p.read_int(e, "for_ms", ptr, 1, kMaxDurationMs, "7 days")) {
        ev.for_ = sim::ms(*v);
        ev.has_for = true;
      }
    }
    if (has(e, ev, "down_ms")) {
      if (auto v = p.read_int(e, "down_ms", ptr, 1, kMaxDurationMs, "7 days")) {
        ev.down = sim::ms(*v);
        ev.has_down = true;
      }
    }
    if (has(e, ev, "topics")) ev.topics = p.read_topic_list(e, "topics", ptr, topic_names);
    if (has(e, ev, "topic")) {
      if (auto v = p.read_string(e, "topic", ptr)) {
        ev.topic = *v;
        if (!contains(topic_names, *v)) {
          p.problem(child(ptr, "topic"),
                    fmt::format("unknown topic \"{}\"", *v) + suggestion(*v, topic_names));
        }
      }
    }
    if (has(e, ev, "partitions")) {
      if (auto v = p.read_int(e, "partitions", ptr, 1, kMaxPartitions)) {
        ev.partitions = static_cast<std::int32_t>(*v);
      }
    }
    if (has(e, ev, "group")) {
      if (auto v = p.read_string(e, "group", ptr)) {
        ev.group = *v;
        if (!contains(groups, *v)) {
          p.problem(child(ptr, "group"),
                    fmt::format("unknown group \"{}\"", *v) + suggestion(*v, groups));
        }
      }
    }
  }

  /// A network or partition-network event's links and faults.
  void event_network(const json& e, const std::string& ptr, RawEvent& ev) {
    if (has(e, ev, "between")) {
      const json& b = e["between"];
      const std::string bp = child(ptr, "between");
      if (!b.is_array() || b.size() != 2) {
        p.problem(bp, fmt::format("must be an array of two endpoints, got {}", shown(b)));
      } else {
        for (std::size_t k = 0; k < 2; ++k) {
          if (check_endpoint(b[k], child(bp, k))) ev.between.push_back(b[k].get<std::string>());
        }
      }
    }
    if (has(e, ev, "one_way")) {
      if (auto v = p.read_bool(e, "one_way", ptr)) ev.one_way = *v;
    }
    if (has(e, ev, "latency_ms")) ev.latency = p.read_distribution(e, "latency_ms", ptr);
    if (has(e, ev, "drop_rate")) ev.drop_rate = p.read_number(e, "drop_rate", ptr, 0, false, 1);
    if (ev.kind == "network" && !e.contains("latency_ms") && !e.contains("drop_rate")) {
      p.problem(ptr, "needs latency_ms and/or drop_rate");
    }
  }

  /// A produce event: the new production of every partition of `topic`, a rate (0 stops it) or a
  /// gap.
  void event_produce(const json& e, const std::string& ptr, RawEvent& ev) {
    const bool has_rate = e.contains("records_per_sec");
    const bool has_gap = e.contains("gap_ms");
    if (has_rate == has_gap) {
      p.problem(ptr, "give records_per_sec or gap_ms (exactly one)");
    } else if (has_rate) {
      if (auto r = p.read_number(e, "records_per_sec", ptr, 0, false, kMaxRecordsPerSec)) {
        ev.records_per_sec = *r;
        if (*r > 0) ev.produce_gap = sim::Distribution::constant(1000.0 / *r);
      }
    } else if (auto d = p.read_distribution(e, "gap_ms", ptr)) {
      if (d->is_constant() && d->value <= 0) {
        p.problem(child(ptr, "gap_ms"), "must be > 0, got 0");
      } else {
        ev.produce_gap = *d;
        ev.records_per_sec = d->is_constant() ? 1000.0 / d->value : 0;
      }
    }
  }

  /// Each incarnation's configs, in time order: a start/restart config stays for the consumer's
  /// later incarnations; Kafka refuses keys unsupported by the incarnation's group.protocol, and a
  /// classic heartbeat interval must stay below the session timeout.
  void incarnation_configs() {
    std::map<std::string, ConfigMap> overrides;                        // consumer -> event configs
    std::map<std::string, std::map<std::string, std::string>> set_at;  // consumer -> key -> path
    for (const auto& ev : s.events) {
      const EventConfig* config = verb_config(ev.verb);
      const std::string* name = verb_consumer(ev.verb);
      if (config == nullptr || name == nullptr) continue;
      const ConsumerSpec* c = s.consumer(*name);
      if (c == nullptr) continue;
      const std::string ptr = child(child("/events", ev.index), "config");
      auto& ov = overrides[*name];
      for (const auto& [k, v] : *config) {
        ov[k] = v;
        set_at[*name][k] = child(ptr, k);
      }
      std::vector<std::string> protocols;  // the group protocols this incarnation may run
      const bool explicit_protocol = ov.count("group.protocol") > 0;
      if (const auto gp = ov.find("group.protocol"); gp != ov.end()) {
        protocols.push_back(gp->second.get<std::string>());
      } else {
        for (const auto& gp : group_protocols) protocols.push_back(gp);
      }
      for (const auto& gp : protocols) {
        if (gp == "share") continue;
        rejected_keys(*c, gp, ov, set_at[*name], ptr, explicit_protocol);
        if (gp == "classic") classic_timeouts(*c, ov, *config, ptr);
      }
    }
  }

  /// The keys of an incarnation's configs (`ov`, each set at `set_at`) that Kafka rejects under
  /// group.protocol `gp`; a key of the consumer's own config must move to config_by_protocol.
  void rejected_keys(const ConsumerSpec& c, const std::string& gp, const ConfigMap& ov,
                     const std::map<std::string, std::string>& set_at, const std::string& ptr,
                     bool explicit_protocol) {
    const char* home = gp == "classic" ? "consumer" : "classic";
    for (const auto& key : consumer_keys_rejected_under(gp)) {
      if (ov.count(key) > 0) {
        p.problem(set_at.at(key),
                  explicit_protocol
                      ? fmt::format("kafka rejects this key with group.protocol={}, the "
                                    "protocol of this incarnation",
                                    gp)
                      : fmt::format("kafka rejects this key with group.protocol={}, which the "
                                    "scenario runs; set group.protocol in this config",
                                    gp));
      } else if (c.config.count(key) > 0) {
        const std::size_t ci = static_cast<std::size_t>(&c - s.consumers.data());
        p.problem(child(child(child("/consumers", ci), "config"), key),
                  fmt::format("kafka rejects this key with group.protocol={}, which {} sets; "
                              "move it into config_by_protocol.{}",
                              gp, ptr, home));
      }
    }
  }

  /// A classic incarnation's heartbeat interval against its session timeout, when its event's
  /// `config` sets either.
  void classic_timeouts(const ConsumerSpec& c, const ConfigMap& ov, const EventConfig& config,
                        const std::string& ptr) {
    ConfigMap merged = c.config;
    if (const auto it = c.config_by_protocol.find("classic"); it != c.config_by_protocol.end())
      for (const auto& [k, v] : it->second) merged[k] = v;
    for (const auto& [k, v] : ov) merged[k] = v;
    const ConsumerConfig d;
    const std::int64_t hb = int_or(merged, "heartbeat.interval.ms", d.heartbeat_interval_ms);
    const std::int64_t st = int_or(merged, "session.timeout.ms", d.session_timeout_ms);
    if (hb >= st &&
        (config.count("heartbeat.interval.ms") > 0 || config.count("session.timeout.ms") > 0)) {
      p.problem(ptr, fmt::format("heartbeat.interval.ms ({}) must be < session.timeout.ms ({}) "
                                 "in this incarnation",
                                 hb, st));
    }
  }

  /// add-partitions may only grow a topic (Kafka's CreatePartitions), checked in time order.
  void partition_growth() {
    std::map<std::string, std::int32_t> counts;
    for (const auto& t : s.topics) counts[t.name] = t.partitions;
    for (const auto& ev : s.events) {
      const auto* add = ev.as<verb::AddPartitions>();
      if (add == nullptr) continue;
      std::int32_t& current = counts[add->topic];
      if (add->partitions <= current) {
        p.problem(child(child("/events", ev.index), "partitions"),
                  fmt::format("must be greater than the current partition count ({}), got {}",
                              current, add->partitions));
      } else {
        current = add->partitions;
      }
    }
  }

  /// `regression`: per-metric tolerances against a baseline (check --baseline), "+N%" or "+N"
  /// (a rise is worse) or "-N%" / "-N" (a drop is worse); the metric names are checked by check.
  void regression() {
    const auto it = doc.find("regression");
    if (it == doc.end()) return;
    if (!it->is_object()) {
      p.problem("/regression", fmt::format("must be an object of metric -> tolerance (e.g. "
                                           "{{\"not_processed_partition_ms\": \"+10%\"}}), got {}",
                                           shown(*it)));
      return;
    }
    for (const auto& [metric, tol] : it->items()) {
      const std::string ptr = child("/regression", metric);
      if (!tol.is_string() || !parse_regression_tolerance(tol.get<std::string>())) {
        p.problem(
            ptr,
            fmt::format("must be a tolerance with a direction: \"+N%\", \"+N\", \"-N%\" or \"-N\" "
                        "(+: a rise is a regression), got {}",
                        shown(tol)));
        continue;
      }
      s.regression.emplace_back(metric, tol.get<std::string>());
    }
  }

  void expectations() {
    const json* arr = p.read_array(doc, "expect", "");
    if (arr == nullptr) return;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const json& x = (*arr)[i];
      const std::string ptr = child("/expect", i);
      const bool order = x.is_object() && x.contains("expect");
      if (!p.check_object(x, ptr, order ? "expect:order" : "expect")) continue;
      ExpectSpec ex;
      ex.index = i;
      ex.order = order;
      expect_common(x, ptr, ex);
      if (order) {
        expect_order(x, ptr, ex);
      } else {
        expect_metric(x, ptr, ex);
      }
      s.expect.push_back(std::move(ex));
    }
  }

  /// What every expect entry may have: protocol, message, id, the window.
  void expect_common(const json& x, const std::string& ptr, ExpectSpec& ex) {
    if (auto v = p.read_string(x, "protocol", ptr)) {
      if (!contains(protocol_variants(), *v)) {
        p.problem(child(ptr, "protocol"), fmt::format("unknown protocol variant \"{}\"", *v) +
                                              suggestion(*v, protocol_variants()));
      }
      ex.protocol = *v;
    }
    if (auto v = p.read_string(x, "message", ptr)) ex.message = *v;
    if (auto v = p.read_string(x, "id", ptr)) {
      // The stable JUnit test name (check): unique within the scenario.
      if (v->empty()) p.problem(child(ptr, "id"), "must not be empty");
      for (const auto& other : s.expect)
        if (!v->empty() && other.id == *v)
          p.problem(
              child(ptr, "id"),
              fmt::format("\"{}\" is already the id of /expect/{} (ids name JUnit test cases: "
                          "make them unique)",
                          *v, other.index));
      ex.id = *v;
    }
    if (auto v = p.read_int(x, "from_ms", ptr, 0, kMaxDurationMs, "7 days")) ex.from_ms = *v;
    if (auto v = p.read_int(x, "to_ms", ptr, 0, kMaxDurationMs, "7 days")) ex.to_ms = *v;
    if (ex.from_ms && ex.to_ms && *ex.to_ms <= *ex.from_ms) {
      p.problem(child(ptr, "to_ms"),
                fmt::format("must be greater than from_ms ({}), got {}", *ex.from_ms, *ex.to_ms));
    }
    if (auto v = p.read_string(x, "window", ptr)) {
      if (*v != "steady" && *v != "run") {
        p.problem(child(ptr, "window"), fmt::format("unknown window \"{}\" (steady, run)", *v) +
                                            suggestion(*v, {"steady", "run"}));
      } else if (*v == "steady" && (ex.from_ms || ex.to_ms)) {
        p.problem(child(ptr, "window"), "\"steady\" cannot be combined with from_ms/to_ms");
      } else {
        ex.steady = *v == "steady";
      }
    }
  }

  /// `"expect": "order"`: the matchers `first` and `then`, each a trace event's type and fields.
  void expect_order(const json& x, const std::string& ptr, ExpectSpec& ex) {
    if (auto v = p.read_string(x, "expect", ptr); v && *v != "order") {
      p.problem(child(ptr, "expect"), fmt::format("unknown assertion kind \"{}\" (order)", *v));
    }
    for (const char* key : {"first", "then"}) {
      const auto it = x.find(key);
      if (it == x.end()) continue;
      const std::string mptr = child(ptr, key);
      if (!it->is_object()) {
        p.problem(mptr, fmt::format("must be an object (a trace event's type and fields), got {}",
                                    shown(*it)));
        continue;
      }
      if (!it->contains("type"))
        p.problem(child(mptr, "type"), "missing (the trace event's type, e.g. \"callback\")");
      else if (!it->at("type").is_string())
        p.problem(child(mptr, "type"),
                  fmt::format("must be a string, got {}", shown(it->at("type"))));
      else if (it->at("type").get<std::string>().empty())
        p.problem(child(mptr, "type"), "must not be empty");
      if (std::string(key) == "first")
        ex.first = matcher_of(*it);
      else
        ex.then = matcher_of(*it);
    }
  }

  /// A metric assertion: metric, selectors, op, value, tolerance.
  void expect_metric(const json& x, const std::string& ptr, ExpectSpec& ex) {
    if (auto v = p.read_string(x, "metric", ptr)) ex.metric = *v;
    if (auto v = p.read_string(x, "consumer", ptr)) ex.consumer = *v;
    if (auto v = p.read_string(x, "partition", ptr)) ex.partition = *v;
    if (auto v = p.read_string(x, "op", ptr)) {
      ex.op = *v;
      if (!contains(expect_ops(), *v)) {
        p.problem(child(ptr, "op"),
                  fmt::format("unknown op \"{}\" (==, !=, <, <=, >, >=, within, between)", *v));
      }
    }
    if (auto v = p.read_number(x, "tolerance", ptr, 0, false, 1e18)) ex.tolerance = *v;
    if (ex.op == "within" && !ex.tolerance && !x.contains("tolerance")) {
      p.problem(child(ptr, "tolerance"),
                "missing (op \"within\" needs a tolerance: |actual - value| <= tolerance)");
    }
    if (ex.op != "within" && x.contains("tolerance")) {
      p.problem(child(ptr, "tolerance"), fmt::format("only for op \"within\", not \"{}\"", ex.op));
    }
    if (const auto v = x.find("value"); v != x.end()) {
      ex.value = literal_of(*v);
      const bool ordering =
          ex.op == "<" || ex.op == "<=" || ex.op == ">" || ex.op == ">=" || ex.op == "within";
      if (ordering && !v->is_number()) {
        p.problem(child(ptr, "value"),
                  fmt::format("must be a number for op \"{}\", got {}", ex.op, shown(*v)));
      }
      if (ex.op == "between") {
        if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number()) {
          p.problem(
              child(ptr, "value"),
              fmt::format("must be [lo, hi] (two numbers) for op \"between\", got {}", shown(*v)));
        } else if ((*v)[0].get<double>() > (*v)[1].get<double>()) {
          p.problem(child(ptr, "value"), fmt::format("lo must be <= hi, got {}", shown(*v)));
        }
      }
    }
    if (ex.consumer && !s.consumer(*ex.consumer)) {
      std::vector<std::string> names;
      for (const auto& c : s.consumers) names.push_back(c.name);
      p.problem(child(ptr, "consumer"), fmt::format("unknown consumer \"{}\"", *ex.consumer) +
                                            suggestion(*ex.consumer, names));
    }
  }
};

}  // namespace

ScenarioSpec parse_scenario(const json& doc, const std::string& source_path,
                            const ExtraScenarioCheck& extra) {
  ScenarioSpec s;
  s.source_path = source_path;
  if (!doc.is_object())
    throw ScenarioError(source_path, {fmt::format("must be a json object, got {}", shown(doc))});
  ScenarioReader r(doc, s);
  Parser& p = r.p;
  p.check_object(doc, "", "scenario");
  r.header();
  r.protocols();
  r.cluster();
  r.network();
  r.topics();
  r.consumers();
  r.group_configs();
  r.events();
  r.incarnation_configs();
  r.partition_growth();
  r.regression();
  r.expectations();
  parse_fleet(doc, s, p.problems);
  check_scenario_size(p, s);
  if (extra) {
    const bool clean = p.problems.empty();
    for (auto& x : extra(s, clean)) p.problems.push_back(std::move(x));
  }
  if (!p.problems.empty()) throw ScenarioError(source_path, std::move(p.problems));
  return s;
}

std::optional<sim::Distribution> parse_distribution(const json& v, const std::string& ptr,
                                                    std::vector<std::string>& problems) {
  Parser p;
  auto d = p.check_distribution(v, ptr);
  for (auto& problem : p.problems) problems.push_back(std::move(problem));
  return d;
}

std::string sha256_hex(const std::string& bytes) {
#ifdef RSIM_NO_OPENSSL
  // The WebAssembly build (tools/wasm/): the same digest without libcrypto.
  std::string portable_hex;
  for (const auto byte : portable::sha256(bytes)) portable_hex += fmt::format("{:02x}", byte);
  return portable_hex;
#else
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("EVP_Digest(sha256) failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
#endif
}

static std::string read_scenario_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError(path, {"is a directory, not a scenario file (`rebalance-sim check DIR` "
                               "runs every scenario of a folder)"});
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, {"cannot read the file"});
  // A bounded read: /dev/zero or a runaway file is refused, not slurped.
  std::string bytes;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > kMaxScenarioFileBytes) {
      throw ScenarioError(path, {fmt::format("larger than {} MiB, the simulator's limit for a "
                                             "scenario file",
                                             kMaxScenarioFileBytes >> 20)});
    }
  }
  if (in.bad()) throw ScenarioError(path, {"cannot read the file"});
  return bytes;
}

json load_scenario_json(const std::string& path) {
  load_scenario_file(path);  // every problem reported as load_scenario_file reports it
  return json::parse(read_scenario_bytes(path));
}

ScenarioSpec load_scenario_file(const std::string& path, const ExtraScenarioCheck& extra) {
  const std::string bytes = read_scenario_bytes(path);
  if (auto problem = check_json_structure(bytes)) throw ScenarioError(path, {*problem});
  json doc;
  try {
    doc = json::parse(bytes);
  } catch (const json::parse_error& e) {
    // nlohmann reports a 1-based byte position; users want line and column.
    const std::size_t pos = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, bytes.size());
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < pos; ++i) {
      if (bytes[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    const std::size_t column = pos - line_start + 1;
    std::string reason = e.what();
    if (const auto at = reason.find("syntax error"); at != std::string::npos) {
      reason = reason.substr(at);
    } else if (const auto colon = reason.rfind(": "); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
    throw ScenarioError(
        path, {fmt::format("line {}, column {}: not valid json: {}", line, column, reason)});
  }
  ScenarioSpec spec = parse_scenario(doc, path, extra);
  spec.sha256 = sha256_hex(bytes);
  return spec;
}

std::optional<RegressionTolerance> parse_regression_tolerance(const std::string& text) {
  // [+-] digits [. digits] [%], nothing else ("+10%", "+0", "-2.5%").
  if (text.size() < 2 || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  RegressionTolerance t;
  t.rise_is_worse = text[0] == '+';
  std::string number = text.substr(1);
  if (number.ends_with('%')) {
    t.percent = true;
    number.pop_back();
  }
  if (number.empty() || number.size() > 12) return std::nullopt;
  bool dot = false;
  for (std::size_t i = 0; i < number.size(); ++i) {
    const char c = number[i];
    if (c == '.' && !dot && i > 0 && i + 1 < number.size())
      dot = true;
    else if (c < '0' || c > '9')
      return std::nullopt;
  }
  t.amount = std::stod(number);
  t.text = text;
  return t;
}

}  // namespace rsim
