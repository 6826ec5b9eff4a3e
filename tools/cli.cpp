#include "tools/cli.hpp"

#include <filesystem>
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
#include "tools/expectations.hpp"
#include "tools/report_cli.hpp"
#include "tools/runner.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kOk = 0;
constexpr int kExpectationFailed = 1;
constexpr int kBadInput = 2;
constexpr int kInternalError = 3;

const char* kExamples = R"(Examples:
  rebalance-sim run scenarios/examples/two-consumers.json
  rebalance-sim run scenarios/examples/two-consumers.json --protocol classic-eager --seed 7 --out out/
  rebalance-sim report out/two-consumers --format perfetto --format csv
  rebalance-sim explain scenarios/examples/two-consumers.json
  rebalance-sim check scenarios/ --junit results.xml
  rebalance-sim validate my-scenario.json
  rebalance-sim conformance ../shared/conformance/kafka/client.StickyAssignorTest.json
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

int cmd_run(const std::string& file, const std::vector<std::string>& protocols,
            std::optional<std::uint64_t> seed, std::string out_dir, TraceLevel level, bool quiet,
            const FormatArgs& formats) {
  check_variants(protocols);
  const ScenarioSpec spec = load_checked_scenario(file);
  if (out_dir.empty()) out_dir = (fs::path("out") / spec.name).string();
  RunOptions options;
  options.out_dir = out_dir;
  options.level = level;
  options.progress = !quiet && isatty(STDERR_FILENO) != 0;
  std::vector<std::pair<std::string, std::string>> extra;
  if (level != TraceLevel::None) {
    // The report is rendered from the same text the files hold (read back from the staged
    // trace.jsonl), so `report DIR` gives the same bytes. Without a trace there is no report.
    options.extra = [&](const std::string& staging, const std::vector<VariantOutput>& outputs) {
      std::vector<VariantText> texts;
      for (const auto& o : outputs) {
        std::ifstream in(fs::path(staging) / o.protocol / "trace.jsonl", std::ios::binary);
        std::string trace((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        texts.push_back(VariantText{o.protocol, std::move(trace), o.summary.dump(2) + "\n"});
      }
      extra = render_outputs(std::move(texts), formats);
      return extra;
    };
  }
  const auto outputs = run_variants(spec, protocols, seed, options);
  if (quiet) {
    for (const auto& o : outputs)
      for (const auto& e : o.expectations)
        if (!e.passed) return kExpectationFailed;
    return kOk;
  }
  bool failed = false;
  for (const auto& o : outputs) {
    const auto& m = o.summary.at("metrics");
    std::cout << fmt::format(
        "{} [{}]: {} rebalances, max {} ms, total {} ms, unavailable {} partition-ms, {} duplicates, {} lost\n",
        spec.name, o.protocol, m.at("rebalance_count").dump(), m.at("max_rebalance_ms").dump(),
        m.at("total_rebalance_ms").dump(), m.at("unavailable_partition_ms").dump(), m.at("duplicates").dump(),
        m.at("lost").dump());
    if (level == TraceLevel::None) std::cout << fmt::format("  wrote {}/{}/summary.json\n", out_dir, o.protocol);
    else std::cout << fmt::format("  wrote {}/{}/trace.jsonl and summary.json\n", out_dir, o.protocol);
    for (const auto& [rel, bytes] : extra)
      if (rel.rfind(o.protocol + "/", 0) == 0) std::cout << fmt::format("  wrote {}/{}\n", out_dir, rel);
    for (const auto& e : o.expectations) {
      if (!e.passed) {
        failed = true;
        std::cout << "  FAILED " << e.describe() << "\n";
      }
    }
  }
  if (level != TraceLevel::None) std::cout << fmt::format("report: {}\n", (fs::path(out_dir) / "report.html").string());
  return failed ? kExpectationFailed : kOk;
}

int cmd_validate(const std::string& file) {
  const ScenarioSpec spec = load_checked_scenario(file);
  std::cout << fmt::format("{}: ok ({} consumers, {} events, protocols: {})\n", file,
                           spec.consumers.size(), spec.events.size(), fmt::join(spec.protocols, ", "));
  // Valid input that this version cannot run yet: said here, refused (exit 2) by `run`.
  std::set<std::string> notes;
  for (const auto& v : spec.protocols)
    for (const auto& p : unsupported_features(spec, v)) notes.insert(p);
  for (const auto& n : notes) std::cout << fmt::format("note: {}: {}\n", file, n);
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
};

int cmd_bench(const std::string& what, std::uint64_t events, const ScaleArgs& scale) {
  if (what == "scale") {
    std::vector<ScaleSize> sizes;
    try {
      sizes = parse_scale_sizes(scale.sizes);
    } catch (const std::invalid_argument& e) {
      std::cerr << "rebalance-sim bench scale: " << e.what() << "\n";
      return kBadInput;
    }
    if (std::find(protocol_variants().begin(), protocol_variants().end(), scale.protocol) ==
            protocol_variants().end() ||
        !variant_supported(scale.protocol)) {
      std::cerr << "rebalance-sim bench scale: --protocol: unknown variant \"" << scale.protocol << "\"\n";
      return kBadInput;
    }
    if (scale.virtual_ms < 10000) {
      std::cerr << "rebalance-sim bench scale: --virtual-ms: must be >= 10000, got " << scale.virtual_ms << "\n";
      return kBadInput;
    }
    std::cout << run_scale_bench(sizes, scale.protocol, scale.virtual_ms) << std::flush;
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
  std::cerr << "rebalance-sim bench: unknown benchmark \"" << what << "\" (try: kernel, assignors, scale)\n";
  return kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rebalance-sim: a deterministic simulator of Apache Kafka consumer-group rebalancing"};
  app.footer(kExamples);
  app.set_version_flag("--version", fmt::format("rebalance-sim {} ({})", build::kVersion, build::kCommit));
  app.require_subcommand(1);

  std::string file, out_dir, bench_what = "kernel";
  std::vector<std::string> protocols;
  std::optional<std::uint64_t> seed;
  std::uint64_t bench_events = 20'000'000;

  auto* run = app.add_subcommand("run", "run a scenario and write DIR/<protocol>/{trace.jsonl,summary.json}");
  run->add_option("scenario", file, "scenario file (JSON)")->required();
  run->add_option("--protocol", protocols, "protocol variant to run (repeatable): classic-eager, classic-cooperative, consumer, share");
  run->add_option("--seed", seed, "random seed (default: the scenario's `seed`)");
  run->add_option("--out", out_dir, "output directory (default: out/<scenario name>)");
  std::string trace_level = "standard";
  run->add_option("--trace", trace_level,
                  "trace detail: standard (default: what summary and reports read), full (also every Fetch rpc), "
                  "none (only summary.json)")
      ->check(CLI::IsMember({"full", "standard", "none"}));
  bool quiet = false;
  run->add_flag("--quiet", quiet, "print nothing but errors (no per-variant lines, no progress)");
  FormatArgs run_formats;
  add_format_options(run, run_formats);
  run->footer("Example: rebalance-sim run scenarios/examples/two-consumers.json --protocol classic-eager --out out/ --format perfetto");

  CheckArgs check_args;
  auto* check = add_check_subcommand(app, check_args);

  auto* validate = app.add_subcommand("validate", "check a scenario file without running it");
  validate->add_option("scenario", file, "scenario file (JSON)")->required();
  validate->footer("Example: rebalance-sim validate my-scenario.json");

  std::vector<std::string> vector_files;
  auto* conformance = app.add_subcommand("conformance", "check conformance vector files (../shared/conformance format); exit 1 if any case fails");
  conformance->add_option("files", vector_files, "vector files")->required();
  conformance->footer("Example: rebalance-sim conformance ../shared/conformance/kafka/client.RangeAssignorTest.json");

  AssignRequest assign_request;
  std::string assign_case, assign_assignor;
  auto* assign = app.add_subcommand("assign", "print the assignment one assignor gives for one case (conformance-vector format), "
                                               "or one reconciliation step for a current-assignment-builder case");
  assign->add_option("case", assign_request.file, "case file (JSON): one case object of a ../shared/conformance/kafka/ file")
      ->required();
  assign->add_option("--assignor", assign_assignor,
                     "assignor to run instead of the case's: range, roundrobin, sticky, cooperative-sticky (client side), "
                     "uniform, server-range (server side)");
  assign->add_option("--case", assign_case, "with a whole vector file: the `id` of the case to run");
  assign->add_flag("--json", assign_request.json, "machine-readable output");
  assign->footer("Example: rebalance-sim assign scenarios/assign/uniform-heterogeneous.json --json");

  auto* bench = app.add_subcommand("bench", "benchmarks (not tests): kernel, assignors, scale");
  bench->add_option("what", bench_what, "which benchmark: kernel (event rate), assignors, scale (the simulator on N consumers x P partitions)");
  bench->add_option("--events", bench_events, "events to fire (kernel)");
  ScaleArgs scale_args;
  bench->add_option("--protocol", scale_args.protocol, "scale: protocol variant (default consumer)");
  bench->add_option("--sizes", scale_args.sizes, "scale: CONSUMERSxPARTITIONS,... (default 100x1000,1000x10000)");
  bench->add_option("--virtual-ms", scale_args.virtual_ms, "scale: virtual time per size (default 120000)");
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

  // An unknown subcommand is answered with the list of the valid ones.
  if (argc >= 2 && argv[1][0] != '-') {
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
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  try {
    if (run->parsed())
      return cmd_run(file, protocols, seed, out_dir, *parse_trace_level(trace_level), quiet, run_formats);
    if (report->parsed()) return cmd_report(report_dir, report_formats);
    if (explain->parsed()) return cmd_explain(explain_args);
    if (check->parsed()) return cmd_check(check_args);
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
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kBadInput;
  } catch (const sim::InvariantViolation& e) {
    std::cerr << "rebalance-sim: internal error (a model invariant broke; please report): " << e.what()
              << fmt::format(" [scenario {}, seed {}]", file, seed ? std::to_string(*seed) : "from scenario")
              << "\n";
    return kInternalError;
  } catch (const std::exception& e) {
    std::cerr << "rebalance-sim: internal error: " << e.what() << "\n";
    return kInternalError;
  }
  return kBadInput;
}

}  // namespace rsim::cli
