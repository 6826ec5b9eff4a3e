// Unit tests of the server-side assignors as pure functions: the reference timelines of the
// protocol document (§6.4), Kafka behaviours the shared vectors do not list, and Java-order
// helpers. Property tests on seeded random groups live in server_assignor_property_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/assignors/server_assignor.hpp"
#include "models/assignors/server_java_order.hpp"
#include "tools/conformance/server_conformance.hpp"

namespace {

using rsim::assignors::MemberAssignment;
using rsim::assignors::ServerAssignment;
using rsim::assignors::ServerAssignorInput;
using rsim::assignors::ServerMember;
using rsim::assignors::SubscriptionType;

/// A group of members subscribed to topic "t" (id "tid") with `partitions` partitions, each
/// member starting from its target in `previous`. Members iterate in the listed order.
ServerAssignorInput single_topic_group(std::int32_t partitions, const std::vector<std::string>& ids,
                                       const ServerAssignment& previous) {
  ServerAssignorInput input;
  input.topics.push_back({"tid", "t", partitions});
  for (const auto& id : ids) {
    ServerMember m;
    m.member_id = id;
    m.subscribed_topics = {"t"};
    if (const auto it = previous.find(id); it != previous.end()) m.target = it->second;
    input.members.push_back(std::move(m));
  }
  return input;
}

std::vector<std::int32_t> partitions_of(const ServerAssignment& a, const std::string& member) {
  const auto it = a.find(member);
  if (it == a.end() || it->second.empty()) return {};
  return it->second.begin()->second;
}

using P = std::vector<std::int32_t>;

/// Runs shared-format vectors written inline and requires every case to pass.
void require_vectors_pass(const char* text) {
  const auto results = rsim::assignors::run_server_assignor_vectors(nlohmann::json::parse(text));
  REQUIRE(!results.empty());
  for (const auto& r : results) {
    INFO(r.id << ": " << r.detail);
    CHECK(r.passed);
  }
}

}  // namespace

TEST_CASE("uniform follows the protocol document's reference timeline for 6 partitions") {
  // §6.4 of kafka-consumer-protocol.md, produced by Kafka's own classes: +A +B +C -B +D -A -C.
  ServerAssignment a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"A"}, {}));
  CHECK(partitions_of(a, "A") == P{0, 1, 2, 3, 4, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"A", "B"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "B") == P{3, 4, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"A", "B", "C"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1});
  CHECK(partitions_of(a, "B") == P{3, 4});
  CHECK(partitions_of(a, "C") == P{2, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"A", "C"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 3});
  CHECK(partitions_of(a, "C") == P{2, 4, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"A", "C", "D"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1});
  CHECK(partitions_of(a, "C") == P{2, 4});
  CHECK(partitions_of(a, "D") == P{3, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"C", "D"}, a));
  CHECK(partitions_of(a, "C") == P{0, 2, 4});
  CHECK(partitions_of(a, "D") == P{1, 3, 5});
  a = rsim::assignors::assign_server("uniform", single_topic_group(6, {"D"}, a));
  CHECK(partitions_of(a, "D") == P{0, 1, 2, 3, 4, 5});
}

TEST_CASE("uniform gives the extra partition of 7 to the first member and keeps it sticky") {
  ServerAssignment a = rsim::assignors::assign_server("uniform", single_topic_group(7, {"A"}, {}));
  a = rsim::assignors::assign_server("uniform", single_topic_group(7, {"A", "B"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 2, 3});
  CHECK(partitions_of(a, "B") == P{4, 5, 6});
  a = rsim::assignors::assign_server("uniform", single_topic_group(7, {"A", "B", "C"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "B") == P{4, 5});
  CHECK(partitions_of(a, "C") == P{3, 6});
  a = rsim::assignors::assign_server("uniform", single_topic_group(7, {"A", "C"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "C") == P{3, 4, 5, 6});
  a = rsim::assignors::assign_server("uniform", single_topic_group(7, {"A", "C", "D"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "C") == P{3, 4});
  CHECK(partitions_of(a, "D") == P{5, 6});
}

TEST_CASE("uniform with more members than partitions leaves the extra member empty") {
  ServerAssignment a = rsim::assignors::assign_server("uniform", single_topic_group(2, {"A"}, {}));
  a = rsim::assignors::assign_server("uniform", single_topic_group(2, {"A", "B"}, a));
  CHECK(partitions_of(a, "A") == P{0});
  CHECK(partitions_of(a, "B") == P{1});
  a = rsim::assignors::assign_server("uniform", single_topic_group(2, {"A", "B", "C"}, a));
  CHECK(partitions_of(a, "A") == P{0});
  CHECK(partitions_of(a, "B") == P{1});
  REQUIRE(a.count("C") == 1);
  CHECK(a.at("C").empty());
  a = rsim::assignors::assign_server("uniform", single_topic_group(2, {"B", "C"}, a));
  CHECK(partitions_of(a, "B") == P{1});
  CHECK(partitions_of(a, "C") == P{0});
}

TEST_CASE("range follows the protocol document's reference timeline and is not sticky") {
  ServerAssignment a =
      rsim::assignors::assign_server("range", single_topic_group(6, {"A", "B"}, {}));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "B") == P{3, 4, 5});
  a = rsim::assignors::assign_server("range", single_topic_group(6, {"C", "B", "A"}, a));
  CHECK(partitions_of(a, "A") == P{0, 1});
  CHECK(partitions_of(a, "B") == P{2, 3});  // B loses 4 and 5 and gains 2
  CHECK(partitions_of(a, "C") == P{4, 5});
  a = rsim::assignors::assign_server("range", single_topic_group(7, {"A", "B", "C"}, {}));
  CHECK(partitions_of(a, "A") == P{0, 1, 2});
  CHECK(partitions_of(a, "B") == P{3, 4});
  CHECK(partitions_of(a, "C") == P{5, 6});
}

TEST_CASE("uniform heterogeneous follows the protocol document's reference timeline") {
  // Topics t(4) and u(4); A:{t}, B:{t,u}, C:{u}.
  const auto group =
      [](const std::vector<std::pair<std::string, std::vector<std::string>>>& members,
         const ServerAssignment& previous) {
        ServerAssignorInput input;
        input.topics = {{"tid", "t", 4}, {"uid", "u", 4}};
        for (const auto& [id, subs] : members) {
          ServerMember m;
          m.member_id = id;
          m.subscribed_topics = subs;
          if (const auto it = previous.find(id); it != previous.end()) m.target = it->second;
          input.members.push_back(std::move(m));
        }
        input.subscription_type = rsim::assignors::subscription_type_by_names(input.members);
        return input;
      };
  ServerAssignment a = rsim::assignors::assign_server("uniform", group({{"A", {"t"}}}, {}));
  CHECK(a.at("A") == MemberAssignment{{"tid", {0, 1, 2, 3}}});
  a = rsim::assignors::assign_server("uniform", group({{"A", {"t"}}, {"B", {"t", "u"}}}, a));
  CHECK(a.at("A") == MemberAssignment{{"tid", {0, 1, 2, 3}}});
  CHECK(a.at("B") == MemberAssignment{{"uid", {0, 1, 2, 3}}});
  a = rsim::assignors::assign_server("uniform",
                                     group({{"A", {"t"}}, {"B", {"t", "u"}}, {"C", {"u"}}}, a));
  CHECK(a.at("A") == MemberAssignment{{"tid", {0, 1, 2}}});
  CHECK(a.at("B") == MemberAssignment{{"tid", {3}}, {"uid", {0, 1}}});
  CHECK(a.at("C") == MemberAssignment{{"uid", {2, 3}}});
  a = rsim::assignors::assign_server("uniform", group({{"A", {"t"}}, {"C", {"u"}}}, a));
  CHECK(a.at("A") == MemberAssignment{{"tid", {0, 1, 2, 3}}});
  CHECK(a.at("C") == MemberAssignment{{"uid", {0, 1, 2, 3}}});
}

TEST_CASE("assign_server rejects unknown names and returns nothing for an empty group") {
  CHECK_THROWS_AS(rsim::assignors::assign_server("sticky", ServerAssignorInput{}),
                  std::invalid_argument);
  CHECK(rsim::assignors::assign_server("uniform", ServerAssignorInput{}).empty());
  CHECK(rsim::assignors::assign_server("range", ServerAssignorInput{}).empty());
  CHECK(rsim::assignors::is_server_assignor("uniform"));
  CHECK(rsim::assignors::is_server_assignor("range"));
  CHECK(!rsim::assignors::is_server_assignor("simple"));
}

TEST_CASE("uniform ignores subscribed names missing from the metadata, as Kafka's TopicIds do") {
  ServerAssignorInput input = single_topic_group(3, {"A", "B"}, {});
  input.members[0].subscribed_topics.push_back("ghost");
  input.members[1].subscribed_topics.push_back("ghost");
  const auto a = rsim::assignors::assign_server("uniform", input);
  CHECK(partitions_of(a, "A").size() + partitions_of(a, "B").size() == 3);
}

TEST_CASE("Java order helpers reproduce the hashes and buckets of Kafka's fixed test ids") {
  using namespace rsim::assignors::server_java;
  // The conformance README: topic1..topic4 fall in buckets 10, 1, 9, 5 of a 16-slot table.
  CHECK(bucket_of(topic_id_hash("T1-A4s3VTwiI5CTbEp6POw"), 16) == 10);
  CHECK(bucket_of(topic_id_hash("T2-B4s3VTwiI5YHbPp6YUe"), 16) == 1);
  CHECK(bucket_of(topic_id_hash("T3-CU8fVTLCz5YMkLoDQsa"), 16) == 9);
  CHECK(bucket_of(topic_id_hash("T4-Tw9fVTLCz5HbPp6YQsa"), 16) == 5);
  const auto uuid = parse_uuid("T1-A4s3VTwiI5CTbEp6POw");
  REQUIRE(uuid.has_value());
  CHECK(static_cast<std::uint64_t>(uuid->most) == 0x4f5f80e2cdd54f08ULL);
  CHECK(!parse_uuid("topic1").has_value());
  CHECK(string_hash("") == 0);
  CHECK(string_hash("abc") == 96354);     // "abc".hashCode()
  CHECK(string_hash("\xC3\xA9") == 233);  // "é".hashCode(): one UTF-16 unit
  CHECK(copy_capacity(3) == 16);
  CHECK(copy_capacity(12) == 32);  // (int) (12 / .75f) + 1 = 17 -> 32
  CHECK(growth_capacity(12) == 16);
  CHECK(growth_capacity(13) == 32);
  CHECK(compare_topic_ids("T1-A4s3VTwiI5CTbEp6POw", "T2-B4s3VTwiI5YHbPp6YUe") < 0);
  CHECK(iteration_order({17, 3, 1}, 16) ==
        std::vector<std::size_t>{0, 2, 1});  // 17 and 1 share bucket 1
}

// Kafka test methods whose vectors the shared folder does not list, transcribed from the
// behaviour of Kafka 4.5's tests into the shared vector format (fixed ids as in the tests).
TEST_CASE("uniform homogeneous: member removed, partitions added") {
  require_vectors_pass(R"({"kind": "server-assignor", "cases": [
    {"id": "memberRemovedThreeMembersTwoTopics", "assignor": "uniform",
     "subscription_type": "HOMOGENEOUS", "topics": {"topic1": 3, "topic2": 3},
     "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe"},
     "member_iteration_order": "sorted",
     "members": [
       {"id": "A", "subscriptions": ["topic1", "topic2"], "assigned": [["topic1", 0], ["topic2", 0]], "assigned_ordered": false},
       {"id": "B", "subscriptions": ["topic1", "topic2"], "assigned": [["topic1", 1], ["topic2", 1]], "assigned_ordered": false}],
     "expected": {"A": {"topic1": [0], "topic2": [0, 2]}, "B": {"topic1": [1, 2], "topic2": [1]}},
     "checks": [{"check": "valid"}, {"check": "fully_balanced"}]},
    {"id": "partitionsAddedTwoMembersTwoTopics", "assignor": "uniform",
     "subscription_type": "HOMOGENEOUS", "topics": {"topic1": 6, "topic2": 5},
     "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe"},
     "member_iteration_order": "sorted",
     "members": [
       {"id": "A", "subscriptions": ["topic1", "topic2"], "assigned": [["topic1", 0], ["topic1", 2], ["topic2", 0]], "assigned_ordered": true},
       {"id": "B", "subscriptions": ["topic1", "topic2"], "assigned": [["topic1", 1], ["topic2", 1], ["topic2", 2]], "assigned_ordered": true}],
     "expected": {"A": {"topic1": [0, 2], "topic2": [0, 3, 4]}, "B": {"topic1": [1, 3, 4, 5], "topic2": [1, 2]}},
     "checks": [{"check": "valid"}, {"check": "fully_balanced"}]}]})");
}

TEST_CASE("uniform heterogeneous: more members than partitions, growth, partitions running out") {
  require_vectors_pass(R"({"kind": "server-assignor", "cases": [
    {"id": "numMembersGreaterThanTotalNumPartitions", "assignor": "uniform",
     "subscription_type": "HETEROGENEOUS", "topics": {"topic1": 2, "topic3": 1},
     "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic3": "T3-CU8fVTLCz5YMkLoDQsa"},
     "member_iteration_order": "sorted",
     "members": [{"id": "A", "subscriptions": ["topic3"]}, {"id": "B", "subscriptions": ["topic3"]},
                 {"id": "C", "subscriptions": ["topic1"]}],
     "expected": {"A": {"topic3": [0]}, "B": {}, "C": {"topic1": [0, 1]}}},
    {"id": "memberAddedAndPartitionsAdded", "assignor": "uniform",
     "subscription_type": "HETEROGENEOUS", "topics": {"topic1": 6, "topic2": 7},
     "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe"},
     "member_iteration_order": "sorted",
     "members": [
       {"id": "A", "subscriptions": ["topic1"], "assigned": [["topic1", 0], ["topic1", 2], ["topic2", 0]]},
       {"id": "B", "subscriptions": ["topic1", "topic2"], "assigned": [["topic1", 1], ["topic2", 1], ["topic2", 2]]},
       {"id": "C", "subscriptions": ["topic1", "topic2"]}],
     "expected": {"A": {"topic1": [0, 2, 3, 4, 5]}, "B": {"topic1": [1], "topic2": [1, 2, 6]},
                  "C": {"topic2": [0, 3, 4, 5]}}},
    {"id": "partitionsRunOutAndMembersHaveNoPartitions", "assignor": "uniform",
     "subscription_type": "HETEROGENEOUS", "topics": {"topic1": 2, "topic2": 2, "topic3": 2},
     "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
                   "topic3": "T3-CU8fVTLCz5YMkLoDQsa"},
     "member_iteration_order": "sorted",
     "members": [
       {"id": "A", "subscriptions": ["topic1", "topic2", "topic3"],
        "assigned": [["topic1", 0], ["topic1", 1], ["topic2", 0], ["topic2", 1], ["topic3", 0], ["topic3", 1]]},
       {"id": "B", "subscriptions": ["topic1", "topic2", "topic3"]}],
     "expected": {"A": {"topic2": [0], "topic3": [0, 1]}, "B": {"topic1": [0, 1], "topic2": [1]}}}]})");
}

TEST_CASE("range: more members than partitions, mixed static members, subscriptions removed") {
  require_vectors_pass(R"({"kind": "server-assignor", "cases": [
    {"id": "numMembersGreaterThanNumPartitions", "assignor": "server-range", "topic_ids": "random",
     "subscription_type": "HOMOGENEOUS", "topics": {"topic1": 3, "topic3": 2},
     "member_iteration_order": "sorted",
     "members": [{"id": "A", "subscriptions": ["topic1", "topic3"]},
                 {"id": "B", "subscriptions": ["topic1", "topic3"]},
                 {"id": "C", "subscriptions": ["topic1", "topic3"]}],
     "expected": {"A": {"topic1": [0], "topic3": [0]}, "B": {"topic1": [1], "topic3": [1]},
                  "C": {"topic1": [2]}}},
    {"id": "mixedStaticMembership", "assignor": "server-range", "topic_ids": "random", "steps": [
      {"subscription_type": "HOMOGENEOUS", "topics": {"topic1": 5}, "member_iteration_order": "sorted",
       "members": [{"id": "A", "instance_id": "instanceA", "subscriptions": ["topic1"]},
                   {"id": "C", "instance_id": "instanceC", "subscriptions": ["topic1"]},
                   {"id": "B", "subscriptions": ["topic1"]}],
       "expected": {"A": {"topic1": [0, 1]}, "C": {"topic1": [2, 3]}, "B": {"topic1": [4]}}},
      {"subscription_type": "HOMOGENEOUS", "topics": {"topic1": 5}, "member_iteration_order": "sorted",
       "members": [{"id": "C", "instance_id": "instanceC", "subscriptions": ["topic1"]},
                   {"id": "B", "subscriptions": ["topic1"]},
                   {"id": "memberA1", "instance_id": "instanceA", "subscriptions": ["topic1"]}],
       "checks": [{"check": "same_as_step", "step": 0, "member": "memberA1", "of_member": "A"},
                  {"check": "same_as_step", "step": 0, "member": "B", "of_member": "B"},
                  {"check": "same_as_step", "step": 0, "member": "C", "of_member": "C"}]}]},
    {"id": "multipleSubscriptionsRemoved", "assignor": "server-range", "topic_ids": "random",
     "subscription_type": "HETEROGENEOUS", "topics": {"topic1": 3, "topic2": 3, "topic3": 2},
     "member_iteration_order": "sorted",
     "members": [
       {"id": "A", "subscriptions": ["topic1"], "assigned": [["topic1", 0], ["topic1", 1], ["topic1", 2], ["topic2", 0]]},
       {"id": "B", "subscriptions": ["topic1", "topic2", "topic3"], "assigned": [["topic2", 1]]},
       {"id": "C", "subscriptions": ["topic2"], "assigned": [["topic2", 2], ["topic3", 0], ["topic3", 1]]}],
     "expected": {"A": {"topic1": [0, 1]}, "B": {"topic1": [2], "topic2": [0, 1], "topic3": [0, 1]},
                  "C": {"topic2": [2]}}}]})");
}

TEST_CASE(
    "Java order: the timeline hash table of a consumer group's members (BaseHashTable): slots by "
    "Fibonacci hashing, each slot last-put first, growth checked before a replacement too") {
  using rsim::assignors::server_java::string_hash;
  using rsim::assignors::server_java::timeline_slot;
  using rsim::assignors::server_java::TimelineTable;
  // Run 1 of scale-out-10 (consumer, recorded 2026-12-07 16:43 UTC): c5 and c6's ids share a slot
  // at 2, 4 and 8 slots (the top bits of String.hashCode × -7046029254386353131) and HashMap
  // bucket 11 of 16; c7's is slot 1, 3 and 6.
  const std::string c5 = "ga7F8ggZRiSEFoIuUB0PHg", c6 = "09ztvucgSAGkTolYSghr_w",
                    c7 = "xvlv80S_QvuyRPq5DVF_OQ";
  CHECK(string_hash(c5) == -147960587);
  CHECK(timeline_slot(string_hash(c5), 2) == 0);
  CHECK(timeline_slot(string_hash(c6), 2) == 0);
  CHECK(timeline_slot(string_hash(c5), 8) == 1);
  CHECK(timeline_slot(string_hash(c6), 8) == 1);
  CHECK(timeline_slot(string_hash(c7), 8) == 6);
  TimelineTable t;
  t.put(c5);
  t.put(c6);
  // The iterator takes a slot's keys from the last put: c6 before c5, as Kafka's target records
  // of epoch 8 came (c6 before c5 in the recording, the HashMap's bucket 11 filled in this order;
  // at epoch 7, when c6 joined, the new member came after the table's and c5 was first).
  CHECK(t.order(t.capacity(), t.puts()) == std::vector<std::string>{c6, c5});
  CHECK(t.capacity() == 2);
  t.put(c7);  // (2 + 1) × 0.75 > 2: 4 slots
  CHECK(t.capacity() == 4);
  CHECK(t.order(t.capacity(), t.puts()) == std::vector<std::string>{c6, c5, c7});
  t.put(c6);  // a replacement keeps its place: (3 + 1) × 0.75 is not above 4
  CHECK(t.capacity() == 4);
  CHECK(t.order(t.capacity(), t.puts()) == std::vector<std::string>{c6, c5, c7});
  // The table as it was before c7 (2 slots, 2 keys), and what was added since.
  CHECK(t.order(2, 2) == std::vector<std::string>{c6, c5});
  CHECK(t.added_since(2) == std::vector<std::string>{c7});
  t.put("k4");
  t.put("k5");  // 5 keys in 4 slots: (4 + 1) × 0.75 = 3.75 is not above 4
  CHECK(t.capacity() == 4);
  t.put(c5);  // a replacement: (5 + 1) × 0.75 = 4.5 > 4 doubles the table first
  CHECK(t.capacity() == 8);
  CHECK(t.puts() == 5);
  t.remove(c6);
  const auto now = t.order(t.capacity(), t.puts());
  CHECK(std::find(now.begin(), now.end(), c6) == now.end());
  CHECK(now.size() == 4);
}

TEST_CASE(
    "uniform, java_set_order: each target as Kafka's HashSet iterates it, and a member over its "
    "quota keeps the first partitions of that order (scale-out-10, run 1, epochs 3 to 6)") {
  // UniformHomogeneousAssignmentBuilder: a member over its quota keeps the first partitions it
  // walks in its target's HashSet<Integer> (built from the target record's list), releasing the
  // rest into the unassigned list behind the never-assigned ones, member by member; a member with
  // room gets them in that order through computeIfAbsent(topic, new HashSet<>()).add. The record
  // lists each set in its iteration order: bucket (the value mod the table size) ascending, a
  // bucket in insertion order. The member order is the records' (a HashMap of member ids).
  // Recorded 2026-12-07 16:43 UTC, target records at offsets 187-188, 316-318, 324-327, 333-337.
  auto in = single_topic_group(60, {"c2", "c1"}, {{"c1", {{"tid", P(60)}}}});
  std::iota(in.members[1].target["tid"].begin(), in.members[1].target["tid"].end(), 0);
  in.java_set_order = true;
  ServerAssignment a = rsim::assignors::assign_server("uniform", in);
  const auto range = [](std::int32_t from, std::int32_t to) {
    P out;
    for (std::int32_t p = from; p <= to; ++p) out.push_back(p);
    return out;
  };
  // c1 walks 0..59 (128 buckets) and keeps 0..29; c2 gets 30..59 in a table grown to 64.
  CHECK(partitions_of(a, "c1") == range(0, 29));
  CHECK(partitions_of(a, "c2") == range(30, 59));
  // Epoch 4: c3 joins first in order. c2 walks 30..59 (copy of 30: 64 buckets), keeps 30..49;
  // c1 keeps 0..19. c3's set receives 50..59 then 20..29 and grows to 32 buckets, where 52 and 20
  // share bucket 20 (52 first), 53 and 21 bucket 21, ...
  in = single_topic_group(60, {"c3", "c2", "c1"}, a);
  in.java_set_order = true;
  a = rsim::assignors::assign_server("uniform", in);
  CHECK(partitions_of(a, "c3") ==
        P{50, 51, 52, 20, 53, 21, 54, 22, 55, 23, 56, 24, 57, 25, 58, 26, 59, 27, 28, 29});
  CHECK(partitions_of(a, "c2") == range(30, 49));
  CHECK(partitions_of(a, "c1") == range(0, 19));
  // Epoch 5: c3 (20 in 32 buckets, walked in the record's order) keeps its first 15,
  // t-20..25 and t-50..58, and releases 26, 59, 27, 28, 29; c2's 30..49 in 32 buckets walk
  // 32..49 then 30, 31: it keeps 32..46 and releases 47, 48, 49, 30, 31; c1 releases 15..19.
  // c4 receives them in that order (a table of 32: 47 before 15 in bucket 15, ...).
  in = single_topic_group(60, {"c3", "c4", "c2", "c1"}, a);
  in.java_set_order = true;
  a = rsim::assignors::assign_server("uniform", in);
  CHECK(partitions_of(a, "c3") == P{50, 51, 52, 20, 53, 21, 54, 22, 55, 23, 56, 24, 57, 25, 58});
  CHECK(partitions_of(a, "c4") == P{47, 15, 48, 16, 49, 17, 18, 19, 26, 59, 27, 28, 29, 30, 31});
  CHECK(partitions_of(a, "c2") == range(32, 46));
  CHECK(partitions_of(a, "c1") == range(0, 14));
  // Epoch 6: c5 receives 57, 25, 58 (c3's), 29, 30, 31 (c4's), 44, 45, 46 (c2's), 12, 13, 14
  // (c1's) in a table of 16, never grown (12 is not above 12).
  in = single_topic_group(60, {"c3", "c4", "c2", "c5", "c1"}, a);
  in.java_set_order = true;
  a = rsim::assignors::assign_server("uniform", in);
  CHECK(partitions_of(a, "c5") == P{57, 25, 58, 44, 12, 29, 45, 13, 30, 46, 14, 31});
  CHECK(partitions_of(a, "c3") == P{50, 51, 52, 20, 53, 21, 54, 22, 55, 23, 56, 24});
  CHECK(partitions_of(a, "c4") == P{47, 15, 48, 16, 49, 17, 18, 19, 26, 59, 27, 28});
  // The same group with sorted targets (the order of the simulator before): c3 walks 20 before
  // 52 and keeps t-20..26, t-50..57, which no run of Kafka wrote.
  in = single_topic_group(60, {"c3", "c4", "c2", "c1"},
                          {{"c1", {{"tid", range(0, 19)}}},
                           {"c2", {{"tid", range(30, 49)}}},
                           {"c3", {{"tid", P{20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                             50, 51, 52, 53, 54, 55, 56, 57, 58, 59}}}}});
  a = rsim::assignors::assign_server("uniform", in);
  CHECK(partitions_of(a, "c3") == P{20, 21, 22, 23, 24, 25, 26, 50, 51, 52, 53, 54, 55, 56, 57});
}
