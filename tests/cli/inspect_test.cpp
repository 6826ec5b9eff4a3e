// dump-log and describe: Kafka's inspection views of a run, in-process
// (reports/analyses/inspect.hpp) and through the command line, on the two-consumers example and on
// a scenario with records.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_helpers.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/inspect.hpp"
#include "trace_helpers.hpp"

namespace {

using Output = testing::CliResult;

Output cli(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "inspect-" + tag);
}

}  // namespace

TEST_CASE(
    "dump-log decodes the same records, one per line, as kafka-dump-log --offsets-decoder does") {
  // On the idealized machine (tests/trace_helpers.hpp): every time derived from Kafka's rules.
  const auto spec = testing::load_ideal("scenarios/examples/two-consumers.json");
  const auto run = rsim::run_scenario(spec, "classic-eager", spec.seed);
  const auto lines = rsim::inspect::dump_offsets_partition(run.trace_lines, 18);
  REQUIRE(lines.size() == 2 + 44);
  CHECK(lines[0] == "Dumping __consumer_offsets-18");
  CHECK(lines[1] == "Log starting offset: 0");
  CHECK(
      lines[2] ==
      R"(| offset: 0 CreateTime: 3043 key: {"type":"2","data":{"group":"g-classic"}} payload: {"version":"3","data":{"protocolType":"","generation":0,"protocol":null,"leader":null,"currentStateTimestamp":3043,"members":[]}})");
  // leaderEpoch -1: A's positions came from ListOffsets (no epoch) and nothing was fetched.
  const std::string oc =
      R"(| offset: 2 CreateTime: 6049 key: {"type":"1","data":{"group":"g-classic","topic":"orders","partition":0}} payload: {"version":"4","data":{"offset":0,"leaderEpoch":-1,"metadata":"","commitTimestamp":6049,"topicId":")" +
      rsim::inspect::simulated_topic_id("orders") + R"("}})";
  CHECK(lines[4] == oc);
  // Generation 2: the leader is A's member id, both members with their decoded assignment.
  CHECK(lines[10].find(R"("generation":2,"protocol":"range","leader":"g-classic-A-)") !=
        std::string::npos);
  CHECK(
      lines[10].find(
          R"("assignment":{"assignedPartitions":[{"topic":"orders","partitions":[3,4,5]}],"userData":null})") !=
      std::string::npos);
  CHECK(lines.back().find(
            R"("protocolType":"consumer","generation":4,"protocol":null,"leader":null)") !=
        std::string::npos);
  CHECK(rsim::inspect::dump_offsets_partition(run.trace_lines, 17).size() == 2);
}

TEST_CASE("dump-log on the command line: the partition's records, and bad input exits 2") {
  const auto r = cli("dump-log scenarios/examples/two-consumers.json --partition 18", "dump18");
  CHECK(r.code == 0);
  std::size_t lines = 0, group_metadata = 0;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    ++lines;
    if (l.find(R"(key: {"type":"2")") != std::string::npos) ++group_metadata;
  }
  CHECK(lines == 46);
  CHECK(group_metadata == 5);
  const auto bad = cli("dump-log scenarios/examples/two-consumers.json --partition 50", "dump50");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--partition: __consumer_offsets has 50 partitions (0..49), got 50") !=
        std::string::npos);
  // A partition with no record: the header only, and where the scenario's group is instead.
  const auto empty = cli("dump-log scenarios/examples/two-consumers.json --partition 3", "dump3");
  CHECK(empty.code == 0);
  CHECK(empty.out == "Dumping __consumer_offsets-3\nLog starting offset: 0\n");
  CHECK(empty.err ==
        "note: __consumer_offsets-3 holds no record in this run. Group \"g-classic\" uses "
        "__consumer_offsets-18 (--partition 18).\n");
  // __share_group_state exists only in share runs.
  CHECK(cli("dump-log scenarios/examples/two-consumers.json --partition 18 --share-group-state",
            "dumpc")
            .code == 2);
}

TEST_CASE("describe at 12 s: Kafka's columns for the state, the members and the offsets") {
  const auto state =
      cli("describe scenarios/examples/two-consumers.json --at 12000 --state", "state");
  CHECK(state.code == 0);
  CHECK(
      state.out ==
      "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                "
      "#MEMBERS"
      "\ng-classic       broker-0:9092  (0)        range                Stable               2\n");
  const auto members = cli(
      "describe scenarios/examples/two-consumers.json --at 12000 --members --verbose", "members");
  CHECK(members.code == 0);
  std::istringstream in(members.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].empty());
  CHECK(
      lines[1].rfind(
          "GROUP           CONSUMER-ID                                      HOST            "
          "CLIENT-ID       "
          "#PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT",
          0) == 0);
  CHECK(lines[2].rfind("g-classic       g-classic-A-", 0) == 0);
  CHECK(lines[2].find(" /A              g-classic-A     3               -               "
                      "orders:0,1,2         -               -") != std::string::npos);
  CHECK(lines[3].find(
            " /B              g-classic-B     3               -               orders:3,4,5 ") !=
        std::string::npos);
  const auto offsets = cli("describe scenarios/examples/two-consumers.json --at 12000", "offsets");
  CHECK(offsets.out.find("\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  "
                         "LOG-END-OFFSET  LAG             CONSUMER-ID") == 0);
  CHECK(offsets.out.find("\ng-classic       orders          5          0               0           "
                         "    0               g-classic-B-") != std::string::npos);
  CHECK(offsets.err.empty());
}

TEST_CASE(
    "describe: committed offset, log end offset and lag by hand - an Empty group - rebalancing") {
  // crash-before-auto-commit at 30 s: A died at 12.55 s but is still a member (its session runs
  // to ~57 s); its last commit was 90 at 9.014 s; 10 records/s -> LEO 300; LAG = 300 - 90.
  const auto r =
      cli("describe scenarios/workload/crash-before-auto-commit.json --at 30000", "crash30");
  CHECK(r.code == 0);
  CHECK(r.out.find("\ng               orders          0          90              300             "
                   "210             consumer-g-1-") != std::string::npos);
  CHECK(r.out.find("90              300             210") != std::string::npos);
  // At 29 s in two-consumers everyone has left: Empty, committed offsets without a consumer.
  const auto empty = cli("describe scenarios/examples/two-consumers.json --at 29000", "empty");
  CHECK(empty.err == "\nConsumer group 'g-classic' has no active members.\n");
  CHECK(empty.out.find("\ng-classic       orders          0          0               0             "
                       "  0               -               -               -") != std::string::npos);
  const auto st =
      cli("describe scenarios/examples/two-consumers.json --at 29000 --state", "emptystate");
  CHECK(st.out.find("g-classic       broker-0:9092  (0)        -                    Empty          "
                    "      0") != std::string::npos);
  // 6.05 s: B joined, A is rejoining: PreparingRebalance, and Kafka warns.
  const auto reb =
      cli("describe scenarios/examples/two-consumers.json --at 6050 --state", "rebalancing");
  CHECK(reb.err == "\nWarning: Consumer group 'g-classic' is rebalancing.\n");
  CHECK(reb.out.find("PreparingRebalance") != std::string::npos);
  CHECK(cli("describe scenarios/examples/two-consumers.json --at 99000", "late").code == 2);
  // 6.052 s: generation 2 (A and B) is in CompletingRebalance; its GroupMetadata record comes at
  // 6.053 s. DescribeGroups answers from the coordinator's members: both, with no assignment yet.
  for (const char* at : {"5000", "6052"}) {
    CAPTURE(at);
    const auto completing =
        cli(std::string("describe scenarios/examples/two-consumers.json --members --at ") + at,
            std::string("completing") + at);
    CHECK(completing.out.find("g-classic-A-") != std::string::npos);
    CHECK(completing.out.find(" /B ") != std::string::npos);
    CHECK(completing.out.find("g-classic-B ") != std::string::npos);
  }
  CHECK(cli("describe scenarios/examples/two-consumers.json --at 1000 --state --members", "both")
            .code == 2);
}

TEST_CASE(
    "describe and dump-log follow an online migration: classic, consumer group, classic again") {
  const std::string scenario = "scenarios/migration/online-upgrade-and-downgrade.json";
  const auto spec = testing::load_ideal(scenario);  // the times below: the idealized machine
  const auto run = rsim::run_scenario(spec, "classic-eager", spec.seed);
  const auto state_at = [&](std::int64_t ms) {
    rsim::inspect::DescribeOptions o;
    o.view = rsim::inspect::DescribeView::State;
    o.verbose = true;
    o.at_us = ms * 1000;
    o.groups = {"g"};
    const auto out = rsim::inspect::describe_groups(run.trace_lines, o).out;
    return out.substr(out.rfind('\n', out.size() - 2) + 1);  // the group's row
  };
  // 21 s: A has left, the classic group rebalances (range, no epochs).
  CHECK(state_at(21000) ==
        "g               broker-0:9092  (0)        range                PreparingRebalance   -    "
        "           -                         2\n");
  // 30 s: a consumer group since 22003 (the broker's uniform assignor, group and target epoch 2).
  CHECK(state_at(30000) ==
        "g               broker-0:9092  (0)        uniform              Stable               2    "
        "           2                         3\n");
  // 140 s: classic again since the downgrade at 130003 (generation 12 since 134023).
  CHECK(state_at(140000) ==
        "g               broker-0:9092  (0)        range                Stable               -    "
        "           -                         3\n");
  // The conversion's records in __consumer_offsets: the classic group's tombstone first.
  const std::int32_t partition = rsim::coordinator_partition("g", 50);
  const auto lines = rsim::inspect::dump_offsets_partition(run.trace_lines, partition);
  std::vector<std::string> at_conversion;
  for (const auto& l : lines)
    if (l.find("CreateTime: 22003 ") != std::string::npos) at_conversion.push_back(l);
  REQUIRE(at_conversion.size() == 14);
  CHECK(at_conversion[0].find(R"(key: {"type":"2","data":{"group":"g"}} payload: <DELETE>)") !=
        std::string::npos);
  CHECK(
      at_conversion[1].find(
          R"("classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range"},{"name":"cooperative-sticky"}]})") !=
      std::string::npos);
}
