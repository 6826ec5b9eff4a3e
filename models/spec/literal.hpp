// Literal: a value a scenario writes to be compared with an output, kept exactly as written (plain
// data, no JSON library): an expectation's `value` (a number for <, <=, >, >=, within; [lo, hi]
// for between; any value for == and !=, e.g. a string or a list of partitions) and the fields of
// an order matcher. The three number shapes stay apart (a JSON reader keeps them apart: 3, 3.0
// and 18446744073709551615 print differently), so a literal converted back to JSON
// (models/scenario/spec_json.hpp) prints and compares as the file's value did.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rsim {

struct Literal {
  struct Null {
    friend bool operator==(Null, Null) { return true; }
  };
  using Array = std::vector<Literal>;
  /// Keys in byte order, as a JSON object prints them.
  using Object = std::map<std::string, Literal>;
  std::variant<Null, bool, std::int64_t, std::uint64_t, double, std::string, Array, Object> v;

  bool is_number() const {
    return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<std::uint64_t>(v) ||
           std::holds_alternative<double>(v);
  }
  /// A number as a double (0 for anything else).
  double number() const {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*u);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return 0;
  }
  const Array* array() const { return std::get_if<Array>(&v); }
};

/// An order matcher (`first`, `then`): a trace event's `type` and the fields it must equal.
struct EventMatcher {
  std::string type;
  Literal::Object fields;  // without `type`
};

}  // namespace rsim
