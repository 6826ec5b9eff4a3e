// ScenarioSpec: a scenario file after validation, with Kafka's defaults filled in and every
// time in SimTime: plain data, the bottom of models/ (it includes nothing from models/ but the
// other spec headers). parse_scenario() (models/scenario/scenario.hpp) is the only way to build
// one from JSON. Config values are typed ConfigValues (normalized), expectation values Literals;
// nothing here includes a JSON library.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/config_value.hpp"
#include "models/spec/events.hpp"
#include "models/spec/fleet_spec.hpp"
#include "models/spec/literal.hpp"
#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace rsim {

/// The protocol variants of the contract: classic-eager, classic-cooperative, consumer, share.
inline const std::vector<std::string>& protocol_variants() {
  static const std::vector<std::string> v{"classic-eager", "classic-cooperative", "consumer",
                                          "share"};
  return v;
}
/// "classic" for classic-*, else the variant itself ("consumer", "share").
std::string group_protocol_of(const std::string& variant);

/// Timing texture: the defaults of the simulator knobs that stand for the time a real broker and
/// client take beyond the network, measured on Kafka 4.4.0 brokers and clients on loopback
/// (docs/fidelity.md, "Timing texture"; tools/kafka-oracle/request-times). A scenario sets a knob
/// to 0 for an idealized machine on which only Kafka's timers and the network take time.
/// `cluster.request_handling_ms`: a request's time in the broker when it neither waits nor writes
/// (Kafka's totalTimeMs of Heartbeat, ConsumerGroupHeartbeat, FindCoordinator, OffsetFetch: medians
/// 1.4-2.2 ms, 10th percentiles 0.7-1.2 ms).
inline const sim::Distribution kDefaultRequestHandling = sim::Distribution::lognormal(1.5, 0.5);
/// `cluster.write_latency_ms`: a __consumer_offsets append until the request that wrote it may be
/// answered (Kafka's remoteTimeMs of a leader's SyncGroup: median 2.9 ms, of an OffsetCommit: 4.2).
inline const sim::Distribution kDefaultWriteLatency = sim::Distribution::lognormal(3.5, 0.6);
/// `cluster.purgatory_lateness_ms`: how much later than fetch.max.wait.ms a broker answers a Fetch
/// that found no records (Kafka's remoteTimeMs of such Fetches minus 500: median 1.13 ms, mean
/// 1.34 ms, 10th-90th percentile 0.41-2.24 ms over 4932 Fetches of the recorded runs).
inline const sim::Distribution kDefaultPurgatoryLateness = sim::Distribution::lognormal(1.1, 0.6);
/// A consumer's `heartbeat_wakeup_lateness_ms`: how much more than heartbeat.interval.ms a classic
/// consumer waiting in poll() leaves between two heartbeats (median 1.0 ms, mean 2.2 ms over 338
/// intervals of 22 recorded runs).
inline const sim::Distribution kDefaultHeartbeatWakeupLateness =
    sim::Distribution::lognormal(1.0, 1.2);
/// A consumer's `connection_setup_ms`: from a client's first request to a broker on a connection
/// that is not open to the moment that request can go out (the TCP connect, then the ApiVersions
/// round trip NetworkClient sends before anything else): median 4.97 ms, 10th-90th percentile
/// 3.75-7.19 ms over 28 connections of 8 consumer starts with client DEBUG logs
/// (docs/fidelity.md, finding 21).
inline const sim::Distribution kDefaultConnectionSetup = sim::Distribution::lognormal(4.97, 0.25);
/// A consumer's `poll_return_lateness_ms`: how much later than its timeout a KIP-848 poll() that
/// found nothing returns to the application's next call (the wait's wake-up, the client's code
/// after it, the application's loop): consecutive empty poll(100) calls 100.31-100.35 ms apart
/// in the recordings (docs/fidelity.md, finding 27). A constant: it sets the phase of the passes
/// against the client's timers, which drifts by it per call.
inline constexpr sim::SimTime kDefaultPollReturnLateness = sim::SimTime{330};
/// A share consumer's `reconciliation_ms`: the background thread's own time from a
/// ShareGroupHeartbeat answer that adds partitions to the end of the loop that reconciles them
/// (the assignment resolved and applied, ACKNOWLEDGING, the first ShareFetch for them built and
/// sent), before which the acknowledging heartbeat cannot go: a join answered with partitions to
/// the member's next heartbeat read by the broker, less the simulator's two 1 ms links: median
/// 18.3 ms, 10.3-83.3 ms over 17 joins of the 11 share runs with request logs (docs/fidelity.md,
/// finding 38).
inline const sim::Distribution kDefaultReconciliation = sim::Distribution::lognormal(18.3, 0.6);

struct TopicSpec {
  std::string name;
  std::int32_t partitions = 1;
  std::int64_t initial_records = 0;
  /// Gap between produced records per partition; absent = no production.
  std::optional<sim::Distribution> produce_gap;
  double records_per_sec = 0;  // when given as a number (informational; gap is authoritative)
};

struct ProcessingSpec {
  sim::Distribution per_record = sim::Distribution::constant(0);
  sim::Distribution per_batch = sim::Distribution::constant(0);
  /// The application loop's own time around each poll() call, records or not.
  sim::Distribution per_poll = sim::Distribution::constant(0);
};

struct CallbacksSpec {
  sim::Distribution revoke = sim::Distribution::constant(0);
  sim::Distribution assign = sim::Distribution::constant(0);
  sim::Distribution lost = sim::Distribution::constant(0);
};

enum class CommitMode { Auto, Sync, Async };

/// What the application does when the script stops its consumer (`on_stop`).
/// Wakeup: another thread calls consumer.wakeup(), as Kafka's VerifiableConsumer and
/// ConsoleConsumer do: a poll() in progress throws WakeupException at its next network wait
/// (at once when it is blocked), the loop ends and the application calls close(); a poll() that
/// is not running throws at its next call. AfterPoll: the application only sets a flag its loop
/// checks after poll() returns (`while (running) poll(...)`), so close() waits for poll()'s
/// return: records, or its timeout.
enum class StopMode { Wakeup, AfterPoll };

/// Share consumers (share.acknowledgement.mode=explicit): the fraction of records the
/// application REJECTs (e.g. poison records) and RELEASEs (e.g. on a processing error); the
/// rest it ACCEPTs.
struct OutcomesSpec {
  double reject = 0;
  double release = 0;
};

struct ConsumerSpec {
  std::string name;
  std::string group;
  std::vector<std::string> topics;
  /// Kafka consumer configs, common to every protocol. parse_scenario stores them normalized:
  /// integers as integers, booleans as booleans, lists as lists, assignor class names as short
  /// names ("45000" and 45000 both become 45000).
  ConfigMap config;
  /// "classic" / "consumer" / "share" -> configs merged over `config` for runs of that protocol.
  std::map<std::string, ConfigMap> config_by_protocol;
  sim::SimTime poll_timeout = sim::ms(100);
  /// `start_latency_ms`: the time from the script's `start` (or a restart's new process) to the
  /// application's first poll(), hence to the consumer's first request: on a loaded machine
  /// subscribe() and the first poll() of a fresh JVM take that long (docs/fidelity.md, finding 1).
  /// Zero by default: the consumer polls at once.
  sim::Distribution start_latency = sim::Distribution::constant(0);
  /// `heartbeat_wakeup_lateness_ms`: how late a classic client's timed waits return, per
  /// wake-up: the heartbeat thread's `wait(retry.backoff.ms)` and a blocking poll()'s network wait
  /// for the next heartbeat. The next heartbeat is timed from the actual send, so it adds up.
  sim::Distribution heartbeat_wakeup_lateness = kDefaultHeartbeatWakeupLateness;
  /// `connection_setup_ms`: how long a new connection to a broker takes before its first request
  /// goes out (one per broker for data and metadata, one per broker for the group coordinator).
  sim::Distribution connection_setup = kDefaultConnectionSetup;
  /// `poll_return_lateness_ms`: how much later than poll_timeout a KIP-848 poll() that finds
  /// nothing returns (the next call comes that much later); the consumer protocol only.
  sim::SimTime poll_return_lateness = kDefaultPollReturnLateness;
  /// `reconciliation_ms`: how long a share consumer's background thread takes to reconcile an
  /// assignment that adds partitions (its acknowledgement and first ShareFetch for them wait for
  /// it); the share protocol only.
  sim::Distribution reconciliation = kDefaultReconciliation;
  ProcessingSpec processing;
  CallbacksSpec callbacks;
  CommitMode commit = CommitMode::Auto;
  StopMode on_stop = StopMode::Wakeup;
  OutcomesSpec outcomes;  // `outcomes`
  /// The member ids this consumer is given, in the order it needs fresh ones (each JoinGroup
  /// without a member id under classic, each process start under consumer and share), before
  /// the seeded draws take over. No scenario key: `compare` fills it from a recording's
  /// `member.id` events (docs/fidelity.md, finding 21). Empty: the seeded draws only.
  std::vector<std::string> member_ids;
  /// The start latencies this consumer is given, one per process start in order (the first
  /// `start`, then each restart's new process), instead of `start_latency`'s draws (which are
  /// still made, so that the stream stays where it would be); beyond them, the draws. No scenario
  /// key: `compare` fills it from a recording's `consumer.subscribed` lines (docs/fidelity.md,
  /// finding 34). Empty: the draws only.
  std::vector<sim::SimTime> start_latencies;
};

/// One `expect` entry: a metric assertion (`metric`, `op`, `value`, ...) or, when it has
/// `"expect": "order"`, an ordering of two trace events (`first` before `then`).
struct ExpectSpec {
  std::optional<std::string> protocol;
  std::string metric;               // a metrics name or a /-path into summary.json
  std::string op;                   // ==, !=, <, <=, >, >=, within, between
  Literal value;                    // a number; [lo, hi] for `between`; any value for == and !=
  std::optional<double> tolerance;  // `within`
  std::optional<std::int64_t> from_ms, to_ms;  // the window the metric is computed over
  bool steady = false;  // `"window": "steady"`: over summary.json's steady window
  std::optional<std::string> consumer, partition;  // selectors
  std::string message;                             // shown on failure
  std::string id;            // the stable JUnit test name (check); "" = the message, else the index
  bool order = false;        // `"expect": "order"`
  EventMatcher first, then;  // order: trace-event matchers (`type` and fields to equal)
  std::size_t index = 0;
};

struct NetworkSpec {
  sim::Distribution latency = sim::Distribution::constant(1);
  double drop_rate = 0;
};

/// Simulator knob (not a Kafka config): how long a new coordinator takes to load a
/// __consumer_offsets partition: base_ms + us_per_record x the records it replays.
struct CoordinatorLoadSpec {
  std::int64_t base_ms = 10;
  std::int64_t us_per_record = 5;
};

struct ClusterSpec {
  std::int32_t brokers = 1;
  /// Broker configs as written; typed access through BrokerConfig.
  ConfigMap config;
  /// Simulator knob, not a Kafka config (`cluster.write_latency_ms`): time from appending a
  /// __consumer_offsets record to its commit, i.e. to the answer of the request that wrote it.
  sim::Distribution write_latency = kDefaultWriteLatency;
  /// Simulator knob, not a Kafka config (`cluster.request_handling_ms`): the time a broker takes
  /// to handle each request it receives (request queue, handler thread, response queue), added to
  /// the network latency of the request.
  sim::Distribution request_handling = kDefaultRequestHandling;
  /// Simulator knob, not a Kafka config (`cluster.purgatory_lateness_ms`): how much later than
  /// its fetch.max.wait.ms a broker answers a Fetch that waited for records in vain (the fetch
  /// purgatory's expiration), on top of its request handling.
  sim::Distribution purgatory_lateness = kDefaultPurgatoryLateness;
  CoordinatorLoadSpec coordinator_load;  // `cluster.coordinator_load`
};

struct ScenarioSpec {
  std::string source_path;
  std::string sha256;  // of the file's bytes
  std::string name;
  std::string description;
  /// `lesson.rebalance_from_ms`: the rebalance a lesson is about, the first that starts at or
  /// after this time; report.html's step control opens it (summary.json's produced_by).
  std::optional<std::int64_t> lesson_rebalance_from_ms;
  std::uint64_t seed = 1;
  sim::SimTime duration = sim::ms(60000);
  /// Period of the `lag` samples (`lag_sample_ms`); 0 = only at changes of owner.
  sim::SimTime lag_sample = sim::ms(1000);
  std::vector<std::string> protocols{"classic-eager", "consumer"};
  ClusterSpec cluster;
  NetworkSpec network;
  std::vector<TopicSpec> topics;
  std::vector<ConsumerSpec> consumers;
  /// `groups`: group id -> its group configs (Kafka GroupConfig keys, normalized and validated).
  std::map<std::string, ConfigMap> group_configs;
  std::vector<EventSpec> events;  // sorted by `at`, stable (file order for equal times)
  std::vector<ExpectSpec> expect;
  /// Fleets (issue 38): Kubernetes workloads whose pods run consumers, and their autoscalers.
  std::vector<DeploymentSpec> deployments;
  std::vector<AutoscalerSpec> autoscalers;
  /// `regression`: metric -> tolerance against a baseline ("+10%", "+0", "-5%"), file order.
  std::vector<std::pair<std::string, std::string>> regression;

  const ConsumerSpec* consumer(const std::string& name) const;
  const TopicSpec* topic(const std::string& name) const;
};

/// The longest pause between two starts of start-up: Kafka's default
/// group.initial.rebalance.delay.ms, the time a new group's coordinator waits for more members.
inline constexpr std::int64_t kStartUpGapMs = 3000;

/// The consumers of start-up, in script order: the script's leading `start` events (those before
/// its first event of another kind), up to the first that comes more than kStartUpGapMs after
/// the start before it (a later start is a scale-out, not start-up). The steady window opens
/// once each holds a stable assignment (summary.json's `steady`).
std::vector<std::string> start_up_consumers(const ScenarioSpec& spec);

}  // namespace rsim
