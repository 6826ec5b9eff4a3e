// Proves that every conformance vector of kind `current-assignment-builder` passes against
// next_member_state(), through the checker `rebalance-sim conformance` uses.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/conformance/server_conformance.hpp"

TEST_CASE("conformance: every current-assignment-builder vector passes") {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir = std::filesystem::path(RSIM_CONFORMANCE_DIR) / "kafka";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    if (nlohmann::json::parse(in).value("kind", "") == "current-assignment-builder") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const auto& path : files) {
    std::ifstream in(path);
    const auto results =
        rsim::assignors::run_current_assignment_builder_vectors(nlohmann::json::parse(in));
    CHECK(!results.empty());
    int passed = 0;
    for (const auto& r : results) {
      INFO(path.filename().string() << " " << r.id << ": " << r.detail);
      CHECK(r.passed);
      if (r.passed) ++passed;
    }
    MESSAGE(path.filename().string() << ": " << passed << " of " << results.size() << " passed");
  }
}
