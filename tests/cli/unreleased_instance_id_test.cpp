// Issue 34: an unreleased instance id (a static member's group.instance.id still held by its
// dead member) is a decisive moment: in summary.json's `moments`, a warning on `run`'s and
// `check`'s output and a line of `explain`; not when a new incarnation takes the id over in time.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::contains;
using testing::read_file;
using testing::run_cli;

namespace {

// Two static classic-eager members, a constant 1 ms network, heartbeats on time, no request
// handling or write latency. B gets its SyncGroup response at 3.012 s and heartbeats every
// heartbeat.interval.ms=3000 from there: its last heartbeat before its crash at 20 s is sent at
// 18.012 s and reaches the coordinator at 18.013 s; session.timeout.ms=10000 later (28.013 s) the
// coordinator removes it. Its group.instance.id "b" is held by the dead member 20.000 -> 28.013 s:
// 8,013 ms.
std::string scenario(bool restart) {
  json s = json::parse(R"({
  "name": "static-crash", "seed": 1, "duration_ms": 40000, "protocols": ["classic-eager"],
  "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}, "request_handling_ms": 0, "write_latency_ms": 0},
  "network": {"latency_ms": 1},
  "topics": [{"name": "t", "partitions": 4}],
  "consumers": [
    {"name": "A", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0,
     "config": {"client.id": "A", "group.instance.id": "a", "session.timeout.ms": 10000}},
    {"name": "B", "group": "g", "topics": ["t"], "heartbeat_wakeup_lateness_ms": 0, "connection_setup_ms": 0,
     "config": {"client.id": "B", "group.instance.id": "b", "session.timeout.ms": 10000}}],
  "events": [{"at_ms": 0, "do": "start", "consumer": "A"}, {"at_ms": 1000, "do": "start", "consumer": "B"}]
})");
  s["events"].push_back(
      restart ? json{{"at_ms", 20000}, {"do", "restart"}, {"consumer", "B"}, {"after_ms", 2000}}
              : json{{"at_ms", 20000}, {"do", "crash"}, {"consumer", "B"}});
  return s.dump(2);
}

const char* kLine =
    "at 20000 ms: B: group.instance.id b not released: held by the dead member for 8013 ms, until "
    "the "
    "coordinator removed it (session timeout)";

}  // namespace

TEST_CASE(
    "unreleased instance id: a crashed static member's id held until its session times out, "
    "everywhere") {
  const fs::path dir = testing::scratch_dir("unreleased-id", "crash");
  testing::write_file(dir / "s.json", scenario(false));
  const auto run = run_cli("run " + (dir / "s.json").string() + " --out " + (dir / "out").string(),
                           "unreleased-run");
  REQUIRE_MESSAGE(run.code == 0, run.err);
  CHECK(contains(run.out, std::string("  warning: ") + kLine + "\n"));
  const json summary = json::parse(read_file(dir / "out" / "classic-eager" / "summary.json"));
  json found;
  for (const auto& m : summary.at("moments"))
    if (m.at("kind") == "unreleased_instance_id") found = m;
  REQUIRE(found.is_object());
  CHECK(found.at("t_us") == 20000000);
  CHECK(found.at("consumer") == "B");
  const auto explain = run_cli("explain " + (dir / "s.json").string(), "unreleased-explain");
  CHECK(contains(explain.out, std::string("  Decisive moment ") + kLine + "\n"));
  const auto check = run_cli("check " + (dir / "s.json").string(), "unreleased-check");
  CHECK(contains(check.out, std::string("WARN static-crash [classic-eager]: decisive moment ") +
                                kLine + "\n"));
}

TEST_CASE("unreleased instance id: a static member back in time with its id is no such moment") {
  const fs::path dir = testing::scratch_dir("unreleased-id", "restart");
  testing::write_file(dir / "s.json", scenario(true));
  const auto run = run_cli("run " + (dir / "s.json").string() + " --out " + (dir / "out").string(),
                           "unreleased-restart");
  REQUIRE_MESSAGE(run.code == 0, run.err);
  CHECK_FALSE(contains(run.out, "not released"));
  const json summary = json::parse(read_file(dir / "out" / "classic-eager" / "summary.json"));
  for (const auto& m : summary.at("moments")) CHECK(m.at("kind") != "unreleased_instance_id");
}
