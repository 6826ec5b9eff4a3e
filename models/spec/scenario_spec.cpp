#include "models/spec/scenario_spec.hpp"

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

const TopicSpec* ScenarioSpec::topic(const std::string& n) const {
  for (const auto& t : topics) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

}  // namespace rsim
