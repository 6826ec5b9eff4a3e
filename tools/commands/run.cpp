#include "tools/commands/run.hpp"

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/scenario.hpp"
#include "models/scenario/variants.hpp"
#include "reports/analyses/expectations.hpp"
#include "reports/invariants.hpp"
#include "reports/summary.hpp"
#include "tools/commands/explore.hpp"
#include "tools/commands/report.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxMomentLines = 20;  // decisive moments printed per variant

/// A --protocol that is not a variant: the message lists the valid ones.
void check_variants(const std::vector<std::string>& protocols) {
  for (const auto& p : protocols) {
    if (std::find(protocol_variants().begin(), protocol_variants().end(), p) !=
        protocol_variants().end())
      continue;
    const std::string guess = closest_match(p, protocol_variants());
    throw ScenarioError(
        "--protocol",
        {fmt::format("unknown variant \"{}\"{}; valid variants: {}", p,
                     guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess),
                     fmt::join(protocol_variants(), ", "))});
  }
}

int run_staged(const ScenarioSpec& spec, const std::string& file,
               const std::vector<std::string>& protocols, std::optional<std::uint64_t> seed,
               const std::string& out_dir, TraceLevel level, bool quiet, const FormatArgs& formats,
               const RunChecks& checks, StagedOutput& staged);

}  // namespace

int cmd_run(const std::string& file, const std::vector<std::string>& protocols,
            std::optional<std::uint64_t> seed, std::string out_dir, TraceLevel level, bool quiet,
            const FormatArgs& formats, const RunChecks& checks) {
  check_variants(protocols);
  for (std::size_t i = 0; i < protocols.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (protocols[i] == protocols[j])
        throw ScenarioError("--protocol",
                            {fmt::format("\"{}\" given twice", one_line(protocols[i]))});
  ScenarioSpec spec = load_checked_scenario(file);
  if (checks.faults_seed) {
    // The fault knobs `explore` derives from this seed, applied to the file.
    std::vector<std::string> knobs;
    const auto doc = with_fault_knobs(load_scenario_json(file), *checks.faults_seed, knobs);
    const std::string sha = spec.sha256;
    spec = parse_scenario(doc, file);
    spec.sha256 = sha;
    for (const auto& k : knobs)
      std::cout << fmt::format("fault knob (seed {}): {}\n", *checks.faults_seed, k);
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

namespace {

int run_staged(const ScenarioSpec& spec, const std::string& file,
               const std::vector<std::string>& protocols, std::optional<std::uint64_t> seed,
               const std::string& out_dir, TraceLevel level, bool quiet, const FormatArgs& formats,
               const RunChecks& checks, StagedOutput& staged) {
  RunOptions options;
  options.staged = &staged;
  options.level = level;
  options.progress = !quiet && isatty(STDERR_FILENO) != 0;
  options.limits = checks.limits;
  options.model = checks.model;
  // Without a trace.jsonl, the determinism check reads a trace kept in memory.
  options.keep_trace = level == TraceLevel::None && checks.determinism;
  // The invariants are checked on the bus as the run goes: every event, also those only `full`
  // writes (records, OffsetCommit); their line numbers are those of the events on the bus.
  if (checks.invariants)
    options.invariants = [&spec](const std::string& protocol) {
      return invariant_context(spec, protocol);
    };
  // Without a trace there is no report: only the metrics, verdict and moments are read back, and
  // summary.json is streamed (memory holds the open rebalances only).
  options.stream_summary = level == TraceLevel::None;
  auto outputs = run_variants(spec, protocols, seed, options);
  // The traces as the files hold them (read back from the staging folder), for the checks and
  // the report: `report DIR` gives the same bytes. Only the determinism check holds a trace
  // whole; the report reads each file one line at a time.
  const bool whole_traces = checks.determinism;
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
      std::cout << fmt::format("determinism [{}]: trace sha256 {} and {}: {}\n",
                               outputs[i].protocol, a, b, a == b ? "identical" : "DIFFERENT");
      if (a != b) {
        std::cerr << fmt::format(
            "rebalance-sim: internal error: two runs of {} [{}] with the same seed "
            "gave different traces\n",
            file, outputs[i].protocol);
        return kInternalError;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> extra;
  if (level != TraceLevel::None) {
    // Without a trace there is no report.
    std::vector<VariantText> texts;
    for (std::size_t i = 0; i < outputs.size(); ++i)
      texts.push_back(VariantText{
          outputs[i].protocol, traces[i], outputs[i].summary.dump(2) + "\n",
          whole_traces ? std::string() : staged_trace_path(staged, outputs[i].protocol).string()});
    extra = render_outputs(std::move(texts), formats);
    for (const auto& [rel, bytes] : extra) staged.write_file(fs::path(rel), bytes);
  }
  staged.commit();
  bool failed = false;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!checks.invariants) continue;
    const auto& o = outputs[i];
    for (const auto& v : o.violations) {
      failed = true;
      if (!quiet)
        std::cout << fmt::format("{} [{}]: VIOLATED {}", one_line(spec.name), o.protocol,
                                 describe_violation(v));
    }
    if (o.violations.empty() && !quiet)
      std::cout << fmt::format("{} [{}]: invariants hold\n", one_line(spec.name), o.protocol);
  }
  if (quiet) {
    for (const auto& o : outputs)
      for (const auto& e : o.expectations)
        if (!e.passed) failed = true;
    return failed ? kExpectationFailed : kOk;
  }
  for (const auto& o : outputs) {
    if (o.summary.contains("verdict"))
      std::cout << fmt::format("{} [{}]: {}\n  {}\n", one_line(spec.name), o.protocol,
                               o.summary.at("verdict").get<std::string>(),
                               reports::headline_of(o.summary));
    else
      std::cout << fmt::format("{} [{}]: {}\n", one_line(spec.name), o.protocol,
                               reports::headline_of(o.summary));
    const auto moments = reports::moment_lines(o.summary);
    for (std::size_t i = 0; i < moments.size() && i < kMaxMomentLines; ++i)
      std::cout << "  warning: " << one_line(moments[i]) << "\n";
    if (moments.size() > kMaxMomentLines)
      std::cout << fmt::format(
          "  warning: ... and {} more decisive moments (summary.json's \"moments\")\n",
          moments.size() - kMaxMomentLines);
    if (level == TraceLevel::None)
      std::cout << fmt::format("  wrote {}/{}/summary.json\n", one_line(out_dir), o.protocol);
    else
      std::cout << fmt::format("  wrote {}/{}/trace.jsonl and summary.json\n", one_line(out_dir),
                               o.protocol);
    for (const auto& [rel, bytes] : extra)
      if (rel.rfind(o.protocol + "/", 0) == 0)
        std::cout << fmt::format("  wrote {}/{}\n", one_line(out_dir), rel);
    for (const auto& e : o.expectations) {
      if (!e.passed) {
        failed = true;
        std::cout << "  FAILED " << one_line(e.describe()) << "\n";
      }
    }
  }
  if (level != TraceLevel::None)
    std::cout << fmt::format("report: {}\n",
                             one_line((fs::path(out_dir) / "report.html").string()));
  return failed ? kExpectationFailed : kOk;
}

}  // namespace
}  // namespace rsim::cli
