// The outcome of one conformance vector case, shared by the client- and server-side runners and
// the `rebalance-sim conformance` command. Plain data; no behaviour.
#pragma once
#include <string>

namespace rsim::assignors {

struct ConformanceCaseResult {
  std::string id;  // the case's `id` in its vector file
  bool passed = false;
  std::string detail;  // on failure: what differed; "skipped: ..." for cases not run
};

}  // namespace rsim::assignors
