#include "tools/commands/check.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/baseline.hpp"
#include "reports/analyses/golden.hpp"
#include "reports/escape.hpp"
#include "reports/summary.hpp"
#include "sim/assert.hpp"
#include "tools/commands/check_shard.hpp"
#include "tools/commands/check_variants.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/sweep.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

/// One test case of the report.
struct Case {
  std::string name;
  bool passed = false;
  bool skipped = false;     // a warning: nothing to check
  bool error = false;       // the scenario did not load (JUnit <error>, not <failure>)
  std::string failure;      // the failure line (or the warning)
  std::string passed_line;  // what a PASS line adds: the actual value
  std::string md_actual;    // the Markdown cell when it is not the failure line (golden: headline,
                            // detail folded)
  double time_s = 0;        // virtual seconds: the instant the assertion is about
  ExpectResult result;      // for assertions
  bool assertion = false;
};

/// One testsuite: a scenario under one variant (or an invalid scenario).
struct Suite {
  std::string scenario, file, variant;
  std::uint64_t seed = 0;
  double time_s = 0;  // the variant's simulated duration
  double wall_s = 0;  // the wall time the variant's run took (JUnit --junit-time wall)
  std::vector<Case> cases;
  std::vector<std::string> moments;  // the decisive moments of the run (summary.json's `moments`)
  std::vector<RegressionRow> regression;  // with --baseline
  nlohmann::ordered_json metrics;         // its single-number metrics (check --json `runs`)
};

struct ScenarioResult {
  std::string file, out_name;
  std::vector<Suite> suites;
  std::vector<VariantOutput> outputs;
  std::string golden_written;
  std::string write_error;  // --out could not be written
  bool invalid = false, internal_error = false;
};

std::string xml_escape(const std::string& s) {
  return reports::markup_escape(s);
}

std::string md_escape(const std::string& raw) {
  std::string out;
  const std::string s = escaped_lines(raw);
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else
      out += c;
  }
  return out;
}

/// What every scenario of one `check` is checked with.
struct CheckContext {
  bool update_golden = false;
  std::string out_root;
  bool strict = false;
  const std::map<std::pair<std::string, std::string>, ojson>* baseline = nullptr;  // --baseline
  Tolerances file_tolerances, cli_tolerances;
  bool force = false;  // --force: write into per-scenario folders rebalance-sim does not own
  ModelOptions model;  // developer checks (RSIM_CHECK_QUIET_PASSES)
};

/// The stable JUnit name of an assertion: its `id`, else its `message`, else its index.
std::string case_name(const ScenarioSpec& spec, const ExpectResult& e) {
  const ExpectSpec* x = e.index < spec.expect.size() ? &spec.expect[e.index] : nullptr;
  if (x != nullptr && !x->id.empty()) return x->id;
  if (x != nullptr && !x->message.empty()) return x->message;
  return fmt::format("expect[{}] {}", e.index, e.what);
}

/// The golden-file case of one variant: its summary against the stored golden's, within the
/// golden's tolerances (the headline deltas first, the per-rebalance detail after them).
Case golden_case(const ojson& golden, const std::string& gpath, const std::string& name,
                 const ojson& summary, double time_s) {
  Case c;
  c.name = "matches golden " + fs::path(gpath).filename().string();
  c.time_s = time_s;
  if (!golden.contains("variants") || !golden.at("variants").contains(name)) {
    c.failure = fmt::format("{} has no variant \"{}\" (rerun with --update-golden)", gpath, name);
  } else {
    const auto diff = golden_compare(golden.at("variants").at(name), golden_of(summary),
                                     golden.value("tolerances", ojson::object()));
    c.passed = !diff.failed;
    // The headline deltas first; the per-rebalance detail after them.
    std::string text;
    for (const auto& d : diff.headline) text += "\n    " + d;
    if (!diff.detail.empty() && !diff.headline.empty()) text += "\n    per rebalance:";
    for (const auto& d : diff.detail) text += "\n    " + d;
    if (!c.passed)
      c.failure = fmt::format("differs from {}:{}", gpath, text);
    else
      c.passed_line = diff.detail.empty() ? "" : fmt::format(" (within tolerances:{})", text);
    std::string cell;
    for (const auto& d : diff.headline) cell += (cell.empty() ? "" : "<br>") + md_escape(d);
    if (!diff.detail.empty()) {
      std::string folded;
      for (const auto& d : diff.detail) folded += (folded.empty() ? "" : "<br>") + md_escape(d);
      cell += fmt::format("<details><summary>per rebalance ({} lines)</summary>{}</details>",
                          diff.detail.size(), folded);
    }
    c.md_actual = cell;
  }
  return c;
}

/// One case per gated metric of the regression table (`check --baseline`), named by the metric.
void add_regression_cases(Suite& s) {
  for (const auto& r : s.regression) {
    if (!r.tolerance) continue;
    Case c;
    c.name = "regression " + r.metric;  // stable: one per metric
    c.time_s = s.time_s;
    c.passed = !r.failed;
    if (r.failed)
      c.failure = fmt::format("regressed: {}", r.describe());
    else
      c.passed_line = ": " + r.describe() + (r.verdict == "improved" ? " improved" : "");
    s.cases.push_back(std::move(c));
  }
}

/// One case per `expect` entry of a variant, with the value a PASS line shows.
void add_expectation_cases(Suite& s, const ScenarioSpec& vspec,
                           const std::vector<ExpectResult>& expectations) {
  for (const auto& e : expectations) {
    Case c;
    c.assertion = true;
    c.name = case_name(vspec, e);
    c.passed = e.passed;
    // A PASS line shows the value: " (actual 2)", or ": duplicates == 0 (actual 0)" under an
    // id/message.
    c.passed_line = fmt::format("{} (actual {}{})",
                                c.name.find(e.what) == std::string::npos ? ": " + e.what : "",
                                e.actual.dump(), e.detail.empty() ? "" : ", " + e.detail);
    if (!e.passed) c.failure = e.describe(/*with_protocol=*/false);
    c.time_s = static_cast<double>(e.at_us) / 1e6;
    c.result = e;
    s.cases.push_back(std::move(c));
  }
}

/// The suite's last touches: assertions with the same name told apart by their index, and a
/// suite with nothing to check given one case (skipped, or failed under --strict).
void finish_cases(Suite& s, bool strict) {
  // Two assertions with the same message: the index tells them apart.
  for (auto& c : s.cases) {
    if (!c.assertion) continue;
    const auto same = std::count_if(s.cases.begin(), s.cases.end(),
                                    [&](const Case& o) { return o.name == c.name; });
    if (same > 1) c.name += fmt::format(" [expect[{}]]", c.result.index);
  }
  if (s.cases.empty()) {
    Case c;
    c.name = "assertions";
    c.skipped = !strict;  // --strict: nothing to check is a failure
    c.failure =
        strict
            ? "no assertions for this variant (--strict; add an `expect` list, a golden file with "
              "--update-golden, or tolerances with --baseline)"
            : "no assertions for this variant (add an `expect` list, or a golden file with "
              "--update-golden)";
    s.cases.push_back(std::move(c));
  }
}

/// The scenario's golden file for `check`: with --update-golden the new text goes to
/// `res.golden_written`; otherwise the stored file (if any) is read into `golden` and its shape
/// checked. Returns what is wrong when the stored file is not a golden file.
std::optional<std::string> read_golden(const std::string& gpath, bool update_golden,
                                       const std::string& scenario, ScenarioResult& res,
                                       ojson& golden) {
  if (update_golden) {
    std::vector<std::pair<std::string, ojson>> variants;
    for (const auto& o : res.outputs) variants.emplace_back(output_name(o), o.summary);
    res.golden_written = golden_file(scenario, variants).dump(2) + "\n";
    return std::nullopt;
  }
  if (!fs::exists(gpath)) return std::nullopt;
  std::ifstream in(gpath);
  try {
    golden = ojson::parse(in);
  } catch (const std::exception& e) {
    return fmt::format("{}: not a golden file: {}", gpath, e.what());
  }
  // Valid JSON of the wrong shape: every problem, each with its JSON path, in one message.
  if (const auto problems = golden_shape_problems(golden); !problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n    " + p;
    return fmt::format("{}: not a golden file (rerun with --update-golden, or fix):{}", gpath,
                       text);
  }
  return std::nullopt;
}

ScenarioResult check_one(const std::string& file, const std::string& out_name,
                         const CheckContext& ctx) {
  const bool update_golden = ctx.update_golden;
  const std::string& out_root = ctx.out_root;
  const bool force = ctx.force;
  const ModelOptions& model = ctx.model;
  ScenarioResult res;
  res.file = file;
  res.out_name = out_name;
  auto invalid = [&](const std::string& why, bool internal) {
    Suite s;
    s.scenario = file;
    s.file = file;
    s.variant = "-";
    Case c;
    c.name = "scenario is valid";
    c.failure = why;
    c.error = true;
    s.cases.push_back(std::move(c));
    res.suites.push_back(std::move(s));
    (internal ? res.internal_error : res.invalid) = true;
  };
  ScenarioSpec spec;
  std::vector<double> wall_s;
  // Settings variants (a top-level `variants`): every variant x protocol is a suite of its own,
  // named "<variant>/<protocol>" (tools/commands/check_variants.hpp). Without: the scenario,
  // unnamed.
  std::vector<SettingsVariant> settings;
  std::vector<std::size_t> setting_of;  // the settings variant of each output
  try {
    spec = load_checked_scenario(file);
    settings = check_settings_variants(file, spec);
    // One (settings variant, protocol) at a time, each timed (JUnit's wall time).
    const auto run_all = [&](const RunOptions& base) {
      res.outputs.clear();
      wall_s.clear();
      setting_of.clear();
      for (std::size_t si = 0; si < settings.size(); ++si) {
        RunOptions options = base;
        options.variant = settings[si].name;
        for (const auto& v : settings[si].spec.protocols) {
          const auto t0 = std::chrono::steady_clock::now();
          auto one = run_variants(settings[si].spec, {v}, std::nullopt, options);
          wall_s.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          for (auto& o : one) {
            res.outputs.push_back(std::move(o));
            setting_of.push_back(si);
          }
        }
      }
    };
    // With --out, each variant streams its files into DIR/<scenario>/ (staged) as it runs.
    try {
      std::optional<StagedOutput> staged;
      RunOptions options;
      options.model = model;
      if (!out_root.empty()) {
        staged.emplace(fs::path(out_root) / out_name, OutputOwner{spec.name, file, force});
        staged->claim(output_folders(settings));
        options.staged = &*staged;
      }
      try {
        // Every variant's unsupported features are reported together first, as one
        // run_variants() call would.
        std::vector<std::string> problems;
        for (const auto& sv : settings)
          for (const auto& v : sv.spec.protocols)
            for (auto& p : unsupported_features(sv.spec, v)) problems.push_back(std::move(p));
        if (!problems.empty()) {
          std::sort(problems.begin(), problems.end());
          problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
          throw ScenarioError(spec.source_path, problems);
        }
        run_all(options);
        if (staged) {
          if (!settings.front().name.empty()) staged->set_variants(output_folders(settings));
          // Each scenario's report.html, as `run` writes it (`report DIR/<scenario>` gives the same
          // bytes).
          std::vector<VariantText> texts;
          for (const auto& o : res.outputs)
            texts.push_back(VariantText{output_name(o),
                                        {},
                                        o.summary.dump(2) + "\n",
                                        staged_trace_path(*staged, output_name(o)).string()});
          for (const auto& [rel, bytes] : render_outputs(std::move(texts), FormatArgs{}))
            staged->write_file(fs::path(rel), bytes);
          staged->commit();
        }
      } catch (const OutputError& e) {
        if (staged) throw staged->retold(e);
        throw;
      }
    } catch (const OutputError& e) {
      res.write_error = e.what();
      run_all(RunOptions{});
    }
  } catch (const ScenarioError& e) {
    invalid(e.what(), false);
    return res;
  } catch (const sim::InvariantViolation& e) {
    invalid(fmt::format("internal error (a model invariant broke; please report): {} [seed {}]",
                        e.what(), spec.seed),
            true);
    return res;
  } catch (const std::exception& e) {
    invalid(fmt::format("internal error: {}", e.what()), true);
    return res;
  }
  // Golden: compare against the stored file, or rewrite it.
  const std::string gpath = golden_path(file);
  ojson golden;
  if (const auto why = read_golden(gpath, update_golden, spec.name, res, golden)) {
    invalid(*why, false);
    return res;
  }
  for (std::size_t vi = 0; vi < res.outputs.size(); ++vi) {
    const auto& o = res.outputs[vi];
    const ScenarioSpec& vspec = settings[setting_of[vi]].spec;  // the settings variant's
    const std::string name = output_name(o);  // "<protocol>" or "<variant>/<protocol>"
    const Tolerances tolerances = merged_tolerances(vspec, ctx.file_tolerances, ctx.cli_tolerances);
    Suite s;
    s.wall_s = vi < wall_s.size() ? wall_s[vi] : 0.0;
    s.metrics = baseline_metrics(o.summary);
    s.scenario = vspec.name;
    s.file = file;
    s.variant = name;
    s.seed = vspec.seed;
    s.time_s = static_cast<double>(vspec.duration.count()) / 1e6;
    s.moments = reports::moment_lines(o.summary);
    add_expectation_cases(s, vspec, o.expectations);
    if (!golden.is_null()) s.cases.push_back(golden_case(golden, gpath, name, o.summary, s.time_s));
    if (ctx.baseline != nullptr) {
      const auto it = ctx.baseline->find({vspec.name, name});
      s.regression =
          compare_with_baseline(vspec.name, name, it == ctx.baseline->end() ? nullptr : &it->second,
                                s.metrics, tolerances);
      add_regression_cases(s);
    }
    finish_cases(s, ctx.strict);
    res.suites.push_back(std::move(s));
  }
  return res;
}

/// JUnit XML in the common shape (tests/cli/junit.xsd): <error> for a scenario that does not
/// load, <failure> for an assertion that fails, <skipped> for nothing to check. `time`: wall
/// seconds of each variant's run (shared evenly by its test cases), virtual seconds, or zero.
std::string junit_of(const std::vector<ScenarioResult>& results, const std::string& time_mode) {
  int tests = 0, failures = 0, errors = 0;
  double total_time = 0;
  auto suite_time = [&](const Suite& s) {
    return time_mode == "wall" ? s.wall_s : time_mode == "virtual" ? s.time_s : 0.0;
  };
  for (const auto& r : results)
    for (const auto& s : r.suites) {
      total_time += suite_time(s);
      for (const auto& c : s.cases) {
        ++tests;
        if (c.error)
          ++errors;
        else if (!c.skipped && !c.passed)
          ++failures;
      }
    }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format(
      "<testsuites name=\"rebalance-sim check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "time=\"{:.3f}\">\n",
      tests, failures, errors, total_time);
  for (const auto& r : results) {
    for (const auto& s : r.suites) {
      int f = 0, k = 0, e = 0;
      for (const auto& c : s.cases) {
        if (c.error)
          ++e;
        else if (c.skipped)
          ++k;
        else if (!c.passed)
          ++f;
      }
      const std::string suite_name =
          s.variant == "-" ? s.file : fmt::format("{} [{}]", s.scenario, s.variant);
      x += fmt::format(
          "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
          "time=\"{:.3f}\">\n",
          xml_escape(suite_name), s.cases.size(), f, e, k, suite_time(s));
      x += "    <properties>\n";
      x += fmt::format("      <property name=\"scenario_file\" value=\"{}\"/>\n",
                       xml_escape(s.file));
      if (s.variant != "-") {
        x += fmt::format("      <property name=\"seed\" value=\"{}\"/>\n", s.seed);
        x +=
            fmt::format("      <property name=\"variant\" value=\"{}\"/>\n", xml_escape(s.variant));
        x += fmt::format("      <property name=\"virtual_seconds\" value=\"{:.3f}\"/>\n", s.time_s);
      }
      x += fmt::format("      <property name=\"commit\" value=\"{}\"/>\n",
                       xml_escape(build::kCommit));
      x += "    </properties>\n";
      const std::string classname =
          s.variant == "-" ? s.file : fmt::format("{}.{}", s.scenario, s.variant);
      for (const auto& c : s.cases) {
        const double t = time_mode == "wall"      ? s.wall_s / static_cast<double>(s.cases.size())
                         : time_mode == "virtual" ? c.time_s
                                                  : 0.0;
        x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"",
                         xml_escape(classname), xml_escape(c.name), t);
        const std::string first_line = c.failure.substr(0, c.failure.find('\n'));
        if (c.error) {
          x += fmt::format(
              "><error message=\"{}\" type=\"invalid scenario\">{}</error></testcase>\n",
              xml_escape(first_line), xml_escape(c.failure));
        } else if (c.passed) {
          x += "/>\n";
        } else if (c.skipped) {
          x += fmt::format("><skipped message=\"{}\"/></testcase>\n", xml_escape(c.failure));
        } else {
          x += fmt::format("><failure message=\"{}\">{}</failure></testcase>\n",
                           xml_escape(first_line), xml_escape(c.failure));
        }
      }
      x += "  </testsuite>\n";
    }
  }
  x += "</testsuites>\n";
  return x;
}

std::string markdown_row(const Suite& s, const Case& c) {
  const char* mark = c.error     ? ":boom:"
                     : c.skipped ? ":warning:"
                     : c.passed  ? ":white_check_mark:"
                                 : ":x:";
  std::string actual;
  if (c.assertion)
    actual = md_escape(c.result.actual.dump() +
                       (c.result.detail.empty() ? "" : " (" + c.result.detail + ")"));
  else if (!c.md_actual.empty())
    actual = c.md_actual;
  else if (!c.passed)
    actual = md_escape(c.failure);
  else
    actual = md_escape(c.passed_line.starts_with(": ") ? c.passed_line.substr(2) : c.passed_line);
  return fmt::format("| {} | {} | {} | `{}` | {} |\n", mark,
                     md_escape(s.variant == "-" ? s.file : s.scenario), s.variant,
                     md_escape(c.name), actual);
}

/// The step summary: the regression table first (with --baseline), then what failed, then every
/// result folded in <details>.
std::string markdown_of(const std::vector<ScenarioResult>& results, int passed, int failed,
                        int warnings, const std::vector<RegressionRow>* regression) {
  std::string m = "## rebalance-sim check\n\n";
  m += fmt::format("**{} passed, {} failed, {} warnings** (commit `{}`)\n\n", passed, failed,
                   warnings, build::kCommit);
  if (regression != nullptr) m += regression_markdown(*regression);
  constexpr const char* head =
      "| | scenario | variant | assertion | actual |\n|---|---|---|---|---|\n";
  std::string failing, all;
  int n = 0;
  for (const auto& r : results)
    for (const auto& s : r.suites)
      for (const auto& c : s.cases) {
        const std::string row = markdown_row(s, c);
        all += row;
        ++n;
        if (!c.passed && !c.skipped) failing += row;
      }
  if (!failing.empty()) m += "### Failed\n\n" + std::string(head) + failing + "\n";
  m +=
      fmt::format("<details><summary>All {} results</summary>\n\n{}{}\n</details>\n", n, head, all);
  return m;
}

std::string json_of(const std::vector<ScenarioResult>& results, int passed, int failed,
                    int warnings) {
  ojson doc;
  doc["passed"] = passed;
  doc["failed"] = failed;
  doc["warnings"] = warnings;
  doc["commit"] = build::kCommit;
  ojson list = ojson::array();
  for (const auto& r : results) {
    for (const auto& s : r.suites) {
      for (const auto& c : s.cases) {
        ojson j;
        j["file"] = s.file;
        j["scenario"] = s.scenario;
        j["variant"] = s.variant;
        if (s.variant != "-") j["seed"] = s.seed;
        j["name"] = c.name;
        j["status"] = c.error ? "error" : c.skipped ? "warning" : c.passed ? "passed" : "failed";
        if (c.assertion) {
          j["index"] = c.result.index;
          j["metric"] = c.result.metric;
          j["op"] = c.result.op;
          j["expected"] = c.result.expected;
          j["actual"] = c.result.actual;
          if (!c.result.detail.empty()) j["detail"] = c.result.detail;
          if (!c.result.message.empty()) j["message"] = c.result.message;
        }
        if (!c.passed && !c.failure.empty()) j["failure"] = c.failure;
        list.push_back(std::move(j));
      }
    }
  }
  doc["results"] = list;
  // What a later `check --baseline` compares with: each scenario and variant's metrics.
  ojson runs = ojson::array();
  for (const auto& r : results)
    for (const auto& s : r.suites) {
      if (s.variant == "-") continue;
      runs.push_back({{"file", s.file},
                      {"scenario", s.scenario},
                      {"variant", s.variant},
                      {"seed", s.seed},
                      {"metrics", s.metrics}});
    }
  doc["runs"] = runs;
  return doc.dump(2) + "\n";
}

/// A report file must be writable before anything runs: exit 2 otherwise, with no output.
std::string unwritable(const std::string& file) {
  if (file.empty()) return "";
  const fs::path p(file);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (fs::is_directory(p, ec)) return fmt::format("cannot write {}: it is a directory", file);
  if (!fs::is_directory(dir, ec))
    return fmt::format("cannot write {}: no directory {}", file, dir.string());
  if (fs::exists(p, ec) ? ::access(file.c_str(), W_OK) != 0 : ::access(dir.c_str(), W_OK) != 0)
    return fmt::format("cannot write {}: permission denied", file);
  return "";
}

/// Writes `file` atomically and fsynced (tools/staged_output.hpp); "" or why it failed.
std::string write_file(const std::string& file, const std::string& text) {
  try {
    write_file_atomically(file, text);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

/// A relative path (without .json) as an output folder name: each component made safe.
std::string out_name_of(const fs::path& rel) {
  std::string out;
  for (const auto& c : rel) {
    if (c.empty()) continue;
    if (!out.empty()) out += '/';
    out += safe_component(c.string());
  }
  return out.empty() ? "_" : out;
}

/// A scenario's result as a `check --shard` unit, and back (check_report_units): every field the
/// console lines and the reports read, doubles exactly (JSON numbers round-trip), the metrics as
/// text so that their order survives any JSON reader.
nlohmann::json result_to_json(const ScenarioResult& r) {
  using json = nlohmann::json;
  json suites = json::array();
  for (const auto& s : r.suites) {
    json cases = json::array();
    for (const auto& c : s.cases) {
      const auto& e = c.result;
      cases.push_back({{"name", c.name},
                       {"passed", c.passed},
                       {"skipped", c.skipped},
                       {"error", c.error},
                       {"failure", c.failure},
                       {"passed_line", c.passed_line},
                       {"md_actual", c.md_actual},
                       {"time_s", c.time_s},
                       {"assertion", c.assertion},
                       {"result",
                        {{"index", e.index},
                         {"protocol", e.protocol},
                         {"what", e.what},
                         {"metric", e.metric},
                         {"op", e.op},
                         {"expected", e.expected},
                         {"actual", e.actual},
                         {"detail", e.detail},
                         {"message", e.message},
                         {"at_us", e.at_us},
                         {"passed", e.passed}}}});
    }
    suites.push_back({{"scenario", s.scenario},
                      {"file", s.file},
                      {"variant", s.variant},
                      {"seed", s.seed},
                      {"time_s", s.time_s},
                      {"wall_s", s.wall_s},
                      {"cases", cases},
                      {"moments", s.moments},
                      {"metrics", s.metrics.dump()}});
  }
  return {{"file", r.file},
          {"out_name", r.out_name},
          {"suites", suites},
          {"invalid", r.invalid},
          {"internal_error", r.internal_error}};
}

ScenarioResult result_of_json(const nlohmann::json& j) {
  ScenarioResult r;
  r.file = j.at("file").get<std::string>();
  r.out_name = j.at("out_name").get<std::string>();
  r.invalid = j.at("invalid").get<bool>();
  r.internal_error = j.at("internal_error").get<bool>();
  for (const auto& js : j.at("suites")) {
    Suite s;
    s.scenario = js.at("scenario").get<std::string>();
    s.file = js.at("file").get<std::string>();
    s.variant = js.at("variant").get<std::string>();
    s.seed = js.at("seed").get<std::uint64_t>();
    s.time_s = js.at("time_s").get<double>();
    s.wall_s = js.at("wall_s").get<double>();
    s.moments = js.at("moments").get<std::vector<std::string>>();
    s.metrics = ojson::parse(js.at("metrics").get<std::string>());
    for (const auto& jc : js.at("cases")) {
      Case c;
      c.name = jc.at("name").get<std::string>();
      c.passed = jc.at("passed").get<bool>();
      c.skipped = jc.at("skipped").get<bool>();
      c.error = jc.at("error").get<bool>();
      c.failure = jc.at("failure").get<std::string>();
      c.passed_line = jc.at("passed_line").get<std::string>();
      c.md_actual = jc.at("md_actual").get<std::string>();
      c.time_s = jc.at("time_s").get<double>();
      c.assertion = jc.at("assertion").get<bool>();
      const auto& je = jc.at("result");
      auto& e = c.result;
      e.index = je.at("index").get<std::size_t>();
      e.protocol = je.at("protocol").get<std::string>();
      e.what = je.at("what").get<std::string>();
      e.metric = je.at("metric").get<std::string>();
      e.op = je.at("op").get<std::string>();
      e.expected = je.at("expected");
      e.actual = je.at("actual");
      e.detail = je.at("detail").get<std::string>();
      e.message = je.at("message").get<std::string>();
      e.at_us = je.at("at_us").get<std::int64_t>();
      e.passed = je.at("passed").get<bool>();
      s.cases.push_back(std::move(c));
    }
    r.suites.push_back(std::move(s));
  }
  return r;
}

/// Everything `check` prints after its runs, its report files and its exit code.
int report_results(const std::vector<ScenarioResult>& results, std::size_t scenario_count,
                   const CheckReportTargets& targets,
                   const std::map<std::pair<std::string, std::string>, ojson>* baseline) {
  // The regression table comes first, on the console as in the step summary.
  std::vector<RegressionRow> regression;
  for (const auto& r : results)
    for (const auto& s : r.suites)
      regression.insert(regression.end(), s.regression.begin(), s.regression.end());
  if (baseline != nullptr) std::cout << regression_console(regression);

  int passed = 0, failed = 0, warnings = 0, invalid = 0;
  bool internal = false;
  std::vector<std::string> table;
  for (const auto& r : results) {
    internal = internal || r.internal_error;
    if (r.invalid) ++invalid;
    for (const auto& s : r.suites) {
      int sp = 0, sf = 0, sw = 0;
      for (std::size_t i = 0; i < s.moments.size() && i < 5; ++i)
        std::cout << fmt::format("WARN {} [{}]: decisive moment {}\n", s.scenario, s.variant,
                                 s.moments[i]);
      if (s.moments.size() > 5)
        std::cout << fmt::format("WARN {} [{}]: ... and {} more decisive moments\n", s.scenario,
                                 s.variant, s.moments.size() - 5);
      for (const auto& c : s.cases) {
        // Names come from the scenario (and the file system): printed with control characters
        // escaped, one result is one line and no name can forge another PASS line.
        if (c.skipped) {
          ++warnings, ++sw;
          std::cout << fmt::format("WARN {} [{}]: {}\n", one_line(s.scenario), s.variant,
                                   one_line(c.failure));
        } else if (c.passed) {
          ++passed, ++sp;
          std::cout << fmt::format("PASS {} [{}] {}{}\n", one_line(s.scenario), s.variant,
                                   one_line(c.name), c.passed_line);
        } else {
          ++failed, ++sf;
          if (s.variant == "-")
            std::cout << fmt::format("FAIL {}: invalid scenario:\n{}\n", one_line(s.file),
                                     escaped_lines(c.failure));
          else
            std::cout << fmt::format("FAIL {} [{}] {} ({})\n", one_line(s.scenario), s.variant,
                                     c.assertion ? one_line(c.failure) : escaped_lines(c.failure),
                                     one_line(s.file));
        }
      }
      table.push_back(fmt::format("| {:<44} | {:<19} | {:>4} | {:>4} | {:>4} |",
                                  one_line(s.variant == "-" ? s.file : s.scenario), s.variant, sp,
                                  sf, sw));
    }
  }
  std::cout << "\n"
            << fmt::format("| {:<44} | {:<19} | {:>4} | {:>4} | {:>4} |\n", "scenario", "variant",
                           "pass", "fail", "warn");
  std::cout << fmt::format("|{:-<46}|{:-<21}|{:-<6}|{:-<6}|{:-<6}|\n", "", "", "", "", "");
  for (const auto& row : table) std::cout << row << "\n";
  std::cout << fmt::format("\n{} passed, {} failed, {} warnings ({} scenarios, {} invalid)\n",
                           passed, failed, warnings, scenario_count, invalid);

  bool io_error = false;
  auto report = [&](const std::string& file, const std::string& text) {
    if (file.empty()) return;
    if (const std::string why = write_file(file, text); !why.empty()) {
      std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(why));
      io_error = true;
    }
  };
  report(targets.junit, junit_of(results, targets.junit_time));
  report(targets.markdown, markdown_of(results, passed, failed, warnings,
                                       baseline != nullptr ? &regression : nullptr));
  report(targets.json, json_of(results, passed, failed, warnings));
  for (const auto& r : results) {
    if (r.write_error.empty()) continue;
    std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(r.write_error));
    io_error = true;
  }
  for (const auto& r : results) {
    if (r.golden_written.empty()) continue;
    const std::string g = golden_path(r.file);
    if (const std::string why = write_file(g, r.golden_written); !why.empty()) {
      std::cerr << fmt::format("rebalance-sim check: {}\n", one_line(why));
      io_error = true;
    } else {
      std::cout << fmt::format("wrote {}\n", g);
    }
  }
  if (internal) return kInternalError;
  if (invalid > 0 || io_error) return kBadInput;
  return failed > 0 ? kExpectationFailed : kOk;
}

}  // namespace

int check_report_units(const std::vector<const nlohmann::json*>& units, std::size_t scenario_count,
                       const CheckReportTargets& targets) {
  std::vector<ScenarioResult> results;
  results.reserve(units.size());
  for (const auto* u : units) results.push_back(result_of_json(*u));
  return report_results(results, scenario_count, targets, nullptr);
}

std::vector<std::pair<std::string, std::string>> scenario_files(
    const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::pair<std::string, std::string>> found;
      // A folder that cannot be listed is bad input (exit 2) named by its path, not an error of
      // ours.
      fs::recursive_directory_iterator it(a, ec), end;
      if (ec) throw ScenarioError(a, {fmt::format("cannot list the folder: {}", ec.message())});
      while (it != end) {
        const auto& entry = *it;
        const auto p = entry.path();
        std::error_code e2;
        // scenarios/assign/ holds `rebalance-sim assign` cases, not scenarios.
        if (entry.is_directory(e2) && p.filename() == "assign") {
          it.disable_recursion_pending();
        } else if (entry.is_directory(e2) &&
                   (fs::exists(p / kManifestName, e2) ||
                    p.filename().string().find(".rebalance-sim-staging-") != std::string::npos)) {
          // Output folders (owned: a manifest) and staging folders hold outputs, not scenarios.
          it.disable_recursion_pending();
        } else {
          const std::string name = p.filename().string();
          if (entry.is_regular_file(e2) && p.extension() == ".json" && name != "schema.json" &&
              !name.ends_with(".golden.json"))
            found.emplace_back(p.string(), out_name_of(fs::relative(p, a, e2).replace_extension()));
        }
        it.increment(ec);
        if (ec)
          throw ScenarioError(p.string(),
                              {fmt::format("cannot list the folder: {}", ec.message())});
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.emplace_back(a, out_name_of(fs::path(a).filename().replace_extension()));
    }
  }
  // Unique, and never a folder that another name lies in.
  std::set<std::string> folders, taken;
  for (const auto& f : files)
    for (std::size_t slash = f.second.find('/'); slash != std::string::npos;
         slash = f.second.find('/', slash + 1))
      folders.insert(f.second.substr(0, slash));
  for (auto& f : files) {
    std::string name = f.second;
    for (int k = 2; taken.count(name) > 0 || folders.count(name) > 0; ++k)
      name = fmt::format("{}-{}", f.second, k);
    taken.insert(name);
    f.second = name;
  }
  return files;
}

CLI::App* add_check_subcommand(CLI::App& app, CheckArgs& args) {
  auto* check = app.add_subcommand(
      "check",
      "run scenarios and check their `expect` lists and golden files (exit 1 if any fails)");
  check->add_option("scenarios", args.paths, "scenario files or directories")->required();
  check->add_option("--junit", args.junit,
                    "also write a JUnit XML report to FILE (a testsuite per scenario and variant)");
  check->add_option("--markdown", args.markdown,
                    "also write a Markdown table to FILE (for a CI step summary)");
  check->add_option("--json", args.json, "also write the results as JSON to FILE");
  check
      ->add_option("--jobs", args.jobs,
                   "run N scenarios at a time (the results are the same for every N)")
      ->check(CLI::Range(1u, 256u));
  check->add_option("--out", args.out_dir,
                    "keep every run's outputs under DIR/<scenario>/<variant>/ (<scenario>: the "
                    "file's path relative "
                    "to its argument, without .json, made safe and unique)");
  check->add_flag(
      "--force", args.force,
      "with --out: write into per-scenario folders that are not output folders of rebalance-sim");
  check->add_flag("--update-golden", args.update_golden,
                  "write each scenario's golden summary next to it (x.json -> x.golden.json)");
  check
      ->add_option("--baseline", args.baseline,
                   "compare each scenario's metrics with RESULTS.json (what `check --json` wrote "
                   "on the base branch); "
                   "a metric beyond its tolerance fails")
      ->type_name("RESULTS.json");
  check
      ->add_option("--max-regression", args.max_regressions,
                   "METRIC=+N% or METRIC=+N: the metric may rise by at most that much against "
                   "--baseline (-N%: drop); "
                   "repeatable; overrides the scenario's `regression`")
      ->type_name("METRIC=+N%")
      ->expected(1)
      ->multi_option_policy(
          CLI::MultiOptionPolicy::TakeAll);  // one value each time: the paths stay paths
  check
      ->add_option("--regression-file", args.regression_file,
                   "tolerances against --baseline from FILE, a JSON object {\"METRIC\": \"+N%\"} "
                   "(overrides the scenario's)")
      ->type_name("FILE");
  check
      ->add_option("--junit-time", args.junit_time,
                   "JUnit time attributes: wall (seconds each run took; default), virtual "
                   "(simulated seconds), zero "
                   "(byte-identical files)")
      ->check(CLI::IsMember({"wall", "virtual", "zero"}));
  check->add_flag("--strict", args.strict,
                  "a variant with nothing to check fails (instead of a warning)");
  check
      ->add_option("--shard", args.shard,
                   "I/N: run only the I-th of N deterministic shares of the scenarios and write "
                   "DIR/shard-I-of-N.json "
                   "(DIR: --out, default out/check/shards); `merge` prints and writes what the "
                   "unsharded check does")
      ->type_name("I/N");
  check->footer(
      "Example: rebalance-sim check scenarios/ --junit results.xml --markdown summary.md --jobs 2\n"
      "         rebalance-sim check scenarios/ --baseline base.json --max-regression "
      "max_rebalance_ms=+10% "
      "--markdown \"$GITHUB_STEP_SUMMARY\"");
  return check;
}

int cmd_check(const CheckArgs& args) {
  std::optional<std::pair<std::uint32_t, std::uint32_t>> shard;
  if (!args.shard.empty()) {
    shard = parse_shard(args.shard);
    if (const auto why = shard_conflicts(args); !why.empty()) {
      throw BadInput("rebalance-sim check: " + why);
    }
  }
  // A shard only records the report paths: the merge writes them.
  for (const auto& f : {args.junit, args.markdown, args.json}) {
    if (const auto why = shard ? std::string() : unwritable(f); !why.empty()) {
      throw BadInput("rebalance-sim check: " + why);
    }
  }
  for (const auto& p : args.paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      throw BadInput(fmt::format("rebalance-sim check: {}: no such file or directory", p));
    }
  }
  const auto files = scenario_files(args.paths);
  if (files.empty()) {
    throw BadInput("rebalance-sim check: no scenario files found");
  }
  // The baseline and the tolerances are read before anything runs: bad ones are exit 2.
  CheckContext ctx;
  ctx.update_golden = args.update_golden;
  ctx.out_root =
      shard ? std::string() : args.out_dir;  // a shard's --out: where its shard result goes
  ctx.strict = args.strict;
  ctx.force = args.force;
  ctx.model = args.model;
  std::map<std::pair<std::string, std::string>, ojson> baseline;
  {
    std::vector<std::string> problems;
    ctx.cli_tolerances = parse_max_regressions(args.max_regressions, problems);
    ctx.file_tolerances = read_tolerance_file(args.regression_file, problems);
    if (args.baseline.empty() && (!args.max_regressions.empty() || !args.regression_file.empty()))
      problems.push_back(
          "--max-regression and --regression-file need --baseline RESULTS.json (what `check "
          "--json` wrote "
          "on the base branch)");
    if (!args.baseline.empty()) {
      try {
        baseline = read_baseline(args.baseline);
        ctx.baseline = &baseline;
      } catch (const ScenarioError& e) {
        problems.push_back(e.what());
      }
    }
    if (!problems.empty()) {
      std::string message;
      for (const auto& p : problems)
        message += (message.empty() ? "" : "\n") + ("rebalance-sim check: " + p);
      throw BadInput(message);
    }
  }
  // Each scenario is independent (its own world, kernel and random streams); the results are
  // collected by index and printed in file order, so any --jobs gives the same bytes.
  // With --shard, only scenario number k (in file order) with k mod N = I - 1 runs.
  std::vector<std::size_t> todo;
  for (std::size_t k = 0; k < files.size(); ++k)
    if (!shard || in_shard(k, *shard)) todo.push_back(k);
  std::vector<ScenarioResult> results(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++)
      results[todo[i]] = check_one(files[todo[i]].first, files[todo[i]].second, ctx);
  };
  const unsigned jobs = std::max(
      1u,
      std::min<unsigned>(args.jobs, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned j = 0; j < jobs; ++j) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  if (shard) {
    std::vector<std::pair<std::size_t, nlohmann::json>> units;
    for (const std::size_t k : todo) units.emplace_back(k, result_to_json(results[k]));
    return write_check_shard(args, *shard, files, units);
  }
  return report_results(results, files.size(),
                        CheckReportTargets{args.junit, args.markdown, args.json, args.junit_time},
                        ctx.baseline);
}

}  // namespace rsim::cli
