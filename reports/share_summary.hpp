// The share-group (KIP-932) part of summary.json, computed from the trace of a `share` run:
// what happened to the records (acknowledged, redelivered, archived, lost, lock timeouts,
// deliveries by delivery count), checks that no offset was acknowledged twice, what each
// consumer processed and at what rate, and each share-partition's SPSO/SPEO over time.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/trace_events.hpp"

namespace reports {

/// The share metrics as a sink of the run's bus; finish() adds them to a summary.
class ShareSummarySink final : public rsim::TraceSink {
 public:
  ShareSummarySink();
  ~ShareSummarySink() override;
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override;
  /// Adds the share metrics to `summary["metrics"]` (overriding the record counts that the
  /// classic/consumer accounting cannot see in a share run). A no-op for a trace without share
  /// events.
  void finish(nlohmann::ordered_json& summary);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The same, from a trace read back as lines.
void add_share_metrics(const std::vector<std::string>& trace_lines,
                       nlohmann::ordered_json& summary);

}  // namespace reports
