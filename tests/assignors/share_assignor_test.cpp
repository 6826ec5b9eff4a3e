// The share-group `simple` assignor (Kafka's SimpleAssignor): every share-assignor vector in
// tests/conformance/ passes with none skipped, and the reference tables of
// kafka-share-groups.md §4.2, produced by running Kafka's classes with a topic id whose hash is
// 0 (so partitions iterate in ascending order), come out placement for placement.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/assignors/share_assignor.hpp"
#include "tools/conformance/file_defaults.hpp"
#include "tools/conformance/server_conformance.hpp"

using namespace rsim::assignors;

namespace {

/// Kafka's Uuid.ZERO_UUID in base64: hashes to 0, so TopicIdPartition(t, p) hashes to p.
const std::string kZeroHashTopic = "AAAAAAAAAAAAAAAAAAAAAA";

void run_file(const std::filesystem::path& path, std::size_t at_least) {
  std::ifstream in(path);
  REQUIRE(in);
  const auto results = run_share_assignor_vectors(nlohmann::json::parse(in));
  CHECK(results.size() >= at_least);
  for (const auto& r : results) {
    INFO(path.filename().string() << " " << r.id << ": " << r.detail);
    CHECK(r.passed);
    CHECK(r.detail.rfind("skipped:", 0) != 0);
  }
}

/// One membership change after another on one topic of `partitions` partitions: members
/// iterate alphabetically, each starting from its previous target.
class Table {
 public:
  explicit Table(std::int32_t partitions) : partitions_(partitions) {}
  void join(const std::string& m) { members_[m]; }
  void leave(const std::string& m) { members_.erase(m); }
  /// Runs the assignor; returns member -> partitions.
  std::map<std::string, std::vector<std::int32_t>> assign() {
    ServerAssignorInput in;
    in.topics.push_back({kZeroHashTopic, "t", partitions_});
    for (const auto& [id, target] : members_) {
      ServerMember m;
      m.member_id = id;
      m.subscribed_topics = {"t"};
      if (!target.empty()) m.target[kZeroHashTopic] = target;
      in.members.push_back(std::move(m));
    }
    const ServerAssignment out = assign_share_simple(in);
    std::map<std::string, std::vector<std::int32_t>> result;
    for (const auto& [id, assignment] : out) {
      const auto it = assignment.find(kZeroHashTopic);
      members_[id] = it == assignment.end() ? std::vector<std::int32_t>{} : it->second;
      result[id] = members_[id];
    }
    return result;
  }

 private:
  std::int32_t partitions_;
  std::map<std::string, std::vector<std::int32_t>> members_;
};

using P = std::vector<std::int32_t>;

}  // namespace

TEST_CASE("conformance: every SimpleAssignor vector passes, none skipped") {
  const std::filesystem::path vectors(RSIM_CONFORMANCE_DIR);
  run_file(vectors / "kafka" / "coordinator.SimpleAssignorTest.json", 10);
  run_file(vectors / "articles" / "share.SimpleAssignor.membership-table.json", 1);
}

TEST_CASE("simple assignor: the P=6 membership table of kafka-share-groups.md") {
  Table t(6);
  t.join("A");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {0, 1, 2, 3, 4, 5}}});
  t.join("B");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {3, 4, 5}}, {"B", {0, 1, 2}}});
  t.join("C");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {4, 5}}, {"B", {1, 2}}, {"C", {0, 3}}});
  t.join("D");
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {4, 5}}, {"B", {2}}, {"C", {0, 3}}, {"D", {1}}});
  t.join("E");
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {4, 5}}, {"B", {2}}, {"C", {3}}, {"D", {1}}, {"E", {0}}});
  t.leave("B");
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {4, 5}}, {"C", {3}}, {"D", {1, 2}}, {"E", {0}}});
  t.leave("A");
  CHECK(t.assign() == std::map<std::string, P>{{"C", {3, 4}}, {"D", {1, 2}}, {"E", {0, 5}}});
}

TEST_CASE("simple assignor: the P=3 table shares partitions once members outnumber them") {
  Table t(3);
  t.join("A");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {0, 1, 2}}});
  t.join("B");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {1, 2}}, {"B", {0}}});
  t.join("C");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {2}}, {"B", {0}}, {"C", {1}}});
  t.join("D");  // desired sharing 2, desired counts [2, 1, 2, 1]
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {0, 2}}, {"B", {0}}, {"C", {1, 2}}, {"D", {1}}});
  t.join("E");  // desired counts [2, 1, 1, 1, 1]
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {0, 2}}, {"B", {0}}, {"C", {2}}, {"D", {1}}, {"E", {1}}});
  t.leave("B");
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {0, 2}}, {"C", {2}}, {"D", {0, 1}}, {"E", {1}}});
  t.leave("A");
  CHECK(t.assign() == std::map<std::string, P>{{"C", {2}}, {"D", {0}}, {"E", {1}}});
}

TEST_CASE("simple assignor: only initialized partitions are assigned") {
  ServerAssignorInput in;
  in.topics.push_back({kZeroHashTopic, "t", 6});
  in.members.push_back({.member_id = "A", .subscribed_topics = {"t"}});
  const AssignablePartitions initialized =
      std::map<std::string, std::vector<std::int32_t>>{{kZeroHashTopic, {0, 1, 2}}};
  auto out = assign_share_simple(in, initialized);
  CHECK(out.at("A") == MemberAssignment{{kZeroHashTopic, {0, 1, 2}}});
  in.members[0].target = out.at("A");
  in.members.push_back({.member_id = "B", .subscribed_topics = {"t"}});
  out = assign_share_simple(in, initialized);
  CHECK(out.at("A") == MemberAssignment{{kZeroHashTopic, {1, 2}}});
  CHECK(out.at("B") == MemberAssignment{{kZeroHashTopic, {0}}});
  // Nothing initialized yet: the first member of a new group gets nothing on join.
  const AssignablePartitions none = std::map<std::string, std::vector<std::int32_t>>{};
  ServerAssignorInput fresh;
  fresh.topics.push_back({kZeroHashTopic, "t", 6});
  fresh.members.push_back({.member_id = "M", .subscribed_topics = {"t"}});
  CHECK(assign_share_simple(fresh, none).at("M").empty());
}

TEST_CASE("simple: where Kafka 4.4.0's builder throws NoSuchElementException, ours throws too") {
  // t has partitions 0 and 1, only 0 assignable (initialized). A holds 1 from an older target:
  // Kafka counts it towards A's desired count (1; sharing ceil(2/1) = 2), so B is the only
  // unfilled member. Partition 0 (first: the topic id hashes to 0) wants two members; B takes it,
  // is full and leaves the set, and the iterator is restarted over an empty set: next() throws.
  ServerAssignorInput in;
  in.topics.push_back({kZeroHashTopic, "t", 2});
  ServerMember a;
  a.member_id = "A";
  a.subscribed_topics = {"t"};
  a.target[kZeroHashTopic] = {1};
  ServerMember b;
  b.member_id = "B";
  b.subscribed_topics = {"t"};
  in.members = {a, b};
  in.subscription_type = SubscriptionType::Homogeneous;
  const AssignablePartitions only_zero =
      std::map<std::string, std::vector<std::int32_t>>{{kZeroHashTopic, {0}}};
  CHECK_THROWS_AS(assign_share_simple(in, only_zero), ShareAssignorCrash);
  // With both partitions assignable the same group is fine: B gets 0, A keeps 1.
  const ServerAssignment out = assign_share_simple(in);
  CHECK(out.at("A").at(kZeroHashTopic) == std::vector<std::int32_t>{1});
  CHECK(out.at("B").at(kZeroHashTopic) == std::vector<std::int32_t>{0});
}

TEST_CASE("simple: every Kafka 4.4.0 oracle vector agrees, none crashes") {
  // fidelity/assignors/: Kafka's own SimpleAssignor on seeded random groups (no case is one where
  // Kafka threw), 8000 small cases and 2 large ones. ctest runs the same files through the CLI.
  for (const auto& row : std::vector<std::pair<std::string, std::size_t>>{
           {"fidelity/assignors/coordinator.simple.json", 8000},
           {"fidelity/assignors/coordinator.simple.large.json", 2}}) {
    const auto& file = row.first;
    const auto& cases = row.second;
    std::ifstream in(std::filesystem::path(RSIM_SOURCE_DIR) / file);
    REQUIRE(in);
    auto doc = nlohmann::json::parse(in);
    apply_file_defaults(doc);
    const auto results = run_share_assignor_vectors(doc);
    CHECK(results.size() == cases);
    for (const auto& r : results) {
      INFO(file << " " << r.id << ": " << r.detail);
      CHECK(r.passed);
      CHECK(r.detail.find("NoSuchElementException") == std::string::npos);
    }
  }
}

namespace {

/// Kafka 4.4.0's SimpleAssignor output for case 1288 of coordinator.simple.json: six fresh
/// members on t0 (5 partitions) and t1 (1), one partition each, in the order the partition
/// table iterates. t0:2 (hash 0x77fbaf40) and t1:0 (0x31aa9401) share bucket 11 of the
/// 16-bucket table; computeIfAbsent put t1:0 in last, at the head of the bucket, so it comes
/// first. Members take partitions in member order: t0:1, t0:0, t0:4, t0:3, t1:0, t0:2.
ServerAssignorInput colliding_buckets_case() {
  ServerAssignorInput in;
  in.topics.push_back({"2YzlyxmxxWMiAZU1MG7Enw", "t0", 5});
  in.topics.push_back({"KQksdlyvr47tn5lMupt9aw", "t1", 1});
  for (const char* id : {"m13", "m11", "m7", "m6", "m1", "m14"}) {
    in.members.push_back({.member_id = id, .subscribed_topics = {"t0", "t1"}});
  }
  return in;
}

}  // namespace

TEST_CASE("simple: a partition put in by computeIfAbsent goes to the head of its bucket") {
  const ServerAssignment out = assign_share_simple(colliding_buckets_case());
  const std::string t0 = "2YzlyxmxxWMiAZU1MG7Enw";
  const std::string t1 = "KQksdlyvr47tn5lMupt9aw";
  CHECK(out.at("m13") == MemberAssignment{{t0, {1}}});
  CHECK(out.at("m11") == MemberAssignment{{t0, {0}}});
  CHECK(out.at("m7") == MemberAssignment{{t0, {4}}});
  CHECK(out.at("m6") == MemberAssignment{{t0, {3}}});
  CHECK(out.at("m1") == MemberAssignment{{t1, {0}}});   // appended, it would be m14's
  CHECK(out.at("m14") == MemberAssignment{{t0, {2}}});  // and t0:2 m1's
}

TEST_CASE("simple: the homogeneous builder walks topics in the order of the member's name set") {
  // The target partitions are listed topic by topic in the order of the first member's TopicIds
  // view, i.e. of its HashSet of topic names, not of the subscription as sent. The same group
  // with t1 listed first gets the same assignment ("t0" hashes to bucket 12 of 16, "t1" to 13).
  ServerAssignorInput in = colliding_buckets_case();
  const ServerAssignment listed = assign_share_simple(in);
  for (ServerMember& m : in.members) m.subscribed_topics = {"t1", "t0"};
  CHECK(assign_share_simple(in) == listed);
}

TEST_CASE("conformance: a malformed server or share vector is refused with its JSON paths") {
  const auto doc = nlohmann::json::parse(R"({"kind": "share-assignor", "cases": [
    {"id": "1", "topics": {"t": -1, "u": 3}, "topic_ids": {"t": "X", "u": "X"},
     "subscription_type": "SOMETIMES",
     "members": [{"id": "A", "subscriptions": ["t", 5], "assigned": [["t", 0], ["t", -2], "t"]},
                 {"id": "A"}, {"subscriptions": []}],
     "assignable_partitions": {"t": [0, 1.5]},
     "expected": {"A": {"t": [0, "x"]}}},
    {"id": "2", "steps": [{"members": [{"id": "A", "assigned": {"from_step": 0}}]}]},
    "not a case"]})");
  const std::vector<std::string> problems = server_vector_problems(doc);
  const std::vector<std::string> want{
      "/cases/0/subscription_type: must be \"HOMOGENEOUS\" or \"HETEROGENEOUS\", got \"SOMETIMES\"",
      "/cases/0/topics/t: must be a partition count 0..100000, got -1",
      "/cases/0/topic_ids/u: repeats the id of topic \"t\"",
      "/cases/0/assignable_partitions/t/1: must be a partition number 0..99999, got 1.5",
      "/cases/0/members/0/subscriptions/1: must be a topic name",
      "/cases/0/members/0/assigned/1/1: must be a partition number 0..99999, got -2",
      "/cases/0/members/0/assigned/2: must be a [topic name, partition] pair",
      "/cases/0/members/1/id: member \"A\" is listed twice",
      "/cases/0/members/2/id: must be a string (the member id)",
      "/cases/0/expected/A/t/1: must be a partition number 0..99999, got \"x\"",
      "/cases/1/steps/0/members/0/assigned/from_step: the first step has no earlier step to take "
      "it from",
      "/cases/2: must be an object",
  };
  CHECK(problems == want);
  // The files in use are well formed.
  for (const char* f : {"fidelity/assignors/coordinator.simple.json",
                        "fidelity/assignors/coordinator.uniform.json"}) {
    std::ifstream in(std::filesystem::path(RSIM_SOURCE_DIR) / f);
    CHECK(server_vector_problems(nlohmann::json::parse(in)).empty());
  }
}
