// libFuzzer target: the scenario loader (structure checks, JSON parse, validation) on arbitrary
// bytes, and, for small valid scenarios, a short run under a tight watchdog. Bad input must end
// in a ScenarioError (or, for the run, WatchdogTripped); anything else (another exception, a
// broken invariant, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario/json_guard.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (rsim::check_json_structure(bytes)) return 0;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::parse_error&) {
    return 0;
  }
  rsim::ScenarioSpec spec;
  try {
    spec = rsim::parse_scenario(doc, "fuzz.json");
  } catch (const rsim::ScenarioError& e) {
    (void)e.what();
    return 0;
  }
  // Small enough to run in a few milliseconds: run the first variant this build simulates.
  if (spec.duration > sim::ms(5000) || spec.consumers.size() > 4) return 0;
  for (const auto& v : spec.protocols) {
    if (!rsim::unsupported_features(spec, v).empty()) continue;
    sim::WatchdogLimits limits;
    limits.max_events = 300'000;
    limits.max_events_per_instant = 50'000;
    limits.max_trace_bytes = 32u << 20;
    try {
      rsim::run_scenario(spec, v, spec.seed, limits);
    } catch (const sim::WatchdogTripped&) {
    }
    break;
  }
  return 0;
}
