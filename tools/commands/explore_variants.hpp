// `explore` on a scenario with settings variants (a top-level `variants`): every seed's fault
// knobs are applied to the scenario, then each settings variant runs under each protocol, named
// "<variant>/<protocol>" (as `run` names its folders). Without `variants`: the protocols alone.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/variants.hpp"

namespace rsim::cli {

/// `doc`'s settings variants (expand_settings_variants: all, in name order; problems throw
/// ScenarioError(source)); without `variants`, one unnamed variant: `doc` as parsed.
std::vector<SettingsVariant> explore_settings(const nlohmann::json& doc, const std::string& source);

/// One run of a seed: the index of its settings variant, its protocol and its printed name.
struct ExploreRun {
  std::size_t setting = 0;
  std::string protocol, name;
};

/// Every (settings variant, protocol) run, variants in order, each with `protocols` (--protocol)
/// or, when that is empty, the variant's own protocols.
std::vector<ExploreRun> explore_runs(const std::vector<SettingsVariant>& settings,
                                     const std::vector<std::string>& protocols);

/// The `reproduce:` command of a failed run (`scenario`: the file as given to explore).
std::string explore_reproduce(const ExploreRun& run, const std::vector<SettingsVariant>& settings,
                              const std::string& scenario, std::uint64_t seed,
                              const std::string& bug_flag);

}  // namespace rsim::cli
