#include "reports/csv.hpp"

#include <istream>
#include <map>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "reports/trace_reader.hpp"

namespace reports {

namespace {

using json = nlohmann::ordered_json;
namespace tr = rsim::trace;

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

}  // namespace

std::string render_timeline_csv(std::istream& trace_jsonl) {
  std::string out = "time_ms,type,consumer,group,partitions,epoch,detail\n";
  TraceReader reader(trace_jsonl);
  reader.set_text_scan(false);  // every line's JSON is read below: parsed once
  while (reader.next()) {
    const tr::Event& e = reader.event();
    if (std::holds_alternative<tr::Lag>(e)) continue;  // lag.csv
    // The kinds whose `partitions` or `target` is no consumer's partitions.
    const bool no_partitions = std::holds_alternative<tr::TopicPartitionCount>(e) ||
                               std::holds_alternative<tr::ConsumerMetadata>(e) ||
                               std::holds_alternative<tr::BrokerFail>(e);
    json rest = json::object();
    std::string consumer, group, partitions, epoch;
    // Every field as the line writes it (a kind this build does not know included).
    for (const auto& [key, value] : reader.line().items()) {
      if (key == "t_us" || key == "type") continue;
      if (key == "consumer" && consumer.empty())
        consumer = plain(value);
      else if (key == "group")
        group = plain(value);
      else if ((key == "owned" || key == "partitions" || key == "target") && partitions.empty() &&
               !no_partitions)
        partitions = joined(value);
      else if ((key == "generation" || key == "epoch" || key == "member_epoch") && epoch.empty())
        epoch = plain(value);
      else
        rest[key] = value;
    }
    if (const auto* rpc = std::get_if<tr::Rpc>(&e); rpc != nullptr && consumer.empty())
      // The client end of a request: the sender of a request, the receiver of a response.
      consumer = rpc->dir == "send" ? rpc->from : rpc->to;
    out += fmt::format("{},{},{},{},{},{},{}\n", time_ms(reader.t_us()),
                       cell(std::string(tr::type_of(e))), cell(consumer), cell(group),
                       cell(partitions), cell(epoch),
                       cell(rest.empty() ? std::string() : rest.dump()));
  }
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
  TraceReader reader(trace_jsonl);
  while (reader.next()) {
    const auto* l = std::get_if<tr::Lag>(&reader.event());
    if (l == nullptr) continue;
    if (reader.t_us() != last_t) {
      total();
      last_t = reader.t_us();
    }
    const std::string group(l->group);
    const std::string partition = l->partition != nullptr ? partition_name(*l->partition) : "";
    now[group][partition] = l->lag;
    const std::string owner(l->owner.value.value_or(""));
    out += fmt::format("{},{},{},{},{},{},{},{}\n", time_ms(reader.t_us()), cell(group),
                       cell(partition), l->lag, l->log_end_offset, l->offset, cell(owner),
                       cell(std::string(l->reason)));
  }
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
