#include "tools/commands/check_shard.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/scenario.hpp"
#include "tools/commands/sweep.hpp"
#include "tools/exit_codes.hpp"
#include "tools/staged_output.hpp"

namespace rsim::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
constexpr const char* kKind = "rebalance-sim check shard";

/// A report path given to check as the name the merge writes it under in its --out.
std::string report_name(const std::string& path) {
  return path.empty() ? "" : fs::path(path).filename().string();
}
}  // namespace

std::string shard_conflicts(const CheckArgs& args) {
  std::vector<std::string> no;
  if (args.update_golden) no.push_back("--update-golden");
  if (!args.baseline.empty()) no.push_back("--baseline");
  if (!args.max_regressions.empty()) no.push_back("--max-regression");
  if (!args.regression_file.empty()) no.push_back("--regression-file");
  if (!no.empty())
    return fmt::format("--shard cannot be combined with {} (run those checks unsharded)",
                       fmt::join(no, ", "));
  // The merge writes the reports into its --out under their file names: each a distinct name.
  std::set<std::string> names;
  for (const auto& f : {args.junit, args.markdown, args.json}) {
    if (f.empty()) continue;
    const std::string name = report_name(f);
    if (name.empty() || name == "." || name == "..")
      return fmt::format("with --shard, {} must name a file (the merge writes it into its --out)",
                         f);
    if (!names.insert(name).second)
      return fmt::format(
          "with --shard, --junit, --markdown and --json need distinct file names ({} twice)", name);
  }
  return "";
}

int write_check_shard(const CheckArgs& args, std::pair<std::uint32_t, std::uint32_t> shard,
                      const std::vector<std::pair<std::string, std::string>>& files,
                      const std::vector<std::pair<std::size_t, json>>& units) {
  json list = json::array();
  for (const auto& f : files) list.push_back(json::array({f.first, f.second}));
  const json def{{"files", list},
                 {"junit", report_name(args.junit)},
                 {"markdown", report_name(args.markdown)},
                 {"json", report_name(args.json)},
                 {"junit_time", args.junit_time},
                 {"strict", args.strict}};
  json out_units = json::array();
  for (const auto& [k, u] : units) out_units.push_back({{"index", k}, {"result", u}});
  const json result{{"kind", kKind},
                    {"shard", {shard.first, shard.second}},
                    {"check", def},
                    {"units", out_units}};
  const fs::path dir = args.out_dir.empty() ? fs::path("out/check/shards") : fs::path(args.out_dir);
  const std::string file = fmt::format("shard-{}-of-{}.json", shard.first, shard.second);
  write_file_atomically_in(dir, file, result.dump(1) + "\n");
  std::cout << fmt::format("check: shard {}/{}: {} of {} scenarios; wrote {}\n", shard.first,
                           shard.second, units.size(), files.size(), (dir / file).string());
  return kOk;
}

int finish_check(const std::vector<json>& shards, const std::string& out, bool force) {
  check_shard_set(shards, "check", "its scenarios, report names, --junit-time or --strict differ");
  const json& def = shards.front().at("check");
  const std::size_t total = def.at("files").size();
  std::vector<const json*> by_index(total, nullptr);
  for (const auto& sh : shards)
    for (const auto& u : sh.at("units")) {
      const std::size_t k = u.at("index").get<std::size_t>();
      if (k >= total || by_index[k] != nullptr)
        throw ScenarioError("merge", {fmt::format("scenario number {} out of range or twice", k)});
      by_index[k] = &u.at("result");
    }
  for (std::size_t k = 0; k < total; ++k)
    if (by_index[k] == nullptr)
      throw ScenarioError("merge", {fmt::format("{} missing from the shard results",
                                                def.at("files").at(k).at(0).get<std::string>())});
  CheckReportTargets targets;
  targets.junit_time = def.at("junit_time").get<std::string>();
  std::vector<std::string> names;
  for (const char* key : {"junit", "markdown", "json"})
    if (const std::string name = def.at(key).get<std::string>(); !name.empty())
      names.push_back(name);
  if (names.empty())
    return check_report_units(by_index, total, targets);  // nothing to write: the console only
  // The reports go into an owned folder, committed whole: staged beside it, swapped in once all
  // of them are written (a failed write leaves the old folder as it was).
  StagedOutput staged{
      fs::path(out),
      OutputOwner{
          "check",
          def.at("files").empty() ? std::string() : def.at("files").at(0).at(0).get<std::string>(),
          force}};
  staged.claim(names);
  const auto target = [&](const char* key) {
    const std::string name = def.at(key).get<std::string>();
    return name.empty() ? std::string() : staged.staged(name).string();
  };
  targets.junit = target("junit");
  targets.markdown = target("markdown");
  targets.json = target("json");
  const int code = check_report_units(by_index, total, targets);
  for (const auto& name : names)
    if (!fs::exists(staged.staged(name)))
      return code;  // not all written (said on stderr): the old folder stays
  staged.commit();
  return code;
}

}  // namespace rsim::cli
