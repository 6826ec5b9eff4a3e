// Proves that every conformance vector of kind `server-assignor` in tests/conformance/kafka/
// passes against `uniform` and `range`, through the checker `rebalance-sim conformance` uses.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/conformance/server_conformance.hpp"

namespace {

/// Every vector file of the given kind, sorted by name, so that a new file is picked up.
std::vector<std::filesystem::path> vector_files(const std::string& kind) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir = std::filesystem::path(RSIM_CONFORMANCE_DIR) / "kafka";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto doc = nlohmann::json::parse(in);
    if (doc.value("kind", "") == kind) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("conformance: every server-assignor vector passes") {
  const auto files = vector_files("server-assignor");
  REQUIRE(files.size() >= 3);  // uniform homogeneous, uniform heterogeneous, server range
  for (const auto& path : files) {
    std::ifstream in(path);
    const auto results = rsim::assignors::run_server_assignor_vectors(nlohmann::json::parse(in));
    CHECK(!results.empty());
    int passed = 0;
    int skipped = 0;
    for (const auto& r : results) {
      INFO(path.filename().string() << " " << r.id << ": " << r.detail);
      CHECK(r.passed);
      if (r.passed) (r.detail.rfind("skipped:", 0) == 0 ? skipped : passed)++;
    }
    MESSAGE(path.filename().string()
            << ": " << passed << " passed, " << skipped << " skipped (generator), "
            << results.size() - static_cast<std::size_t>(passed + skipped) << " failed");
  }
}
