#include "tools/report_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "reports/csv.hpp"
#include "reports/html_report.hpp"
#include "reports/mermaid.hpp"
#include "reports/narrative.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/perfetto.hpp"
#include "reports/timeline.hpp"
#include "tools/cli_args.hpp"
#include "tools/runner.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kOk = 0;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
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
  if (!fs::is_directory(dir)) throw ScenarioError(dir, {"not a directory (expected the --out DIR of a run)"});
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
          if (e.is_directory() && fs::exists(e.path() / "trace.jsonl") && fs::exists(e.path() / "summary.json"))
            inner.push_back(e.path());
        if (!inner.empty()) {
          for (auto& p : inner) subdirs.push_back(std::move(p));
          continue;
        }
      }
      if (!fs::exists(d / "trace.jsonl") || !fs::exists(d / "summary.json"))
        throw ScenarioError(dir, {fmt::format("variant \"{}\" of {} has no trace.jsonl and summary.json (a run with "
                                              "--trace none has no report)", v, kManifestName)});
      subdirs.push_back(d);
    }
  } else if (!any_variant) {
    throw ScenarioError(dir, {fmt::format("not an output folder of rebalance-sim (no {}); run `rebalance-sim run "
                                          "SCENARIO --out DIR` into it, or pass --force to read every DIR/<variant>/ "
                                          "with a trace.jsonl and a summary.json", kManifestName)});
  } else {
    const auto is_variant = [](const fs::path& p) {
      return fs::is_directory(p) && fs::exists(p / "trace.jsonl") && fs::exists(p / "summary.json");
    };
    for (const auto& e : fs::directory_iterator(dir)) {
      if (is_variant(e.path())) subdirs.push_back(e.path());
      else if (e.is_directory() && e.path().filename().string()[0] != '.')
        // A settings variant's folder: DIR/<variant>/<protocol>/.
        for (const auto& inner : fs::directory_iterator(e.path()))
          if (is_variant(inner.path())) subdirs.push_back(inner.path());
    }
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& d : subdirs)
    // The folder's name under DIR as written (<protocol> or <variant>/<protocol>), never resolved
    // through a symbolic link.
    out.push_back(VariantText{label_under(d, dir), {}, read_all(d / "summary.json"), (d / "trace.jsonl").string()});
  if (out.empty())
    throw ScenarioError(dir, {"no variant directories with trace.jsonl and summary.json; run `rebalance-sim run SCENARIO --out DIR` first"});
  return out;
}

std::vector<reports::Timeline> timelines(std::vector<VariantText>& variants) {
  std::stable_sort(variants.begin(), variants.end(),
                   [](const VariantText& a, const VariantText& b) { return reports::variant_less(a.protocol, b.protocol); });
  std::vector<reports::Timeline> out;
  for (const auto& v : variants) {
    nlohmann::ordered_json summary;
    try {
      summary = reports::parse_ordered(v.summary_json);
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(v.protocol + "/summary.json", {std::string("not valid json: ") + e.what()});
    }
    try {
      if (v.trace_jsonl.empty() && !v.trace_path.empty()) {
        std::ifstream in(v.trace_path, std::ios::binary);
        if (!in) throw std::runtime_error("cannot be read");
        out.push_back(reports::build_timeline(in, summary));
      } else {
        out.push_back(reports::build_timeline(v.trace_jsonl, summary));
      }
    } catch (const std::runtime_error& e) {
      throw ScenarioError(v.protocol + "/trace.jsonl", {e.what()});
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

}  // namespace

void add_format_options(CLI::App* c, FormatArgs& args) {
  c->add_option("--format", args.formats, "also write perfetto (perfetto.json), mermaid (sequence.mmd) or csv "
                                          "(timeline.csv, lag.csv) per variant; repeatable")
      ->check(CLI::IsMember({"perfetto", "mermaid", "csv"}));
  c->add_option("--rebalance", args.rebalance, "mermaid: the rebalance to draw (1-based; default: the longest)")
      ->check(CLI::PositiveNumber);
  c->add_option("--from", args.from_ms, "mermaid: draw the window from this virtual time (ms) instead")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--to", args.to_ms, "mermaid: ... to this virtual time (ms)")->check(CLI::NonNegativeNumber);
}

std::vector<std::pair<std::string, std::string>> render_outputs(std::vector<VariantText> variants, const FormatArgs& args) {
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
  auto wants = [&](const char* f) { return std::find(args.formats.begin(), args.formats.end(), f) != args.formats.end(); };
  if (args.from_ms && args.to_ms && *args.from_ms > *args.to_ms)
    throw ScenarioError("--from/--to", {fmt::format("--from ({}) must not be after --to ({})", *args.from_ms, *args.to_ms)});
  for (std::size_t i = 0; i < tls.size(); ++i) {
    const auto& tl = tls[i];
    const std::string p = variants[i].protocol;
    if (wants("perfetto")) files.emplace_back(p + "/perfetto.json", reports::render_perfetto(tl));
    if (wants("mermaid")) {
      reports::MermaidWindow w;
      w.rebalance = args.rebalance;
      if (args.from_ms) w.from_us = *args.from_ms * 1000;
      if (args.to_ms) w.to_us = *args.to_ms * 1000;
      if (w.rebalance && !w.from_us && !w.to_us && static_cast<std::size_t>(*w.rebalance) > tl.rebalances.size())
        throw ScenarioError(p, {fmt::format("--rebalance {}: the {} run has {} rebalance{}", *w.rebalance, p,
                                            tl.rebalances.size(), tl.rebalances.size() == 1 ? "" : "s")});
      files.emplace_back(p + "/sequence.mmd", reports::render_mermaid(tl, w));
    }
    if (wants("csv")) {
      files.emplace_back(p + "/timeline.csv", reports::render_timeline_csv(trace_text(variants[i])));
      files.emplace_back(p + "/lag.csv", reports::render_lag_csv(trace_text(variants[i])));
    }
  }
  return files;
}

CLI::App* add_report_subcommand(CLI::App& app, std::string& dir, FormatArgs& args) {
  auto* c = app.add_subcommand("report", "render DIR/report.html (and --format outputs) again from a run's traces");
  c->add_option("dir", dir, "the output directory of `run --out DIR`")->required();
  add_format_options(c, args);
  c->add_flag("--force", args.force,
              "read and write a folder without .rebalance-sim-manifest.json (every DIR/<variant>/ with a trace.jsonl "
              "and a summary.json)");
  c->footer("Example: rebalance-sim report out/two-consumers --format perfetto --format mermaid --rebalance 2");
  return c;
}

int cmd_report(const std::string& dir, const FormatArgs& args) {
  // A `run` into the folder at the same time is excluded; the variants are the manifest's.
  std::optional<FolderLock> lock;
  if (fs::is_directory(dir)) lock.emplace(fs::path(dir), fs::path(dir));
  const auto files = render_outputs(read_run_dir(dir, args.force), args);
  // Only into the run's own folders: never through a symbolic link planted in the folder.
  for (const auto& [rel, bytes] : files) {
    fs::path at = fs::path(dir);
    const fs::path r(rel);
    for (auto it = r.begin(); it != r.end(); ++it) {
      at /= *it;
      std::error_code ec;
      const auto st = fs::symlink_status(at, ec);
      if (st.type() == fs::file_type::symlink)
        throw OutputError(at, "is a symbolic link; report writes only into the run's own folders and files");
      if (std::next(it) != r.end() && st.type() != fs::file_type::directory)
        throw OutputError(at, "is not a folder of the run");
    }
  }
  for (const auto& [rel, bytes] : files) write_file_atomically(fs::path(dir) / rel, bytes);
  for (const auto& [rel, bytes] : files) std::cout << fmt::format("wrote {}\n", (fs::path(dir) / rel).string());
  return kOk;
}

CLI::App* add_explain_subcommand(CLI::App& app, ExplainArgs& args) {
  auto* c = app.add_subcommand("explain", "tell each rebalance in plain words, per variant (a scenario is run first; "
                                          "a run directory is read)");
  c->add_option("target", args.target, "scenario file (JSON) or the output directory of a run")->required();
  c->add_option("--protocol", args.protocols, "with a scenario: the variants to run (repeatable)");
  c->add_option("--seed", args.seed, "with a scenario: random seed (default: the scenario's `seed`)")
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
    for (auto& o : run_variants(spec, args.protocols, args.seed, keep))
      variants.push_back(VariantText{o.protocol, std::move(o.trace_jsonl), o.summary.dump(2)});
  }
  for (const auto& tl : timelines(variants)) std::cout << reports::explain_text(tl);
  return kOk;
}

}  // namespace rsim::cli
