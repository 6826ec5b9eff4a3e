// `run --check-invariants` on a scenario with settings `variants` checks every event of each run,
// whatever `--trace` writes (docs/writing-scenarios.md, "Trace levels"), as a plain run does: at
// `standard` the checker also reads the events only `full` writes (records.fetched,
// records.processed, quiet rpcs, OffsetCommit records) and numbers its lines as a `full`
// trace.jsonl does. Before, a settings run checked only the lines its level wrote.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace {

// Two KIP-848 members, the second joining at 5 s while 100 records a second are consumed; the
// scenario's one settings variant changes nothing.
const char* kScenario = R"({
  "name": "settings-invariants", "seed": 1, "duration_ms": 8000, "protocols": ["consumer"],
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [{"name": "A", "group": "g", "topics": ["t"], "commit": "sync"},
                {"name": "B", "group": "g", "topics": ["t"], "commit": "sync"}],
  "variants": {"base": {}},
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"},
             {"at_ms": 0, "do": "produce", "topic": "t", "records_per_sec": 100},
             {"at_ms": 5000, "do": "start", "consumer": "B"}]})";

// What a run printed of its violations (the lines before "  wrote ...").
std::string violations(const std::string& out) {
  return out.substr(0, out.find("\n  wrote "));
}

}  // namespace

TEST_CASE(
    "run --check-invariants with settings variants: every event is checked at every trace level") {
  const auto dir = testing::scratch_dir("settings-invariants", "levels");
  testing::write_file(dir / "s.json", kScenario);
  // A coordinator that skips revocation (test-only --inject-bug) hands t-2 and t-3 to B while A
  // still owns them.
  const auto run = [&](const std::string& level) {
    return testing::run_cli("run " + (dir / "s.json").string() +
                                " --check-invariants --inject-bug skip-revocation --trace " +
                                level + " --out " + (dir / level).string(),
                            "settings-invariants-" + level, true);
  };
  const auto full = run("full"), standard = run("standard");
  INFO(standard.out);
  CHECK(full.code == 1);
  CHECK(standard.code == 1);
  REQUIRE(testing::contains(full.out,
                            "settings-invariants [base/consumer]: VIOLATED exclusive-ownership at "
                            "t=5010.52 ms: group g: partition t-2 owned by both A and B"));
  // The same violations, at the same lines of the same window: those of the full trace, whose
  // records.fetched and records.processed lines the standard trace.jsonl does not hold.
  CHECK(violations(standard.out) == violations(full.out));
  const std::string standard_trace = testing::read_file(dir / "standard/base/consumer/trace.jsonl");
  const std::string full_trace = testing::read_file(dir / "full/base/consumer/trace.jsonl");
  CHECK(!testing::contains(standard_trace, R"("type":"records.processed")"));
  CHECK(testing::contains(full_trace, R"("type":"records.processed")"));
  std::filesystem::remove_all(dir);
}
