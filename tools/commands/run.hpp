// `rebalance-sim run SCENARIO`: every protocol variant of one scenario into DIR/<protocol>/
// (trace.jsonl, summary.json), the report and the asked formats, with the optional checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/protocol/model_options.hpp"
#include "sim/kernel.hpp"
#include "tools/commands/report.hpp"
#include "tools/runner.hpp"

namespace rsim::cli {

/// What `run` checks beyond the run itself.
struct RunChecks {
  bool determinism = false;
  bool invariants = false;
  std::optional<std::uint64_t> faults_seed;
  sim::WatchdogLimits limits;
  ModelOptions model;
  bool force = false;  // --force: write into a folder rebalance-sim does not own
};

/// Runs `file`'s variants (`protocols`, default the scenario's) and prints one verdict per variant:
/// kOk, kExpectationFailed (an expectation or invariant failed), kInternalError (two runs
/// differed). Bad input and unwritable outputs throw (tools/errors.cpp reports them).
int cmd_run(const std::string& file, const std::vector<std::string>& protocols,
            std::optional<std::uint64_t> seed, std::string out_dir, TraceLevel level, bool quiet,
            const FormatArgs& formats, const RunChecks& checks);

}  // namespace rsim::cli
