#include "tools/commands/validate.hpp"

#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/scenario/scenario.hpp"
#include "models/scenario/variants.hpp"
#include "models/scenario/world.hpp"
#include "reports/analyses/expectations.hpp"
#include "tools/commands/settings_run.hpp"
#include "tools/exit_codes.hpp"

namespace rsim::cli {

namespace {

int validate_base(const std::string& file) {
  const ScenarioSpec spec = load_checked_scenario(file);
  // What this version cannot run is refused here as `run` refuses it (exit 2, the same lines):
  // validate's verdict is run's.
  std::set<std::string> unsupported;
  for (const auto& v : spec.protocols)
    for (const auto& p : unsupported_features(spec, v)) unsupported.insert(p);
  if (!unsupported.empty()) throw ScenarioError(file, {unsupported.begin(), unsupported.end()});
  std::cout << fmt::format("{}: ok ({} consumers, {} events, protocols: {})\n", file,
                           spec.consumers.size(), spec.events.size(),
                           fmt::join(spec.protocols, ", "));
  return kOk;
}

}  // namespace

int cmd_validate(const std::string& file) {
  if (!has_settings_variants(file)) return validate_base(file);
  // Every variant validated (all problems of all variants in one pass), then the base as usual.
  const auto vs = load_settings_variants(file, {});
  std::vector<std::string> names;
  for (const auto& v : vs) names.push_back(v.name);
  const int rc = validate_base(file);
  std::cout << fmt::format("{}: variants: {} (each crossed with its protocols)\n", file,
                           fmt::join(names, ", "));
  return rc;
}

}  // namespace rsim::cli
