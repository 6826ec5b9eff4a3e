#include "tools/commands/settings_run.hpp"

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/variants.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/expectations.hpp"
#include "reports/invariants.hpp"
#include "reports/summary.hpp"
#include "tools/commands/explore.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

bool has_settings_variants(const std::string& file) {
  // Only a regular file of a scenario's size: a folder, a device or a huge file is for the
  // loader to refuse, with its own message.
  std::error_code ec;
  if (!fs::is_regular_file(file, ec) || ec) return false;
  const auto size = fs::file_size(file, ec);
  if (ec || size > (64u << 20)) return false;
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) return false;
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    return doc.is_object() && doc.contains("variants");
  } catch (const std::exception&) {
    return false;
  }
}

int cmd_run_settings(const SettingsRunArgs& args, const FormatArgs& formats) {
  auto variants = load_settings_variants(args.file, args.variants);
  // The expect entries of each variant (the base's or the variant's own `expect`).
  {
    std::vector<std::string> problems;
    for (const auto& v : variants)
      for (auto& p : expectation_problems(v.spec))
        problems.push_back(v.name.empty() ? p : fmt::format("variant \"{}\": {}", v.name, p));
    for (const auto& p : args.protocols) {
      if (std::find(protocol_variants().begin(), protocol_variants().end(), p) ==
          protocol_variants().end())
        problems.push_back(fmt::format("--protocol: unknown variant \"{}\"; valid variants: {}", p,
                                       fmt::join(protocol_variants(), ", ")));
    }
    if (!problems.empty()) throw ScenarioError(args.file, problems);
  }
  const std::string out_dir =
      args.out_dir.empty() ? default_output_dir(variants.front().spec.name).string() : args.out_dir;
  StagedOutput staged{fs::path(out_dir),
                      OutputOwner{variants.front().spec.name, args.file, args.force}};
  {
    // Every folder the run writes, claimed before anything runs.
    std::vector<std::string> names;
    for (const auto& v : variants) {
      if (v.name.empty()) {
        for (const auto& p : args.protocols.empty() ? v.spec.protocols : args.protocols)
          names.push_back(p);
      } else {
        names.push_back(v.name);
      }
    }
    if (args.level != TraceLevel::None) names.emplace_back("report.html");
    staged.claim(names);
  }
  std::vector<VariantOutput> outputs;
  std::vector<const SettingsVariant*> of;  // the settings variant of each output
  for (const auto& v : variants) {
    RunOptions options;
    options.staged = &staged;
    options.level = args.level;
    options.progress = !args.quiet && isatty(STDERR_FILENO) != 0;
    options.limits = args.limits;
    options.variant = v.name;
    options.model = args.model;
    options.keep_trace = args.level == TraceLevel::None && args.determinism;
    // The invariants are checked on the bus as the run goes, on every event it carries whatever
    // the level writes (as a plain run checks them).
    if (args.invariants) {
      options.invariants = [&v](const std::string& protocol) {
        return invariant_context(v.spec, protocol);
      };
    }
    for (auto& o : run_variants(v.spec, args.protocols, args.seed, options)) {
      outputs.push_back(std::move(o));
      of.push_back(&v);
    }
  }
  const auto rel = [&](std::size_t i) {
    return outputs[i].variant.empty() ? outputs[i].protocol
                                      : outputs[i].variant + "/" + outputs[i].protocol;
  };
  const bool whole = args.determinism;
  std::vector<std::string> traces(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (args.level == TraceLevel::None)
      traces[i] = outputs[i].trace_jsonl;
    else if (whole)
      traces[i] = read_all(staged_trace_path(staged, rel(i)));
  }
  if (args.determinism) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      RunOptions again;
      again.level = args.level;
      again.limits = args.limits;
      again.keep_trace = true;
      again.variant = outputs[i].variant;
      again.model = args.model;
      const auto second = run_variants(of[i]->spec, {outputs[i].protocol}, args.seed, again);
      const std::string a = sha256_hex(traces[i]), b = sha256_hex(second.front().trace_jsonl);
      std::cout << fmt::format("determinism [{}]: trace sha256 {} and {}: {}\n", rel(i), a, b,
                               a == b ? "identical" : "DIFFERENT");
      if (a != b) return kInternalError;
    }
  }
  {
    // The manifest's folders: each settings variant's (its protocols inside).
    std::vector<std::string> folders;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string top = outputs[i].variant.empty() ? outputs[i].protocol : outputs[i].variant;
      if (std::find(folders.begin(), folders.end(), top) == folders.end()) folders.push_back(top);
    }
    staged.set_variants(folders);
  }
  std::vector<std::pair<std::string, std::string>> extra;
  if (args.level != TraceLevel::None) {
    std::vector<VariantText> texts;
    for (std::size_t i = 0; i < outputs.size(); ++i)
      texts.push_back(
          VariantText{rel(i), traces[i], outputs[i].summary.dump(2) + "\n",
                      whole ? std::string() : staged_trace_path(staged, rel(i)).string()});
    extra = render_outputs(std::move(texts), formats);
    for (const auto& [path, bytes] : extra) staged.write_file(fs::path(path), bytes);
  }
  staged.commit();
  bool failed = false;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& o = outputs[i];
    const std::string& name = of[i]->spec.name;
    if (args.invariants) {
      for (const auto& x : o.violations) {
        failed = true;
        if (!args.quiet)
          std::cout << fmt::format("{} [{}]: VIOLATED {}", name, rel(i), describe_violation(x));
      }
      if (o.violations.empty() && !args.quiet)
        std::cout << fmt::format("{} [{}]: invariants hold\n", name, rel(i));
    }
    for (const auto& e : o.expectations)
      if (!e.passed) failed = true;
    if (args.quiet) continue;
    // As `run` prints a variant: the verdict and the steady window's headline, the decisive
    // moments as warnings (issue 34).
    if (o.summary.contains("verdict"))
      std::cout << fmt::format("{} [{}]: {}\n  {}\n", name, rel(i),
                               o.summary.at("verdict").get<std::string>(),
                               reports::headline_of(o.summary));
    else
      std::cout << fmt::format("{} [{}]: {}\n", name, rel(i), reports::headline_of(o.summary));
    constexpr std::size_t kMaxMomentLines = 20;  // as run's
    const auto moments = reports::moment_lines(o.summary);
    for (std::size_t k = 0; k < moments.size() && k < kMaxMomentLines; ++k)
      std::cout << "  warning: " << one_line(moments[k]) << "\n";
    if (moments.size() > kMaxMomentLines)
      std::cout << fmt::format(
          "  warning: ... and {} more decisive moments (summary.json's \"moments\")\n",
          moments.size() - kMaxMomentLines);
    std::cout << fmt::format("  wrote {}/{}/{}summary.json\n", out_dir, rel(i),
                             args.level == TraceLevel::None ? "" : "trace.jsonl and ");
    for (const auto& [path, bytes] : extra)
      if (path.rfind(rel(i) + "/", 0) == 0)
        std::cout << fmt::format("  wrote {}/{}\n", out_dir, path);
    for (const auto& e : o.expectations)
      if (!e.passed) std::cout << "  FAILED " << e.describe() << "\n";
  }
  if (!args.quiet && args.level != TraceLevel::None)
    std::cout << fmt::format("report: {}\n", (fs::path(out_dir) / "report.html").string());
  return failed ? kExpectationFailed : kOk;
}

}  // namespace rsim::cli
