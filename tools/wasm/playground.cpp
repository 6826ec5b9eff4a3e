// The playground's entry points (WebAssembly, tools/wasm/CMakeLists.txt): the page hands over a
// scenario's text and the path it is shown under, and gets back what `rebalance-sim run` writes
// for it: each variant's summary.json (the same bytes) and report.html (the same renderer), or the
// parser's messages. The scenario is written to emscripten's in-memory file system at that path
// and loaded through load_checked_scenario(), so its checks, messages and sha256 are the native
// ones.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/expectations.hpp"
#include "reports/html_report.hpp"
#include "reports/ordered_parse.hpp"
#include "reports/share_view.hpp"
#include "reports/timeline.hpp"
#include "sim/kernel.hpp"
#include "tools/exit_codes.hpp"
#include "tools/runner.hpp"

namespace {

using rsim::cli::kBadInput;
using rsim::cli::kExpectationFailed;
using rsim::cli::kInternalError;
using rsim::cli::kOk;

/// Only a relative path of plain names ("scenarios/lessons/x.json"): the page never writes
/// outside the in-memory folder it owns.
std::optional<std::string> checked_path(const std::string& path) {
  if (path.empty() || path.size() > 200 || path.front() == '/') return std::nullopt;
  for (const auto& part : std::filesystem::path(path))
    if (part == ".." || part == "." || part.empty()) return std::nullopt;
  if (!path.ends_with(".json")) return std::nullopt;
  return path;
}

void stage(bool log_stages, const char* name) {
  if (log_stages) EM_ASM({ console.info('rsim-timing ' + UTF8ToString($0) + ' -'); }, name);
}

nlohmann::json failure(int exit, std::vector<std::string> errors) {
  return nlohmann::json{{"exit", exit}, {"errors", std::move(errors)}};
}

/// Writes `text` at `path` in the in-memory file system and loads it as `run` does.
rsim::ScenarioSpec load(const std::string& path, const std::string& text) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
      throw rsim::ScenarioError(path, {"cannot be written to the page's in-memory file system"});
  }
  return rsim::cli::load_checked_scenario(path);
}

/// The unsupported-feature check `validate` and `run` make, as messages.
std::vector<std::string> unsupported(const rsim::ScenarioSpec& spec) {
  std::vector<std::string> problems;
  for (const auto& v : spec.protocols)
    for (auto& p : rsim::unsupported_features(spec, v)) problems.push_back(std::move(p));
  std::sort(problems.begin(), problems.end());
  problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
  return problems;
}

/// {"exit": 0} or {"exit": 2, "errors": [...]}: the loader's messages, all of them.
std::string validate(const std::string& path, const std::string& text) {
  const auto where = checked_path(path);
  if (!where)
    return failure(kBadInput, {"the scenario's path must be a relative path ending in .json"})
        .dump();
  try {
    const auto spec = load(*where, text);
    if (auto problems = unsupported(spec); !problems.empty())
      return failure(kBadInput, std::move(problems)).dump();
    return nlohmann::json{{"exit", kOk},
                          {"consumers", spec.consumers.size()},
                          {"events", spec.events.size()},
                          {"protocols", spec.protocols}}
        .dump();
  } catch (const rsim::ScenarioError& e) {
    return failure(kBadInput, e.problems()).dump();
  } catch (const std::exception& e) {
    return failure(kInternalError, {std::string("internal error: ") + e.what()}).dump();
  }
}

/// Runs every protocol variant of the scenario (seed: "" for the scenario's own), and renders the
/// report from the traces as `run` writes them (--trace standard).
std::string run_staged(const std::string& path, const std::string& text,
                       const std::string& seed_text, bool log_stages) {
  const auto where = checked_path(path);
  if (!where)
    return failure(kBadInput, {"the scenario's path must be a relative path ending in .json"})
        .dump();
  std::optional<std::uint64_t> seed;
  if (!seed_text.empty()) {
    if (seed_text.size() > 19 || seed_text.find_first_not_of("0123456789") != std::string::npos)
      return failure(kBadInput, {"--seed: expected a non-negative integer"}).dump();
    seed = std::stoull(seed_text);
  }
  try {
    stage(log_stages, "entered");
    const auto spec = load(*where, text);
    stage(log_stages, "loaded");
    rsim::cli::RunOptions options;
    options.level = rsim::cli::TraceLevel::Standard;
    options.keep_trace = true;
    options.not_processed_gaps =
        true;  // the partition view's gaps, from the run's own summary sink
    auto outputs = rsim::cli::run_variants(spec, {}, seed, options);
    std::stable_sort(outputs.begin(), outputs.end(), [](const auto& a, const auto& b) {
      return reports::variant_less(a.protocol, b.protocol);
    });
    stage(log_stages, "simulated");
    std::vector<reports::Timeline> timelines;
    std::vector<reports::ShareView> share;
    nlohmann::json variants = nlohmann::json::array();
    bool failed = false;
    for (const auto& o : outputs) {
      const std::string summary = o.summary.dump(2) + "\n";
      timelines.push_back(
          reports::build_timeline(o.trace_jsonl, reports::parse_ordered(summary), o.not_processed));
      if (timelines.back().protocol.empty()) timelines.back().protocol = o.protocol;
      if (o.protocol == "share")
        share.push_back(reports::build_share_view(o.trace_jsonl, o.protocol));
      nlohmann::json failures = nlohmann::json::array();
      for (const auto& e : o.expectations)
        if (!e.passed) failures.push_back(e.describe());
      failed = failed || !failures.empty();
      variants.push_back({{"protocol", o.protocol},
                          {"summary", summary},
                          {"events_fired", o.events_fired},
                          {"failed_expectations", std::move(failures)}});
    }
    stage(log_stages, "timelines");
    std::string report = reports::render_html_report(timelines, share);
    stage(log_stages, "rendered");
    std::string out = nlohmann::json{{"exit", failed ? kExpectationFailed : kOk},
                                     {"variants", std::move(variants)},
                                     {"report", std::move(report)}}
                          .dump();
    stage(log_stages, "serialized");
    return out;
  } catch (const rsim::ScenarioError& e) {
    return failure(kBadInput, e.problems()).dump();
  } catch (const sim::WatchdogTripped& e) {
    return failure(kBadInput, {e.what()}).dump();
  } catch (const std::exception& e) {
    return failure(kInternalError, {std::string("internal error: ") + e.what()}).dump();
  }
}

std::string run(const std::string& path, const std::string& text, const std::string& seed_text) {
  return run_staged(path, text, seed_text, false);
}

/// run(), logging "rsim-timing STAGE -" on the console after each stage (the page's ?timing=1):
/// headless Chromium's virtual time stops the page's clock, the log's stamps are real time.
std::string run_timed(const std::string& path, const std::string& text,
                      const std::string& seed_text) {
  return run_staged(path, text, seed_text, true);
}

std::string version() {
  return std::string(rsim::build::kVersion) + " (" + rsim::build::kCommit + ")";
}

}  // namespace

EMSCRIPTEN_BINDINGS(rebalance_sim) {
  emscripten::function("validate", &validate);
  emscripten::function("run", &run);
  emscripten::function("run_timed", &run_timed);
  emscripten::function("version", &version);
}
