#include "tools/commands/report.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "models/protocol/config.hpp"
#include "models/scenario/scenario.hpp"
#include "reports/csv.hpp"
#include "reports/html_report.hpp"
#include "reports/mermaid.hpp"
#include "reports/narrative.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/perfetto.hpp"
#include "reports/timeline.hpp"
#include "tools/cli_args.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw ScenarioError(p.string(), {"cannot read the file"});
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ScenarioError(p.string(), {"cannot read the file"});
  return ss.str();
}

/// `d` (a folder built as DIR/x or DIR/x/y) relative to DIR, lexically: "x" or "x/y".
std::string label_under(const fs::path& d, const std::string& dir) {
  fs::path base = fs::path(dir).lexically_normal();
  if (!base.has_filename() && base.has_parent_path()) base = base.parent_path();
  return d.lexically_normal().lexically_relative(base).generic_string();
}

/// The variants of a run directory: those its manifest names (the last run's, never a leftover of
/// another), each with a trace.jsonl and a summary.json. A folder without a manifest (written
/// before manifests, or by hand) is refused unless `any_variant`; then every DIR/<variant>/ with
/// both files is read.
std::vector<VariantText> read_run_dir(const std::string& dir, bool any_variant) {
  std::error_code dir_ec;
  if (!fs::is_directory(dir, dir_ec))
    throw ScenarioError(dir, {"not a directory (expected the --out DIR of a run)"});
  std::vector<VariantText> out;
  std::vector<fs::path> subdirs;
  OutputManifest manifest;
  bool owned = false;
  try {
    owned = read_manifest(dir, manifest);
  } catch (const OutputError& e) {
    if (!any_variant) throw ScenarioError(dir, {e.what()});
  }
  if (owned) {
    for (const auto& v : manifest.variants) {
      const fs::path d = fs::path(dir) / v;
      if (!fs::exists(d / "trace.jsonl") && fs::is_directory(d)) {
        // A settings variant's folder: DIR/<variant>/<protocol>/.
        std::vector<fs::path> inner;
        for (const auto& e : fs::directory_iterator(d))
          if (e.is_directory() && fs::exists(e.path() / "trace.jsonl") &&
              fs::exists(e.path() / "summary.json"))
            inner.push_back(e.path());
        if (!inner.empty()) {
          for (auto& p : inner) subdirs.push_back(std::move(p));
          continue;
        }
      }
      if (!fs::exists(d / "trace.jsonl") || !fs::exists(d / "summary.json"))
        throw ScenarioError(
            dir,
            {fmt::format("variant \"{}\" of {} has no trace.jsonl and summary.json (a run with "
                         "--trace none has no report)",
                         v, kManifestName)});
      subdirs.push_back(d);
    }
  } else if (!any_variant) {
    throw ScenarioError(
        dir,
        {fmt::format("not an output folder of rebalance-sim (no {}); run `rebalance-sim run "
                     "SCENARIO --out DIR` into it, or pass --force to read every DIR/<variant>/ "
                     "with a trace.jsonl and a summary.json",
                     kManifestName)});
  } else {
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    const auto is_variant = [](const fs::path& p) {
      std::error_code e2;
      return fs::is_directory(p, e2) && fs::exists(p / "trace.jsonl", e2) &&
             fs::exists(p / "summary.json", e2);
    };
    for (; !ec && it != end; it.increment(ec)) {
      const fs::path p = it->path();
      std::error_code e2;
      if (is_variant(p)) {
        subdirs.push_back(p);
      } else if (it->is_directory(e2) && p.filename().string()[0] != '.') {
        // A settings variant's folder: DIR/<variant>/<protocol>/.
        std::error_code e3;
        for (fs::directory_iterator inner(p, e3), iend; !e3 && inner != iend; inner.increment(e3))
          if (is_variant(inner->path())) subdirs.push_back(inner->path());
      }
    }
    if (ec) throw ScenarioError(dir, {fmt::format("cannot list the folder: {}", ec.message())});
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& d : subdirs) {
    // A trace cut short at a line boundary is well-formed line by line: its run.end line is
    // what says that it is whole.
    if (const std::string why = reports::trace_end_problem((d / "trace.jsonl").string());
        !why.empty())
      throw ScenarioError((d / "trace.jsonl").string(), {why});
    // The folder's name under DIR as written (<protocol> or <variant>/<protocol>), never resolved
    // through a symbolic link.
    out.push_back(VariantText{label_under(d, dir),
                              {},
                              read_all(d / "summary.json"),
                              (d / "trace.jsonl").string(),
                              (d / "summary.json").string()});
  }
  if (out.empty())
    throw ScenarioError(dir, {"no variant directories with trace.jsonl and summary.json; run "
                              "`rebalance-sim run SCENARIO --out DIR` first"});
  return out;
}

std::vector<reports::Timeline> timelines(std::vector<VariantText>& variants) {
  std::stable_sort(variants.begin(), variants.end(),
                   [](const VariantText& a, const VariantText& b) {
                     return reports::variant_less(a.protocol, b.protocol);
                   });
  std::vector<reports::Timeline> out;
  for (const auto& v : variants) {
    const std::string summary_name =
        v.summary_path.empty() ? v.protocol + "/summary.json" : v.summary_path;
    const std::string trace_name =
        v.trace_path.empty() ? v.protocol + "/trace.jsonl" : v.trace_path;
    nlohmann::ordered_json summary;
    try {
      summary = reports::parse_ordered(v.summary_json);
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(summary_name, {std::string("not valid json: ") + e.what()});
    }
    if (auto problems = reports::summary_shape_problems(summary); !problems.empty())
      throw ScenarioError(summary_name, std::move(problems));
    try {
      if (v.trace_jsonl.empty() && !v.trace_path.empty()) {
        std::ifstream in(v.trace_path, std::ios::binary);
        if (!in) throw std::runtime_error("cannot be read");
        out.push_back(reports::build_timeline(in, summary));
      } else {
        out.push_back(reports::build_timeline(v.trace_jsonl, summary));
      }
    } catch (const std::runtime_error& e) {
      throw ScenarioError(trace_name, {e.what()});
    } catch (const nlohmann::json::exception& e) {
      // A field of an unexpected type that the reader's own checks let through.
      throw ScenarioError(trace_name, {fmt::format("a field of an unexpected type: {}", e.what())});
    }
    if (out.back().protocol.empty()) out.back().protocol = v.protocol;
    // A settings variant's run is labelled <variant>/<protocol> on the shared time axis.
    if (v.protocol.find('/') != std::string::npos) out.back().protocol = v.protocol;
  }
  return out;
}

// The whole trace text of a variant, read from its file the first time it is needed.
const std::string& trace_text(VariantText& v) {
  if (v.trace_jsonl.empty() && !v.trace_path.empty()) {
    v.trace_jsonl = read_all(v.trace_path);
    v.trace_path.clear();
  }
  return v.trace_jsonl;
}

// A CSV rendering of a variant's trace, read one line at a time from its file when it has one
// (never whole, never as JSON documents); a malformed or wrongly typed line is bad input.
std::string csv_of(const VariantText& v, std::string (*render)(std::istream&)) {
  const std::string name = v.trace_path.empty() ? v.protocol + "/trace.jsonl" : v.trace_path;
  try {
    if (v.trace_jsonl.empty() && !v.trace_path.empty()) {
      std::ifstream in(v.trace_path, std::ios::binary);
      if (!in) throw std::runtime_error("cannot be read");
      return render(in);
    }
    std::istringstream in(v.trace_jsonl);
    return render(in);
  } catch (const std::runtime_error& e) {
    throw ScenarioError(name, {e.what()});
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioError(name, {fmt::format("a field of an unexpected type: {}", e.what())});
  }
}

}  // namespace

void add_format_options(CLI::App* c, FormatArgs& args) {
  c->add_option("--format", args.formats,
                "also write perfetto (perfetto.json), mermaid (sequence.mmd) or csv "
                "(timeline.csv, lag.csv) per variant; repeatable")
      ->check(CLI::IsMember({"perfetto", "mermaid", "csv"}));
  c->add_option("--rebalance", args.rebalance,
                "mermaid: the rebalance to draw (1-based; default: the longest)")
      ->check(CLI::PositiveNumber);
  c->add_option("--from", args.from_ms,
                "mermaid: draw the window from this virtual time (ms) instead")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--to", args.to_ms, "mermaid: ... to this virtual time (ms)")
      ->check(CLI::NonNegativeNumber);
}

std::vector<std::pair<std::string, std::string>> render_outputs(std::vector<VariantText> variants,
                                                                const FormatArgs& args) {
  const auto tls = timelines(variants);
  std::vector<reports::ShareView> share;
  for (auto& v : variants) {
    if (v.protocol != "share" && !v.protocol.ends_with("/share")) continue;
    try {
      share.push_back(reports::build_share_view(trace_text(v), v.protocol));
    } catch (const std::runtime_error& e) {
      throw ScenarioError(v.protocol + "/trace.jsonl", {e.what()});
    }
  }
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("report.html", reports::render_html_report(tls, share));
  auto wants = [&](const char* f) {
    return std::find(args.formats.begin(), args.formats.end(), f) != args.formats.end();
  };
  if (args.from_ms && args.to_ms && *args.from_ms > *args.to_ms)
    throw ScenarioError("--from/--to", {fmt::format("--from ({}) must not be after --to ({})",
                                                    *args.from_ms, *args.to_ms)});
  for (std::size_t i = 0; i < tls.size(); ++i) {
    const auto& tl = tls[i];
    const std::string p = variants[i].protocol;
    if (wants("perfetto")) files.emplace_back(p + "/perfetto.json", reports::render_perfetto(tl));
    if (wants("mermaid")) {
      reports::MermaidWindow w;
      w.rebalance = args.rebalance;
      if (args.from_ms) w.from_us = *args.from_ms * 1000;
      if (args.to_ms) w.to_us = *args.to_ms * 1000;
      if (w.rebalance && !w.from_us && !w.to_us &&
          static_cast<std::size_t>(*w.rebalance) > tl.rebalances.size())
        throw ScenarioError(
            p, {fmt::format("--rebalance {}: the {} run has {} rebalance{}", *w.rebalance, p,
                            tl.rebalances.size(), tl.rebalances.size() == 1 ? "" : "s")});
      files.emplace_back(p + "/sequence.mmd", reports::render_mermaid(tl, w));
    }
    if (wants("csv")) {
      files.emplace_back(p + "/timeline.csv", csv_of(variants[i], reports::render_timeline_csv));
      files.emplace_back(p + "/lag.csv", csv_of(variants[i], reports::render_lag_csv));
    }
  }
  return files;
}

CLI::App* add_report_subcommand(CLI::App& app, std::string& dir, FormatArgs& args) {
  auto* c = app.add_subcommand(
      "report", "render DIR/report.html (and --format outputs) again from a run's traces");
  c->add_option("dir", dir,
                "the output directory of `run --out DIR`, or a folder of runs (`check --out DIR`: "
                "a report per run)")
      ->required();
  add_format_options(c, args);
  c->add_flag("--force", args.force,
              "read and write a folder without .rebalance-sim-manifest.json (every DIR/<variant>/ "
              "with a trace.jsonl "
              "and a summary.json)");
  c->footer(
      "Example: rebalance-sim report out/two-consumers --format perfetto --format mermaid "
      "--rebalance 2");
  return c;
}

namespace {

bool is_variant_dir(const fs::path& d) {
  return fs::exists(d / "trace.jsonl") && fs::exists(d / "summary.json");
}

/// The run directories under `dir` (a folder of runs, e.g. `check --out DIR`): every folder with
/// a variant folder in it, sorted; `dir` itself when it is one.
std::vector<fs::path> run_dirs_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory() || it->is_symlink()) continue;
    if (fs::exists(it->path() / kManifestName)) {  // an owned run folder, whatever its layout
      out.push_back(it->path());
      it.disable_recursion_pending();
      continue;
    }
    if (!is_variant_dir(it->path())) continue;
    const fs::path run = it->path().parent_path();
    if (out.empty() || out.back() != run) out.push_back(run);
    it.disable_recursion_pending();
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

int cmd_report(const std::string& dir, const FormatArgs& args) {
  // A folder of runs (`check --out DIR`): a report per run; a run folder itself (its manifest, or a
  // variant folder in it) is one run.
  std::vector<fs::path> runs{fs::path(dir)};
  bool direct = fs::exists(fs::path(dir) / kManifestName);
  std::error_code ec;
  if (!direct && fs::is_directory(dir, ec))
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory() && is_variant_dir(e.path())) direct = true;
  if (!direct) {
    auto found = run_dirs_under(dir);
    if (!found.empty()) runs = std::move(found);
  }
  for (const auto& run : runs) {
    // A `run` into the folder at the same time is excluded; the variants are the manifest's.
    std::optional<FolderLock> lock;
    if (fs::is_directory(run)) lock.emplace(run, run);
    const auto files = render_outputs(read_run_dir(run.string(), args.force), args);
    // Only into the run's own folders: never through a symbolic link planted in the folder.
    for (const auto& [rel, bytes] : files) {
      fs::path at = run;
      const fs::path r(rel);
      for (auto it = r.begin(); it != r.end(); ++it) {
        at /= *it;
        std::error_code lec;
        const auto st = fs::symlink_status(at, lec);
        if (st.type() == fs::file_type::symlink)
          throw OutputError(
              at, "is a symbolic link; report writes only into the run's own folders and files");
        if (std::next(it) != r.end() && st.type() != fs::file_type::directory)
          throw OutputError(at, "is not a folder of the run");
      }
    }
    for (const auto& [rel, bytes] : files) write_file_atomically(run / rel, bytes);
    for (const auto& [rel, bytes] : files)
      std::cout << fmt::format("wrote {}\n", one_line((run / rel).string()));
  }
  return kOk;
}

CLI::App* add_explain_subcommand(CLI::App& app, ExplainArgs& args) {
  auto* c = app.add_subcommand(
      "explain",
      "tell each rebalance in plain words, per variant (a scenario is run first; "
      "a run directory is read)");
  c->add_option("target", args.target, "scenario file (JSON) or the output directory of a run")
      ->required();
  c->add_option("--protocol", args.protocols, "with a scenario: the variants to run (repeatable)");
  c->add_option("--seed", args.seed,
                "with a scenario: random seed (default: the scenario's `seed`)")
      ->check(non_negative_integer(UINT64_MAX));
  c->footer("Example: rebalance-sim explain scenarios/examples/two-consumers.json");
  return c;
}

int cmd_explain(const ExplainArgs& args) {
  std::vector<VariantText> variants;
  if (fs::is_directory(args.target)) {
    variants = read_run_dir(args.target, /*any_variant=*/true);
  } else {
    const ScenarioSpec spec = load_scenario_file(args.target);
    RunOptions keep;
    keep.level = TraceLevel::Full;
    keep.keep_trace = true;
    for (auto& o : run_variants(spec, args.protocols, args.seed, keep)) {
      variants.push_back(VariantText{o.protocol, std::move(o.trace_jsonl), o.summary.dump(2)});
    }
  }
  // Names come from the scenario: control characters escaped, the narrative's own lines kept.
  // The config values the sentences quote come from summary.json's `config`, for a scenario
  // and a run folder alike.
  for (const auto& tl : timelines(variants)) std::cout << escaped_lines(reports::explain_text(tl));
  return kOk;
}

}  // namespace rsim::cli
