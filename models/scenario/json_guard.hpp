// Checks of a scenario file's JSON before it is built into a document: nesting no deeper than
// kMaxJsonDepth and no key twice in one object (nlohmann's parser would keep the last silently).
// Syntax errors are left to the parser, which reports them with their line and column.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace rsim {

/// The deepest nesting a scenario file may have; the format itself needs about 6 levels.
inline constexpr std::size_t kMaxJsonDepth = 64;

/// The first structural problem of `bytes` ("line L, column C: ..." or "/json/pointer: ..."),
/// or nothing. Iterative: no input can exhaust the stack.
std::optional<std::string> check_json_structure(const std::string& bytes);

}  // namespace rsim
