// File-level defaults of a conformance-vector file: an optional top-level "defaults" object whose
// keys every case inherits unless it sets them itself. Large generated files (fidelity/assignors/)
// use it to avoid repeating e.g. "assignor" in each of thousands of cases.
#pragma once
#include <nlohmann/json.hpp>

namespace rsim::assignors {

/// Copies `doc["defaults"]` into each case of `doc["cases"]` that lacks the key. No-op without it.
void apply_file_defaults(nlohmann::json& doc);

}  // namespace rsim::assignors
