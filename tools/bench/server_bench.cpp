#include "tools/bench/server_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/assignors/server_assignor.hpp"
#include "sim/assert.hpp"
#include "sim/rng.hpp"
#include "tools/bench/bench_child.hpp"

namespace rsim::assignors {
namespace {

using nlohmann::json;

struct Scenario {
  const char* assignor;
  SubscriptionType type;
  int members;
  int topics;
  int partitions;  // in total, spread evenly over the topics
  /// How many members hold a target from a previous assignment of a group of that many (the
  /// first `held` members); the rest join. 0: nobody holds anything; members-1: one joins.
  int held;
  const char* label;
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
/// and topics fall into 5 buckets and each member subscribes to its bucket's topics. Members
/// are dealt to buckets in turn, so any prefix of them covers every bucket.
ServerAssignorInput build_group(const Scenario& s, int members) {
  sim::Rng rng(20'240'848, "server-assignor-bench");
  ServerAssignorInput input;
  input.subscription_type = s.type;
  const int per_topic = s.partitions / s.topics;
  std::vector<std::string> names;
  for (int t = 0; t < s.topics; ++t) {
    names.push_back(fmt::format("topic-{}", t));
    input.topics.push_back({topic_id(rng), names.back(), per_topic});
  }
  const int buckets = s.type == SubscriptionType::Homogeneous ? 1 : 5;
  const int topics_per_bucket = (s.topics + buckets - 1) / buckets;
  for (int m = 0; m < members; ++m) {
    const int bucket = m % buckets;
    ServerMember member;
    member.member_id = fmt::format("member{}", m);
    const int first = bucket * topics_per_bucket;
    const int last = std::min(s.topics, first + topics_per_bucket);
    member.subscribed_topics.assign(names.begin() + first, names.begin() + last);
    input.members.push_back(std::move(member));
  }
  return input;
}

ServerAssignorInput build_input(const Scenario& s) {
  ServerAssignorInput input = build_group(s, s.members);
  if (s.held > 0) {
    const ServerAssignment previous = assign_server(s.assignor, build_group(s, s.held));
    for (ServerMember& member : input.members) {
      if (const auto it = previous.find(member.member_id); it != previous.end())
        member.target = it->second;
    }
  }
  return input;
}

// "" when `out` is a correct result for `in`: every member present; partitions exist, are
// subscribed and owned once; every partition of a subscribed topic assigned; uniform balanced
// as Kafka's tests require (homogeneous: sizes within one; heterogeneous: the holders of a topic
// within one), range splitting each topic evenly over its subscribers; uniform homogeneous
// sticky: a partition only leaves a member for one that held nothing before (a joiner).
std::string check(const Scenario& s, const ServerAssignorInput& in, const ServerAssignment& out) {
  if (out.size() != in.members.size())
    return fmt::format("{} members in the result, {} in the group", out.size(), in.members.size());
  std::map<std::string, int> partitions;
  std::map<std::string, std::size_t> subscribers;
  std::map<std::string, std::string> id_of;
  for (const auto& t : in.topics) {
    partitions[t.id] = t.partitions;
    id_of[t.name] = t.id;
  }
  std::map<std::string, const ServerMember*> members;
  for (const auto& m : in.members) {
    members[m.member_id] = &m;
    for (const auto& name : m.subscribed_topics) ++subscribers[id_of.at(name)];
  }
  std::map<std::string, std::vector<std::string>> owner;  // topic id -> partition -> member
  for (const auto& [id, n] : partitions) owner[id].assign(static_cast<std::size_t>(n), "");
  std::map<std::string, std::pair<std::size_t, std::size_t>> holder_sizes;  // topic -> min, max
  std::size_t lo = SIZE_MAX;
  std::size_t hi = 0;
  for (const auto& [member, assignment] : out) {
    const auto m = members.find(member);
    if (m == members.end()) return "unknown member " + member;
    std::size_t size = 0;
    for (const auto& [id, ps] : assignment) size += ps.size();
    lo = std::min(lo, size);
    hi = std::max(hi, size);
    for (const auto& [id, ps] : assignment) {
      if (partitions.count(id) == 0) return "unknown topic " + id;
      const auto& subs = m->second->subscribed_topics;
      const bool subscribed =
          std::any_of(subs.begin(), subs.end(),
                      [&, &topic = id](const std::string& n) { return id_of.at(n) == topic; });
      if (!subscribed && !ps.empty())
        return member + " got partitions of a topic it does not subscribe to";
      auto& sizes = holder_sizes.try_emplace(id, SIZE_MAX, 0).first->second;
      sizes = {std::min(sizes.first, size), std::max(sizes.second, size)};
      if (s.assignor == std::string("range")) {
        const std::size_t even = static_cast<std::size_t>(partitions[id]) / subscribers[id];
        if (ps.size() < even || ps.size() > even + 1)
          return fmt::format("{} holds {} of a topic, not {} or {}", member, ps.size(), even,
                             even + 1);
      }
      for (const std::int32_t p : ps) {
        if (p < 0 || p >= partitions[id]) return "a partition that does not exist";
        std::string& o = owner[id][static_cast<std::size_t>(p)];
        if (!o.empty())
          return fmt::format("partition {} of a topic assigned to {} and {}", p, o, member);
        o = member;
      }
    }
  }
  for (const auto& [id, list] : owner) {
    if (subscribers[id] == 0) continue;
    for (std::size_t p = 0; p < list.size(); ++p) {
      if (list[p].empty()) return fmt::format("partition {} of a subscribed topic unassigned", p);
    }
  }
  if (s.assignor == std::string("uniform")) {
    if (s.type == SubscriptionType::Homogeneous && hi > lo + 1)
      return fmt::format("unbalanced: {}..{}", lo, hi);
    for (const auto& [id, sizes] : holder_sizes) {
      if (sizes.second > sizes.first + 1)
        return fmt::format("unbalanced: holders of a topic have {}..{}", sizes.first, sizes.second);
    }
    // The homogeneous builder only takes partitions from members over their quota and gives them
    // to members under it. The heterogeneous one keeps every subscribed partition, then its
    // balance() loop moves partitions between any members of a topic, so no such rule holds.
    for (const auto& m : in.members) {
      if (s.type != SubscriptionType::Homogeneous) break;
      for (const auto& [id, ps] : m.target) {
        for (const std::int32_t p : ps) {
          const std::string& now = owner[id][static_cast<std::size_t>(p)];
          if (now != m.member_id && members.at(now)->target.size() > 0) {
            return fmt::format(
                "not sticky: a partition moved from {} to {}, which already held partitions",
                m.member_id, now);
          }
        }
      }
    }
  }
  return "";
}

// Moved: partitions whose holder before (a member's current target) is not their holder now.
std::size_t moved(const ServerAssignorInput& in, const ServerAssignment& out) {
  std::size_t count = 0;
  for (const auto& m : in.members) {
    const auto it = out.find(m.member_id);
    for (const auto& [id, ps] : m.target) {
      std::vector<std::int32_t> now;
      if (it != out.end()) {
        if (const auto t = it->second.find(id); t != it->second.end()) now = t->second;
      }
      for (const std::int32_t p : ps) count += !std::binary_search(now.begin(), now.end(), p);
    }
  }
  return count;
}

constexpr int kRuns = 7;

std::string measure(const Scenario& s) {
  using Clock = std::chrono::steady_clock;
  const ServerAssignorInput input = build_input(s);
  const long input_kib = bench::self_peak_rss_kib();
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
  return json{{"min", ms.front()},
              {"input_kib", input_kib},
              {"median", ms[ms.size() / 2]},
              {"lo", lo},
              {"hi", hi},
              {"moved", moved(input, result)},
              {"check", check(s, input, result)}}
      .dump();
}

}  // namespace

std::string run_server_assignor_bench() {
  constexpr auto kHomo = SubscriptionType::Homogeneous;
  constexpr auto kHetero = SubscriptionType::Heterogeneous;
  const std::vector<Scenario> scenarios = {
      {"uniform", kHomo, 1000, 1000, 50'000, 0, "full"},
      {"uniform", kHomo, 1000, 1000, 50'000, 999, "one joins"},
      {"uniform", kHetero, 1000, 1000, 50'000, 0, "full"},
      {"uniform", kHetero, 1000, 1000, 50'000, 999, "one joins"},
      {"range", kHomo, 1000, 1000, 50'000, 0, "full"},
      {"range", kHetero, 1000, 1000, 50'000, 0, "full"},
      {"uniform", kHomo, 10'000, 1000, 50'000, 0, "full"},
      {"uniform", kHomo, 10'000, 1000, 50'000, 1000, "1000->10000"},
      {"uniform", kHomo, 10'000, 1000, 50'000, 9999, "one joins"},
      {"uniform", kHetero, 10'000, 1000, 50'000, 0, "full"},
      {"uniform", kHetero, 10'000, 1000, 50'000, 1000, "1000->10000"},
      {"uniform", kHetero, 10'000, 1000, 50'000, 9999, "one joins"},
      {"range", kHomo, 10'000, 1000, 50'000, 0, "full"},
      {"range", kHetero, 10'000, 1000, 50'000, 0, "full"},
      {"uniform", kHomo, 10'000, 1000, 500'000, 0, "full"},
      {"uniform", kHetero, 10'000, 1000, 500'000, 0, "full"},
  };
  std::string report = fmt::format(
      "server-side assignors (consumer protocol): assign_server() alone, {} runs after one "
      "warm-up, steady_clock\n"
      "(Kafka, KIP-1263: 15-20 ms at 1000 members / 1000 topics / 50000 partitions). "
      "heterogeneous: 5 groups of\n"
      "members, each subscribing to its own fifth of the topics. target: 'full' = nobody holds a "
      "target; 'one joins'\n"
      "= all but the last member hold the previous result; '1000->10000' = 1000 members hold the "
      "1000-member result\n"
      "and 9000 join. Memory: each row runs in a child process (fork); 'input MiB' = its ru_maxrss "
      "once the input\n"
      "is built (getrusage), 'peak MiB' = its final ru_maxrss (wait4); an empty child peaks at "
      "{:.1f} MiB.\n"
      "moved: partitions that left a member holding them. check: a correct assignment (each "
      "partition once,\n"
      "subscribed, balanced as Kafka's tests require; homogeneous uniform moves a partition only "
      "to a member that\n"
      "held nothing; heterogeneous uniform may move more, as the balance() loop of Kafka's builder "
      "does).\n"
      "{:<8} {:<13} {:>7} {:>6} {:>10} {:<12} {:>8} {:>9} {:>9} {:>9} {:>10} {:>6}  {}\n",
      kRuns, static_cast<double>(bench::baseline_rss_kib()) / 1024, "assignor", "subscriptions",
      "members", "topics", "partitions", "target", "min ms", "median ms", "input MiB", "peak MiB",
      "per member", "moved", "check");
  std::vector<std::string> invalid;
  for (const Scenario& s : scenarios) {
    const auto child = bench::run_in_child([&] { return measure(s); });
    const std::string head = fmt::format("{:<8} {:<13} {:>7} {:>6} {:>10} {:<12}", s.assignor,
                                         s.type == kHomo ? "homogeneous" : "heterogeneous",
                                         s.members, s.topics, s.partitions, s.label);
    if (child.failed) {
      invalid.push_back(head + " " + child.output);
      report += head + " FAILED: " + child.output + "\n";
      continue;
    }
    const json r = json::parse(child.output);
    const std::string verdict =
        r["check"].get<std::string>().empty() ? "ok" : "INVALID: " + r["check"].get<std::string>();
    if (verdict != "ok") invalid.push_back(head + " " + verdict);
    report += fmt::format(
        "{} {:>8.2f} {:>9.2f} {:>9.1f} {:>9.1f} {:>10} {:>6}  {}\n", head, r["min"].get<double>(),
        r["median"].get<double>(), static_cast<double>(r["input_kib"].get<long>()) / 1024,
        static_cast<double>(child.peak_rss_kib) / 1024,
        fmt::format("{}..{}", r["lo"].get<std::size_t>(), r["hi"].get<std::size_t>()),
        r["moved"].get<std::size_t>(), verdict);
  }
  if (!invalid.empty())
    throw sim::InvariantViolation("an assignor benchmark produced an incorrect assignment:\n" +
                                  report);
  return report;
}

}  // namespace rsim::assignors
