#include "tools/commands/explore.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/coordinator/consumer_group_coordinator.hpp"
#include "models/protocol/config.hpp"
#include "models/scenario/world.hpp"
#include "models/spec/overloaded.hpp"
#include "sim/assert.hpp"
#include "sim/rng.hpp"
#include "tools/commands/explore_variants.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::int64_t config_ms(const ConsumerSpec& c, const std::string& group_protocol,
                       const std::string& key, std::int64_t fallback) {
  if (const auto it = c.config_by_protocol.find(group_protocol); it != c.config_by_protocol.end())
    if (const auto v = it->second.find(key); v != it->second.end())
      return v->second.get<std::int64_t>();
  if (const auto v = c.config.find(key); v != c.config.end()) return v->second.get<std::int64_t>();
  return fallback;
}

std::int64_t broker_ms(const ScenarioSpec& s, const std::string& key, std::int64_t fallback) {
  const auto it = s.cluster.config.find(key);
  return it == s.cluster.config.end() ? fallback : it->second.get<std::int64_t>();
}

// How long after the last fault a group may take to own every partition again: a dead member's
// session, a rebalance that waits for every member (the rebalance timeout), a request lost in a
// cut (request.timeout.ms), a coordinator fenced and loaded, a few heartbeats, and 5 s of slack.
std::int64_t liveness_bound_ms(const ScenarioSpec& s, const std::string& variant) {
  const std::string gp = group_protocol_of(variant);
  const ConsumerConfig d;
  const BrokerConfig b;
  std::int64_t worst = 0;
  for (const auto& c : s.consumers) {
    // KIP-848 and share groups (KIP-932) take their session and heartbeat from the broker.
    const std::int64_t session =
        gp == "consumer"
            ? broker_ms(s, "group.consumer.session.timeout.ms", b.group_consumer_session_timeout_ms)
        : gp == "share"
            ? broker_ms(s, "group.share.session.timeout.ms", b.group_share_session_timeout_ms)
            : config_ms(c, gp, "session.timeout.ms", d.session_timeout_ms);
    const std::int64_t heartbeat =
        gp == "consumer" ? broker_ms(s, "group.consumer.heartbeat.interval.ms",
                                     b.group_consumer_heartbeat_interval_ms)
        : gp == "share"
            ? broker_ms(s, "group.share.heartbeat.interval.ms", b.group_share_heartbeat_interval_ms)
            : config_ms(c, gp, "heartbeat.interval.ms", d.heartbeat_interval_ms);
    const std::int64_t rebalance = config_ms(c, gp, "max.poll.interval.ms", d.max_poll_interval_ms);
    const std::int64_t request = config_ms(c, gp, "request.timeout.ms", d.request_timeout_ms);
    worst = std::max(worst, session + rebalance + request + 3 * heartbeat);
  }
  return worst + broker_ms(s, "broker.session.timeout.ms", b.broker_session_timeout_ms) +
         s.cluster.coordinator_load.base_ms + 5000;
}

// The end of the last fault of the script (crashes, stalls, pauses, cuts, failovers, changes).
std::int64_t last_fault_end_us(const ScenarioSpec& s) {
  std::int64_t end = 0;
  for (const auto& e : s.events) {
    // How long past its `at` each verb's fault lasts; nullopt: not a fault.
    const std::optional<sim::SimTime> lasts = std::visit(
        Overloaded{
            [](const verb::Start&) -> std::optional<sim::SimTime> { return std::nullopt; },
            [](const verb::Subscribe&) -> std::optional<sim::SimTime> { return std::nullopt; },
            [](const verb::Produce&) -> std::optional<sim::SimTime> { return std::nullopt; },
            [](const verb::Restart& v) -> std::optional<sim::SimTime> { return v.after; },
            [](const verb::Stall& v) -> std::optional<sim::SimTime> { return v.for_; },
            [](const verb::Pause& v) -> std::optional<sim::SimTime> { return v.for_; },
            [](const verb::Network& v) -> std::optional<sim::SimTime> {
              return v.has_for ? v.for_ : sim::SimTime{0};
            },
            [](const verb::PartitionNetwork& v) -> std::optional<sim::SimTime> { return v.for_; },
            [](const verb::FailCoordinator& v) -> std::optional<sim::SimTime> {
              return v.has_down ? v.down : sim::SimTime{0};
            },
            [](const verb::Stop&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::Crash&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::AddPartitions&) -> std::optional<sim::SimTime> {
              return sim::SimTime{0};
            },
            [](const verb::StopBroker&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::CrashBroker&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::StartBroker&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::RestartBroker&) -> std::optional<sim::SimTime> {
              return sim::SimTime{0};
            },
            [](const verb::Rollout&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
            [](const verb::DrainNode&) -> std::optional<sim::SimTime> { return sim::SimTime{0}; },
        },
        e.verb);
    if (!lasts) continue;
    end = std::max(end, static_cast<std::int64_t>((e.at + *lasts).count()));
  }
  return end;
}

std::string fmt_ms(double v) {
  return fmt::format("{:.6g}", v);
}

}  // namespace

json with_fault_knobs(const json& base, std::uint64_t seed, std::vector<std::string>& knobs) {
  const ScenarioSpec spec = parse_scenario(base, "explore");
  sim::Rng rng(seed, "explore-knobs");
  json doc = base;
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return rng.uniform(lo, std::max(lo, hi));
  };

  // The network's latency distribution, for the whole run.
  json latency;
  switch (rng.uniform(0, 3)) {
    case 0:
      latency = pick(1, 5);
      break;
    case 1:
      latency = {{"dist", "uniform"}, {"min", 0.5}, {"max", static_cast<double>(pick(2, 20))}};
      break;
    case 2:
      latency = {{"dist", "lognormal"},
                 {"median", static_cast<double>(pick(1, 4))},
                 {"sigma", 0.25 * static_cast<double>(pick(1, 5))}};
      break;
    default:
      latency = {{"dist", "exponential"}, {"mean", static_cast<double>(pick(1, 5))}};
      break;
  }
  doc["network"]["latency_ms"] = latency;
  knobs.push_back("network.latency_ms " + latency.dump());

  // Faults, all ending before the quiet tail that liveness needs.
  std::int64_t bound = 0;
  for (const auto& v : spec.protocols) bound = std::max(bound, liveness_bound_ms(spec, v));
  const std::int64_t duration = sim::to_ms(spec.duration);
  const std::int64_t first = duration / 10;
  const std::int64_t last_end = std::max(first + 1000, duration - bound);
  std::vector<std::string> consumers, groups;
  for (const auto& c : spec.consumers) {
    consumers.push_back(c.name);
    if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
  }
  if (consumers.empty()) return doc;
  const std::int64_t faults = pick(0, 4);
  bool crashed_for_good = false;
  json events = doc.contains("events") ? doc["events"] : json::array();
  for (std::int64_t i = 0; i < faults; ++i) {
    const std::string c = consumers[static_cast<std::size_t>(
        pick(0, static_cast<std::int64_t>(consumers.size()) - 1))];
    const std::int64_t length = pick(
        500, std::min<std::int64_t>(15000, std::max<std::int64_t>(500, (last_end - first) / 2)));
    const std::int64_t at = pick(first, std::max(first, last_end - length));
    json e{{"at_ms", at}};
    switch (rng.uniform(0, 8)) {
      case 0:
        e.update({{"do", "restart"}, {"consumer", c}, {"graceful", false}, {"after_ms", length}});
        break;
      case 1:
        e.update({{"do", "restart"}, {"consumer", c}, {"graceful", true}, {"after_ms", length}});
        break;
      case 2:
        e.update({{"do", "stall"}, {"consumer", c}, {"for_ms", length}});
        break;
      case 3:
        e.update({{"do", "pause"}, {"consumer", c}, {"for_ms", length}});
        break;
      case 4:
        e.update(
            {{"do", "partition-network"}, {"between", {c, "coordinator"}}, {"for_ms", length}});
        break;
      case 5: {
        const std::string& g =
            groups[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(groups.size()) - 1))];
        // The share world does not simulate fail-coordinator yet (share_unsupported_features):
        // there, the same draw cuts the member from its coordinator instead.
        if (std::find(spec.protocols.begin(), spec.protocols.end(), "share") !=
            spec.protocols.end())
          e.update(
              {{"do", "partition-network"}, {"between", {c, "coordinator"}}, {"for_ms", length}});
        else
          e.update({{"do", "fail-coordinator"}, {"group", g}, {"down_ms", length}});
        break;
      }
      case 6:
        e.update({{"do", "network"},
                  {"between", {c, "*"}},
                  {"drop_rate", 0.01 * static_cast<double>(pick(1, 20))},
                  {"for_ms", length}});
        break;
      case 7:
        e.update({{"do", "network"},
                  {"between", {c, "*"}},
                  {"latency_ms",
                   {{"dist", "uniform"}, {"min", 1}, {"max", static_cast<double>(pick(50, 2000))}}},
                  {"for_ms", length}});
        break;
      default:
        if (consumers.size() > 1 && !crashed_for_good) {
          crashed_for_good = true;
          e.update({{"do", "crash"}, {"consumer", c}});
        } else {
          e.update({{"do", "stall"}, {"consumer", c}, {"for_ms", length}});
        }
        break;
    }
    knobs.push_back("event " + e.dump());
    events.push_back(e);
  }
  if (faults == 0) knobs.push_back("no faults");
  doc["events"] = events;
  return doc;
}

reports::InvariantContext invariant_context(const ScenarioSpec& spec, const std::string& variant) {
  reports::InvariantContext c;
  // A share group's partitions are shared by its members and its records acknowledged, not
  // committed: only the epochs and the liveness of the assignment apply.
  c.shared_ownership = variant == "share";
  for (const auto& consumer : spec.consumers) {
    if (c.shared_ownership) break;
    // Commits after processing (sync, async), and the classic auto-commit, which commits inside
    // poll() what the loop has processed. The KIP-848 client auto-commits from its background
    // thread what poll() returned, processed or not: not at least once.
    if (consumer.commit != CommitMode::Auto || group_protocol_of(variant) == "classic")
      c.at_least_once.insert(consumer.name);
  }
  c.last_fault_end_us = last_fault_end_us(spec);
  c.liveness_bound_us = liveness_bound_ms(spec, variant) * 1000;
  return c;
}

std::vector<reports::Violation> run_and_check(const ScenarioSpec& spec, const std::string& variant,
                                              std::uint64_t seed, const sim::WatchdogLimits& limits,
                                              const ModelOptions& model) {
  // Every event of a full bus is a line (the lines a `full` trace.jsonl holds), bounded as a
  // trace is.
  reports::InvariantSink checker(invariant_context(spec, variant), std::nullopt,
                                 limits.max_trace_bytes);
  try {
    run_scenario(spec, variant, seed, {&checker}, trace::Detail::Full, limits, model);
  } catch (const sim::InvariantViolation& e) {
    // The model's own assertions are properties too: the seed fails, explore goes on.
    return {reports::Violation{"model-invariant", 0, e.what(), 0, 0, {}}};
  } catch (const sim::WatchdogTripped& e) {
    // A run that hits a watchdog bound (a loop that takes no time, a run too long, a trace too
    // large) is this seed's finding: the other seeds' results stand.
    return {reports::Violation{"watchdog", 0, one_line(e.what()), 0, 0, {}}};
  }
  return checker.finish();
}

std::string describe_violation(const reports::Violation& v) {
  // A watchdog's message names its own instant; the run has no trace window.
  if (v.property == "watchdog") return fmt::format("{}: {}\n", v.property, one_line(v.detail));
  std::string out = fmt::format("{} at t={} ms: {}\n", v.property,
                                fmt_ms(static_cast<double>(v.t_us) / 1000.0), one_line(v.detail));
  // The window: the lines that show it, at most the last 12 (the checker kept them).
  if (v.window.empty()) return out;
  const std::size_t last = v.last_line;
  const std::size_t first = last + 1 - v.window.size();
  out += fmt::format("    trace window (trace.jsonl lines {}..{}):\n", first + 1, last + 1);
  for (const auto& line : v.window) {
    out += "      ";
    out += line;
    out += '\n';
  }
  return out;
}

std::string injected_bug_flag(const ModelOptions& model) {
  return model.bugs.skip_revocation ? " --inject-bug skip-revocation" : "";
}

std::pair<std::uint64_t, std::uint64_t> parse_seed_range(const std::string& text) {
  const auto number = [&](std::string_view s, std::uint64_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  std::uint64_t a = 0, b = 0;
  const auto dots = text.find("..");
  const bool ok = dots == std::string::npos
                      ? number(text, a) && (b = a, true)
                      : number(std::string_view(text).substr(0, dots), a) &&
                            number(std::string_view(text).substr(dots + 2), b);
  if (!ok || b < a)
    throw ScenarioError(
        "--seeds",
        {fmt::format("must be A..B with A <= B (or one seed), got \"{}\"", one_line(text))});
  if (b - a >= 1'000'000) throw ScenarioError("--seeds", {"at most 1000000 seeds in one explore"});
  return {a, b};
}

int cmd_explore(const ExploreArgs& args) {
  // Two plain variables, not a structured binding: the worker lambda below uses `from`, and
  // clang 14 (the fuzz build) cannot capture bindings.
  const auto seed_range = parse_seed_range(args.seeds);
  const auto from = seed_range.first;
  const auto to = seed_range.second;
  const json base = load_scenario_json(args.scenario);
  const ScenarioSpec plain = parse_scenario(base, args.scenario);
  // Every (settings variant, protocol) run of a seed, by name
  // (tools/commands/explore_variants.hpp).
  const auto plain_settings = explore_settings(base, args.scenario);
  const auto plain_runs = explore_runs(plain_settings, args.protocols);
  std::vector<std::string> variants;
  for (const auto& r : plain_runs) {
    const auto problems = unsupported_features(plain_settings[r.setting].spec, r.protocol);
    if (!problems.empty()) throw ScenarioError(args.scenario, problems);
    variants.push_back(r.name);
  }
  const fs::path out_dir = args.out_dir.empty()
                               ? fs::path("out/explore") / default_output_dir(plain.name).filename()
                               : fs::path(args.out_dir);
  // The folder is owned and committed whole (tools/staged_output.hpp): refused before any seed
  // runs if it is not empty and not rebalance-sim's (unless --force); the failing scenarios of
  // this explore replace those of the last one.
  StagedOutput staged{out_dir, OutputOwner{plain.name, args.scenario, args.force}};

  struct SeedResult {
    std::string text;     // what is printed for the seed
    std::string failing;  // the scenario with the seed's faults, when something failed
    std::size_t violations = 0;
    std::size_t runs = 0;
  };
  const std::size_t n = static_cast<std::size_t>(to - from) + 1;
  std::vector<SeedResult> results(n);
  std::atomic<std::size_t> next{0};
  std::string fatal;
  std::mutex fatal_mutex;
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      const std::uint64_t seed = from + i;
      SeedResult& r = results[i];
      try {
        std::vector<std::string> knobs;
        const json doc = with_fault_knobs(base, seed, knobs);
        const auto settings = explore_settings(doc, args.scenario);
        std::string body;
        for (const auto& run : explore_runs(settings, args.protocols)) {
          const ScenarioSpec& spec = settings[run.setting].spec;
          const std::string& v = run.name;
          const auto violations =
              run_and_check(spec, run.protocol, spec.seed, args.limits, args.model);
          ++r.runs;
          if (violations.empty()) {
            if (!args.quiet) body += fmt::format("  {}: ok\n", v);
            continue;
          }
          r.violations += violations.size();
          for (const auto& x : violations)
            body += fmt::format("  {}: FAILED {}", v, describe_violation(x));
          body += fmt::format(
              "    reproduce: {}\n",
              explore_reproduce(run, settings, args.scenario, seed, injected_bug_flag(args.model)));
          r.failing = doc.dump(2) + "\n";
        }
        if (!args.quiet || r.violations > 0) {
          r.text = fmt::format("seed {}: {}\n", seed, fmt::join(knobs, "; ")) + body;
          if (r.violations > 0)
            r.text += fmt::format("  scenario with these faults: {}\n",
                                  one_line((out_dir / fmt::format("seed-{}.json", seed)).string()));
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(fatal_mutex);
        if (fatal.empty()) fatal = fmt::format("seed {}: {}", seed, e.what());
      }
    }
  };
  const unsigned jobs = std::max(1u, std::min<unsigned>(args.jobs, static_cast<unsigned>(n)));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (!fatal.empty()) throw std::runtime_error(fatal);

  std::size_t violations = 0, runs = 0, failing_seeds = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::cout << results[i].text;
    violations += results[i].violations;
    runs += results[i].runs;
    if (!results[i].failing.empty()) {
      ++failing_seeds;
      staged.write_file(fmt::format("seed-{}.json", from + i), results[i].failing);
    }
  }
  staged.commit();
  std::cout << fmt::format(
      "explore {}: seeds {}..{} ({} seeds) x {} variants = {} runs, {} violations in {} seeds\n",
      one_line(args.scenario), from, to, n, variants.size(), runs, violations, failing_seeds);
  return violations > 0 ? kExpectationFailed : kOk;
}

}  // namespace rsim::cli
