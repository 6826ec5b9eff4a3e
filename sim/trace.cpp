#include "sim/trace.hpp"

#include <fmt/format.h>

namespace sim {

void Tracer::emit(std::string_view type, const nlohmann::ordered_json& fields) {
  if (!enabled_) return;
  nlohmann::ordered_json line;
  line["t_us"] = kernel_.now().count();
  line["type"] = type;
  for (const auto& [key, value] : fields.items()) line[key] = value;
  lines_.push_back(line.dump());
  bytes_ += lines_.back().size() + 1;
  if (bytes_ > max_bytes_) {
    throw WatchdogTripped(fmt::format(
        "watchdog: the trace passed {} bytes at t={} us (the last line: {}); raise "
        "--max-trace-bytes if the scenario really needs more",
        max_bytes_, kernel_.now().count(), lines_.back().substr(0, 160)));
  }
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
