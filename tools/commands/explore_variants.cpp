#include "tools/commands/explore_variants.hpp"

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"

namespace rsim::cli {

std::vector<SettingsVariant> explore_settings(const nlohmann::json& doc,
                                              const std::string& source) {
  if (doc.is_object() && doc.contains("variants")) return expand_settings_variants(doc, source, {});
  return {SettingsVariant{"", doc, parse_scenario(doc, source)}};
}

std::vector<ExploreRun> explore_runs(const std::vector<SettingsVariant>& settings,
                                     const std::vector<std::string>& protocols) {
  std::vector<ExploreRun> runs;
  for (std::size_t i = 0; i < settings.size(); ++i)
    for (const auto& p : protocols.empty() ? settings[i].spec.protocols : protocols)
      runs.push_back(ExploreRun{i, p, settings[i].name.empty() ? p : settings[i].name + "/" + p});
  return runs;
}

std::string explore_reproduce(const ExploreRun& run, const std::vector<SettingsVariant>& settings,
                              const std::string& scenario, std::uint64_t seed,
                              const std::string& bug_flag) {
  const std::string& variant = settings[run.setting].name;
  if (variant.empty())
    return fmt::format("rebalance-sim run {} --faults-seed {} --protocol {} --check-invariants{}",
                       one_line(scenario), seed, run.protocol, bug_flag);
  // `run --faults-seed` does not take settings variants: the scenario with the seed's faults does.
  return fmt::format(
      "rebalance-sim run <scenario with these faults> --variant {} --protocol {} "
      "--check-invariants{}",
      variant, run.protocol, bug_flag);
}

}  // namespace rsim::cli
