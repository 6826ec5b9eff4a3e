#include "models/assignors/server_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/assignors/server_assignor.hpp"
#include "sim/rng.hpp"

namespace rsim::assignors {
namespace {

struct Scenario {
  const char* assignor;
  SubscriptionType type;
  int members;
  int topics;
  int partitions;    // in total, spread evenly over the topics
  bool incremental;  // members-1 hold the previous result, one member joins
};

/// A Kafka-style topic id: 16 seeded random bytes in url-safe base64 without padding.
std::string topic_id(sim::Rng& rng) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const std::uint64_t halves[2] = {rng.next(), rng.next()};
  std::string out;
  int bit = 0;
  for (int c = 0; c < 22; ++c) {
    int v = 0;
    for (int k = 0; k < 6; ++k, ++bit) {
      const int b = bit < 128 ? static_cast<int>((halves[bit / 64] >> (63 - bit % 64)) & 1U) : 0;
      v = (v << 1) | b;
    }
    out.push_back(kAlphabet[v]);
  }
  return out;
}

/// Kafka's benchmark groups: everybody subscribes to every topic, or (heterogeneous) members
/// and topics fall into 5 buckets and each member subscribes to its bucket's topics.
ServerAssignorInput build_input(const Scenario& s) {
  sim::Rng rng(20'240'848, "server-assignor-bench");
  ServerAssignorInput input;
  input.subscription_type = s.type;
  const int per_topic = s.partitions / s.topics;
  std::vector<std::string> names;
  for (int t = 0; t < s.topics; ++t) {
    names.push_back(fmt::format("topic-{}", t));
    input.topics.push_back({topic_id(rng), names.back(), per_topic});
  }
  const int buckets = s.type == SubscriptionType::Homogeneous ? 1 : std::min(5, s.members);
  const int topics_per_bucket = (s.topics + buckets - 1) / buckets;
  const int members_per_bucket = (s.members + buckets - 1) / buckets;
  const int joined = s.incremental ? s.members - 1 : s.members;
  for (int m = 0; m < joined; ++m) {
    const int bucket = m / members_per_bucket;
    ServerMember member;
    member.member_id = fmt::format("member{}", m);
    const int first = bucket * topics_per_bucket;
    const int last = std::min(s.topics, first + topics_per_bucket);
    member.subscribed_topics.assign(names.begin() + first, names.begin() + last);
    input.members.push_back(std::move(member));
  }
  if (s.incremental) {
    const ServerAssignment previous = assign_server(s.assignor, input);
    for (ServerMember& member : input.members) {
      if (const auto it = previous.find(member.member_id); it != previous.end()) member.target = it->second;
    }
    ServerMember newcomer;
    newcomer.member_id = "newMember";
    newcomer.subscribed_topics = input.members.back().subscribed_topics;
    input.members.push_back(std::move(newcomer));
  }
  return input;
}

}  // namespace

std::string run_server_assignor_bench() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kHomo = SubscriptionType::Homogeneous;
  constexpr auto kHetero = SubscriptionType::Heterogeneous;
  const std::vector<Scenario> scenarios = {
      {"uniform", kHomo, 1000, 1000, 50'000, false},   {"uniform", kHomo, 1000, 1000, 50'000, true},
      {"uniform", kHetero, 1000, 1000, 50'000, false}, {"uniform", kHetero, 1000, 1000, 50'000, true},
      {"range", kHomo, 1000, 1000, 50'000, false},     {"range", kHetero, 1000, 1000, 50'000, false},
      {"uniform", kHomo, 10'000, 1000, 50'000, false}, {"uniform", kHomo, 10'000, 1000, 50'000, true},
      {"uniform", kHetero, 10'000, 1000, 50'000, false}, {"uniform", kHetero, 10'000, 1000, 50'000, true},
      {"range", kHomo, 10'000, 1000, 50'000, false},   {"range", kHetero, 10'000, 1000, 50'000, false},
      {"uniform", kHomo, 10'000, 1000, 500'000, false}, {"uniform", kHetero, 10'000, 1000, 500'000, false},
  };
  constexpr int kRuns = 7;
  std::string report = fmt::format(
      "server-side assignors: assign_server() alone, {} runs after one warm-up (Kafka: 15-20 ms "
      "at 1000 members / 1000 topics / 50000 partitions)\n"
      "{:<8} {:<13} {:>7} {:>6} {:>10} {:<12} {:>9} {:>9} {:>9}\n",
      kRuns, "assignor", "subscriptions", "members", "topics", "partitions", "assignment", "min ms",
      "median ms", "spread");
  for (const Scenario& s : scenarios) {
    const ServerAssignorInput input = build_input(s);
    ServerAssignment result = assign_server(s.assignor, input);  // warm-up
    std::vector<double> ms;
    for (int run = 0; run < kRuns; ++run) {
      const auto start = Clock::now();
      result = assign_server(s.assignor, input);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::size_t lo = SIZE_MAX;
    std::size_t hi = 0;
    for (const auto& [member, assignment] : result) {
      std::size_t n = 0;
      for (const auto& [topic, partitions] : assignment) n += partitions.size();
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    report += fmt::format("{:<8} {:<13} {:>7} {:>6} {:>10} {:<12} {:>9.2f} {:>9.2f} {:>4}..{:<4}\n",
                          s.assignor, s.type == kHomo ? "homogeneous" : "heterogeneous", s.members,
                          s.topics, s.partitions, s.incremental ? "incremental" : "full", ms.front(),
                          ms[ms.size() / 2], lo, hi);
  }
  report += "spread: smallest..largest member assignment in the result\n";
  return report;
}

}  // namespace rsim::assignors
