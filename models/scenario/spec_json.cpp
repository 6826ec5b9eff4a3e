#include "models/scenario/spec_json.hpp"

#include <fmt/format.h>

namespace rsim {

std::string shown_value(const nlohmann::json& v, std::size_t max) {
  std::string s = v.dump();
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

std::optional<bool> read_bool(const nlohmann::json& obj, const std::string& key,
                              const std::string& path, std::vector<std::string>& problems,
                              std::size_t shown_max) {
  const auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  if (!it->is_boolean()) {
    problems.push_back(
        fmt::format("{}: must be true or false, got {}", path, shown_value(*it, shown_max)));
    return std::nullopt;
  }
  return it->get<bool>();
}

Literal literal_of(const nlohmann::json& j) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
    case V::boolean:
      return Literal{j.get<bool>()};
    case V::number_integer:
      return Literal{j.get<std::int64_t>()};
    case V::number_unsigned:
      return Literal{j.get<std::uint64_t>()};
    case V::number_float:
      return Literal{j.get<double>()};
    case V::string:
      return Literal{j.get<std::string>()};
    case V::array: {
      Literal::Array a;
      a.reserve(j.size());
      for (const auto& e : j) a.push_back(literal_of(e));
      return Literal{std::move(a)};
    }
    case V::object: {
      Literal::Object o;
      for (const auto& [k, e] : j.items()) o.emplace(k, literal_of(e));
      return Literal{std::move(o)};
    }
    default:  // null, and the types a parsed document does not have (binary, discarded)
      return Literal{};
  }
}

EventMatcher matcher_of(const nlohmann::json& j) {
  EventMatcher m;
  for (const auto& [k, e] : j.items()) {
    if (k == "type" && e.is_string())
      m.type = e.get<std::string>();
    else if (k != "type")
      m.fields.emplace(k, literal_of(e));
  }
  return m;
}

}  // namespace rsim
