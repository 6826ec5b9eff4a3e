#include "tools/runner.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "build_info.hpp"
#include "models/protocol/trace_jsonl.hpp"
#include "models/scenario/world.hpp"
#include "reports/share_summary.hpp"
#include "reports/summary.hpp"
#include "tools/progress.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

std::optional<TraceLevel> parse_trace_level(const std::string& s) {
  if (s == "full") return TraceLevel::Full;
  if (s == "standard") return TraceLevel::Standard;
  if (s == "none") return TraceLevel::None;
  return std::nullopt;
}

namespace {

reports::SummaryInputs summary_inputs(const ScenarioSpec& spec, const std::string& variant, std::uint64_t seed) {
  reports::SummaryInputs in;
  in.scenario = spec.name;
  in.protocol = variant;
  in.seed = seed;
  in.produced_by = {{"simulator", "rebalance-sim"},
                    {"version", build::kVersion},
                    {"commit", build::kCommit},
                    {"scenario_file", spec.source_path},
                    {"scenario_sha256", spec.sha256}};
  return in;
}

}  // namespace

std::vector<VariantOutput> run_variants(const ScenarioSpec& spec,
                                        const std::vector<std::string>& protocols,
                                        std::optional<std::uint64_t> seed, const RunOptions& options) {
  const std::string& out_dir = options.out_dir;
  const TraceLevel level = options.level;
  const std::vector<std::string>& variants = protocols.empty() ? spec.protocols : protocols;
  std::vector<std::string> problems;
  for (const auto& v : variants)
    for (auto& p : unsupported_features(spec, v)) problems.push_back(std::move(p));
  if (!problems.empty()) {
    std::sort(problems.begin(), problems.end());
    problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
    throw ScenarioError(spec.source_path, problems);
  }
  // Everything goes to a sibling temporary directory first; each variant's directory is then
  // swapped into place, so a failure leaves no partial files.
  const fs::path target(out_dir);
  const fs::path staging = target.string() + ".tmp-rebalance-sim";
  if (!out_dir.empty()) {
    if (!target.parent_path().empty()) fs::create_directories(target.parent_path());
    fs::remove_all(staging);
    fs::create_directories(staging);
  }
  std::vector<VariantOutput> out;
  std::vector<std::string> top_level;
  const std::uint64_t s = seed.value_or(spec.seed);
  try {
    for (const auto& v : variants) {
      VariantOutput o;
      o.protocol = v;
      const reports::SummaryInputs inputs = summary_inputs(spec, v, s);
      reports::SummarySink summary(inputs);
      std::vector<TraceSink*> sinks{&summary};
      std::optional<reports::ShareSummarySink> share;
      if (v == "share") {
        share.emplace();
        sinks.push_back(&*share);
      }
      ExpectationSinks expect(spec, v, inputs);
      for (auto* sink : expect.sinks()) sinks.push_back(sink);
      std::optional<trace::JsonlFileSink> jsonl;
      std::optional<trace::JsonlLinesSink> kept;
      if (options.keep_trace) {
        kept.emplace();
        sinks.push_back(&*kept);
      }
      std::optional<ProgressSink> progress_line;
      if (options.progress) {
        progress_line.emplace(fmt::format("{} [{}]", spec.name, v), spec.duration);
        sinks.push_back(&*progress_line);
      }
      const fs::path d = staging / v;
      if (!out_dir.empty()) {
        fs::create_directories(d);
        if (level != TraceLevel::None) {
          jsonl.emplace((d / "trace.jsonl").string());
          sinks.push_back(&*jsonl);
        }
      }
      o.events_fired =
          run_scenario(spec, v, s, sinks, level == TraceLevel::Full ? trace::Detail::Full : trace::Detail::Standard);
      if (progress_line) progress_line->finish();
      if (kept)
        for (const auto& line : kept->lines()) o.trace_jsonl += line + '\n';
      if (jsonl) {
        jsonl->close();
        o.trace_bytes = jsonl->file().bytes_written();
      }
      o.summary = summary.finish();
      if (share) share->finish(o.summary);
      o.expectations = expect.results(o.summary);
      nlohmann::ordered_json checks = nlohmann::ordered_json::array();
      for (const auto& e : o.expectations) {
        nlohmann::ordered_json c{{"index", e.index}, {"assertion", e.what}, {"metric", e.metric}, {"op", e.op},
                                 {"value", e.expected}, {"actual", e.actual}, {"passed", e.passed}};
        if (!e.detail.empty()) c["detail"] = e.detail;
        if (!e.message.empty()) c["message"] = e.message;
        checks.push_back(std::move(c));
      }
      o.summary["expectations"] = checks;
      if (!out_dir.empty()) {
        std::ofstream(d / "summary.json", std::ios::binary) << o.summary.dump(2) << '\n';
        if (!fs::exists(d / "summary.json")) throw std::runtime_error("cannot write " + (d / "summary.json").string());
      }
      out.push_back(std::move(o));
    }
    if (!out_dir.empty() && options.extra) {
      for (const auto& [rel, bytes] : options.extra(staging.string(), out)) {
        const fs::path p = staging / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << bytes;
        if (!fs::exists(p)) throw std::runtime_error("cannot write " + p.string());
        // Files at the top (report.html) move on their own; the variants' move with their directory.
        if (!fs::path(rel).has_parent_path()) top_level.push_back(rel);
      }
    }
  } catch (...) {
    if (!out_dir.empty()) fs::remove_all(staging);
    throw;
  }
  if (!out_dir.empty()) {
    fs::create_directories(target);
    for (const auto& rel : top_level) fs::rename(staging / rel, target / rel);
    for (const auto& o : out) {
      const fs::path final_dir = target / o.protocol;
      fs::remove_all(final_dir);
      fs::rename(staging / o.protocol, final_dir);
    }
    fs::remove_all(staging);
  }
  return out;
}

}  // namespace rsim::cli
