// Proves the range and roundrobin assignors on small hand-written groups: Kafka's javadoc
// examples, static-member ordering, and rack alignment.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "models/assignors/client_assignor.hpp"

using rsim::TopicPartition;
using rsim::TopicPartitions;
using rsim::assignors::assign_client;
using rsim::assignors::ClientAssignorInput;
using rsim::assignors::ClientMember;

namespace {

ClientMember member(std::string id, std::vector<std::string> topics) {
  ClientMember m;
  m.member_id = std::move(id);
  m.topics = std::move(topics);
  return m;
}

TopicPartitions tps(std::initializer_list<std::pair<const char*, int>> list) {
  TopicPartitions out;
  for (const auto& [t, p] : list) out.push_back(TopicPartition{t, p});
  return out;
}

}  // namespace

TEST_CASE("client range: first members take one extra partition per topic") {
  ClientAssignorInput in;
  in.partitions_per_topic = {{"t0", 3}, {"t1", 3}};
  in.members = {member("C1", {"t0", "t1"}), member("C0", {"t0", "t1"})};
  auto out = assign_client("range", in);
  std::sort(out["C0"].begin(), out["C0"].end());
  CHECK(out["C0"] == tps({{"t0", 0}, {"t0", 1}, {"t1", 0}, {"t1", 1}}));
  CHECK(out["C1"].size() == 2);
}

TEST_CASE("client range: static members are ordered by group.instance.id, before dynamic ones") {
  ClientAssignorInput in;
  in.partitions_per_topic = {{"t", 3}};
  in.members = {member("a", {"t"}), member("b", {"t"}), member("c", {"t"})};
  in.members[0].group_instance_id = "i2";
  in.members[1].group_instance_id = "i1";
  const auto out = assign_client("range", in);
  CHECK(out.at("b") == tps({{"t", 0}}));
  CHECK(out.at("a") == tps({{"t", 1}}));
  CHECK(out.at("c") == tps({{"t", 2}}));
}

TEST_CASE("client range: members get partitions on their own rack when replicas are rack-local") {
  ClientAssignorInput in;
  in.partitions_per_topic = {{"t", 2}};
  in.partition_racks = {{"t", {{"b"}, {"a"}}}};
  in.members = {member("m1", {"t"}), member("m2", {"t"})};
  in.members[0].rack.emplace(1, 'a');
  in.members[1].rack.emplace(1, 'b');
  const auto out = assign_client("range", in);
  CHECK(out.at("m1") == tps({{"t", 1}}));
  CHECK(out.at("m2") == tps({{"t", 0}}));
}

TEST_CASE("client roundrobin: partitions are dealt in topic order, skipping unsubscribed members") {
  ClientAssignorInput in;
  in.partitions_per_topic = {{"t0", 1}, {"t1", 2}, {"t2", 3}};
  in.members = {member("C0", {"t0"}), member("C1", {"t0", "t1"}), member("C2", {"t0", "t1", "t2"})};
  const auto out = assign_client("roundrobin", in);
  CHECK(out.at("C0") == tps({{"t0", 0}}));
  CHECK(out.at("C1") == tps({{"t1", 0}}));
  CHECK(out.at("C2") == tps({{"t1", 1}, {"t2", 0}, {"t2", 1}, {"t2", 2}}));
}

TEST_CASE("client assignor names and protocols") {
  CHECK(rsim::assignors::is_client_assignor("range"));
  CHECK_FALSE(rsim::assignors::is_client_assignor("uniform"));
  CHECK(rsim::assignors::supported_protocols("cooperative-sticky").size() == 2);
  CHECK_THROWS_AS(assign_client("nope", ClientAssignorInput{}), std::invalid_argument);
}
