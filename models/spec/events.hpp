// The scenario's verbs (`do`): one struct per verb with only the fields that verb takes, and
// EventSpec's closed std::variant of them. Every place that carries out or inspects a verb visits
// the variant with an Overloaded set and no catch-all, so a verb added here fails to compile
// wherever it is not handled (CONTRIBUTING.md, "How to add a scenario verb"). The `do` strings
// stay at the edges: kDo names the verb for the parser, messages and the trace.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/spec/config_value.hpp"
#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace rsim {

/// Kafka consumer configs of an event (normalized as ConsumerSpec::config).
using EventConfig = ConfigMap;

namespace verb {

/// `start`: the consumer's process starts; with `config`, as a new incarnation with those configs.
struct Start {
  static constexpr const char* kDo = "start";
  std::string consumer;
  /// Kafka consumer configs of the new incarnation, `group.protocol` ("classic" / "consumer")
  /// included. They stay for the consumer's later incarnations until another event changes them.
  EventConfig config;
  bool has_config = false;
};
/// `stop`: the application stops its consumer (ConsumerSpec::on_stop) and closes it.
struct Stop {
  static constexpr const char* kDo = "stop";
  std::string consumer;
};
/// `crash`: the process dies, no LeaveGroup.
struct Crash {
  static constexpr const char* kDo = "crash";
  std::string consumer;
};
/// `restart`: stop (graceful) or crash, then a new process `after` later.
struct Restart {
  static constexpr const char* kDo = "restart";
  std::string consumer;
  sim::SimTime after{0};
  bool graceful = true;
  EventConfig config;  // as Start::config
  bool has_config = false;
};
/// `stall`: the application thread blocks for `for_` (a GC pause, a slow call).
struct Stall {
  static constexpr const char* kDo = "stall";
  std::string consumer;
  sim::SimTime for_{0};
};
/// `pause`: the whole process is suspended for `for_` (SIGSTOP).
struct Pause {
  static constexpr const char* kDo = "pause";
  std::string consumer;
  sim::SimTime for_{0};
};
/// `subscribe`: the consumer's new subscription.
struct Subscribe {
  static constexpr const char* kDo = "subscribe";
  std::string consumer;
  std::vector<std::string> topics;
};
/// `add-partitions`: the topic grows to `partitions` (CreatePartitions).
struct AddPartitions {
  static constexpr const char* kDo = "add-partitions";
  std::string topic;
  std::int32_t partitions = 0;
};
/// `network`: new latency and/or loss on the links `between` names, for `for_` if has_for.
struct Network {
  static constexpr const char* kDo = "network";
  std::vector<std::string> between;
  bool one_way = false;  // only the links from between[0] to between[1]
  std::optional<sim::Distribution> latency;
  std::optional<double> drop_rate;
  sim::SimTime for_{0};
  bool has_for = false;
};
/// `partition-network`: the links `between` names are cut for `for_`.
struct PartitionNetwork {
  static constexpr const char* kDo = "partition-network";
  std::vector<std::string> between;
  sim::SimTime for_{0};
};
/// `fail-coordinator`: the group's coordinator broker dies; back after `down` if has_down.
struct FailCoordinator {
  static constexpr const char* kDo = "fail-coordinator";
  std::string group;
  sim::SimTime down{0};
  bool has_down = false;
};
/// `produce`: the topic's new production: a gap between records, none = production stops.
struct Produce {
  static constexpr const char* kDo = "produce";
  std::string topic;
  std::optional<sim::Distribution> produce_gap;
  double records_per_sec = 0;  // the rate it came from (0 when given as a distribution)
};
/// `stop-broker`: a controlled shutdown of the broker's process.
struct StopBroker {
  static constexpr const char* kDo = "stop-broker";
  std::int32_t broker = 0;
};
/// `crash-broker`: the broker's process dies.
struct CrashBroker {
  static constexpr const char* kDo = "crash-broker";
  std::int32_t broker = 0;
};
/// `start-broker`: a stopped or crashed broker starts again.
struct StartBroker {
  static constexpr const char* kDo = "start-broker";
  std::int32_t broker = 0;
};
/// `restart-broker`: stop (graceful) or crash, then start `after` after the process stopped.
struct RestartBroker {
  static constexpr const char* kDo = "restart-broker";
  std::int32_t broker = 0;
  sim::SimTime after{0};
  bool graceful = true;
};
/// `rollout`: a deployment's new pod template (its configs over the current one; none: a restart).
struct Rollout {
  static constexpr const char* kDo = "rollout";
  std::string deployment;
  EventConfig config;
  bool has_config = false;
};
/// `drain-node`: kubectl drain of "node-N".
struct DrainNode {
  static constexpr const char* kDo = "drain-node";
  std::string node;
};

}  // namespace verb

/// Every verb, in the order of the format documentation (event_kinds() lists their kDo).
using Verb =
    std::variant<verb::Start, verb::Stop, verb::Crash, verb::Restart, verb::Stall, verb::Pause,
                 verb::Subscribe, verb::AddPartitions, verb::Network, verb::PartitionNetwork,
                 verb::FailCoordinator, verb::Produce, verb::StopBroker, verb::CrashBroker,
                 verb::StartBroker, verb::RestartBroker, verb::Rollout, verb::DrainNode>;

/// The `do` of a verb.
inline const char* verb_name(const Verb& v) {
  return std::visit([](const auto& x) -> const char* { return std::decay_t<decltype(x)>::kDo; }, v);
}

/// The default-constructed verb whose `do` is `name`; nullopt for an unknown name.
std::optional<Verb> verb_named(const std::string& name);

/// The consumer a verb names, or nullptr for the verbs of brokers, topics, groups and fleets.
const std::string* verb_consumer(const Verb& v);

/// A start/restart/rollout's `config` when the event has one, else nullptr.
const EventConfig* verb_config(const Verb& v);

struct EventSpec {
  sim::SimTime at{0};
  std::size_t index = 0;  // position in /events, for messages
  Verb verb;
  /// The `do`: start, stop, crash, restart, ...
  const char* kind() const { return verb_name(verb); }
  /// The verb's struct when it is a T, else nullptr.
  template <class T>
  const T* as() const {
    return std::get_if<T>(&verb);
  }
};

}  // namespace rsim
