// The coordinators' typed records (models/protocol/group_records.hpp) at the trace boundary: one
// record of each kind goes through the OffsetsLog to its `record` trace line (the fields and
// order of docs/scenario-format.md, written by hand below), and the line read back
// (trace::record_from_json, what replay and load read) is the record again, field for field.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/coordinator/group_coordinator.hpp"
#include "models/coordinator/offsets_log.hpp"
#include "models/trace/group_records_json.hpp"
#include "trace_helpers.hpp"

namespace {

namespace r = rsim::records;

struct Case {
  r::GroupRecord record;
  std::string line;  // the trace line after "partition" and "offset"
};

std::vector<Case> one_of_each() {
  return {
      {r::OffsetCommit{.group = "g",
                       .topic = "t",
                       .partition_index = 2,
                       .committed_offset = 41,
                       .leader_epoch = 3,
                       .commit_timestamp = 17},
       R"("record":"OffsetCommit","tombstone":false,"group":"g","topic":"t","partition_index":2,)"
       R"("committed_offset":41,"leader_epoch":3,"commit_timestamp":17})"},
      {r::GroupMetadata{
           .group = "g",
           .protocol_type = "consumer",
           .generation = 4,
           .protocol = "range",
           .leader = "c-1",
           .current_state_timestamp = 1200,
           .members = {r::GroupMetadataMember{
                           .member_id = "m1",
                           .consumer = "c-1",
                           .group_instance_id = "i1",
                           .client_id = "cl1",
                           .client_host = "/c-1",
                           .rebalance_timeout = 300000,
                           .session_timeout = 45000,
                           .subscription = {"t"},
                           .detail = r::ClassicSubscriptionDetail{.owned_partitions = {{"t", 0}},
                                                                  .generation_id = 3,
                                                                  .rack_id = std::nullopt},
                           .assignment = {{"t", 0}, {"t", 1}}},
                       r::GroupMetadataMember{.member_id = "m2",
                                              .consumer = "c-2",
                                              .group_instance_id = std::nullopt,
                                              .client_id = "cl2",
                                              .client_host = "/c-2",
                                              .rebalance_timeout = 1000,
                                              .session_timeout = 2000,
                                              .subscription = {},
                                              .detail = std::nullopt,
                                              .assignment = {}}}},
       R"("record":"GroupMetadata","tombstone":false,"group":"g","protocol_type":"consumer","generation":4,)"
       R"("protocol":"range","leader":"c-1","current_state_timestamp":1200,"members":[)"
       R"({"member_id":"m1","consumer":"c-1","group_instance_id":"i1","client_id":"cl1","client_host":"/c-1",)"
       R"("rebalance_timeout":300000,"session_timeout":45000,"subscription":["t"],"owned_partitions":["t-0"],)"
       R"("generation_id":3,"rack_id":null,"assignment":["t-0","t-1"]},)"
       R"({"member_id":"m2","consumer":"c-2","client_id":"cl2","client_host":"/c-2","rebalance_timeout":1000,)"
       R"("session_timeout":2000,"subscription":[],"assignment":[]}]})"},
      {r::GroupMetadata{.group = "g",
                        .protocol_type = "consumer",
                        .generation = 0,
                        .protocol = std::nullopt,
                        .leader = std::nullopt,
                        .current_state_timestamp = 0,
                        .members = {}},
       R"("record":"GroupMetadata","tombstone":false,"group":"g","protocol_type":"consumer","generation":0,)"
       R"("protocol":null,"leader":null,"current_state_timestamp":0,"members":[]})"},
      {r::ConsumerGroupMetadata{.group = "g", .epoch = 5, .metadata_hash = -77},
       R"("record":"ConsumerGroupMetadata","tombstone":false,"group":"g","epoch":5,"metadata_hash":-77})"},
      {r::ConsumerGroupMemberMetadata{
           .group = "g",
           .member_id = "m1",
           .consumer = "c-1",
           .instance_id = "i1",
           .rack_id = "r1",
           .client_id = "cl1",
           .subscribed_topic_names = {"a", "b"},
           .rebalance_timeout_ms = 300000,
           .server_assignor = "uniform",
           .classic_member_metadata =
               r::ClassicMemberMetadataValue{
                   .session_timeout_ms = 45000,
                   .supported_protocols = {r::ClassicProtocol{.name = "range",
                                                              .topics = {"a"},
                                                              .owned_partitions = {{"a", 1}},
                                                              .generation_id = 2,
                                                              .rack_id = std::nullopt}}}},
       R"("record":"ConsumerGroupMemberMetadata","tombstone":false,"group":"g","member_id":"m1","consumer":"c-1",)"
       R"("instance_id":"i1","rack_id":"r1","client_id":"cl1","subscribed_topic_names":["a","b"],)"
       R"("rebalance_timeout_ms":300000,"server_assignor":"uniform","classic_member_metadata":)"
       R"({"session_timeout_ms":45000,"supported_protocols":[{"name":"range","topics":["a"],)"
       R"("owned_partitions":["a-1"],"generation_id":2,"rack_id":null}]}})"},
      {r::ConsumerGroupMemberMetadata{.group = "g",
                                      .member_id = "m2",
                                      .consumer = "c-2",
                                      .client_id = "cl2",
                                      .subscribed_topic_names = {"a"},
                                      .rebalance_timeout_ms = 1000},
       R"("record":"ConsumerGroupMemberMetadata","tombstone":false,"group":"g","member_id":"m2","consumer":"c-2",)"
       R"("client_id":"cl2","subscribed_topic_names":["a"],"rebalance_timeout_ms":1000})"},
      {r::ConsumerGroupTargetAssignmentMetadata{
           .group = "g", .assignment_epoch = 5, .assignment_timestamp = 900},
       R"("record":"ConsumerGroupTargetAssignmentMetadata","tombstone":false,"group":"g","assignment_epoch":5,)"
       R"("assignment_timestamp":900})"},
      {r::ConsumerGroupTargetAssignmentMember{.group = "g",
                                              .member_id = "m1",
                                              .consumer = "c-1",
                                              .partitions = {{"a", 0}, {"my-topic", 10}}},
       R"("record":"ConsumerGroupTargetAssignmentMember","tombstone":false,"group":"g","member_id":"m1",)"
       R"("consumer":"c-1","partitions":["a-0","my-topic-10"]})"},
      {r::ConsumerGroupCurrentMemberAssignment{.group = "g",
                                               .member_id = "m1",
                                               .consumer = "c-1",
                                               .member_epoch = 5,
                                               .previous_member_epoch = 4,
                                               .state = 1,
                                               .assigned = {{"a", 0}},
                                               .assigned_epochs = {5},
                                               .pending_revocation = {{"a", 1}, {"b", 0}},
                                               .pending_revocation_epochs = {3, 4}},
       R"("record":"ConsumerGroupCurrentMemberAssignment","tombstone":false,"group":"g","member_id":"m1",)"
       R"("consumer":"c-1","member_epoch":5,"previous_member_epoch":4,"state":1,"assigned":["a-0"],)"
       R"("assigned_epochs":[5],"pending_revocation":["a-1","b-0"],"pending_revocation_epochs":[3,4]})"},
      {r::ShareGroupMetadata{.group = "g", .epoch = 2, .metadata_hash = 99},
       R"("record":"ShareGroupMetadata","tombstone":false,"group":"g","epoch":2,"metadata_hash":99})"},
      {r::ShareGroupMemberMetadata{.group = "g",
                                   .member_id = "s1",
                                   .consumer = "c-1",
                                   .client_id = "cl1",
                                   .rack_id = "r2",
                                   .subscribed_topic_names = {"a"}},
       R"("record":"ShareGroupMemberMetadata","tombstone":false,"group":"g","member_id":"s1","consumer":"c-1",)"
       R"("client_id":"cl1","rack_id":"r2","subscribed_topic_names":["a"]})"},
      {r::ShareGroupTargetAssignmentMetadata{
           .group = "g", .assignment_epoch = 2, .assignment_timestamp = 30},
       R"("record":"ShareGroupTargetAssignmentMetadata","tombstone":false,"group":"g","assignment_epoch":2,)"
       R"("assignment_timestamp":30})"},
      {r::ShareGroupTargetAssignmentMember{
           .group = "g", .member_id = "s1", .consumer = "c-1", .partitions = {{"a", 0}, {"a", 1}}},
       R"("record":"ShareGroupTargetAssignmentMember","tombstone":false,"group":"g","member_id":"s1",)"
       R"("consumer":"c-1","partitions":["a-0","a-1"]})"},
      {r::ShareGroupCurrentMemberAssignment{
           .group = "g",
           .member_id = "s1",
           .consumer = "c-1",
           .member_epoch = 2,
           .previous_member_epoch = 1,
           .state = 0,
           .assigned = {{"a", 1}}},
       R"("record":"ShareGroupCurrentMemberAssignment","tombstone":false,"group":"g","member_id":"s1",)"
       R"("consumer":"c-1","member_epoch":2,"previous_member_epoch":1,"state":0,"assigned":["a-1"]})"},
      {r::ShareGroupStatePartitionMetadata{.group = "g",
                                           .initializing_topics = {{"a", 2}},
                                           .initialized_topics = {{"a", 0}, {"a", 1}},
                                           .deleting_topics = {}},
       R"("record":"ShareGroupStatePartitionMetadata","tombstone":false,"group":"g","initializing_topics":["a-2"],)"
       R"("initialized_topics":["a-0","a-1"],"deleting_topics":[]})"},
      {r::Tombstone{.type = r::RecordType::ConsumerGroupCurrentMemberAssignment,
                    .group = "g",
                    .member_id = "m1",
                    .consumer = "c-1"},
       R"("record":"ConsumerGroupCurrentMemberAssignment","tombstone":true,"group":"g","member_id":"m1",)"
       R"("consumer":"c-1"})"},
      {r::Tombstone{.type = r::RecordType::GroupMetadata, .group = "g"},
       R"("record":"GroupMetadata","tombstone":true,"group":"g"})"},
      {r::Tombstone{
           .type = r::RecordType::OffsetCommit, .group = "g", .topic = "t", .partition_index = 2},
       R"("record":"OffsetCommit","tombstone":true,"group":"g","topic":"t","partition_index":2})"},
  };
}

}  // namespace

TEST_CASE("coordinator records: each kind goes to its trace line and reads back field for field") {
  sim::Kernel kernel;
  testing::RecordedTracer tracer(kernel);
  rsim::OffsetsLog log(kernel, tracer, sim::Rng(1, "log"), sim::Distribution::constant(0), 50);
  const auto cases = one_of_each();
  std::vector<r::GroupRecord> write;
  for (const auto& c : cases) write.push_back(c.record);
  log.append(std::move(write), nullptr);
  const std::int32_t partition = rsim::coordinator_partition("g", 50);
  REQUIRE(partition == 3);  // abs("g".hashCode()) % 50 = 103 % 50
  REQUIRE(tracer.lines().size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const std::string& line = tracer.lines()[i];
    CHECK(line == R"({"t_us":0,"type":"record","partition":3,"offset":)" + std::to_string(i) + "," +
                      cases[i].line);
    const auto back = rsim::trace::record_from_json(nlohmann::json::parse(line));
    CHECK(back == cases[i].record);
    CHECK(rsim::trace::record_from_json(nlohmann::ordered_json::parse(line)) == cases[i].record);
  }
  // A new leader reads the compacted log: the tombstones took their keys' records with them
  // (m1's current assignment, the GroupMetadata, t-2's offset) and went themselves.
  const auto loaded = log.committed_records(partition, kernel.now());
  CHECK(loaded.size() == 11);  // 18 records less the 3 tombstones, the 3 records they delete and
                               // GroupMetadata's older value
  CHECK(std::find(loaded.begin(), loaded.end(), cases[8].record) == loaded.end());
  CHECK(std::find(loaded.begin(), loaded.end(), cases[3].record) != loaded.end());
}

TEST_CASE("coordinator records: a trace line that is no record is refused with what is wrong") {
  CHECK_THROWS_WITH_AS(
      rsim::trace::record_from_json(nlohmann::json::parse(R"({"record":"Nope","group":"g"})")),
      "unknown record type \"Nope\"", std::runtime_error);
  CHECK_THROWS_WITH_AS(
      rsim::trace::record_from_json(nlohmann::json::parse(
          R"({"record":"ConsumerGroupTargetAssignmentMember","tombstone":false,"group":"g",)"
          R"("member_id":"m","partitions":["nodash"]})")),
      "\"nodash\" is not a partition (TOPIC-N)", std::runtime_error);
}

TEST_CASE(
    "coordinator records: replaying the records read back from the trace gives the coordinator's "
    "groups") {
  rsim::ConsumerGroups direct, from_trace;
  const std::vector<r::GroupRecord> records{
      r::ConsumerGroupMemberMetadata{.group = "g",
                                     .member_id = "m1",
                                     .consumer = "c-1",
                                     .client_id = "cl1",
                                     .subscribed_topic_names = {"a"},
                                     .rebalance_timeout_ms = 1000},
      r::ConsumerGroupMetadata{.group = "g", .epoch = 1, .metadata_hash = 7},
      r::ConsumerGroupTargetAssignmentMember{
          .group = "g", .member_id = "m1", .consumer = "c-1", .partitions = {{"a", 0}, {"a", 1}}},
      r::ConsumerGroupTargetAssignmentMetadata{
          .group = "g", .assignment_epoch = 1, .assignment_timestamp = 5},
      r::ConsumerGroupCurrentMemberAssignment{.group = "g",
                                              .member_id = "m1",
                                              .consumer = "c-1",
                                              .member_epoch = 1,
                                              .previous_member_epoch = 0,
                                              .state = 0,
                                              .assigned = {{"a", 0}, {"a", 1}},
                                              .assigned_epochs = {1, 1}},
      r::OffsetCommit{.group = "g",
                      .topic = "a",
                      .partition_index = 1,
                      .committed_offset = 12,
                      .leader_epoch = 0},
  };
  for (const auto& rec : records) {
    rsim::replay_record(direct, rec);
    rsim::replay_record(from_trace, rsim::trace::record_from_json(rsim::trace::record_json(rec)));
  }
  CHECK(from_trace == direct);
  const auto& g = direct.at("g");
  CHECK(g.group_epoch == 1);
  CHECK(g.metadata_hash == 7);
  CHECK(g.assignment_epoch == 1);
  CHECK(g.assignment_timestamp_ms == 5);
  CHECK(g.members.at("m1").member.member_epoch == 1);
  CHECK(g.partition_epoch("a", 1) == 1);
  CHECK(g.offsets.at({"a", 1}) == 12);
  CHECK(g.state() == "stable");
}

TEST_CASE(
    "coordinator snapshots and leader moves: typed in the model, written as coordinator.loaded and "
    "partition.leaders spell them") {
  rsim::ClassicGroupSnapshot classic{.group = "g",
                                     .state = "Stable",
                                     .generation = 3,
                                     .protocol_type = "consumer",
                                     .protocol = "range",
                                     .leader = std::nullopt,
                                     .members = {{.member_id = "m1",
                                                  .consumer = "c-1",
                                                  .group_instance_id = std::nullopt,
                                                  .client_id = "cl1",
                                                  .rebalance_timeout = 300000,
                                                  .session_timeout = 45000,
                                                  .subscription = {"t"},
                                                  .assignment = {{"t", 0}, {"t", 10}}}},
                                     .offsets = {{{"t", 0}, 7}, {{"t", 10}, 2}}};
  rsim::ConsumerGroupSnapshot consumer{.group = "h",
                                       .state = "stable",
                                       .epoch = 5,
                                       .assignment_epoch = 5,
                                       .members = {{.member_id = "x",
                                                    .consumer = "c-2",
                                                    .member_epoch = 5,
                                                    .state = "STABLE",
                                                    .assigned = {{"u", 1}}}},
                                       .offsets = {}};
  const rsim::GroupSnapshots groups{classic, consumer};
  CHECK(rsim::trace::snapshots_json(groups).dump() ==
        R"([{"group":"g","state":"Stable","generation":3,"protocol_type":"consumer",)"
        R"("protocol":"range","leader":null,"members":[{"member_id":"m1","consumer":"c-1",)"
        R"("group_instance_id":null,"client_id":"cl1","rebalance_timeout":300000,)"
        R"("session_timeout":45000,"subscription":["t"],"assignment":["t-0","t-10"]}],)"
        R"("offsets":{"t-0":7,"t-10":2}},)"
        R"({"group":"h","protocol":"consumer","state":"stable","epoch":5,"assignment_epoch":5,)"
        R"("members":[{"member_id":"x","consumer":"c-2","member_epoch":5,"state":"STABLE",)"
        R"("assigned":["u-1"]}],"offsets":{}}])");
  const rsim::LeaderMoves moves{{{"t", 2}, 1}, {{"t", 0}, std::nullopt}};
  CHECK(rsim::trace::leaders_json(moves).dump() == R"({"t-2":1,"t-0":null})");
}
