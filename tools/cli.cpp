#include "tools/cli.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "build_info.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include <set>
#include "sim/assert.hpp"
#include "tools/bench/client_bench.hpp"
#include "tools/conformance/client_conformance.hpp"
#include "tools/conformance/file_defaults.hpp"
#include "tools/bench/server_bench.hpp"
#include "tools/conformance/server_conformance.hpp"
#include "tools/assign.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/scale_bench.hpp"
#include "tools/compare_cli.hpp"
#include "tools/inspect_cli.hpp"
#include "tools/check.hpp"
#include "reports/analyses/expectations.hpp"
#include "tools/report_cli.hpp"
#include "tools/runner.hpp"
#include "models/coordinator/consumer_group_coordinator.hpp"
#include "reports/invariants.hpp"
#include "reports/summary.hpp"
#include "sim/kernel.hpp"
#include "tools/cli_args.hpp"
#include "tools/explore.hpp"
#include "tools/shrink.hpp"
#include "tools/settings_run.hpp"
#include "tools/sweep.hpp"
#include "tools/merge.hpp"
#include "tools/errors.hpp"
#include "tools/exit_codes.hpp"
#include "tools/explore_shard.hpp"
#include "models/scenario/variants.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

/// The developer checks asked for in the environment: RSIM_CHECK_QUIET_PASSES=1 makes every quiet
/// poll() pass of the KIP-848 client also run the full pass and compare (a developer's check,
/// not an option of the tool). Read once per command and passed down: the models see no globals.
ModelOptions model_options() {
  ModelOptions model;
  const char* check = std::getenv("RSIM_CHECK_QUIET_PASSES");
  model.check_quiet_passes = check != nullptr && std::string_view(check) == "1";
  return model;
}

/// What `run` checks beyond the run itself.
struct RunChecks {
  bool determinism = false;
  bool invariants = false;
  std::optional<std::uint64_t> faults_seed;
  sim::WatchdogLimits limits;
  ModelOptions model;
  bool force = false;  // --force: write into a folder rebalance-sim does not own
};

std::vector<std::string> lines_of(const std::string& jsonl) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < jsonl.size(); ++i)
    if (jsonl[i] == '\n') {
      lines.push_back(jsonl.substr(start, i - start));
      start = i + 1;
    }
  return lines;
}

constexpr std::size_t kMaxMomentLines = 20;  // decisive moments printed per variant

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

/// A --protocol that is not a variant: the message lists the valid ones.
void check_variants(const std::vector<std::string>& protocols) {
  for (const auto& p : protocols) {
    if (std::find(protocol_variants().begin(), protocol_variants().end(), p) != protocol_variants().end()) continue;
    const std::string guess = closest_match(p, protocol_variants());
    throw ScenarioError("--protocol", {fmt::format("unknown variant \"{}\"{}; valid variants: {}", p,
                                                   guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess),
                                                   fmt::join(protocol_variants(), ", "))});
  }
}

int run_staged(const ScenarioSpec& spec, const std::string& file, const std::vector<std::string>& protocols,
               std::optional<std::uint64_t> seed, const std::string& out_dir, TraceLevel level, bool quiet,
               const FormatArgs& formats, const RunChecks& checks, StagedOutput& staged);

int cmd_run(const std::string& file, const std::vector<std::string>& protocols,
            std::optional<std::uint64_t> seed, std::string out_dir, TraceLevel level, bool quiet,
            const FormatArgs& formats, const RunChecks& checks) {
  check_variants(protocols);
  for (std::size_t i = 0; i < protocols.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (protocols[i] == protocols[j])
        throw ScenarioError("--protocol", {fmt::format("\"{}\" given twice", one_line(protocols[i]))});
  ScenarioSpec spec = load_checked_scenario(file);
  if (checks.faults_seed) {
    // The fault knobs `explore` derives from this seed, applied to the file.
    std::vector<std::string> knobs;
    const auto doc = with_fault_knobs(load_scenario_json(file), *checks.faults_seed, knobs);
    const std::string sha = spec.sha256;
    spec = parse_scenario(doc, file);
    spec.sha256 = sha;
    for (const auto& k : knobs) std::cout << fmt::format("fault knob (seed {}): {}\n", *checks.faults_seed, k);
  }
  // The scenario's name is at most one sanitised folder under out/; --out is the user's choice.
  if (out_dir.empty()) out_dir = default_output_dir(spec.name).string();
  // The output folder is locked, its ownership checked and its outputs claimed before anything
  // runs; each trace.jsonl streams into the staging folder beside it as its variant runs.
  StagedOutput staged{fs::path(out_dir), OutputOwner{spec.name, file, checks.force}};
  {
    std::vector<std::string> names = protocols.empty() ? spec.protocols : protocols;
    if (level != TraceLevel::None) names.emplace_back("report.html");
    staged.claim(names);
  }
  try {
    return run_staged(spec, file, protocols, seed, out_dir, level, quiet, formats, checks, staged);
  } catch (const OutputError& e) {
    throw staged.retold(e);  // named by the path it was going to have, not the staging folder's
  }
}

int run_staged(const ScenarioSpec& spec, const std::string& file, const std::vector<std::string>& protocols,
               std::optional<std::uint64_t> seed, const std::string& out_dir, TraceLevel level, bool quiet,
               const FormatArgs& formats, const RunChecks& checks, StagedOutput& staged) {
  RunOptions options;
  options.staged = &staged;
  options.level = level;
  options.progress = !quiet && isatty(STDERR_FILENO) != 0;
  options.limits = checks.limits;
  options.model = checks.model;
  // Without a trace.jsonl, the invariant and determinism checks read a trace kept in memory.
  options.keep_trace = level == TraceLevel::None && (checks.invariants || checks.determinism);
  // The invariants read every event, also those only `full` writes (records, OffsetCommit).
  options.keep_every_event = level != TraceLevel::Full && checks.invariants;
  auto outputs = run_variants(spec, protocols, seed, options);
  // The traces as the files hold them (read back from the staging folder), for the checks and
  // the report: `report DIR` gives the same bytes. Only the invariant and determinism checks
  // hold a trace whole; the report reads each file one line at a time.
  const bool whole_traces = checks.invariants || checks.determinism;
  std::vector<std::string> traces;
  for (const auto& o : outputs) {
    if (level == TraceLevel::None) {
      traces.push_back(o.trace_jsonl);
      continue;
    }
    if (!whole_traces) {
      traces.emplace_back();
      continue;
    }
    std::ifstream in(staged_trace_path(staged, o.protocol), std::ios::binary);
    traces.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  if (checks.determinism) {
    RunOptions again_options;
    again_options.level = level;
    again_options.limits = checks.limits;
    again_options.model = checks.model;
    again_options.keep_trace = true;
    const auto again = run_variants(spec, protocols, seed, again_options);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string a = sha256_hex(traces[i]), b = sha256_hex(again[i].trace_jsonl);
      std::cout << fmt::format("determinism [{}]: trace sha256 {} and {}: {}\n", outputs[i].protocol, a, b,
                               a == b ? "identical" : "DIFFERENT");
      if (a != b) {
        std::cerr << fmt::format("rebalance-sim: internal error: two runs of {} [{}] with the same seed "
                                 "gave different traces\n", file, outputs[i].protocol);
        return kInternalError;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> extra;
  if (level != TraceLevel::None) {
    // Without a trace there is no report.
    std::vector<VariantText> texts;
    for (std::size_t i = 0; i < outputs.size(); ++i)
      texts.push_back(VariantText{outputs[i].protocol, traces[i], outputs[i].summary.dump(2) + "\n",
                                  whole_traces ? std::string() : staged_trace_path(staged, outputs[i].protocol).string()});
    extra = render_outputs(std::move(texts), formats);
    for (const auto& [rel, bytes] : extra) staged.write_file(fs::path(rel), bytes);
  }
  staged.commit();
  bool failed = false;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!checks.invariants) continue;
    const auto& o = outputs[i];
    const auto lines = lines_of(level == TraceLevel::Full ? traces[i] : o.every_event_jsonl);
    const auto violations = reports::check_invariants(lines, invariant_context(spec, o.protocol));
    for (const auto& v : violations) {
      failed = true;
      if (!quiet) std::cout << fmt::format("{} [{}]: VIOLATED {}", one_line(spec.name), o.protocol, describe_violation(v, lines));
    }
    if (violations.empty() && !quiet) std::cout << fmt::format("{} [{}]: invariants hold\n", one_line(spec.name), o.protocol);
  }
  if (quiet) {
    for (const auto& o : outputs)
      for (const auto& e : o.expectations)
        if (!e.passed) failed = true;
    return failed ? kExpectationFailed : kOk;
  }
  for (const auto& o : outputs) {
    if (o.summary.contains("verdict"))
      std::cout << fmt::format("{} [{}]: {}\n  {}\n", one_line(spec.name), o.protocol, o.summary.at("verdict").get<std::string>(),
                               reports::headline_of(o.summary));
    else
      std::cout << fmt::format("{} [{}]: {}\n", one_line(spec.name), o.protocol, reports::headline_of(o.summary));
    const auto moments = reports::moment_lines(o.summary);
    for (std::size_t i = 0; i < moments.size() && i < kMaxMomentLines; ++i) std::cout << "  warning: " << one_line(moments[i]) << "\n";
    if (moments.size() > kMaxMomentLines)
      std::cout << fmt::format("  warning: ... and {} more decisive moments (summary.json's \"moments\")\n",
                               moments.size() - kMaxMomentLines);
    if (level == TraceLevel::None) std::cout << fmt::format("  wrote {}/{}/summary.json\n", one_line(out_dir), o.protocol);
    else std::cout << fmt::format("  wrote {}/{}/trace.jsonl and summary.json\n", one_line(out_dir), o.protocol);
    for (const auto& [rel, bytes] : extra)
      if (rel.rfind(o.protocol + "/", 0) == 0) std::cout << fmt::format("  wrote {}/{}\n", one_line(out_dir), rel);
    for (const auto& e : o.expectations) {
      if (!e.passed) {
        failed = true;
        std::cout << "  FAILED " << one_line(e.describe()) << "\n";
      }
    }
  }
  if (level != TraceLevel::None) std::cout << fmt::format("report: {}\n", one_line((fs::path(out_dir) / "report.html").string()));
  return failed ? kExpectationFailed : kOk;
}

int cmd_validate(const std::string& file) {
  const ScenarioSpec spec = load_checked_scenario(file);
  // What this version cannot run is refused here as `run` refuses it (exit 2, the same lines):
  // validate's verdict is run's.
  std::set<std::string> unsupported;
  for (const auto& v : spec.protocols)
    for (const auto& p : unsupported_features(spec, v)) unsupported.insert(p);
  if (!unsupported.empty()) throw ScenarioError(file, {unsupported.begin(), unsupported.end()});
  std::cout << fmt::format("{}: ok ({} consumers, {} events, protocols: {})\n", file,
                           spec.consumers.size(), spec.events.size(), fmt::join(spec.protocols, ", "));
  return kOk;
}

int cmd_conformance(const std::vector<std::string>& files) {
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw ScenarioError(f, {"cannot read the file"});
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(f, {std::string("not JSON: ") + e.what()});
    }
    assignors::apply_file_defaults(doc);
    const std::string kind = doc.value("kind", "");
    std::vector<assignors::ConformanceCaseResult> results;
    if (kind == "server-assignor" || kind == "share-assignor") {
      // A malformed vector is refused (exit 2) before any assignor runs on it.
      if (auto problems = assignors::server_vector_problems(doc); !problems.empty()) {
        throw ScenarioError(f, std::move(problems));
      }
    }
    if (kind == "client-assignor") results = assignors::run_client_assignor_vectors(doc);
    else if (kind == "server-assignor") results = assignors::run_server_assignor_vectors(doc);
    else if (kind == "current-assignment-builder") results = assignors::run_current_assignment_builder_vectors(doc);
    else if (kind == "share-assignor") results = assignors::run_share_assignor_vectors(doc);
    else {
      throw ScenarioError(f, {fmt::format("/kind: unknown vector kind \"{}\"; expected client-assignor, "
                                          "server-assignor, current-assignment-builder or share-assignor", kind)});
    }
    for (const auto& r : results) {
      if (r.detail.rfind("skipped:", 0) == 0) {
        ++skipped;
        std::cout << fmt::format("SKIP {} {}: {}\n", f, r.id, r.detail);
      } else if (r.passed) {
        ++passed;
        std::cout << fmt::format("PASS {} {}\n", f, r.id);
      } else {
        ++failed;
        std::cout << fmt::format("FAIL {} {}: {}\n", f, r.id, r.detail);
      }
    }
  }
  std::cout << fmt::format("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return failed > 0 ? kExpectationFailed : kOk;
}

struct ScaleArgs {
  std::string protocol = "consumer";
  std::string sizes = "100x1000,1000x10000";
  std::int64_t virtual_ms = 120000;
  std::string trace = "standard";
  bool no_critical_paths = false;
};

int cmd_bench(const std::string& what, std::uint64_t events, const ScaleArgs& scale) {
  if (what == "scale") {
    std::vector<ScaleSize> sizes;
    try {
      sizes = parse_scale_sizes(scale.sizes);
    } catch (const std::invalid_argument& e) {
      throw BadInput(std::string("rebalance-sim bench scale: ") + e.what());
    }
    if (std::find(protocol_variants().begin(), protocol_variants().end(), scale.protocol) ==
            protocol_variants().end() ||
        !variant_supported(scale.protocol)) {
      throw BadInput("rebalance-sim bench scale: --protocol: unknown variant \"" + scale.protocol + "\"");
    }
    if (scale.virtual_ms < 10000) {
      throw BadInput("rebalance-sim bench scale: --virtual-ms: must be >= 10000, got " + std::to_string(scale.virtual_ms));
    }
    std::cout << run_scale_bench(sizes, scale.protocol, scale.virtual_ms, scale.trace, !scale.no_critical_paths)
              << std::flush;
    return kOk;
  }
  if (what == "assignors") {
    std::cout << assignors::run_client_assignor_bench() << "\n" << assignors::run_server_assignor_bench() << "\n";
    return kOk;
  }
  if (what == "kernel") {
    const auto r = run_kernel_bench(events, 3);
    std::cout << fmt::format(
        "kernel: {} events; kernel {:.1f} M events/s; bare binary heap {:.1f} M events/s; ratio {:.2f}\n",
        r.events, r.kernel_events_per_sec / 1e6, r.bare_events_per_sec / 1e6, r.ratio());
    return kOk;
  }
  throw BadInput("rebalance-sim bench: unknown benchmark \"" + what + "\" (try: kernel, assignors, scale)");
}

}  // namespace

namespace {
int main_impl(int argc, char** argv, bool parse_only);
}  // namespace

int main(int argc, char** argv) { return main_impl(argc, argv, false); }
int parse_arguments(int argc, char** argv) { return main_impl(argc, argv, true); }

namespace {
const char* g_allocator = "libc";
}  // namespace

void set_allocator(const char* name) { g_allocator = name; }

namespace {

int main_impl(int argc, char** argv, bool parse_only) {
  CLI::App app{"rebalance-sim: a deterministic simulator of Apache Kafka consumer-group rebalancing"};
  app.footer(kExamples);
  app.set_version_flag("--version", fmt::format("rebalance-sim {} ({}), malloc: {}", build::kVersion,
                                                 build::kCommit, g_allocator));
  app.require_subcommand(1);

  std::string file, out_dir, bench_what = "kernel";
  std::vector<std::string> protocols;
  std::optional<std::uint64_t> seed;
  std::uint64_t bench_events = 20'000'000;

  auto* run = app.add_subcommand("run", "run a scenario and write DIR/<protocol>/{trace.jsonl,summary.json}");
  run->add_option("scenario", file, "scenario file (JSON)")->required();
  run->add_option("--protocol", protocols, "protocol variant to run (repeatable): classic-eager, classic-cooperative, consumer, share");
  run->add_option("--seed", seed, "random seed (default: the scenario's `seed`)")
      ->check(non_negative_integer(UINT64_MAX));
  run->add_option("--out", out_dir, "output directory (default: out/<scenario name>, the name made one safe folder name)");
  std::string trace_level = "standard";
  run->add_option("--trace", trace_level,
                  "trace detail: standard (default: grows with what changes: lag lines only when a lag or owner "
                  "changes, no per-batch records.* lines, OffsetCommit records or quiet heartbeats), full (everything, "
                  "also every Fetch rpc and lag sample), none (only summary.json); the summary is the same at every level")
      ->check(CLI::IsMember({"full", "standard", "none"}));
  bool quiet = false;
  run->add_flag("--quiet", quiet, "print nothing but errors (no per-variant lines, no progress)");
  FormatArgs run_formats;
  add_format_options(run, run_formats);
  RunChecks run_checks;
  run->add_flag("--check-determinism", run_checks.determinism,
                "run every variant twice and compare the traces' sha256 (exit 3 if they differ)");
  run->add_flag("--check-invariants", run_checks.invariants,
                "check the safety and liveness properties on each trace (exit 1 if one fails)");
  run->add_option("--faults-seed", run_checks.faults_seed,
                  "add the fault knobs `explore` derives from this seed (prints them)")
      ->check(non_negative_integer(UINT64_MAX));
  add_watchdog_options(run, run_checks.limits);
  run->add_flag("--force", run_checks.force,
                "write into a non-empty folder that is not an output folder of rebalance-sim (no "
                ".rebalance-sim-manifest.json), replacing its entries named as the outputs and keeping the rest");
  std::string inject_bug;
  const auto add_inject_bug = [&](CLI::App* c) {
    // Test-only and hidden: a deliberately broken model, for the tests of explore and shrink.
    c->add_option("--inject-bug", inject_bug, "")->group("")->check(CLI::IsMember(std::vector<std::string>{"skip-revocation"}));
  };
  add_inject_bug(run);
  std::vector<std::string> run_variant_picks;
  run->add_option("--variant", run_variant_picks,
                  "settings variant to run (repeatable; default: every one of the scenario's `variants`)");

  run->footer("Example: rebalance-sim run scenarios/examples/two-consumers.json --protocol classic-eager --out out/ --format perfetto");

  CheckArgs check_args;
  auto* check = add_check_subcommand(app, check_args);

  auto* validate = app.add_subcommand("validate", "check a scenario file without running it");
  validate->add_option("scenario", file, "scenario file (JSON)")->required();
  validate->footer("Example: rebalance-sim validate my-scenario.json");

  std::vector<std::string> vector_files;
  auto* conformance = app.add_subcommand("conformance", "check conformance vector files (the format of tests/conformance/README.md); exit 1 if any case fails");
  conformance->add_option("files", vector_files, "vector files")->required();
  conformance->footer("Example: rebalance-sim conformance tests/conformance/kafka/client.RangeAssignorTest.json");

  AssignRequest assign_request;
  std::string assign_case, assign_assignor;
  auto* assign = app.add_subcommand("assign", "print the assignment one assignor gives for one case (conformance-vector format), "
                                               "or one reconciliation step for a current-assignment-builder case");
  assign->add_option("case", assign_request.file, "case file (JSON): one case object of a tests/conformance/kafka/ file")
      ->required();
  assign->add_option("--assignor", assign_assignor,
                     "assignor to run instead of the case's: range, roundrobin, sticky, cooperative-sticky (client side), "
                     "uniform, server-range (server side)");
  assign->add_option("--case", assign_case, "with a whole vector file: the `id` of the case to run");
  assign->add_flag("--json", assign_request.json, "machine-readable output");
  assign->footer("Example: rebalance-sim assign scenarios/assign/uniform-heterogeneous.json --json");

  auto* bench = app.add_subcommand("bench", "benchmarks (not tests): kernel, assignors, scale");
  bench->add_option("what", bench_what, "which benchmark: kernel (event rate), assignors, scale (the simulator on N consumers x P partitions)");
  bench->add_option("--events", bench_events, "events to fire (kernel)")->check(non_negative_integer(UINT64_MAX));
  ScaleArgs scale_args;
  bench->add_option("--protocol", scale_args.protocol, "scale: protocol variant (default consumer)");
  bench->add_option("--sizes", scale_args.sizes, "scale: CONSUMERSxPARTITIONS,... (default 100x1000,1000x10000)");
  bench->add_option("--virtual-ms", scale_args.virtual_ms, "scale: virtual time per size (default 120000)");
  bench->add_option("--trace", scale_args.trace,
                    "scale: trace detail written, as on run: standard (default), full, none (summary only); the "
                    "trace/vs column is its bytes per virtual second")
      ->check(CLI::IsMember({"full", "standard", "none"}));
  bench->add_flag("--no-critical-paths", scale_args.no_critical_paths,
                  "scale: summary.json without the rebalances' critical paths (to measure what they cost)");
  bench->footer("Example: rebalance-sim bench kernel --events 20000000");

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
  auto* explore = app.add_subcommand("explore", "swarm testing: per seed, derive fault knobs, run every variant, "
                                                "check safety and liveness on the traces (exit 1 if one fails)");
  explore->add_option("scenario", explore_args.scenario, "scenario file (JSON)")->required();
  explore->add_option("--seeds", explore_args.seeds, "seeds A..B (inclusive), or one seed")->required();
  explore->add_option("--jobs", explore_args.jobs, "runs in parallel (the output does not depend on it)")
      ->check(non_negative_integer(256));
  explore->add_option("--protocol", explore_args.protocols, "protocol variant to run (repeatable; default: the scenario's)");
  explore->add_option("--out", explore_args.out_dir, "folder for failing scenarios (default: out/explore/<scenario name>)");
  explore->add_flag("--quiet", explore_args.quiet, "print only failures and the total");
  explore->add_flag("--force", explore_args.force,
                    "write into a non-empty --out folder that is not an output folder of rebalance-sim (no "
                    ".rebalance-sim-manifest.json): what it holds is kept, except entries named as the outputs");
  add_watchdog_options(explore, explore_args.limits);
  add_inject_bug(explore);
  std::string explore_shard;
  explore->add_option("--shard", explore_shard, "I/N: run only the I-th of N deterministic shares of the seeds and write "
                                                "DIR/shard-I-of-N.json (DIR: --out; combine with `merge`)");
  explore->footer("Example: rebalance-sim explore scenarios/explore/two-groups-short.json --seeds 1..200 --jobs 2");

  ShrinkArgs shrink_args;
  auto* shrink = app.add_subcommand("shrink", "delta-debug a scenario that breaks a property down to a small one "
                                              "that still breaks it");
  shrink->add_option("scenario", shrink_args.scenario, "failing scenario file (JSON), e.g. from explore")->required();
  shrink->add_option("--protocol", shrink_args.protocol, "the variant (default: the first that fails)");
  shrink->add_option("--property", shrink_args.property, "the property (default: the first that fails)");
  shrink->add_option("--out", shrink_args.out, "where to write the smallest scenario (default: FILE.shrunk.json)");
  add_watchdog_options(shrink, shrink_args.limits);
  add_inject_bug(shrink);
  shrink->footer("Example: rebalance-sim shrink out/explore/two-groups-short/seed-17.json");

  SweepArgs sweep_args;
  auto* sweep = add_sweep_subcommand(app, sweep_args);
  MergeArgs merge_args;
  auto* merge = add_merge_subcommand(app, merge_args);

  // An unknown subcommand is answered with the list of the valid ones.
  if (!parse_only && argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    const std::string asked = argv[1];
    if (std::find(names.begin(), names.end(), asked) == names.end()) {
      const std::string guess = closest_match(asked, names);
      std::cerr << fmt::format("rebalance-sim: unknown subcommand \"{}\"{}; valid subcommands: {}\n", asked,
                               guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess),
                               fmt::join(names, ", "));
      return kBadInput;
    }
  }
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
  if (run->parsed() || check->parsed() || report->parsed() || explore->parsed() || shrink->parsed() ||
      sweep->parsed() || merge->parsed() || compare->parsed())
    install_interrupt_cleanup();
  try {
    ModelOptions model = model_options();
    if (inject_bug == "skip-revocation") model.bugs.skip_revocation = true;
    run_checks.model = explore_args.model = shrink_args.model = check_args.model = model;
    if (run->parsed() && (!run_variant_picks.empty() || has_settings_variants(file))) {
      if (run_checks.faults_seed)
        throw ScenarioError("--faults-seed", {"not with settings variants (`variants`): run one variant's own file"});
      SettingsRunArgs a{file, run_variant_picks, protocols, seed, out_dir, *parse_trace_level(trace_level), quiet,
                        run_checks.determinism, run_checks.invariants, run_checks.limits, run_checks.model,
                        run_checks.force};
      return cmd_run_settings(a, run_formats);
    }
    if (run->parsed())
      return cmd_run(file, protocols, seed, out_dir, *parse_trace_level(trace_level), quiet, run_formats, run_checks);
    if (explore->parsed() && !explore_shard.empty()) return cmd_explore_shard(explore_args, explore_shard);
    if (explore->parsed()) return cmd_explore(explore_args);
    if (shrink->parsed()) return cmd_shrink(shrink_args);
    if (report->parsed()) return cmd_report(report_dir, report_formats);
    if (explain->parsed()) return cmd_explain(explain_args);
    if (check->parsed()) return cmd_check(check_args);
    if (sweep->parsed()) return cmd_sweep(sweep_args);
    if (merge->parsed()) return cmd_merge(merge_args);
    if (validate->parsed() && has_settings_variants(file)) {
      // Every variant validated (all problems of all variants in one pass), then the base as usual.
      const auto vs = load_settings_variants(file, {});
      std::vector<std::string> names;
      for (const auto& v : vs) names.push_back(v.name);
      const int rc = cmd_validate(file);
      std::cout << fmt::format("{}: variants: {} (each crossed with its protocols)\n", file, fmt::join(names, ", "));
      return rc;
    }
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
