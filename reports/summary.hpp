// summary.json, computed from the trace alone: the rebalances (start, end, trigger, causes,
// partitions revoked and assigned) and the metrics. A pure function of trace lines; knows no
// model class. The handlers inside are organised per trace event kind (one method each).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reports {

struct SummaryInputs {
  std::string scenario;
  std::string protocol;
  std::uint64_t seed = 0;
  nlohmann::ordered_json produced_by;  // simulator version, commit, scenario SHA-256
  /// A window of the run ([from_us, to_us)): times are clipped to it, counts keep what happened
  /// inside it, rebalances are those that started inside it, final_assignment is the one at to_us.
  /// `lost` is always over the whole run.
  std::optional<std::int64_t> from_us;
  std::optional<std::int64_t> to_us;
};

nlohmann::ordered_json summarize(const std::vector<std::string>& trace_lines,
                                 const SummaryInputs& inputs);

/// The names under summary.json's `metrics`, sorted.
const std::vector<std::string>& metric_names();
/// The metrics whose value is an object keyed by consumer name, or by partition ("orders-3").
const std::vector<std::string>& metrics_by_consumer();
const std::vector<std::string>& metrics_by_partition();
/// The fields of one entry of summary.json's `rebalances`, and the top-level keys.
const std::vector<std::string>& rebalance_fields();
const std::vector<std::string>& summary_keys();

/// Orders "topic-partition" names as Kafka orders TopicPartition: by topic, then by number.
bool kafka_partition_less(const std::string& a, const std::string& b);

}  // namespace reports
