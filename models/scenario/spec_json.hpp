// The JSON edge of the spec: the reading helpers the loaders share (parse_scenario,
// parse_fleet), and the spec's Literals (models/spec/literal.hpp) both ways: the loader reads a
// scenario's values into them, and the checks that compare them with JSON outputs (summary.json,
// trace events) or print them convert them back. A literal converted back is the value the file
// wrote: the same shape, number kind and digits, so it prints and compares as before.
// (ConfigValue's JSON edge is models/protocol/config.hpp: normalize_config_value and to_json.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/spec/literal.hpp"

namespace rsim {

/// The offending value as written, cut to `max` characters (the last three "...") so that one
/// message stays one line.
std::string shown_value(const nlohmann::json& v, std::size_t max);
/// `obj[key]` as a boolean: nullopt when absent, and when it is not true or false, then with the
/// problem "`path`: must be true or false, got <the value, cut to shown_max>" added to `problems`.
std::optional<bool> read_bool(const nlohmann::json& obj, const std::string& key,
                              const std::string& path, std::vector<std::string>& problems,
                              std::size_t shown_max);

/// The literal of a JSON value, kept exactly (null, bool, the three number kinds, string, array,
/// object).
Literal literal_of(const nlohmann::json& j);
/// An order matcher from a JSON object with a string `type` (the loader checked it).
EventMatcher matcher_of(const nlohmann::json& j);

/// nlohmann's to_json hooks (found by argument-dependent lookup: `json j = literal`).
template <class BasicJson>
void to_json(BasicJson& j, const Literal& l) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Literal::Null>) {
          j = nullptr;
        } else if constexpr (std::is_same_v<T, Literal::Array>) {
          j = BasicJson::array();
          for (const auto& e : x) j.push_back(BasicJson(e));
        } else if constexpr (std::is_same_v<T, Literal::Object>) {
          j = BasicJson::object();
          for (const auto& [k, e] : x) j[k] = BasicJson(e);
        } else {
          j = x;
        }
      },
      l.v);
}
/// A matcher as the object the file wrote: `type` with the fields.
template <class BasicJson>
void to_json(BasicJson& j, const EventMatcher& m) {
  j = BasicJson::object();
  j["type"] = m.type;
  for (const auto& [k, e] : m.fields) j[k] = BasicJson(e);
}

}  // namespace rsim
