// Runs the conformance vectors of kinds `server-assignor`, `share-assignor` and
// `current-assignment-builder` (see tests/conformance/README.md) against assign_server() and
// next_member_state(), and evaluates every expectation and check they list, `derived` ones
// included. One checker for the tests and `rebalance-sim conformance`; it reads parsed JSON, it
// does not load files.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/conformance/conformance_result.hpp"

namespace rsim::assignors {

/// One result per case of `file_doc` (a parsed coordinator.*AssignorTest.json or
/// coordinator.Uniform*.json), in file order. Cases with a `generator` are not run: they come
/// back passed with a detail starting "skipped:" (tests cover them as property tests).
std::vector<ConformanceCaseResult> run_server_assignor_vectors(const nlohmann::json& file_doc);

/// One result per case of a `share-assignor` file (coordinator.SimpleAssignorTest.json or an
/// articles/share.*.json table), run against assign_share_simple() with the cases'
/// `assignable_partitions`.
std::vector<ConformanceCaseResult> run_share_assignor_vectors(const nlohmann::json& file_doc);

/// What makes a `server-assignor` / `share-assignor` file unusable, as "JSON path: what is wrong"
/// (empty: every case can be run). Checks the shape and types of every key the runner reads,
/// the ranges of partition numbers and counts, unique member ids per step and `from_step`
/// references, so that a bad vector is refused before any assignor sees it.
std::vector<std::string> server_vector_problems(const nlohmann::json& file_doc);

/// One result per case of `file_doc` (a parsed coordinator.CurrentAssignmentBuilderTest.json).
std::vector<ConformanceCaseResult> run_current_assignment_builder_vectors(
    const nlohmann::json& file_doc);

}  // namespace rsim::assignors
