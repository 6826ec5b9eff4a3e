// `rebalance-sim assign`: what one assignor (or one step of the coordinator's per-member
// reconciliation) gives for one case written in the conformance-vector format
// (tests/conformance/README.md), as a table or as JSON. It validates the case (every problem
// with its JSON path) and calls the models' pure functions; it checks no expectations (that is
// `rebalance-sim conformance`) and simulates no group.
#pragma once
#include <optional>
#include <ostream>
#include <string>

namespace rsim::cli {

struct AssignRequest {
  std::string file;                     // one case object, or a whole vector file with `case_id`
  std::optional<std::string> case_id;   // picks a case of a vector file by its `id`
  std::optional<std::string> assignor;  // overrides the case's `assignor`
  bool json = false;                    // machine output instead of the table
};

/// Prints the result to `out`. Throws ScenarioError (exit 2) listing every problem of the input.
void run_assign(const AssignRequest& request, std::ostream& out);

}  // namespace rsim::cli
