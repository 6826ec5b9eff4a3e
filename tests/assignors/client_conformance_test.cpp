// Proves that every conformance vector of kind `client-assignor` passes against our assignors,
// through the same checker the `rebalance-sim conformance` command uses.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/conformance/client_conformance.hpp"

namespace {

nlohmann::json load_vectors(const std::string& name) {
  const std::string path = std::string(RSIM_CONFORMANCE_DIR) + "/kafka/" + name;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return nlohmann::json::parse(in);
}

// Runs one vector file; every case must pass, and a file must not be silently empty.
void check_file(const std::string& name) {
  const auto doc = load_vectors(name);
  const auto results = rsim::assignors::run_client_assignor_vectors(doc);
  REQUIRE(!results.empty());
  int passed = 0;
  int skipped = 0;
  for (const auto& r : results) {
    INFO(name << " " << r.id << ": " << r.detail);
    CHECK(r.passed);
    if (r.passed && r.detail.rfind("skipped:", 0) == 0) {
      ++skipped;
    } else if (r.passed) {
      ++passed;
    }
  }
  MESSAGE(name << ": " << passed << " passed, " << skipped << " skipped (generator), "
               << results.size() - static_cast<std::size_t>(passed + skipped) << " failed");
}

}  // namespace

TEST_CASE("conformance: client.RangeAssignorTest vectors all pass") {
  check_file("client.RangeAssignorTest.json");
}

TEST_CASE("conformance: client.RoundRobinAssignorTest vectors all pass") {
  check_file("client.RoundRobinAssignorTest.json");
}

TEST_CASE("conformance: client.StickyAssignorTest vectors all pass") {
  check_file("client.StickyAssignorTest.json");
}

TEST_CASE("conformance: client.CooperativeStickyAssignorTest vectors all pass") {
  check_file("client.CooperativeStickyAssignorTest.json");
}

TEST_CASE("conformance: client.AbstractStickyAssignorTest vectors all pass") {
  check_file("client.AbstractStickyAssignorTest.json");
}

TEST_CASE("conformance: a file of another kind is reported, not run") {
  const nlohmann::json doc = {{"kind", "server-assignor"}, {"cases", nlohmann::json::array()}};
  const auto results = rsim::assignors::run_client_assignor_vectors(doc);
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].passed);
}

TEST_CASE("conformance: the checker reports a case whose expectation is wrong") {
  // Guards against a checker that passes everything: each mutation must turn a pass into a failure.
  auto doc = load_vectors("client.RangeAssignorTest.json");
  auto& c = doc["cases"][2];  // a single-call case with an exact expectation
  REQUIRE(c.contains("expected"));
  const auto before = rsim::assignors::run_client_assignor_vectors(doc);
  REQUIRE(before[2].passed);

  auto wrong_member = doc;
  auto& expected = wrong_member["cases"][2]["expected"];
  const std::string first = expected.begin().key();
  expected[first]["no-such-topic"] = {0};
  CHECK_FALSE(rsim::assignors::run_client_assignor_vectors(wrong_member)[2].passed);

  auto wrong_check = doc;
  wrong_check["cases"][2]["checks"] = {{{"check", "total_assigned"}, {"equals", 12345}}};
  const auto r = rsim::assignors::run_client_assignor_vectors(wrong_check)[2];
  CHECK_FALSE(r.passed);
  CHECK(r.detail.find("total assigned") != std::string::npos);

  auto unknown_check = doc;
  unknown_check["cases"][2]["checks"] = {{{"check", "no_such_check"}}};
  CHECK_FALSE(rsim::assignors::run_client_assignor_vectors(unknown_check)[2].passed);
}

TEST_CASE("conformance: sticky vectors fail when run with another assignor") {
  // The sticky vectors must actually constrain the result: roundrobin cannot satisfy them all.
  auto doc = load_vectors("client.StickyAssignorTest.json");
  for (auto& c : doc["cases"]) {
    c["assignor"] = "roundrobin";
    if (c.contains("steps")) {
      for (auto& s : c["steps"]) s["assignor"] = "roundrobin";
    }
  }
  int failed = 0;
  for (const auto& r : rsim::assignors::run_client_assignor_vectors(doc))
    failed += r.passed ? 0 : 1;
  CHECK(failed > 0);
  MESSAGE("sticky vectors failing under roundrobin: " << failed);
}
