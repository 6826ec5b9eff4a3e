#include "reports/csv.hpp"

#include <istream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/timeline.hpp"

namespace reports {

namespace {

using json = nlohmann::ordered_json;

std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string time_ms(std::int64_t t_us) {
  const char* sign = t_us < 0 ? "-" : "";
  const std::int64_t a = t_us < 0 ? -t_us : t_us;
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

std::string plain(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string joined(const json& v) {
  if (!v.is_array()) return plain(v);
  std::string out;
  for (const auto& x : v) {
    if (!out.empty()) out += ' ';
    out += plain(x);
  }
  return out;
}

// A field that must have one type: a trace line with another is refused with its number.
[[noreturn]] void wrong_type(std::size_t line_no, const char* key, const char* what,
                             const json& v) {
  std::string got = v.dump();
  if (got.size() > 40) got = got.substr(0, 37) + "...";
  throw std::runtime_error(
      fmt::format("trace.jsonl line {}: \"{}\" must be {}, got {}", line_no, key, what, got));
}

std::string string_field(const json& f, const char* key, std::size_t line_no) {
  const auto it = f.find(key);
  if (it == f.end() || it->is_null()) return {};
  if (!it->is_string()) wrong_type(line_no, key, "a string", *it);
  return it->get<std::string>();
}

// Every non-empty line of the trace, parsed (one at a time: the trace is never held whole).
template <class F>
void each_line(std::istream& in, F&& f) {
  LineReader reader(in);
  std::string_view line;
  std::size_t line_no = 0;
  while (reader.next(line)) {
    ++line_no;
    if (line.empty()) continue;
    f(parse_line(line, line_no), line_no);
  }
}

}  // namespace

std::string render_timeline_csv(std::istream& trace_jsonl) {
  std::string out = "time_ms,type,consumer,group,partitions,epoch,detail\n";
  each_line(trace_jsonl, [&](const TraceLine& line, std::size_t line_no) {
    if (line.type == "lag") return;  // lag.csv
    json rest = json::object();
    std::string consumer, group, partitions, epoch;
    for (const auto& [key, value] : line.fields.items()) {
      if (key == "t_us" || key == "type") continue;
      if (key == "consumer" && consumer.empty())
        consumer = plain(value);
      else if (key == "group")
        group = plain(value);
      else if ((key == "owned" || key == "partitions" || key == "target") && partitions.empty() &&
               line.type != "topic.partitions" && line.type != "consumer.metadata" &&
               line.type != "broker.fail")
        partitions = joined(value);
      else if ((key == "generation" || key == "epoch" || key == "member_epoch") && epoch.empty())
        epoch = plain(value);
      else
        rest[key] = value;
    }
    if (line.type == "rpc" && consumer.empty()) {
      // The client end of a request: the sender of a request, the receiver of a response.
      const bool send = string_field(line.fields, "dir", line_no) == "send";
      consumer = string_field(line.fields, send ? "from" : "to", line_no);
    }
    out += fmt::format("{},{},{},{},{},{},{}\n", time_ms(line.t_us), cell(line.type),
                       cell(consumer), cell(group), cell(partitions), cell(epoch),
                       cell(rest.empty() ? std::string() : rest.dump()));
  });
  return out;
}

std::string render_lag_csv(std::istream& trace_jsonl) {
  std::string out = "time_ms,group,partition,lag,log_end_offset,offset,owner,reason\n";
  std::map<std::string, std::map<std::string, std::int64_t>> now;  // group -> partition -> lag
  std::int64_t last_t = -1;
  auto total = [&]() {
    if (last_t < 0) return;
    for (const auto& [group, parts] : now) {
      std::int64_t sum = 0;
      for (const auto& [p, v] : parts) sum += v;
      out += fmt::format("{},{},(total),{},,,,\n", time_ms(last_t), cell(group), sum);
    }
  };
  each_line(trace_jsonl, [&](const TraceLine& line, std::size_t line_no) {
    if (line.type != "lag") return;
    if (line.t_us != last_t) {
      total();
      last_t = line.t_us;
    }
    const auto& f = line.fields;
    const std::string group = f.contains("group") ? plain(f["group"]) : std::string();
    const std::string partition = f.contains("partition") ? plain(f["partition"]) : std::string();
    std::int64_t lag = 0;
    if (const auto it = f.find("lag"); it != f.end() && !it->is_null()) {
      if (!it->is_number_integer()) wrong_type(line_no, "lag", "an integer", *it);
      lag = it->get<std::int64_t>();
    }
    now[group][partition] = lag;
    auto field = [&](const char* k) {
      return f.contains(k) && !f[k].is_null() ? cell(plain(f[k])) : std::string();
    };
    out += fmt::format("{},{},{},{},{},{},{},{}\n", time_ms(line.t_us), cell(group),
                       cell(partition), field("lag"), field("log_end_offset"), field("offset"),
                       field("owner"), field("reason"));
  });
  total();
  return out;
}

std::string render_timeline_csv(std::string_view trace_jsonl) {
  std::istringstream in{std::string(trace_jsonl)};
  return render_timeline_csv(in);
}

std::string render_lag_csv(std::string_view trace_jsonl) {
  std::istringstream in{std::string(trace_jsonl)};
  return render_lag_csv(in);
}

}  // namespace reports
