// Settings variants: a scenario's top-level `variants`, an object of name -> overrides. Each
// variant is the scenario with its overrides applied as a JSON Merge Patch (RFC 7386: an object
// merges key by key, `null` removes a key, anything else replaces), except `consumers`, which a
// patch gives as an object keyed by consumer name (a name the scenario has: that consumer is
// patched, or removed by `null`; a new name: a new consumer). Variants are crossed with
// `protocols`: every variant runs every protocol, on the same seed and script.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario.hpp"

namespace rsim {

/// RFC 7386 MergePatch(target, patch).
nlohmann::json merge_patch(const nlohmann::json& target, const nlohmann::json& patch);

/// One settings variant: its name ("" for a scenario without `variants`) and its spec.
struct SettingsVariant {
  std::string name;
  nlohmann::json doc;  // the scenario with the overrides applied, without `variants`
  ScenarioSpec spec;
};

/// The names of `doc`'s variants, in name order (empty without `variants`).
std::vector<std::string> settings_variant_names(const nlohmann::json& doc);

/// `doc` with the overrides of variant `name` applied (no validation beyond the patch's shape);
/// the patch's problems are appended to `problems` as "/variants/NAME/...: what".
nlohmann::json apply_settings_variant(const nlohmann::json& doc, const std::string& name,
                                      std::vector<std::string>& problems);

/// Every variant of `doc` (only those of `pick` when it is not empty; a name it does not have is a
/// problem), each validated by parse_scenario. Without `variants`: one variant named "" (the
/// scenario). Throws ScenarioError(source) listing every problem: the base scenario's, then each
/// variant's prefixed `variant "NAME": ` with its JSON path in the patched scenario (and the
/// consumer's name where the path goes through /consumers/N). `sha256` is copied to each spec.
std::vector<SettingsVariant> expand_settings_variants(const nlohmann::json& doc,
                                                      const std::string& source,
                                                      const std::vector<std::string>& pick,
                                                      const std::string& sha256 = "");

/// The file read and expanded (problems of the file itself as load_scenario_file reports them).
std::vector<SettingsVariant> load_settings_variants(const std::string& path,
                                                    const std::vector<std::string>& pick);

}  // namespace rsim
