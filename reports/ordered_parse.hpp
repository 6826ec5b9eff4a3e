// summary.json read back into an ordered_json in time linear in its size. nlohmann's own parse
// inserts each key of an ordered object after a linear search for a duplicate, which is
// quadratic in the keys: a rebalance of ten thousand members has objects of ten thousand keys.
#pragma once
#include <string_view>

#include <nlohmann/json.hpp>

namespace reports {

/// The same value nlohmann::ordered_json::parse gives (a repeated key keeps its first place and
/// its last value); throws nlohmann::json::parse_error on malformed text.
nlohmann::ordered_json parse_ordered(std::string_view text);

}  // namespace reports
