// `rebalance-sim conformance FILE...`: Kafka's unit-test vectors (tests/conformance/) against our
// assignors and reconciliation; one PASS/FAIL/SKIP line per case.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace rsim::cli {

/// The `conformance` subcommand: its FILE arguments into `files`.
CLI::App* add_conformance_subcommand(CLI::App& app, std::vector<std::string>& files);

/// kOk when every case passes, kExpectationFailed when one fails; a malformed file throws
/// ScenarioError (exit 2) before any case of it runs.
int cmd_conformance(const std::vector<std::string>& files);

}  // namespace rsim::cli
