// ConfigValue: one Kafka config value of a scenario, as the loader normalized it (plain data,
// no JSON library). Every config a scenario may set is one of four shapes: an integer (INT and
// LONG configs), a boolean, a string, or a list of strings (Kafka's LIST configs, e.g.
// partition.assignment.strategy). The loader (models/protocol/config.hpp, normalize_config_value)
// turns what the file wrote ("45000", 45000, "range,sticky", ["range"]) into one of them;
// to_json() there writes a value back exactly as the JSON of its shape (the trace's
// consumer.config lines).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rsim {

class ConfigValue {
 public:
  using List = std::vector<std::string>;
  using Variant = std::variant<std::int64_t, bool, std::string, List>;

  ConfigValue() = default;
  ConfigValue(bool b) : v_(b) {}
  /// Any integer type but bool: an INT or LONG config.
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  ConfigValue(I n) : v_(static_cast<std::int64_t>(n)) {}
  ConfigValue(std::string s) : v_(std::move(s)) {}
  ConfigValue(const char* s) : v_(std::string(s)) {}
  ConfigValue(List l) : v_(std::move(l)) {}

  bool is_integer() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }

  /// The value as a T of its shape (std::int64_t, bool, std::string, List); std::bad_variant_access
  /// for another shape.
  template <class T>
  const T& get() const {
    return std::get<T>(v_);
  }
  const Variant& variant() const { return v_; }

  friend bool operator==(const ConfigValue&, const ConfigValue&) = default;

 private:
  Variant v_{std::int64_t{0}};
};

/// Kafka configs by key (a consumer's, a broker's, a group's, an event's).
using ConfigMap = std::map<std::string, ConfigValue>;

}  // namespace rsim
