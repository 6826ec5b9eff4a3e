#include "models/assignors/client_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "models/assignors/client_assignor.hpp"

namespace rsim::assignors {

namespace {

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
ClientAssignorInput after_one_leaves(const ClientAssignorInput& fresh, const ClientAssignment& previous) {
  ClientAssignorInput in = fresh;
  in.members.erase(in.members.begin());
  for (auto& m : in.members) {
    m.owned_partitions = previous.at(m.member_id);
    m.generation = 1;
  }
  return in;
}

struct Timed {
  ClientAssignment result;
  double median_ms = 0;
};

Timed time_call(const std::string& assignor, const ClientAssignorInput& in, int repeats) {
  Timed timed;
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const auto start = std::chrono::steady_clock::now();
    timed.result = assign_client(assignor, in);
    const auto stop = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  timed.median_ms = ms[ms.size() / 2];
  return timed;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

// Partitions of the members still present whose owner changed between the two results.
std::size_t moved(const ClientAssignment& before, const ClientAssignment& after) {
  std::size_t count = 0;
  for (const auto& [member, tps] : after) {
    const auto it = before.find(member);
    if (it == before.end()) continue;
    const std::set<TopicPartition> had(it->second.begin(), it->second.end());
    for (const auto& tp : had) {
      if (std::find(tps.begin(), tps.end(), tp) == tps.end()) ++count;
    }
  }
  return count;
}

std::string line(const std::string& assignor, const ClientBenchOptions::Size& size, const char* phase,
                 const Timed& t, std::size_t lost) {
  std::size_t lo = SIZE_MAX;
  std::size_t hi = 0;
  std::size_t total = 0;
  for (const auto& [_, tps] : t.result) {
    lo = std::min(lo, tps.size());
    hi = std::max(hi, tps.size());
    total += tps.size();
  }
  if (t.result.empty()) lo = 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-19s %5d x %6d  %-12s %10.1f ms  assigned %6zu  per member %zu..%zu  lost %5zu  peak rss %ld MiB\n",
                assignor.c_str(), size.members, size.topics * size.partitions_per_topic, phase,
                t.median_ms, total, lo, hi, lost, peak_rss_kib() / 1024);
  return buf;
}

}  // namespace

std::string run_client_assignor_bench(const ClientBenchOptions& options) {
  std::vector<std::string> assignors = options.assignors;
  if (assignors.empty()) assignors = {"range", "roundrobin", "sticky", "cooperative-sticky"};
  std::vector<ClientBenchOptions::Size> sizes = options.sizes;
  if (sizes.empty()) sizes = {{1000, 10, 1000}, {100, 10, 100}};

  std::string report =
      "client assignors: equal subscriptions; 'fresh' = nobody owns anything, 'one-leaves' = first member\n"
      "gone, the rest own their fresh result (generation 1). Median of " +
      std::to_string(std::max(1, options.repeats)) +
      " calls. 'lost' = partitions a remaining member held and no longer gets\n"
      "(cooperative-sticky withholds moving partitions until revoked). Peak RSS is the process's so far.\n";
  const auto run = [&](const ClientBenchOptions::Size& size, const std::string& assignor, bool unequal) {
    const ClientAssignorInput fresh = fresh_group(size, unequal);
    const Timed first = time_call(assignor, fresh, options.repeats);
    report += line(assignor, size, unequal ? "fresh/uneq" : "fresh", first, 0);
    const ClientAssignorInput second_in = after_one_leaves(fresh, first.result);
    const Timed second = time_call(assignor, second_in, options.repeats);
    report += line(assignor, size, unequal ? "leaves/uneq" : "one-leaves", second,
                   moved(first.result, second.result));
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
  return report;
}

std::string run_client_assignor_bench() { return run_client_assignor_bench(ClientBenchOptions{}); }

}  // namespace rsim::assignors
