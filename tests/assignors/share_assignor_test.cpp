// The share-group `simple` assignor (Kafka's SimpleAssignor): every share-assignor vector in
// shared/conformance/ passes with none skipped, and the reference tables of
// kafka-share-groups.md §4.2, produced by running Kafka's classes with a topic id whose hash is
// 0 (so partitions iterate in ascending order), come out placement for placement.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/assignors/share_assignor.hpp"
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
  const std::filesystem::path shared(RSIM_SHARED_DIR);
  run_file(shared / "conformance" / "kafka" / "coordinator.SimpleAssignorTest.json", 10);
  run_file(shared / "conformance" / "articles" / "share.SimpleAssignor.membership-table.json", 1);
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
  CHECK(t.assign() == std::map<std::string, P>{{"A", {4, 5}}, {"B", {2}}, {"C", {0, 3}}, {"D", {1}}});
  t.join("E");
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {4, 5}}, {"B", {2}}, {"C", {3}}, {"D", {1}}, {"E", {0}}});
  t.leave("B");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {4, 5}}, {"C", {3}}, {"D", {1, 2}}, {"E", {0}}});
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
  CHECK(t.assign() == std::map<std::string, P>{{"A", {0, 2}}, {"B", {0}}, {"C", {1, 2}}, {"D", {1}}});
  t.join("E");  // desired counts [2, 1, 1, 1, 1]
  CHECK(t.assign() ==
        std::map<std::string, P>{{"A", {0, 2}}, {"B", {0}}, {"C", {2}}, {"D", {1}}, {"E", {1}}});
  t.leave("B");
  CHECK(t.assign() == std::map<std::string, P>{{"A", {0, 2}}, {"C", {2}}, {"D", {0, 1}}, {"E", {1}}});
  t.leave("A");
  CHECK(t.assign() == std::map<std::string, P>{{"C", {2}}, {"D", {0}}, {"E", {1}}});
}

TEST_CASE("simple assignor: only initialized partitions are assigned") {
  ServerAssignorInput in;
  in.topics.push_back({kZeroHashTopic, "t", 6});
  in.members.push_back({.member_id = "A", .subscribed_topics = {"t"}});
  const AssignablePartitions initialized = std::map<std::string, std::vector<std::int32_t>>{
      {kZeroHashTopic, {0, 1, 2}}};
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
