// summary.json, computed from the trace alone: the rebalances (start, end, trigger, partitions
// revoked and assigned) and the metrics. A sink of the trace bus, accumulated online as the run
// goes; the same sink reads a trace.jsonl back (summarize). Knows no model class, only the trace
// vocabulary.
#pragma once
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/protocol/trace_events.hpp"

namespace reports {

struct SummaryInputs {
  std::string scenario;
  std::string protocol;
  std::uint64_t seed = 0;
  nlohmann::ordered_json produced_by;  // simulator version, commit, scenario SHA-256
};

/// The summary as a sink: attach it to the run's bus, then finish() once the run has ended.
class SummarySink final : public rsim::TraceSink {
 public:
  explicit SummarySink(SummaryInputs inputs);
  ~SummarySink() override;
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override;
  /// summary.json of everything received so far.
  nlohmann::ordered_json finish();

 private:
  struct State;
  SummaryInputs inputs_;
  std::unique_ptr<State> s_;
};

/// The summary of a trace read back from its lines / from a trace.jsonl stream.
nlohmann::ordered_json summarize(const std::vector<std::string>& trace_lines, const SummaryInputs& inputs);
nlohmann::ordered_json summarize_jsonl(std::istream& trace_jsonl, const SummaryInputs& inputs);

}  // namespace reports
