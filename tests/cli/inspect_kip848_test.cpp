// dump-log and describe on a consumer (KIP-848) group: the two-consumers-kip848 example, whose
// records kafka-dump-log.sh --offsets-decoder prints with the CoordinatorRecordType apiKey of
// each key (3 ConsumerGroupMetadata, 5 MemberMetadata, 6 TargetAssignmentMetadata, 7
// TargetAssignmentMember, 8 CurrentMemberAssignment; 1 OffsetCommit) and the generated JSON
// converters' camelCase fields, and whose describe shows Kafka's consumer-group columns.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_helpers.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/inspect.hpp"

namespace {

using Output = testing::CliResult;

Output cli(const std::string& args, const std::string& tag) {
  return testing::run_cli(args, "kip848-" + tag);
}

const char* kScenario = "scenarios/examples/two-consumers-kip848.json";

}  // namespace

TEST_CASE("dump-log --partition 32: the consumer group's records decoded as Kafka's decoder does") {
  // g-consumer: abs("g-consumer".hashCode()) % 50 = 32.
  const auto r = cli(std::string("dump-log ") + kScenario + " --partition 32", "dump32");
  REQUIRE(r.code == 0);
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // 72 records: A joins (5 records), B joins (3), the 7.8 s target (4), A's revocation and
  // acknowledgement, B's assignment, the auto-commits and commits before each reconciliation and
  // in close() (45 OffsetCommit records, 6 partitions at a time or A's 3), B's and A's leaves.
  // A's leave is at offsets 67-71, three later than in the real log (64-68): after its epoch-4
  // assignment (32,962) A commits three times, before the reconciliation (33,001), the
  // auto-commit due at 33,037 (its auto-commits run 28,037 + 5,000) at the Fetch's end that
  // runs onPartitionsAssigned([3,4,5]) (33,063.75), and in close() (33,101). The real A committed
  // twice: its auto-commits ran at 28,073-28,211, due after its close, as its acknowledgement of
  // the revocation came at 8,040 against the simulator's 7,959.5 (docs/fidelity.md, finding 33:
  // its onPartitionsAssigned([]) runs at its Fetch's end, 7,959.5, no longer in the instant of
  // its onPartitionsRevoked, 7,934.3). compare leaves OffsetCommit records aside.
  REQUIRE(lines.size() == 2 + 72);
  CHECK(lines[0] == "Dumping __consumer_offsets-32");
  CHECK(lines[1] == "Log starting offset: 0");
  const std::string id = rsim::inspect::simulated_topic_id("orders");
  CHECK(
      lines[2] ==
      std::string(
          R"(| offset: 0 CreateTime: 2717 key: {"type":"5","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: {"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"g-consumer-A","clientHost":"/A","subscribedTopicNames":["orders"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":300000,"serverAssignor":null}})"));
  CHECK(
      lines[3] ==
      std::string(
          R"(| offset: 1 CreateTime: 2717 key: {"type":"3","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"epoch":2,"metadataHash":7430966600993625001}})"));
  CHECK(
      lines[4] ==
      std::string(
          R"(| offset: 2 CreateTime: 2717 key: {"type":"7","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: {"version":"0","data":{"topicPartitions":[{"topicId":")" +
          id + R"(","partitions":[0,1,2,3,4,5]}]}})"));
  CHECK(
      lines[5] ==
      std::string(
          R"(| offset: 3 CreateTime: 2717 key: {"type":"6","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"assignmentEpoch":2,"assignmentTimestamp":2717}})"));
  CHECK(
      lines[6] ==
      std::string(
          R"(| offset: 4 CreateTime: 2717 key: {"type":"8","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: {"version":"0","data":{"memberEpoch":2,"previousMemberEpoch":0,"state":0,"assignedPartitions":[{"topicId":")" +
          id +
          R"(","partitions":[0,1,2,3,4,5],"assignmentEpochs":[2,2,2,2,2,2]}],"partitionsPendingRevocation":[]}})"));
  CHECK(
      lines[7] ==
      std::string(
          R"(| offset: 5 CreateTime: 2797 key: {"type":"5","data":{"groupId":"g-consumer","memberId":"k2XHHyNvSzSjHnYAVXXEHA"}} payload: {"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"g-consumer-B","clientHost":"/B","subscribedTopicNames":["orders"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":300000,"serverAssignor":null}})"));
  CHECK(
      lines[8] ==
      std::string(
          R"(| offset: 6 CreateTime: 2797 key: {"type":"3","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"epoch":3,"metadataHash":7430966600993625001}})"));
  CHECK(
      lines[9] ==
      std::string(
          R"(| offset: 7 CreateTime: 2797 key: {"type":"8","data":{"groupId":"g-consumer","memberId":"k2XHHyNvSzSjHnYAVXXEHA"}} payload: {"version":"0","data":{"memberEpoch":2,"previousMemberEpoch":0,"state":0,"assignedPartitions":[],"partitionsPendingRevocation":[]}})"));
  CHECK(
      lines[10] ==
      std::string(
          R"(| offset: 8 CreateTime: 7802 key: {"type":"7","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: {"version":"0","data":{"topicPartitions":[{"topicId":")" +
          id + R"(","partitions":[0,1,2]}]}})"));
  CHECK(
      lines[11] ==
      std::string(
          R"(| offset: 9 CreateTime: 7802 key: {"type":"7","data":{"groupId":"g-consumer","memberId":"k2XHHyNvSzSjHnYAVXXEHA"}} payload: {"version":"0","data":{"topicPartitions":[{"topicId":")" +
          id + R"(","partitions":[3,4,5]}]}})"));
  CHECK(
      lines[12] ==
      std::string(
          R"(| offset: 10 CreateTime: 7802 key: {"type":"6","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"assignmentEpoch":3,"assignmentTimestamp":7802}})"));
  CHECK(
      lines[13] ==
      std::string(
          R"(| offset: 11 CreateTime: 7802 key: {"type":"8","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: {"version":"0","data":{"memberEpoch":2,"previousMemberEpoch":2,"state":1,"assignedPartitions":[{"topicId":")" +
          id +
          R"(","partitions":[0,1,2],"assignmentEpochs":[2,2,2]}],"partitionsPendingRevocation":[{"topicId":")" +
          id + R"(","partitions":[3,4,5],"assignmentEpochs":[2,2,2]}]}})"));
  CHECK(
      lines[69] ==
      std::string(
          R"(| offset: 67 CreateTime: 33109 key: {"type":"8","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: <DELETE>)"));
  CHECK(
      lines[70] ==
      std::string(
          R"(| offset: 68 CreateTime: 33109 key: {"type":"7","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: <DELETE>)"));
  CHECK(
      lines[71] ==
      std::string(
          R"(| offset: 69 CreateTime: 33109 key: {"type":"5","data":{"groupId":"g-consumer","memberId":"ShozcdODTuGEN_MucqRJhQ"}} payload: <DELETE>)"));
  CHECK(
      lines[72] ==
      std::string(
          R"(| offset: 70 CreateTime: 33109 key: {"type":"3","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"epoch":5}})"));
  CHECK(
      lines[73] ==
      std::string(
          R"(| offset: 71 CreateTime: 33109 key: {"type":"6","data":{"groupId":"g-consumer"}} payload: {"version":"0","data":{"assignmentEpoch":5}})"));
  std::map<std::string, int> types;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const auto k = lines[i].find(R"(key: {"type":")");
    REQUIRE(k != std::string::npos);
    ++types[lines[i].substr(k + 14, lines[i].find('"', k + 14) - (k + 14))];
  }
  CHECK(types ==
        std::map<std::string, int>{{"1", 45}, {"3", 4}, {"5", 4}, {"6", 4}, {"7", 6}, {"8", 9}});
}

TEST_CASE("describe at 12 s: a reconciling consumer group, with epochs and target assignments") {
  // At 12 s A has revoked orders-3..5 (epoch 3, current orders:0,1,2) and B, at epoch 3, has the
  // target orders:3,4,5 but not yet its partitions (its heartbeat at 12.885 s gets them).
  const std::string at = std::string("describe ") + kScenario + " --at 12000";
  const std::string warning = "\nWarning: Consumer group 'g-consumer' is rebalancing.\n";
  const auto state = cli(at + " --state", "state");
  CHECK(state.code == 0);
  CHECK(state.err == warning);
  CHECK(
      state.out ==
      "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                "
      "#MEMBERS"
      "\ng-consumer      broker-0:9092  (0)        uniform              Reconciling          2\n");
  const auto verbose = cli(at + " --state --verbose", "stateverbose");
  CHECK(verbose.out ==
        "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                "
        "GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS"
        "\ng-consumer      broker-0:9092  (0)        uniform              Reconciling          "
        "3               3                         2\n");
  const auto members = cli(at + " --members --verbose", "members");
  CHECK(members.code == 0);
  CHECK(members.err == warning);
  CHECK(members.out ==
        "\nGROUP           CONSUMER-ID            HOST            CLIENT-ID       #PARTITIONS     "
        "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \n"
        "g-consumer      ShozcdODTuGEN_MucqRJhQ /A              g-consumer-A    3               "
        "3               orders:0,1,2         3               orders:0,1,2        \n"
        "g-consumer      k2XHHyNvSzSjHnYAVXXEHA /B              g-consumer-B    0               "
        "3               -                    3               orders:3,4,5        \n");
  // Offsets: A's partitions, then the committed ones nobody owns; nothing is produced (LEO 0).
  const auto offsets = cli(at + " --offsets", "offsets");
  CHECK(offsets.code == 0);
  CHECK(offsets.out ==
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG          "
        "   "
        "CONSUMER-ID            HOST            CLIENT-ID"
        "\ng-consumer      orders          0          0               0               0            "
        "   "
        "ShozcdODTuGEN_MucqRJhQ /A              g-consumer-A"
        "\ng-consumer      orders          1          0               0               0            "
        "   "
        "ShozcdODTuGEN_MucqRJhQ /A              g-consumer-A"
        "\ng-consumer      orders          2          0               0               0            "
        "   "
        "ShozcdODTuGEN_MucqRJhQ /A              g-consumer-A"
        "\ng-consumer      orders          3          0               0               0            "
        "   "
        "-                      -               -"
        "\ng-consumer      orders          4          0               0               0            "
        "   "
        "-                      -               -"
        "\ng-consumer      orders          5          0               0               0            "
        "   "
        "-                      -               -\n");
}

TEST_CASE("describe a consumer group: stable at 20 s, empty after both left (still uniform)") {
  const auto stable =
      cli(std::string("describe ") + kScenario + " --at 20000 --members --verbose", "stable");
  CHECK(stable.err.empty());
  CHECK(stable.out.find("g-consumer      k2XHHyNvSzSjHnYAVXXEHA /B              g-consumer-B    3 "
                        "              3               orders:3,4,5         3               "
                        "orders:3,4,5") != std::string::npos);
  const auto empty = cli(std::string("describe ") + kScenario + " --at 36000 --state", "empty");
  CHECK(empty.err == "\nConsumer group 'g-consumer' has no active members.\n");
  CHECK(empty.out.find("g-consumer      broker-0:9092  (0)        uniform              Empty     "
                       "           0") != std::string::npos);
}
