#include "models/spec/scenario_spec.hpp"

#include <algorithm>
#include <set>
#include <string_view>

namespace rsim {

std::string group_protocol_of(const std::string& variant) {
  return variant.starts_with("classic") ? "classic" : variant;
}

const ConsumerSpec* ScenarioSpec::consumer(const std::string& n) const {
  for (const auto& c : consumers) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

std::vector<std::string> start_up_consumers(const ScenarioSpec& spec) {
  // The script in time order (the loader keeps it sorted by at_ms, stable).
  std::vector<std::string> out;
  std::set<std::string_view> seen;  // a start-up of n consumers: n lookups, not n scans of `out`
  const EventSpec* previous = nullptr;
  for (const auto& e : spec.events) {
    const auto* start = e.as<verb::Start>();
    if (start == nullptr) break;
    if (previous != nullptr && e.at - previous->at > sim::ms(kStartUpGapMs)) break;
    previous = &e;
    if (seen.insert(start->consumer).second) out.push_back(start->consumer);
  }
  return out;
}

const TopicSpec* ScenarioSpec::topic(const std::string& n) const {
  for (const auto& t : topics) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

}  // namespace rsim
