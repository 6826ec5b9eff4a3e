#include "tools/cli/cli.hpp"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/variants.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/expectations.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands/assign.hpp"
#include "tools/commands/bench.hpp"
#include "tools/commands/check.hpp"
#include "tools/commands/compare.hpp"
#include "tools/commands/conformance.hpp"
#include "tools/commands/explore.hpp"
#include "tools/commands/explore_shard.hpp"
#include "tools/commands/inspect.hpp"
#include "tools/commands/merge.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/run.hpp"
#include "tools/commands/settings_run.hpp"
#include "tools/commands/shrink.hpp"
#include "tools/commands/sweep.hpp"
#include "tools/commands/validate.hpp"
#include "tools/errors.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

/// The developer checks asked for in the environment: RSIM_CHECK_QUIET_PASSES=1 makes every quiet
/// poll() pass of the KIP-848 and classic clients also run the full pass and compare (a
/// developer's check, not an option of the tool). Read once per command and passed down: the
/// models see no globals.
ModelOptions model_options() {
  ModelOptions model;
  const char* check = std::getenv("RSIM_CHECK_QUIET_PASSES");
  model.check_quiet_passes = check != nullptr && std::string_view(check) == "1";
  // RSIM_QUIET_CHAINS=0: quiet chains off (both clients), to compare outputs and speed.
  const char* chains = std::getenv("RSIM_QUIET_CHAINS");
  model.quiet_chains = chains == nullptr || std::string_view(chains) != "0";
  return model;
}

const char* kExamples = R"(Examples:
  rebalance-sim run scenarios/examples/two-consumers.json
  rebalance-sim run scenarios/examples/two-consumers.json --protocol classic-eager --seed 7 --out out/
  rebalance-sim report out/two-consumers --format perfetto --format csv
  rebalance-sim explain scenarios/examples/two-consumers.json
  rebalance-sim check scenarios/ --junit results.xml
  rebalance-sim explore scenarios/explore/two-groups-short.json --seeds 1..200 --jobs 2
  rebalance-sim sweep scenarios/sweeps/poll-interval-storm.json --vary /consumers/*/processing/per_record_ms=10..40:10 --seeds 1..20
  rebalance-sim merge out/shards/shard-*-of-4.json --out out/sweep/poll-interval-storm
  rebalance-sim shrink out/explore/two-groups-short/seed-17.json
  rebalance-sim validate my-scenario.json
  rebalance-sim conformance tests/conformance/kafka/client.StickyAssignorTest.json
  rebalance-sim assign scenarios/assign/cooperative-sticky-one-member-leaves.json
  rebalance-sim bench kernel
  rebalance-sim dump-log scenarios/examples/two-consumers.json --partition 18
  rebalance-sim describe scenarios/examples/two-consumers.json --at 12000 --members --verbose
  rebalance-sim compare scenarios/examples/two-consumers.json --real fidelity/real/two-consumers)";

}  // namespace

namespace {
/// The `run` subcommand's options (its scenario file and seed are shared with other subcommands).
struct RunCliArgs {
  std::vector<std::string> protocols;
  std::string out_dir;
  std::string trace_level = "standard";
  bool quiet = false;
  FormatArgs formats;
  RunChecks checks;
  std::vector<std::string> variant_picks;
};

CLI::App* add_run_subcommand(CLI::App& app, std::string& file, std::optional<std::uint64_t>& seed,
                             RunCliArgs& a) {
  auto* run = app.add_subcommand(
      "run", "run a scenario and write DIR/<protocol>/{trace.jsonl,summary.json}");
  run->add_option("scenario", file, "scenario file (JSON)")->required();
  run->add_option(
      "--protocol", a.protocols,
      "protocol variant to run (repeatable): classic-eager, classic-cooperative, consumer, share");
  run->add_option("--seed", seed, "random seed (default: the scenario's `seed`)")
      ->check(non_negative_integer(UINT64_MAX));
  run->add_option(
      "--out", a.out_dir,
      "output directory (default: out/<scenario name>, the name made one safe folder name)");
  run->add_option("--trace", a.trace_level,
                  "trace detail: standard (default: grows with what changes: lag lines only when a "
                  "lag or owner "
                  "changes, no per-batch records.* lines, OffsetCommit records, quiet heartbeats "
                  "or the rpcs and completions of auto-commits answered NONE; group.epoch "
                  "lines list the members joined and left), full (everything, "
                  "also every Fetch rpc and lag sample), none (only summary.json); the summary is "
                  "the same at every level")
      ->check(CLI::IsMember({"full", "standard", "none"}));
  run->add_flag("--quiet", a.quiet, "print nothing but errors (no per-variant lines, no progress)");
  add_format_options(run, a.formats);
  run->add_flag("--check-determinism", a.checks.determinism,
                "run every variant twice and compare the traces' sha256 (exit 3 if they differ)");
  run->add_flag("--check-invariants", a.checks.invariants,
                "check the safety and liveness properties on each trace (exit 1 if one fails)");
  run->add_option("--faults-seed", a.checks.faults_seed,
                  "add the fault knobs `explore` derives from this seed (prints them)")
      ->check(non_negative_integer(UINT64_MAX));
  add_watchdog_options(run, a.checks.limits);
  run->add_flag("--force", a.checks.force,
                "write into a non-empty folder that is not an output folder of rebalance-sim (no "
                ".rebalance-sim-manifest.json), replacing its entries named as the outputs and "
                "keeping the rest");
  run->add_option(
      "--variant", a.variant_picks,
      "settings variant to run (repeatable; default: every one of the scenario's `variants`)");

  run->footer(
      "Example: rebalance-sim run scenarios/examples/two-consumers.json --protocol classic-eager "
      "--out out/ --format perfetto");
  return run;
}

int main_impl(int argc, char** argv, bool parse_only);
}  // namespace

int main(int argc, char** argv) {
  return main_impl(argc, argv, false);
}
int parse_arguments(int argc, char** argv) {
  return main_impl(argc, argv, true);
}

namespace {
const char* g_allocator = "libc";
}  // namespace

void set_allocator(const char* name) {
  g_allocator = name;
}

namespace {

CLI::App* add_assign_subcommand(CLI::App& app, AssignRequest& request, std::string& case_id,
                                std::string& assignor) {
  auto* c = app.add_subcommand(
      "assign",
      "print the assignment one assignor gives for one case (conformance-vector format), "
      "or one reconciliation step for a current-assignment-builder case");
  c->add_option("case", request.file,
                "case file (JSON): one case object of a tests/conformance/kafka/ file")
      ->required();
  c->add_option("--assignor", assignor,
                "assignor to run instead of the case's: range, roundrobin, sticky, "
                "cooperative-sticky (client side), "
                "uniform, server-range (server side)");
  c->add_option("--case", case_id, "with a whole vector file: the `id` of the case to run");
  c->add_flag("--json", request.json, "machine-readable output");
  c->footer("Example: rebalance-sim assign scenarios/assign/uniform-heterogeneous.json --json");
  return c;
}

CLI::App* add_bench_subcommand(CLI::App& app, std::string& what, std::uint64_t& events,
                               ScaleArgs& scale) {
  auto* c = app.add_subcommand("bench", "benchmarks (not tests): kernel, assignors, scale");
  c->add_option("what", what,
                "which benchmark: kernel (event rate), assignors, scale (the simulator on N "
                "consumers x P partitions)");
  c->add_option("--events", events, "events to fire (kernel)")
      ->check(non_negative_integer(UINT64_MAX));
  c->add_option("--protocol", scale.protocols,
                "scale: protocol variant (default consumer); repeatable with --print-scenario");
  c->add_option("--sizes", scale.sizes,
                "scale: CONSUMERSxPARTITIONS,... (default 100x1000,1000x10000)");
  c->add_option("--virtual-ms", scale.virtual_ms, "scale: virtual time per size (default 120000)");
  c->add_option(
       "--trace", scale.trace,
       "scale: trace detail written, as on run: standard (default), full, none (summary only); the "
       "trace/vs column is its bytes per virtual second")
      ->check(CLI::IsMember({"full", "standard", "none"}));
  c->add_flag(
      "--no-critical-paths", scale.no_critical_paths,
      "scale: summary.json without the rebalances' critical paths (to measure what they cost)");
  c->add_flag("--print-scenario", scale.print_scenario,
              "scale: print the scenario the bench runs for one size (its protocols those of "
              "--protocol) instead of running it, to `run` it with every output");
  c->footer("Example: rebalance-sim bench kernel --events 20000000");
  return c;
}

CLI::App* add_explore_subcommand(CLI::App& app, ExploreArgs& args, std::string& shard,
                                 const std::function<void(CLI::App*)>& add_inject_bug) {
  auto* c = app.add_subcommand("explore",
                               "swarm testing: per seed, derive fault knobs, run every variant, "
                               "check safety and liveness on the traces (exit 1 if one fails)");
  c->add_option("scenario", args.scenario, "scenario file (JSON)")->required();
  c->add_option("--seeds", args.seeds, "seeds A..B (inclusive), or one seed")->required();
  c->add_option("--jobs", args.jobs, "runs in parallel (the output does not depend on it)")
      ->check(non_negative_integer(256));
  c->add_option("--protocol", args.protocols,
                "protocol variant to run (repeatable; default: the scenario's)");
  c->add_option("--out", args.out_dir,
                "folder for failing scenarios (default: out/explore/<scenario name>)");
  c->add_flag("--quiet", args.quiet, "print only failures and the total");
  c->add_flag(
      "--force", args.force,
      "write into a non-empty --out folder that is not an output folder of rebalance-sim (no "
      ".rebalance-sim-manifest.json): what it holds is kept, except entries named as the outputs");
  add_watchdog_options(c, args.limits);
  add_inject_bug(c);
  c->add_option("--shard", shard,
                "I/N: run only the I-th of N deterministic shares of the seeds and write "
                "DIR/shard-I-of-N.json (DIR: --out; combine with `merge`)");
  c->footer(
      "Example: rebalance-sim explore scenarios/explore/two-groups-short.json --seeds 1..200 "
      "--jobs 2");
  return c;
}

CLI::App* add_shrink_subcommand(CLI::App& app, ShrinkArgs& args,
                                const std::function<void(CLI::App*)>& add_inject_bug) {
  auto* c = app.add_subcommand("shrink",
                               "delta-debug a scenario that breaks a property down to a small one "
                               "that still breaks it");
  c->add_option("scenario", args.scenario, "failing scenario file (JSON), e.g. from explore")
      ->required();
  c->add_option("--protocol", args.protocol, "the variant (default: the first that fails)");
  c->add_option("--property", args.property, "the property (default: the first that fails)");
  c->add_option("--out", args.out,
                "where to write the smallest scenario (default: FILE.shrunk.json)");
  add_watchdog_options(c, args.limits);
  add_inject_bug(c);
  c->footer("Example: rebalance-sim shrink out/explore/two-groups-short/seed-17.json");
  return c;
}

/// Whether `asked` names a subcommand; if not, the list of the valid ones (and the closest) on
/// stderr.
bool known_subcommand(CLI::App& app, const std::string& asked) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), asked) != names.end()) return true;
  const std::string guess = closest_match(asked, names);
  std::cerr << fmt::format(
      "rebalance-sim: unknown subcommand \"{}\"{}; valid subcommands: {}\n", asked,
      guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess), fmt::join(names, ", "));
  return false;
}

int main_impl(int argc, char** argv, bool parse_only) {
  CLI::App app{
      "rebalance-sim: a deterministic simulator of Apache Kafka consumer-group rebalancing"};
  app.footer(kExamples);
  app.set_version_flag("--version", fmt::format("rebalance-sim {} ({}), malloc: {}",
                                                build::kVersion, build::kCommit, g_allocator));
  app.require_subcommand(1);

  std::string file, bench_what = "kernel";
  std::optional<std::uint64_t> seed;
  std::uint64_t bench_events = 20'000'000;

  RunCliArgs run_args;
  std::string inject_bug;
  const auto add_inject_bug = [&](CLI::App* c) {
    // Test-only and hidden: a deliberately broken model, for the tests of explore and shrink.
    c->add_option("--inject-bug", inject_bug, "")
        ->group("")
        ->check(CLI::IsMember(std::vector<std::string>{"skip-revocation"}));
  };
  auto* run = add_run_subcommand(app, file, seed, run_args);
  add_inject_bug(run);

  CheckArgs check_args;
  auto* check = add_check_subcommand(app, check_args);

  auto* validate = app.add_subcommand("validate", "check a scenario file without running it");
  validate->add_option("scenario", file, "scenario file (JSON)")->required();
  validate->footer("Example: rebalance-sim validate my-scenario.json");

  std::vector<std::string> vector_files;
  auto* conformance = add_conformance_subcommand(app, vector_files);

  AssignRequest assign_request;
  std::string assign_case, assign_assignor;
  auto* assign = add_assign_subcommand(app, assign_request, assign_case, assign_assignor);

  ScaleArgs scale_args;
  auto* bench = add_bench_subcommand(app, bench_what, bench_events, scale_args);

  InspectArgs inspect_args;
  auto* dump_log = add_dump_log_subcommand(app, inspect_args);
  auto* describe = add_describe_subcommand(app, inspect_args);
  CompareArgs compare_args;
  auto* compare = add_compare_subcommand(app, compare_args);

  std::string report_dir;
  FormatArgs report_formats;
  auto* report = add_report_subcommand(app, report_dir, report_formats);
  ExplainArgs explain_args;
  auto* explain = add_explain_subcommand(app, explain_args);

  ExploreArgs explore_args;
  std::string explore_shard;
  auto* explore = add_explore_subcommand(app, explore_args, explore_shard, add_inject_bug);

  ShrinkArgs shrink_args;
  auto* shrink = add_shrink_subcommand(app, shrink_args, add_inject_bug);

  SweepArgs sweep_args;
  auto* sweep = add_sweep_subcommand(app, sweep_args);
  MergeArgs merge_args;
  auto* merge = add_merge_subcommand(app, merge_args);

  // An unknown subcommand is answered with the list of the valid ones.
  if (!parse_only && argc >= 2 && argv[1][0] != '-' && !known_subcommand(app, argv[1]))
    return kBadInput;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (parse_only) return e.get_exit_code() == 0 ? kOk : kBadInput;
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  if (parse_only) return kOk;
  // The commands that write files: an interrupt removes their staging folders, and a closed
  // stdout does not stop them before their files are written.
  if (run->parsed() || check->parsed() || report->parsed() || explore->parsed() ||
      shrink->parsed() || sweep->parsed() || merge->parsed() || compare->parsed())
    install_interrupt_cleanup();
  try {
    ModelOptions model = model_options();
    if (inject_bug == "skip-revocation") model.bugs.skip_revocation = true;
    run_args.checks.model = explore_args.model = shrink_args.model = check_args.model = model;
    if (run->parsed() && (!run_args.variant_picks.empty() || has_settings_variants(file))) {
      if (run_args.checks.faults_seed)
        throw ScenarioError(
            "--faults-seed",
            {"not with settings variants (`variants`): run one variant's own file"});
      const RunChecks& c = run_args.checks;
      SettingsRunArgs a{file,
                        run_args.variant_picks,
                        run_args.protocols,
                        seed,
                        run_args.out_dir,
                        *parse_trace_level(run_args.trace_level),
                        run_args.quiet,
                        c.determinism,
                        c.invariants,
                        c.limits,
                        c.model,
                        c.force};
      return cmd_run_settings(a, run_args.formats);
    }
    if (run->parsed())
      return cmd_run(file, run_args.protocols, seed, run_args.out_dir,
                     *parse_trace_level(run_args.trace_level), run_args.quiet, run_args.formats,
                     run_args.checks);
    if (explore->parsed() && !explore_shard.empty())
      return cmd_explore_shard(explore_args, explore_shard);
    if (explore->parsed()) return cmd_explore(explore_args);
    if (shrink->parsed()) return cmd_shrink(shrink_args);
    if (report->parsed()) return cmd_report(report_dir, report_formats);
    if (explain->parsed()) return cmd_explain(explain_args);
    if (check->parsed()) return cmd_check(check_args);
    if (sweep->parsed()) return cmd_sweep(sweep_args);
    if (merge->parsed()) return cmd_merge(merge_args);
    if (validate->parsed()) return cmd_validate(file);
    if (bench->parsed()) return cmd_bench(bench_what, bench_events, scale_args);
    if (conformance->parsed()) return cmd_conformance(vector_files);
    if (assign->parsed()) {
      if (!assign_assignor.empty()) assign_request.assignor = assign_assignor;
      if (!assign_case.empty()) assign_request.case_id = assign_case;
      run_assign(assign_request, std::cout);
      return kOk;
    }
    if (dump_log->parsed()) return cmd_dump_log(inspect_args);
    if (describe->parsed()) return cmd_describe(inspect_args);
    if (compare->parsed()) return cmd_compare(compare_args);
  } catch (...) {
    return report_error(std::current_exception(), file, seed);  // the one choke point
  }
  return kBadInput;
}

}  // namespace
}  // namespace rsim::cli
