// `run` on a scenario with settings variants (top-level `variants`): every picked variant crossed
// with the protocols, each on the same seed and script, written to DIR/<variant>/<protocol>/, and
// one report.html with all of them on one time axis and in one table.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/kernel.hpp"
#include "tools/commands/report.hpp"
#include "tools/runner.hpp"

namespace rsim::cli {

struct SettingsRunArgs {
  std::string file;
  std::vector<std::string> variants;   // --variant (repeatable); empty: all
  std::vector<std::string> protocols;  // --protocol; empty: the scenario's (each variant's own)
  std::optional<std::uint64_t> seed;
  std::string out_dir;
  TraceLevel level = TraceLevel::Standard;
  bool quiet = false;
  bool determinism = false;
  bool invariants = false;
  sim::WatchdogLimits limits;
  ModelOptions model;  // test-only injected bugs, developer checks
  bool force = false;  // --force: write into a folder rebalance-sim does not own
};

/// True when the file is a JSON object with a top-level `variants` (read leniently: a file that
/// cannot be read answers false, and the ordinary path reports its problems).
bool has_settings_variants(const std::string& file);

/// Exit code as `run`'s: 0, 1 (an expectation or invariant failed), 3 (not deterministic).
int cmd_run_settings(const SettingsRunArgs& args, const FormatArgs& formats);

}  // namespace rsim::cli
