#include "sim/trace.hpp"

namespace sim {

void Tracer::emit(std::string_view type, const nlohmann::ordered_json& fields) {
  if (!enabled_) return;
  nlohmann::ordered_json line;
  line["t_us"] = kernel_.now().count();
  line["type"] = type;
  for (const auto& [key, value] : fields.items()) line[key] = value;
  lines_.push_back(line.dump());
}

std::string Tracer::jsonl() const {
  std::string out;
  std::size_t total = 0;
  for (const auto& l : lines_) total += l.size() + 1;
  out.reserve(total);
  for (const auto& l : lines_) {
    out += l;
    out += '\n';
  }
  return out;
}

}  // namespace sim
