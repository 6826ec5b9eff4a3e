// Property tests of `uniform` and `range` on seeded random groups (sim::Rng), standing in for
// the `generator` vectors (inputs drawn from an unseeded source in Kafka's tests): results are
// valid, complete, balanced where Kafka guarantees it, sticky, stable when fed back, and
// deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/assignors/server_assignor.hpp"
#include "sim/rng.hpp"

namespace {

using rsim::assignors::ServerAssignment;
using rsim::assignors::ServerAssignorInput;
using rsim::assignors::ServerMember;
using rsim::assignors::SubscriptionType;

/// A Kafka-style random topic id (22 url-safe base64 characters; the last one carries 2 bits).
std::string random_topic_id(sim::Rng& rng) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string id;
  for (int i = 0; i < 21; ++i) id.push_back(kAlphabet[rng.uniform(0, 63)]);
  id.push_back(kAlphabet[rng.uniform(0, 3) * 16]);
  return id;
}

std::size_t size_of(const rsim::assignors::MemberAssignment& a) {
  std::size_t n = 0;
  for (const auto& [topic, partitions] : a) n += partitions.size();
  return n;
}

/// Every partition held is unique, exists, belongs to a subscribed topic, and lists are sorted.
void check_valid(const ServerAssignorInput& input, const ServerAssignment& result) {
  std::map<std::string, std::pair<std::string, std::int32_t>> topics;  // id -> name, count
  for (const auto& t : input.topics) topics[t.id] = {t.name, t.partitions};
  std::set<std::pair<std::string, std::int32_t>> seen;
  for (const auto& member : input.members) {
    const auto it = result.find(member.member_id);
    if (it == result.end()) continue;
    for (const auto& [id, partitions] : it->second) {
      REQUIRE(topics.count(id) == 1);
      const auto& [name, count] = topics[id];
      CHECK(std::find(member.subscribed_topics.begin(), member.subscribed_topics.end(), name) !=
            member.subscribed_topics.end());
      CHECK(!partitions.empty());
      CHECK(std::is_sorted(partitions.begin(), partitions.end()));
      for (const auto p : partitions) {
        CHECK(p >= 0);
        CHECK(p < count);
        CHECK(seen.emplace(id, p).second);
      }
    }
  }
  CHECK(result.size() <= input.members.size());
}

/// Every partition of a topic somebody subscribes to is held by somebody.
void check_complete(const ServerAssignorInput& input, const ServerAssignment& result) {
  std::set<std::string> subscribed;
  for (const auto& m : input.members)
    subscribed.insert(m.subscribed_topics.begin(), m.subscribed_topics.end());
  std::size_t want = 0;
  for (const auto& t : input.topics) {
    if (subscribed.count(t.name) > 0) want += static_cast<std::size_t>(t.partitions);
  }
  std::size_t got = 0;
  for (const auto& [member, a] : result) got += size_of(a);
  CHECK(got == want);
}

struct GroupShape {
  int topics;
  int members;
  bool homogeneous;
};

/// Topics "topic-i" with random ids and 0..max_partitions partitions; members "member-j" that
/// subscribe to everything (homogeneous) or to one of a few buckets of topics.
ServerAssignorInput random_group(sim::Rng& rng, const GroupShape& shape, int max_partitions) {
  ServerAssignorInput input;
  for (int t = 0; t < shape.topics; ++t) {
    input.topics.push_back({random_topic_id(rng), "topic-" + std::to_string(t),
                            static_cast<std::int32_t>(rng.uniform(0, max_partitions))});
  }
  const int buckets = shape.homogeneous ? 1 : static_cast<int>(rng.uniform(2, 4));
  for (int m = 0; m < shape.members; ++m) {
    ServerMember member;
    member.member_id = "member-" + std::to_string(m);
    const int bucket = static_cast<int>(rng.uniform(0, buckets - 1));
    for (int t = 0; t < shape.topics; ++t) {
      if (shape.homogeneous || t % buckets == bucket)
        member.subscribed_topics.push_back("topic-" + std::to_string(t));
    }
    input.members.push_back(std::move(member));
  }
  input.subscription_type = rsim::assignors::subscription_type_by_names(input.members);
  return input;
}

void feed_back(ServerAssignorInput& input, const ServerAssignment& result) {
  for (auto& m : input.members) {
    const auto it = result.find(m.member_id);
    m.target = it == result.end() ? rsim::assignors::MemberAssignment{} : it->second;
  }
}

}  // namespace

TEST_CASE("uniform: 49 members over 100 topics of 3 partitions are valid and fully balanced") {
  // Kafka's testValidityAndBalanceForLargeSampleSet, with seeded random topic ids.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    sim::Rng rng(seed, "large-sample");
    ServerAssignorInput input;
    for (int t = 1; t <= 100; ++t)
      input.topics.push_back({random_topic_id(rng), "topic-" + std::to_string(t), 3});
    for (int m = 1; m <= 49; ++m) {
      ServerMember member;
      member.member_id = "member" + std::to_string(m);
      for (const auto& t : input.topics) member.subscribed_topics.push_back(t.name);
      input.members.push_back(std::move(member));
    }
    std::sort(
        input.members.begin(), input.members.end(),
        [](const ServerMember& a, const ServerMember& b) { return a.member_id < b.member_id; });
    const auto result = rsim::assignors::assign_server("uniform", input);
    check_valid(input, result);
    check_complete(input, result);
    std::size_t lo = SIZE_MAX;
    std::size_t hi = 0;
    for (const auto& [m, a] : result) {
      lo = std::min(lo, size_of(a));
      hi = std::max(hi, size_of(a));
    }
    CHECK(result.size() == 49);
    CHECK(hi - lo <= 1);
  }
}

TEST_CASE("uniform on random groups: valid, complete, balanced, sticky, stable, deterministic") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    sim::Rng rng(seed, "uniform-property");
    const GroupShape shape{static_cast<int>(rng.uniform(1, 12)),
                           static_cast<int>(rng.uniform(1, 12)), rng.uniform(0, 1) == 0};
    ServerAssignorInput input = random_group(rng, shape, 20);
    const auto first = rsim::assignors::assign_server("uniform", input);
    check_valid(input, first);
    check_complete(input, first);
    CHECK(first == rsim::assignors::assign_server("uniform", input));
    if (input.subscription_type == SubscriptionType::Homogeneous && !first.empty()) {
      std::size_t lo = SIZE_MAX;
      std::size_t hi = 0;
      for (const auto& [m, a] : first) {
        lo = std::min(lo, size_of(a));
        hi = std::max(hi, size_of(a));
      }
      CHECK(hi - lo <= 1);
    }
    // Fed back unchanged, the assignment is returned as it is (Kafka's testAssignmentReuse).
    feed_back(input, first);
    CHECK(rsim::assignors::assign_server("uniform", input) == first);

    // Churn: members leave and join, a topic grows. Members keep what they can.
    ServerAssignorInput next = input;
    if (next.members.size() > 1 && rng.uniform(0, 1) == 0) next.members.erase(next.members.begin());
    const int joins = static_cast<int>(rng.uniform(0, 3));
    for (int j = 0; j < joins; ++j) {
      ServerMember newcomer = input.members.back();
      newcomer.member_id = "joiner-" + std::to_string(j);
      newcomer.target.clear();
      next.members.push_back(std::move(newcomer));
    }
    next.topics[static_cast<std::size_t>(rng.uniform(0, shape.topics - 1))].partitions += 3;
    next.subscription_type = rsim::assignors::subscription_type_by_names(next.members);
    const auto second = rsim::assignors::assign_server("uniform", next);
    check_valid(next, second);
    check_complete(next, second);
    if (next.subscription_type == SubscriptionType::Homogeneous && !second.empty()) {
      std::size_t total = 0;
      for (const auto& [m, a] : second) total += size_of(a);
      const std::size_t floor_quota = total / next.members.size();
      for (const auto& m : next.members) {
        // A member holding no more than the minimum quota keeps all of it.
        if (size_of(m.target) > floor_quota) continue;
        for (const auto& [id, partitions] : m.target) {
          const auto& now = second.at(m.member_id);
          const auto it = now.find(id);
          REQUIRE(it != now.end());
          CHECK(std::includes(it->second.begin(), it->second.end(), partitions.begin(),
                              partitions.end()));
        }
      }
    }
    if (next.subscription_type == SubscriptionType::Heterogeneous) {
      // Bucketed subscriptions: members whose sizes differ by more than one share no topic.
      for (const auto& [a, pa] : second) {
        for (const auto& [b, pb] : second) {
          if (size_of(pa) <= size_of(pb) + 1) continue;
          for (const auto& [topic, partitions] : pa) CHECK(pb.count(topic) == 0);
        }
      }
    }
  }
}

TEST_CASE("range on random groups: valid, complete, contiguous, per-topic balanced") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    sim::Rng rng(seed, "range-property");
    const GroupShape shape{static_cast<int>(rng.uniform(1, 12)),
                           static_cast<int>(rng.uniform(1, 12)), rng.uniform(0, 1) == 0};
    ServerAssignorInput input = random_group(rng, shape, 20);
    for (auto& m : input.members) {
      if (rng.uniform(0, 2) == 0)
        m.instance_id = "instance-" + std::to_string(rng.uniform(0, 1000));
    }
    const auto result = rsim::assignors::assign_server("range", input);
    check_valid(input, result);
    check_complete(input, result);
    CHECK(result.size() == input.members.size());               // range keeps every member
    std::map<std::string, std::vector<std::size_t>> per_topic;  // topic id -> subscribers' counts
    for (const auto& t : input.topics) {
      for (const auto& m : input.members) {
        if (std::find(m.subscribed_topics.begin(), m.subscribed_topics.end(), t.name) ==
            m.subscribed_topics.end())
          continue;
        const auto& a = result.at(m.member_id);
        const auto it = a.find(t.id);
        per_topic[t.id].push_back(it == a.end() ? 0 : it->second.size());
        if (it != a.end())
          CHECK(it->second.back() - it->second.front() + 1 ==
                static_cast<std::int32_t>(it->second.size()));
      }
    }
    for (const auto& [topic, counts] : per_topic) {
      CHECK(*std::max_element(counts.begin(), counts.end()) -
                *std::min_element(counts.begin(), counts.end()) <=
            1);
    }
  }
}
