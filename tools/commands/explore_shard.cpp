#include "tools/commands/explore_shard.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/world.hpp"
#include "tools/commands/explore_variants.hpp"
#include "tools/commands/sweep.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
constexpr const char* kKind = "rebalance-sim explore shard";
}

int cmd_explore_shard(const ExploreArgs& args, const std::string& shard_text) {
  const auto shard = parse_shard(shard_text);
  const auto seed_range = parse_seed_range(args.seeds);
  const auto from = seed_range.first;
  const auto to = seed_range.second;
  const json base = load_scenario_json(args.scenario);
  const ScenarioSpec plain = load_scenario_file(args.scenario);
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
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t s = from;; ++s) {
    if (in_shard(static_cast<std::size_t>(s - from), shard)) seeds.push_back(s);
    if (s == to) break;
  }
  std::vector<json> results(seeds.size());
  std::atomic<std::size_t> next{0};
  std::string fatal;
  std::mutex fatal_mutex;
  // One seed as cmd_explore runs it; the "scenario with these faults" line is the merge's (it
  // names the merge's --out).
  const auto work = [&] {
    for (std::size_t i = next++; i < seeds.size(); i = next++) {
      const std::uint64_t seed = seeds[i];
      try {
        std::vector<std::string> knobs;
        const json doc = with_fault_knobs(base, seed, knobs);
        const auto settings = explore_settings(doc, args.scenario);
        std::string body, failing;
        std::size_t violations = 0, runs = 0;
        for (const auto& run : explore_runs(settings, args.protocols)) {
          const ScenarioSpec& spec = settings[run.setting].spec;
          const std::string& v = run.name;
          const auto found = run_and_check(spec, run.protocol, spec.seed, args.limits, args.model);
          ++runs;
          if (found.empty()) {
            if (!args.quiet) body += fmt::format("  {}: ok\n", v);
            continue;
          }
          violations += found.size();
          for (const auto& x : found)
            body += fmt::format("  {}: FAILED {}", v, describe_violation(x));
          body += fmt::format(
              "    reproduce: {}\n",
              explore_reproduce(run, settings, args.scenario, seed, injected_bug_flag(args.model)));
          failing = doc.dump(2) + "\n";
        }
        std::string text;
        if (!args.quiet || violations > 0)
          text = fmt::format("seed {}: {}\n", seed, fmt::join(knobs, "; ")) + body;
        results[i] = json{{"seed", seed},
                          {"text", text},
                          {"failing", failing},
                          {"violations", violations},
                          {"runs", runs}};
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(fatal_mutex);
        if (fatal.empty()) fatal = fmt::format("seed {}: {}", seed, e.what());
      }
    }
  };
  const unsigned jobs = std::max(
      1u,
      std::min<unsigned>(args.jobs, static_cast<unsigned>(std::max<std::size_t>(1, seeds.size()))));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (!fatal.empty()) throw std::runtime_error(fatal);
  const json def{{"scenario_file", args.scenario},
                 {"scenario_sha256", plain.sha256},
                 {"seeds", {from, to}},
                 {"variants", variants},
                 {"quiet", args.quiet},
                 {"inject_bug", injected_bug_flag(args.model)}};
  const json result{{"kind", kKind},
                    {"shard", {shard.first, shard.second}},
                    {"explore", def},
                    {"units", results}};
  const fs::path dir =
      args.out_dir.empty()
          ? fs::path("out/explore") / default_output_dir(plain.name).filename() / "shards"
          : fs::path(args.out_dir);
  const std::string file = fmt::format("shard-{}-of-{}.json", shard.first, shard.second);
  write_file_atomically_in(dir, file, result.dump(1) + "\n");
  if (!args.quiet)
    std::cout << fmt::format("explore {}: shard {}/{}: {} of {} seeds; wrote {}\n", args.scenario,
                             shard.first, shard.second, seeds.size(), to - from + 1,
                             (dir / file).string());
  return kOk;
}

int finish_explore(const std::vector<json>& shards, const std::string& out, bool force) {
  check_shard_set(shards, "explore", "its scenario, --seeds, --protocol or --quiet differ");
  const json& def = shards.front().at("explore");
  const std::uint64_t from = def.at("seeds").at(0).get<std::uint64_t>(),
                      to = def.at("seeds").at(1).get<std::uint64_t>();
  const std::size_t total = static_cast<std::size_t>(to - from) + 1;
  std::vector<const json*> by_seed(total, nullptr);
  for (const auto& sh : shards)
    for (const auto& u : sh.at("units")) {
      const std::uint64_t s = u.at("seed").get<std::uint64_t>();
      if (s < from || s > to || by_seed[s - from] != nullptr)
        throw ScenarioError("merge", {fmt::format("seed {} out of range or twice", s)});
      by_seed[s - from] = &u;
    }
  for (std::size_t k = 0; k < total; ++k)
    if (by_seed[k] == nullptr)
      throw ScenarioError("merge",
                          {fmt::format("seed {} missing from the shard results", from + k)});
  const fs::path out_dir(out);
  // Owned and committed whole, as cmd_explore's folder (the shard results carry the scenario's
  // file, not its name: the manifest names it by the file's stem).
  const std::string scenario_file = def.at("scenario_file").get<std::string>();
  StagedOutput staged{out_dir,
                      OutputOwner{fs::path(scenario_file).stem().string(), scenario_file, force}};
  std::size_t violations = 0, runs = 0, failing_seeds = 0;
  for (std::size_t k = 0; k < total; ++k) {
    const json& u = *by_seed[k];
    const std::uint64_t seed = from + k;
    std::cout << u.at("text").get<std::string>();
    if (u.at("violations").get<std::size_t>() > 0)
      std::cout << fmt::format("  scenario with these faults: {}\n",
                               (out_dir / fmt::format("seed-{}.json", seed)).string());
    violations += u.at("violations").get<std::size_t>();
    runs += u.at("runs").get<std::size_t>();
    if (!u.at("failing").get<std::string>().empty()) {
      ++failing_seeds;
      staged.write_file(fmt::format("seed-{}.json", seed), u.at("failing").get<std::string>());
    }
  }
  staged.commit();
  std::cout << fmt::format(
      "explore {}: seeds {}..{} ({} seeds) x {} variants = {} runs, {} violations in {} seeds\n",
      def.at("scenario_file").get<std::string>(), from, to, total, def.at("variants").size(), runs,
      violations, failing_seeds);
  return violations > 0 ? kExpectationFailed : kOk;
}

}  // namespace rsim::cli
