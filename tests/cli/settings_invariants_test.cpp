// `run --check-invariants` on a scenario with settings `variants` checks every event each run
// publishes, whatever `--trace` writes (docs/writing-scenarios.md, "Trace levels"), as a plain
// run does: at `standard` also the events the standard writer leaves out (unchanged lag, quiet
// rpcs, OffsetCommit records), numbered one line each. Before, a settings run checked only the
// lines its level wrote.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace {

// Two KIP-848 members committing synchronously, the second joining at 5 s while 100 records a
// second are consumed; the one settings variant changes nothing.
const char* kScenario = R"({
  "name": "settings-invariants", "seed": 1, "duration_ms": 8000, "protocols": ["consumer"],
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [{"name": "A", "group": "g", "topics": ["t"], "commit": "sync"},
                {"name": "B", "group": "g", "topics": ["t"], "commit": "sync"}],
  "variants": {"base": {}},
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"},
             {"at_ms": 0, "do": "produce", "topic": "t", "records_per_sec": 100},
             {"at_ms": 5000, "do": "start", "consumer": "B"}]})";

// The violations a run printed (their headline without the run's name, and their windows).
std::string violations(const std::string& out) {
  std::istringstream in(out);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (const auto v = line.find("VIOLATED"); v != std::string::npos)
      kept += line.substr(v) + "\n";
    else if (line.starts_with("    trace window") || line.starts_with("      {"))
      kept += line + "\n";
  }
  return kept;
}

}  // namespace

TEST_CASE(
    "run --check-invariants with settings variants: every event is checked at every trace level") {
  const auto dir = testing::scratch_dir("settings-invariants", "levels");
  testing::write_file(dir / "variants.json", kScenario);
  nlohmann::json plain = nlohmann::json::parse(kScenario);
  plain.erase("variants");
  testing::write_file(dir / "plain.json", plain.dump());
  // A coordinator that skips revocation (test-only --inject-bug) hands t-2 and t-3 to B while A
  // still owns them.
  const auto run = [&](const std::string& name) {
    return testing::run_cli("run " + (dir / (name + ".json")).string() +
                                " --check-invariants --inject-bug skip-revocation --trace standard "
                                "--out " +
                                (dir / name).string(),
                            "settings-invariants-" + name, true);
  };
  const auto variants = run("variants"), plain_run = run("plain");
  INFO(variants.out);
  CHECK(variants.code == 1);
  CHECK(plain_run.code == 1);
  REQUIRE(testing::contains(variants.out,
                            "settings-invariants [base/consumer]: VIOLATED exclusive-ownership at "
                            "t=5018.15 ms: group g: partition t-2 owned by both A and B"));
  // The same violations at the same lines of the same windows as the plain run's.
  const std::string found = violations(variants.out);
  CHECK(found == violations(plain_run.out));
  // Those numbers count the events standard does not write: the window's first line stands
  // earlier in trace.jsonl, which holds no OffsetCommit record (A and B commit synchronously).
  const std::string trace = testing::read_file(dir / "variants/base/consumer/trace.jsonl");
  CHECK(!testing::contains(trace, R"("record":"OffsetCommit")"));
  const auto numbered = found.find("trace.jsonl lines ");
  REQUIRE(numbered != std::string::npos);
  const long first = std::stol(found.substr(numbered + 18));
  const auto window_start = found.find("      {");
  REQUIRE(window_start != std::string::npos);
  const std::string first_line =
      found.substr(window_start + 6, found.find('\n', window_start) - window_start - 6);
  const auto at = trace.find(first_line + "\n");
  REQUIRE(at != std::string::npos);
  const long written_before =
      static_cast<long>(std::count(trace.begin(), trace.begin() + static_cast<long>(at), '\n'));
  CHECK(written_before < first);
  std::filesystem::remove_all(dir);
}
