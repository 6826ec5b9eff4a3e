// The timeline model behind every visual output (report.html, Perfetto, Mermaid, CSV, explain):
// a pure function of one variant's trace.jsonl text and summary.json. It knows the trace
// vocabulary of docs/writing-scenarios.md and no model class; it never reads a clock or a file.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/summary.hpp"
#include "reports/trace_reader.hpp"

namespace reports {

/// A time interval of one consumer: `kind` is revoking, waiting, processing, stalled, paused,
/// crashed or callback; `label` is what a reader sees on hover.
struct Span {
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::string kind;
  std::string label;
};

/// A point in time: `kind` is start, stop, crash, heartbeat (one that carried news), join,
/// sync, epoch (a generation or member-epoch change), leave or fenced.
struct Instant {
  std::int64_t t_us = 0;
  std::string kind;
  std::string label;
};

/// A stretch of time over which a consumer owned exactly `partitions` (indexes into
/// Timeline::partitions).
struct Ownership {
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::vector<int> partitions;
};

/// `owned` and `spans` are in order of their start (sequence_between searches them).
struct Lane {
  std::string consumer;
  std::string group;
  std::vector<Ownership> owned;
  std::vector<Span> spans;
  std::vector<Instant> instants;
};

/// The group's band: classic states (Empty, PreparingRebalance, ...) or, for the consumer
/// protocol, the group state with the group epoch and target-assignment epoch.
struct GroupSegment {
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::string state;
  std::string label;
};

struct GroupBand {
  std::string group;
  bool consumer_protocol = false;
  std::vector<GroupSegment> segments;
  std::vector<Instant> epochs;  // group.epoch lines
};

/// A request and its response (recv_us is -1 when no response arrived).
struct Message {
  std::int64_t send_us = 0;
  std::int64_t recv_us = -1;
  std::string client;  // the consumer that sent the request
  std::string server;  // the broker that answered it
  std::string api;
  std::string error;   // the response's error name, "" without a response
  std::string detail;  // e.g. "member_epoch=3"
  std::string reply;   // the response's payload where the trace tells it (a KIP-848 heartbeat's
                       // member epoch and target assignment), "" otherwise
};

struct Rebalance {
  int index = 0;  // 1-based, in summary.json order
  std::string group;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::string trigger;
  std::string epoch_label;  // "generation 2" or "epoch 3"
  bool completed = true;
  nlohmann::ordered_json revoked;   // consumer -> partitions
  nlohmann::ordered_json assigned;  // consumer -> partitions
};

struct LagPoint {
  std::int64_t t_us = 0;
  std::int64_t lag = 0;
};

/// Fleets (issue 38): one Deployment or StatefulSet as its pod and autoscaler lines tell it.
/// `ready` holds a step at every time the number of ready pods changes (a pod counts from its
/// pod.ready until its pod.terminating or pod.killed); `decisions` holds each autoscaler.decision.
struct ReplicaStep {
  std::int64_t t_us = 0;
  int ready = 0;  // ready pods from t_us on
};

struct ScalingDecision {
  std::int64_t t_us = 0;
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::string reason;
};

struct DeploymentBand {
  std::string deployment;
  std::vector<ReplicaStep> ready;  // in time order, each a change (no two at one time)
  std::vector<ScalingDecision> decisions;
  int max_ready = 0;  // the largest step
};

struct Timeline {
  std::string scenario;
  std::string protocol;
  std::int64_t duration_us = 0;             // run.start's duration_ms, or the last event
  std::vector<std::string> partitions;      // every partition seen, topic then number order
  std::vector<Lane> lanes;                  // in order of first appearance
  std::vector<GroupBand> groups;            // in order of first appearance
  std::vector<DeploymentBand> deployments;  // fleets only, in order of first appearance
  std::vector<Rebalance> rebalances;
  std::vector<Message> messages;  // group-coordination requests (no Fetch, ListOffsets)
  // Per partition index: the lag samples of the first kLagSeriesKept sampled partitions (all
  // that report.html and perfetto.json draw per partition); empty for the others.
  std::vector<std::vector<LagPoint>> lag;
  std::size_t lag_series = 0;       // partitions with lag samples
  std::vector<LagPoint> total_lag;  // sum over partitions, at every sample time
  nlohmann::ordered_json summary;
  // Each partition's not-processed intervals, from the trace read back through the sink that
  // computes not_processed_ms_by_partition (SummarySink): exactly the gaps summary.json counts.
  // `not_processed_exact` false: the trace could not be read so (the partition view then
  // derives its gaps from the lanes).
  std::vector<NotProcessedGaps> not_processed;
  bool not_processed_exact = false;
  // The messages by send_us, each lane's instants by t_us and its ownership by start_us are in
  // time order (a trace in time order gives them so): readers may then find a window by binary
  // search instead of a pass over everything (a report stays linear in the trace).
  bool time_ordered = false;
  // Work counter: the steps the build's searches over rebalances took (the bounds tests check
  // that it grows with the trace, not with rebalances x lines). Never part of an output.
  std::uint64_t search_steps = 0;
};

/// Up to this many trace lines, build_timeline() also reads the trace through the summary's sink
/// for the exact not-processed intervals (about doubling its cost); past it, the partition view
/// derives its gaps from the lanes (Timeline::not_processed_exact false). The playground and
/// callers that hand over the run's own intervals do not read the trace twice at all.
inline constexpr std::size_t kExactGapsMaxLines = 250000;

/// Per-partition lag series a Timeline keeps (report.html draws them up to 24, perfetto.json 64).
inline constexpr std::size_t kLagSeriesKept = 64;

/// Builds the model of one variant from its trace text and summary.json.
Timeline build_timeline(std::string_view trace_jsonl, const nlohmann::ordered_json& summary);
/// The same, given the run's own not-processed intervals (SummarySink::not_processed_gaps() of
/// the run that wrote the trace): the trace is not read through a second SummarySink.
Timeline build_timeline(std::string_view trace_jsonl, const nlohmann::ordered_json& summary,
                        std::vector<NotProcessedGaps> not_processed);
/// The same, reading the trace one line at a time (memory follows the timeline, not the trace).
Timeline build_timeline(std::istream& trace_jsonl, const nlohmann::ordered_json& summary);

/// What is wrong with the shape of a summary.json that `report` and `explain` read (valid JSON
/// but not the object the simulator writes): "/rebalances/2/start_us: must be a number, got
/// \"x\"", one line per problem; empty when the reader can use it.
std::vector<std::string> summary_shape_problems(const nlohmann::ordered_json& summary);

/// "" when the trace at `path` ends with its run.end line, else why not (a trace cut short at
/// a line boundary is otherwise well-formed).
std::string trace_end_problem(const std::string& path);

/// "orders-0..5, payments-3" for a list of partition names (sorted by topic and number first).
std::string compress_partitions(std::vector<std::string> partitions);

/// Time as a reader sees it: "3.121 s" (milliseconds precision, trailing µs kept when present).
std::string seconds(std::int64_t t_us);

/// A duration as a reader sees it: "2928 ms", "10264.32 ms".
std::string milliseconds(std::int64_t us);

/// The messages of the window [from_us, to_us] (a request belongs when sent or answered inside).
std::vector<const Message*> messages_between(const Timeline& t, std::int64_t from_us,
                                             std::int64_t to_us);

/// The window a rebalance's sequence view and Mermaid diagram show: from the request that
/// triggered it (up to one heartbeat interval before) to its end.
std::pair<std::int64_t, std::int64_t> rebalance_window(const Timeline& t, const Rebalance& r);

/// Sorting partitions as Kafka users read them: by topic, then by number.
bool partition_less(const std::string& a, const std::string& b);

}  // namespace reports
