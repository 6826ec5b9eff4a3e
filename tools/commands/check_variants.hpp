// `check` on a scenario with settings variants (a top-level `variants`): each variant is checked
// under each of its protocols as a suite of its own, named "<variant>/<protocol>" (as `run` names
// its folders), with the variant's own `expect` and a golden entry of that name.
#pragma once
#include <string>
#include <vector>

#include "models/scenario/variants.hpp"
#include "tools/runner.hpp"

namespace rsim::cli {

/// The settings variants `check` runs for `file`: every variant of its `variants`, in name order,
/// their expect entries checked (a problem of any: ScenarioError naming the variant); without
/// `variants`, one unnamed variant holding `spec` (the scenario as loaded).
std::vector<SettingsVariant> check_settings_variants(const std::string& file,
                                                     const ScenarioSpec& spec);

/// The folders a check writes under --out for these variants: each protocol (unnamed variant), or
/// each variant's name.
std::vector<std::string> output_folders(const std::vector<SettingsVariant>& settings);

/// A run's name in check's outputs: "<protocol>", or "<variant>/<protocol>".
std::string output_name(const VariantOutput& o);

}  // namespace rsim::cli
