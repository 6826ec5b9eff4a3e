// Runs the conformance vectors of kind `client-assignor` (see tests/conformance/README.md)
// against our client-side assignors and evaluates every expectation and check they list.
// One checker for the tests and `rebalance-sim conformance`; it reads JSON, it does not load files.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/conformance/conformance_result.hpp"

namespace rsim::assignors {

/// One result per case of `file_doc` (a parsed client.*.json), in file order. Cases with a
/// `generator` are not run: they come back passed with a detail starting "skipped:".
std::vector<ConformanceCaseResult> run_client_assignor_vectors(const nlohmann::json& file_doc);

}  // namespace rsim::assignors
