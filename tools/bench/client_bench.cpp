#include "tools/bench/client_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/assignors/client_assignor.hpp"
#include "sim/assert.hpp"
#include "tools/bench/bench_child.hpp"

namespace rsim::assignors {

namespace {

using nlohmann::json;

std::string padded(const char* prefix, int i, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%0*d", prefix, width, i);
  return buf;
}

ClientAssignorInput fresh_group(const ClientBenchOptions::Size& size, bool unequal) {
  ClientAssignorInput in;
  std::vector<std::string> topics;
  for (int t = 0; t < size.topics; ++t) {
    topics.push_back(padded("t", t, 3));
    in.partitions_per_topic[topics.back()] = size.partitions_per_topic;
  }
  for (int m = 0; m < size.members; ++m) {
    ClientMember member;
    member.member_id = padded("consumer-", m, 5);
    member.topics = topics;
    // Kafka's testLargeAssignmentAndGroupWithNonEqualSubscription: one member wants one topic.
    if (unequal && m == size.members - 1) member.topics.resize(1);
    in.members.push_back(std::move(member));
  }
  return in;
}

// The same group with its first member gone; the others report `previous` at generation 1.
ClientAssignorInput after_one_leaves(const ClientAssignorInput& fresh,
                                     const ClientAssignment& previous) {
  ClientAssignorInput in = fresh;
  in.members.erase(in.members.begin());
  for (auto& m : in.members) {
    m.owned_partitions = previous.at(m.member_id);
    m.generation = 1;
  }
  return in;
}

// Partitions a member still present held before and no longer gets.
std::size_t moved(const ClientAssignorInput& in, const ClientAssignment& after) {
  std::size_t count = 0;
  for (const auto& m : in.members) {
    const auto it = after.find(m.member_id);
    const std::set<TopicPartition> now =
        it == after.end() ? std::set<TopicPartition>{}
                          : std::set<TopicPartition>(it->second.begin(), it->second.end());
    for (const auto& tp : m.owned_partitions) count += now.count(tp) == 0;
  }
  return count;
}

// "" when `out` is a correct result of `assignor` for `in`, else what is wrong. The rules are
// those of Kafka's assignor tests: every member present, partitions exist, are subscribed and
// owned once; all assigned except what cooperative-sticky withholds for revocation; balance as
// verifyValidityAndBalance (two members whose sizes differ by more than one share no topic),
// per topic for range; the sticky assignors keep every remaining member's partitions when a
// member leaves (nobody is over the new quota).
std::string check(const std::string& assignor, const ClientAssignorInput& in,
                  const ClientAssignment& out, bool one_leaves) {
  std::map<std::string, const ClientMember*> members;
  for (const auto& m : in.members) members[m.member_id] = &m;
  if (out.size() != members.size())
    return fmt::format("{} members in the result, {} in the group", out.size(), members.size());
  std::map<TopicPartition, std::string> owner;
  std::map<std::string, std::pair<std::size_t, std::size_t>>
      load_by_topic;                                                    // min, max size of holders
  std::map<std::string, std::map<std::string, std::size_t>> per_topic;  // topic -> member -> count
  for (const auto& [member, tps] : out) {
    const auto m = members.find(member);
    if (m == members.end()) return "unknown member " + member;
    const auto& topics = m->second->topics;
    for (const auto& tp : tps) {
      const auto t = in.partitions_per_topic.find(tp.topic);
      if (t == in.partitions_per_topic.end() || tp.partition < 0 || tp.partition >= t->second)
        return tp.str() + " does not exist";
      if (std::find(topics.begin(), topics.end(), tp.topic) == topics.end())
        return member + " got unsubscribed " + tp.str();
      if (!owner.emplace(tp, member).second) return tp.str() + " assigned twice";
      ++per_topic[tp.topic][member];
    }
  }
  std::set<TopicPartition> withheld;
  if (assignor == "cooperative-sticky") {
    for (const auto& m : in.members) {
      for (const auto& tp : m.owned_partitions) {
        const auto it = owner.find(tp);
        if (it == owner.end()) withheld.insert(tp);
      }
    }
  }
  std::set<std::string> subscribed;
  for (const auto& m : in.members) subscribed.insert(m.topics.begin(), m.topics.end());
  for (const auto& topic : subscribed) {
    const auto t = in.partitions_per_topic.find(topic);
    if (t == in.partitions_per_topic.end()) continue;
    for (std::int32_t p = 0; p < t->second; ++p) {
      if (owner.count({topic, p}) == 0 && withheld.count({topic, p}) == 0)
        return TopicPartition{topic, p}.str() + " unassigned";
    }
  }
  if (assignor == "range") {
    for (const auto& [topic, counts] : per_topic) {
      std::size_t subscribers = 0;
      for (const auto& m : in.members)
        subscribers += std::count(m.topics.begin(), m.topics.end(), topic) > 0;
      const auto partitions = static_cast<std::size_t>(in.partitions_per_topic.at(topic));
      const std::size_t lo = partitions / subscribers;
      const std::size_t hi = lo + (partitions % subscribers != 0);
      for (const auto& [member, n] : counts) {
        if (n < lo || n > hi)
          return fmt::format("{} holds {} of {}, not {}..{}", member, n, topic, lo, hi);
      }
      if (hi > 0 && lo == 0 && counts.size() != std::min(subscribers, partitions))
        return "range spread wrong in " + topic;
    }
  } else {
    // A topic's holders differ in total size by at most one (Kafka's pairwise rule, per topic).
    for (const auto& [topic, counts] : per_topic) {
      std::size_t lo = SIZE_MAX;
      std::size_t hi = 0;
      for (const auto& [member, n] : counts) {
        lo = std::min(lo, out.at(member).size());
        hi = std::max(hi, out.at(member).size());
      }
      if (hi > lo + 1 && withheld.empty())
        return fmt::format("unbalanced: holders of {} have {}..{} partitions", topic, lo, hi);
    }
  }
  if (one_leaves && (assignor == "sticky" || assignor == "cooperative-sticky") &&
      moved(in, out) != 0) {
    return fmt::format("not sticky: {} partitions left a remaining member", moved(in, out));
  }
  return "";
}

double median_ms(const std::string& assignor, const ClientAssignorInput& in, int repeats,
                 ClientAssignment& result) {
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const auto start = std::chrono::steady_clock::now();
    result = assign_client(assignor, in);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One measurement, run inside a child process: builds the input (for `one_leaves`, the fresh
// result first), times the call and checks the result. Returns a JSON line.
std::string measure(const std::string& assignor, const ClientBenchOptions::Size& size, bool unequal,
                    bool one_leaves, int repeats) {
  ClientAssignorInput in = fresh_group(size, unequal);
  ClientAssignment result;
  if (one_leaves) {
    in = after_one_leaves(in, assign_client(assignor, in));
  }
  const long input_kib = bench::self_peak_rss_kib();
  const double ms = median_ms(assignor, in, repeats, result);
  std::size_t lo = SIZE_MAX;
  std::size_t hi = 0;
  for (const auto& [_, tps] : result) {
    lo = std::min(lo, tps.size());
    hi = std::max(hi, tps.size());
  }
  return json{
      {"ms", ms}, {"input_kib", input_kib},     {"lo", result.empty() ? 0 : lo},
      {"hi", hi}, {"moved", moved(in, result)}, {"check", check(assignor, in, result, one_leaves)}}
      .dump();
}

}  // namespace

std::string run_client_assignor_bench(const ClientBenchOptions& options) {
  std::vector<std::string> assignors = options.assignors;
  if (assignors.empty()) assignors = {"range", "roundrobin", "sticky", "cooperative-sticky"};
  std::vector<ClientBenchOptions::Size> sizes = options.sizes;
  if (sizes.empty()) sizes = {{100, 10, 100}, {1000, 10, 1000}};

  std::string report = fmt::format(
      "client assignors (classic protocol): every member subscribes to all topics; 'one-leaves' = "
      "the first member\n"
      "is gone and the others report their 'fresh' result as owned partitions (generation 1).\n"
      "time: median of {} calls of assign_client() alone (steady_clock). Memory: each row runs in "
      "a child process\n"
      "(fork); 'input MiB' = its ru_maxrss once the input is built (getrusage), 'peak MiB' = its "
      "final ru_maxrss\n"
      "(wait4), so peak - input bounds what the assignor itself added. An empty child peaks at "
      "{:.1f} MiB.\n"
      "moved: partitions a remaining member held and no longer gets. check: the result is a "
      "correct assignment\n"
      "(each partition once, subscribed, balanced as Kafka's tests require; sticky ones keep what "
      "members held).\n"
      "{:<19} {:>7} {:>10} {:<15} {:>10} {:>9} {:>9} {:>10} {:>6}  {}\n",
      std::max(1, options.repeats), static_cast<double>(bench::baseline_rss_kib()) / 1024,
      "assignor", "members", "partitions", "phase", "median ms", "input MiB", "peak MiB",
      "per member", "moved", "check");
  std::vector<std::string> invalid;
  const auto run = [&](const ClientBenchOptions::Size& size, const std::string& assignor,
                       bool unequal) {
    for (const bool one_leaves : {false, true}) {
      const auto child = bench::run_in_child(
          [&] { return measure(assignor, size, unequal, one_leaves, options.repeats); });
      const std::string phase =
          std::string(one_leaves ? "one-leaves" : "fresh") + (unequal ? "/uneq" : "");
      const int members = size.members - (one_leaves ? 1 : 0);
      const int partitions = size.topics * size.partitions_per_topic;
      if (child.failed) {
        invalid.push_back(fmt::format("{} {} {}: {}", assignor, members, phase, child.output));
        report += fmt::format("{:<19} {:>7} {:>10} {:<15} FAILED: {}\n", assignor, members,
                              partitions, phase, child.output);
        continue;
      }
      const json r = json::parse(child.output);
      const std::string verdict = r["check"].get<std::string>().empty()
                                      ? "ok"
                                      : "INVALID: " + r["check"].get<std::string>();
      if (verdict != "ok")
        invalid.push_back(fmt::format("{} {} {}: {}", assignor, members, phase, verdict));
      report +=
          fmt::format("{:<19} {:>7} {:>10} {:<15} {:>10.2f} {:>9.1f} {:>9.1f} {:>10} {:>6}  {}\n",
                      assignor, members, partitions, phase, r["ms"].get<double>(),
                      static_cast<double>(r["input_kib"].get<long>()) / 1024,
                      static_cast<double>(child.peak_rss_kib) / 1024,
                      fmt::format("{}..{}", r["lo"].get<std::size_t>(), r["hi"].get<std::size_t>()),
                      r["moved"].get<std::size_t>(), verdict);
    }
  };
  for (const auto& size : sizes) {
    for (const auto& assignor : assignors) run(size, assignor, false);
  }
  const bool any_sticky = std::any_of(assignors.begin(), assignors.end(), [](const std::string& a) {
    return a == "sticky" || a == "cooperative-sticky";
  });
  if (options.unequal_subscriptions && any_sticky) {
    report += "general path ('uneq'): the last member subscribes to the first topic only\n";
    for (const auto& size : sizes) {
      for (const auto& assignor : assignors) {
        if (assignor == "sticky" || assignor == "cooperative-sticky") run(size, assignor, true);
      }
    }
  }
  if (!invalid.empty())
    throw sim::InvariantViolation("an assignor benchmark produced an incorrect assignment:\n" +
                                  report);
  return report;
}

std::string run_client_assignor_bench() {
  return run_client_assignor_bench(ClientBenchOptions{});
}

}  // namespace rsim::assignors
