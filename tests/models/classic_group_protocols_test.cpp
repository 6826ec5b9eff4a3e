// ClassicGroup's protocol counts (Kafka's supportedProtocols): the protocols every member
// supports, kept as members come, go and change theirs, equal the intersection of the members'
// lists at every step.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/coordinator/classic_group.hpp"
#include "sim/rng.hpp"

namespace {

std::vector<rsim::JoinGroupProtocol> random_protocols(sim::Rng& rng) {
  static const std::vector<std::string> kNames = {"range", "roundrobin", "sticky",
                                                  "cooperative-sticky"};
  std::vector<rsim::JoinGroupProtocol> out;
  const auto n = rng.uniform(1, 4);
  for (std::int64_t i = 0; i < n; ++i) {
    rsim::JoinGroupProtocol p;
    p.name = kNames[static_cast<std::size_t>(rng.uniform(0, 3))];  // a name may come twice
    out.push_back(p);
  }
  return out;
}

std::set<std::string> intersection(const rsim::ClassicGroup& g) {
  std::set<std::string> out;
  bool first = true;
  for (const auto& [id, m] : g.members) {
    std::set<std::string> mine;
    for (const auto& p : m.protocols) mine.insert(p.name);
    if (first) {
      out = mine;
      first = false;
      continue;
    }
    std::set<std::string> both;
    std::set_intersection(out.begin(), out.end(), mine.begin(), mine.end(),
                          std::inserter(both, both.end()));
    out = both;
  }
  return out;
}

}  // namespace

TEST_CASE("classic group: candidate protocols follow every add, change, take and removal") {
  sim::Rng rng(7, "classic-protocols");
  rsim::ClassicGroup g;
  int next_id = 0;
  for (int step = 0; step < 3000; ++step) {
    CAPTURE(step);
    const auto op = rng.uniform(0, 3);
    if (op == 0 || g.members.empty()) {
      rsim::ClassicGroupMember m;
      m.member_id = "m-" + std::to_string(next_id++);
      m.protocols = random_protocols(rng);
      g.add_member(std::move(m));
    } else {
      auto it = g.members.begin();
      std::advance(it, rng.uniform(0, static_cast<std::int64_t>(g.members.size()) - 1));
      if (op == 1) {
        g.set_protocols(it->second, random_protocols(rng));
      } else if (op == 2) {
        g.remove_member(it);
      } else {
        // A static member's new id: out under the old one, back under the new one.
        rsim::ClassicGroupMember m = g.take_member(it->first);
        m.member_id = "m-" + std::to_string(next_id++);
        g.add_member(std::move(m));
      }
    }
    REQUIRE(g.candidate_protocols() == intersection(g));
  }
  // Emptied, the group supports nothing and keeps no count.
  while (!g.members.empty()) g.remove_member(g.members.begin());
  CHECK(g.candidate_protocols().empty());
  CHECK(g.supported_protocols.empty());
}

TEST_CASE(
    "classic group: the member index finds every member by id through adds, takes and removals") {
  sim::Rng rng(11, "classic-member-index");
  rsim::ClassicGroup g;
  int next_id = 0;
  std::vector<std::string> gone;  // ids taken or removed, never to be found again
  for (int step = 0; step < 3000; ++step) {
    CAPTURE(step);
    const auto op = rng.uniform(0, 2);
    if (op == 0 || g.members.empty()) {
      rsim::ClassicGroupMember m;
      m.member_id = "consumer-g-" + std::to_string(next_id++) + "-0123456789abcdef";
      g.add_member(std::move(m));
    } else {
      auto it = g.members.begin();
      std::advance(it, rng.uniform(0, static_cast<std::int64_t>(g.members.size()) - 1));
      gone.push_back(it->first);
      if (op == 1) {
        g.remove_member(it);
      } else {
        rsim::ClassicGroupMember m = g.take_member(it->first);
        m.member_id = "consumer-g-" + std::to_string(next_id++) + "-0123456789abcdef";
        g.add_member(std::move(m));
      }
    }
    REQUIRE(g.member_index.size() == g.members.size());
    for (auto& [id, m] : g.members) REQUIRE(g.find_member(id) == &m);
  }
  for (const auto& id : gone) CHECK(g.find_member(id) == nullptr);

  // By hand: a, b and c join; b comes back as d (a static member's new id); a leaves.
  rsim::ClassicGroup h;
  for (const char* id : {"a", "b", "c"}) {
    rsim::ClassicGroupMember m;
    m.member_id = id;
    h.add_member(std::move(m));
  }
  rsim::ClassicGroupMember b = h.take_member("b");
  b.member_id = "d";
  h.add_member(std::move(b));
  h.remove_member(h.members.find("a"));
  CHECK(h.member_index.size() == 2);
  CHECK(h.find_member("a") == nullptr);
  CHECK(h.find_member("b") == nullptr);
  CHECK(h.find_member("c") == &h.members.at("c"));
  CHECK(&h.member("d") == &h.members.at("d"));
}
