// The side-by-side page of `rebalance-sim compare SCENARIO --real DIR --out OUT`: per recorded
// variant, per consumer, the simulator's lane above the lane of each real run, on one time
// axis; every matched callback linked from the simulator's invocation to the real one with its
// deviation (beyond the tolerance in red), callbacks found on one side only marked, and
// compare's table. A pure function of the simulator's and the real runs' timelines (built from
// their trace.jsonl) and of compare's verdicts on them, so the same inputs give the same bytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/timeline.hpp"

namespace reports {

/// One row of compare's callback table: a callback invocation of the simulator and/or of the
/// real runs.
struct CallbackMatch {
  std::string consumer;
  std::string callback;    // onPartitionsAssigned, onPartitionsRevoked, onPartitionsLost
  std::string partitions;  // as compare prints them ("[orders-0..2]")
  std::optional<std::int64_t> sim_us;
  std::vector<std::optional<std::int64_t>> real_us;  // one per real run
  bool within = true;                                // compare's verdict on the row
  std::string
      race;  // "race: matches run 2" where the real runs differ and the simulator has one outcome
};

struct SideBySideVariant {
  std::string variant;
  std::int64_t tolerance_ms = 0;
  Timeline sim;
  std::vector<Timeline> real;           // one per real run, in --real order
  std::vector<std::string> real_names;  // the run directories
  std::vector<CallbackMatch> callbacks;
  std::vector<std::string> summary;  // compare's lines below the table, the verdict last
  std::string table_text;            // the table exactly as `compare` prints it
  bool passed = true;
};

std::string render_side_by_side(const std::string& scenario,
                                const std::vector<SideBySideVariant>& variants);

}  // namespace reports
