#include "tools/commands/check_variants.hpp"

#include <fmt/format.h>

#include "reports/analyses/expectations.hpp"
#include "tools/commands/settings_run.hpp"

namespace rsim::cli {

std::vector<SettingsVariant> check_settings_variants(const std::string& file,
                                                     const ScenarioSpec& spec) {
  if (!has_settings_variants(file)) return {SettingsVariant{"", {}, spec}};
  auto variants = load_settings_variants(file, {});
  std::vector<std::string> problems;
  for (const auto& v : variants)
    for (auto& p : expectation_problems(v.spec))
      problems.push_back(v.name.empty() ? p : fmt::format("variant \"{}\": {}", v.name, p));
  if (!problems.empty()) throw ScenarioError(file, problems);
  return variants;
}

std::vector<std::string> output_folders(const std::vector<SettingsVariant>& settings) {
  std::vector<std::string> names;
  for (const auto& v : settings) {
    if (v.name.empty())
      names.insert(names.end(), v.spec.protocols.begin(), v.spec.protocols.end());
    else
      names.push_back(v.name);
  }
  return names;
}

std::string output_name(const VariantOutput& o) {
  return o.variant.empty() ? o.protocol : o.variant + "/" + o.protocol;
}

}  // namespace rsim::cli
