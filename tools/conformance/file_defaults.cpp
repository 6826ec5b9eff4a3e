#include "tools/conformance/file_defaults.hpp"

namespace rsim::assignors {

void apply_file_defaults(nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("defaults") || !doc["defaults"].is_object()) return;
  if (!doc.contains("cases") || !doc["cases"].is_array()) return;
  const nlohmann::json& defaults = doc["defaults"];
  for (nlohmann::json& c : doc["cases"]) {
    if (!c.is_object()) continue;
    for (const auto& [key, value] : defaults.items()) {
      if (!c.contains(key)) c[key] = value;
    }
  }
}

}  // namespace rsim::assignors
