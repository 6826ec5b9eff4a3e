// The share-group (KIP-932) part of summary.json, a pure function of the trace of a `share`
// run: what happened to the records (acknowledged, redelivered, archived, lost, lock timeouts,
// deliveries by delivery count), checks that no offset was acknowledged twice, what each
// consumer processed and at what rate, and each share-partition's SPSO/SPEO over time.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reports {

/// Adds the share metrics to `summary["metrics"]` (overriding the record counts that the
/// classic/consumer accounting cannot see in a share run). A no-op for a trace without share
/// events.
void add_share_metrics(const std::vector<std::string>& trace_lines, nlohmann::ordered_json& summary);

}  // namespace reports
