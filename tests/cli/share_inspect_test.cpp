// describe and dump-log for share groups: kafka-share-groups.sh --describe (--state, --members,
// offsets) and kafka-dump-log.sh for __consumer_offsets' share records and __share_group_state.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli_helpers.hpp"

namespace {

testing::CliResult cli(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "share-inspect-" + tag);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const char* kScenario = "scenarios/share/eight-consumers-one-crash.json";

}  // namespace

TEST_CASE("describe a share group: Kafka's state, members and offsets tables") {
  const auto state =
      cli(std::string("describe ") + kScenario + " --at 20000 --state --verbose", "state");
  REQUIRE(state.code == 0);
  CHECK(state.out.find("GROUP           COORDINATOR (ID)          STATE           GROUP-EPOCH  "
                       "ASSIGNMENT-EPOCH  #MEMBERS") != std::string::npos);
  CHECK(state.out.find("queue           broker-") != std::string::npos);
  CHECK(state.out.find("Stable") != std::string::npos);
  CHECK(state.out.rfind(" 8\n") != std::string::npos);

  const auto members =
      cli(std::string("describe ") + kScenario + " --at 20000 --members", "members");
  REQUIRE(members.code == 0);
  CHECK(members.out.find("CONSUMER-ID") != std::string::npos);
  CHECK(members.out.find("#PARTITIONS  ASSIGNMENT") != std::string::npos);
  CHECK(count(members.out, "\nqueue ") == 8);  // one row per member
  CHECK(count(members.out, "jobs:") == 8);     // one partition each

  const auto offsets = cli(std::string("describe ") + kScenario + " --at 20000", "offsets");
  REQUIRE(offsets.code == 0);
  CHECK(offsets.out.find("GROUP           TOPIC           PARTITION  START-OFFSET  LAG") !=
        std::string::npos);
  CHECK(count(offsets.out, "\nqueue           jobs") == 4);
}

TEST_CASE("dump-log of a share run: share-group records and __share_group_state") {
  const auto dump =
      cli(std::string("dump-log ") + kScenario + " --partition 0 --share-group-state", "state-log");
  REQUIRE(dump.code == 0);
  CHECK(dump.out.rfind("Dumping __share_group_state-0\nLog starting offset: 0\n", 0) == 0);
  const auto bad =
      cli(std::string("dump-log ") + kScenario + " --partition 50 --share-group-state", "bad");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("__share_group_state has 50 partitions") != std::string::npos);
}
