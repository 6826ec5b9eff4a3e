// Property tests standing in for the conformance cases that carry a `generator` (Kafka's
// randomized and large tests): on seeded random groups, every client assignor hands out each
// subscribed partition exactly once, only to subscribers, balanced, and the sticky ones keep the
// remaining members' partitions when a member leaves.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/assignors/client_assignor.hpp"
#include "sim/rng.hpp"
#include "tools/conformance/client_conformance.hpp"

using nlohmann::json;
using rsim::TopicPartition;
using rsim::assignors::ClientAssignment;
using rsim::assignors::ClientAssignorInput;
using rsim::assignors::ClientMember;

namespace {

constexpr std::uint64_t kSeed = 20260822;
const std::vector<std::string> kAssignors = {"range", "roundrobin", "sticky", "cooperative-sticky"};

std::string name(const char* prefix, std::int64_t i, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%0*lld", prefix, width, static_cast<long long>(i));
  return buf;
}

// A random cluster: topic name -> partition count.
json random_topics(sim::Rng& rng, std::int64_t topics, std::int64_t max_partitions) {
  json out = json::object();
  for (std::int64_t t = 0; t < topics; ++t) out[name("t", t, 2)] = rng.uniform(1, max_partitions);
  return out;
}

std::vector<std::string> topic_names(const json& topics) {
  std::vector<std::string> out;
  for (const auto& [t, _] : topics.items()) out.push_back(t);
  return out;
}

// A random non-empty subset of `all`, in name order.
std::vector<std::string> random_subscription(sim::Rng& rng, const std::vector<std::string>& all) {
  std::vector<std::string> out;
  for (const auto& t : all) {
    if (rng.uniform(0, 2) > 0) out.push_back(t);
  }
  if (out.empty())
    out.push_back(
        all[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(all.size()) - 1))]);
  return out;
}

// Runs one generated case through the shared conformance checker.
void expect_case_passes(const json& c) {
  const json doc = {{"kind", "client-assignor"}, {"cases", json::array({c})}};
  const auto results = rsim::assignors::run_client_assignor_vectors(doc);
  REQUIRE(results.size() == 1);
  INFO(results[0].id << ": " << results[0].detail);
  CHECK(results[0].passed);
}

json check(const std::string& kind) {
  return {{"check", kind}};
}

// Step 0: every member subscribes to `subs[i]`, owning nothing. Step 1: member `leaver` is gone
// and the others report their step-0 result as owned at generation 1, with `subs_after[i]`.
json leave_case(const std::string& id, const std::string& assignor, const json& topics,
                const std::vector<std::vector<std::string>>& subs,
                const std::vector<std::vector<std::string>>& subs_after, std::size_t leaver,
                bool equal_subscriptions) {
  const bool cooperative = assignor == "cooperative-sticky";
  const bool sticky = assignor == "sticky" || cooperative;
  json step0 = {{"assignor", assignor},
                {"topics", topics},
                {"members", json::array()},
                {"followups", cooperative}};
  json step1 = step0;
  step1["members"] = json::array();
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const std::string id_i = name("c", static_cast<std::int64_t>(i), 3);
    step0["members"].push_back({{"id", id_i}, {"subscriptions", subs[i]}});
    if (i == leaver) continue;
    step1["members"].push_back({{"id", id_i},
                                {"subscriptions", subs_after[i]},
                                {"owned", {{"from_step", 0}}},
                                {"generation", 1}});
  }
  for (json* step : {&step0, &step1}) {
    (*step)["checks"] = json::array({check("valid")});
    // Roundrobin balances only equal subscriptions; range balances topic by topic.
    if (sticky || (assignor == "roundrobin" && equal_subscriptions)) {
      (*step)["checks"].push_back(check("valid_and_balanced"));
    }
    if (assignor != "range" && equal_subscriptions)
      (*step)["checks"].push_back(check("fully_balanced"));
  }
  if (sticky) {
    step1["checks"].push_back(check("sticky_no_movement_cycles"));
    if (equal_subscriptions) {
      // With one member fewer every quota grows, so nobody has to give anything up.
      for (const auto& m : step1["members"]) {
        step1["checks"].push_back(
            {{"check", "contains_step_assignment"}, {"member", m["id"]}, {"step", 0}});
      }
    }
  }
  return {{"id", id}, {"assignor", assignor}, {"steps", json::array({step0, step1})}};
}

ClientAssignorInput to_input(const json& topics,
                             const std::vector<std::vector<std::string>>& subs) {
  ClientAssignorInput in;
  for (const auto& [t, n] : topics.items()) in.partitions_per_topic[t] = n.get<std::int32_t>();
  for (std::size_t i = 0; i < subs.size(); ++i) {
    ClientMember m;
    m.member_id = name("c", static_cast<std::int64_t>(i), 3);
    m.topics = subs[i];
    in.members.push_back(m);
  }
  return in;
}

// Every subscribed partition assigned exactly once (range and roundrobin never withhold).
void expect_complete(const ClientAssignorInput& in, const ClientAssignment& out) {
  std::set<std::string> subscribed;
  for (const auto& m : in.members) subscribed.insert(m.topics.begin(), m.topics.end());
  std::size_t expected = 0;
  for (const auto& t : subscribed)
    expected += static_cast<std::size_t>(in.partitions_per_topic.at(t));
  std::set<TopicPartition> seen;
  std::size_t total = 0;
  for (const auto& [_, tps] : out) {
    total += tps.size();
    seen.insert(tps.begin(), tps.end());
  }
  CHECK(total == expected);
  CHECK(seen.size() == expected);
}

}  // namespace

TEST_CASE(
    "client property: equal subscriptions are valid, balanced, and sticky when a member leaves") {
  sim::Rng rng(kSeed, "client-assignor-equal");
  for (int round = 0; round < 12; ++round) {
    const json topics = random_topics(rng, rng.uniform(3, 15), 40);
    const auto members = static_cast<std::size_t>(rng.uniform(5, 150));
    const std::vector<std::vector<std::string>> subs(members, topic_names(topics));
    const auto leaver =
        static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(members) - 1));
    for (const auto& assignor : kAssignors) {
      CAPTURE(round);
      CAPTURE(assignor);
      expect_case_passes(leave_case("equal#" + std::to_string(round) + "/" + assignor, assignor,
                                    topics, subs, subs, leaver, true));
    }
    const auto in = to_input(topics, subs);
    for (const std::string assignor : {"range", "roundrobin", "sticky"}) {
      expect_complete(in, rsim::assignors::assign_client(assignor, in));
    }
    // Range balances each topic on its own: counts per topic differ by at most one.
    const auto range = rsim::assignors::assign_client("range", in);
    for (const auto& topic : topic_names(topics)) {
      std::size_t lo = SIZE_MAX;
      std::size_t hi = 0;
      for (const auto& [_, tps] : range) {
        const auto n = static_cast<std::size_t>(std::count_if(
            tps.begin(), tps.end(), [&](const auto& tp) { return tp.topic == topic; }));
        lo = std::min(lo, n);
        hi = std::max(hi, n);
      }
      CHECK(hi <= lo + 1);
    }
  }
}

TEST_CASE(
    "client property: random subscriptions stay valid and balanced across a change of members") {
  // Kafka's testReassignmentWithRandomSubscriptionsAndChanges, smaller and seeded.
  sim::Rng rng(kSeed, "client-assignor-random");
  for (int round = 0; round < 20; ++round) {
    const json topics = random_topics(rng, rng.uniform(4, 20), 20);
    const auto all = topic_names(topics);
    const auto members = static_cast<std::size_t>(rng.uniform(6, 60));
    std::vector<std::vector<std::string>> subs;
    std::vector<std::vector<std::string>> subs_after;
    for (std::size_t i = 0; i < members; ++i) {
      subs.push_back(random_subscription(rng, all));
      subs_after.push_back(rng.uniform(0, 3) == 0 ? random_subscription(rng, all) : subs.back());
    }
    const auto leaver =
        static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(members) - 1));
    for (const auto& assignor : kAssignors) {
      CAPTURE(round);
      CAPTURE(assignor);
      expect_case_passes(leave_case("random#" + std::to_string(round) + "/" + assignor, assignor,
                                    topics, subs, subs_after, leaver, false));
    }
    const auto in = to_input(topics, subs);
    for (const std::string assignor : {"range", "roundrobin", "sticky"}) {
      expect_complete(in, rsim::assignors::assign_client(assignor, in));
    }
  }
}

TEST_CASE(
    "client property: a large equal group (Kafka's uniform-subscription performance test, "
    "scaled)") {
  // 200 topics x 100 partitions over 500 members, then 499 of them with their partitions owned.
  json topics = json::object();
  for (int t = 0; t < 200; ++t) topics[name("t", t, 3)] = 100;
  const std::vector<std::vector<std::string>> subs(500, topic_names(topics));
  for (const std::string assignor : {"sticky", "cooperative-sticky"}) {
    CAPTURE(assignor);
    expect_case_passes(leave_case("large/" + assignor, assignor, topics, subs, subs, 0, true));
  }
}

TEST_CASE("client property: assignors are deterministic") {
  // Same input, same output, down to the order of each member's list.
  sim::Rng rng(kSeed, "client-assignor-determinism");
  const json topics = random_topics(rng, 8, 20);
  std::vector<std::vector<std::string>> subs;
  for (int i = 0; i < 25; ++i) subs.push_back(random_subscription(rng, topic_names(topics)));
  const auto in = to_input(topics, subs);
  for (const auto& assignor : kAssignors) {
    CHECK(rsim::assignors::assign_client(assignor, in) ==
          rsim::assignors::assign_client(assignor, in));
  }
}
