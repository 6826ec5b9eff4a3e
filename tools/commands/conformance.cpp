#include "tools/commands/conformance.hpp"

#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"
#include "tools/conformance/client_conformance.hpp"
#include "tools/conformance/file_defaults.hpp"
#include "tools/conformance/server_conformance.hpp"
#include "tools/exit_codes.hpp"

namespace rsim::cli {

CLI::App* add_conformance_subcommand(CLI::App& app, std::vector<std::string>& files) {
  auto* c = app.add_subcommand("conformance",
                               "check conformance vector files (the format of "
                               "tests/conformance/README.md); exit 1 if any case fails");
  c->add_option("files", files, "vector files")->required();
  c->footer(
      "Example: rebalance-sim conformance tests/conformance/kafka/client.RangeAssignorTest.json");
  return c;
}

int cmd_conformance(const std::vector<std::string>& files) {
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw ScenarioError(f, {"cannot read the file"});
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(f, {std::string("not JSON: ") + e.what()});
    }
    assignors::apply_file_defaults(doc);
    const std::string kind = doc.value("kind", "");
    std::vector<assignors::ConformanceCaseResult> results;
    if (kind == "server-assignor" || kind == "share-assignor") {
      // A malformed vector is refused (exit 2) before any assignor runs on it.
      if (auto problems = assignors::server_vector_problems(doc); !problems.empty()) {
        throw ScenarioError(f, std::move(problems));
      }
    }
    if (kind == "client-assignor")
      results = assignors::run_client_assignor_vectors(doc);
    else if (kind == "server-assignor")
      results = assignors::run_server_assignor_vectors(doc);
    else if (kind == "current-assignment-builder")
      results = assignors::run_current_assignment_builder_vectors(doc);
    else if (kind == "share-assignor")
      results = assignors::run_share_assignor_vectors(doc);
    else {
      throw ScenarioError(
          f, {fmt::format("/kind: unknown vector kind \"{}\"; expected client-assignor, "
                          "server-assignor, current-assignment-builder or share-assignor",
                          kind)});
    }
    for (const auto& r : results) {
      if (r.detail.rfind("skipped:", 0) == 0) {
        ++skipped;
        std::cout << fmt::format("SKIP {} {}: {}\n", f, r.id, r.detail);
      } else if (r.passed) {
        ++passed;
        std::cout << fmt::format("PASS {} {}\n", f, r.id);
      } else {
        ++failed;
        std::cout << fmt::format("FAIL {} {}: {}\n", f, r.id, r.detail);
      }
    }
  }
  std::cout << fmt::format("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return failed > 0 ? kExpectationFailed : kOk;
}

}  // namespace rsim::cli
