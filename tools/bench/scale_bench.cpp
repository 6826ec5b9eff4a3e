#include "tools/bench/scale_bench.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "models/scenario/world.hpp"
#include "models/trace/trace_jsonl.hpp"
#include "reports/summary.hpp"
#include "tools/bench/bench_child.hpp"

namespace rsim::cli {

std::vector<ScaleSize> parse_scale_sizes(const std::string& text) {
  std::vector<ScaleSize> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto x = item.find('x');
    std::size_t a = 0, b = 0;
    ScaleSize s;
    try {
      if (x == std::string::npos) throw std::invalid_argument(item);
      s.consumers = std::stoll(item.substr(0, x), &a);
      s.partitions = std::stoll(item.substr(x + 1), &b);
    } catch (const std::exception&) {
      throw std::invalid_argument(
          fmt::format("--sizes: \"{}\" is not CONSUMERSxPARTITIONS (e.g. 100x1000)", item));
    }
    if (a != x || b != item.size() - x - 1 || s.consumers < 1 || s.partitions < 1)
      throw std::invalid_argument(
          fmt::format("--sizes: \"{}\" is not CONSUMERSxPARTITIONS (e.g. 100x1000)", item));
    out.push_back(s);
  }
  if (out.empty()) throw std::invalid_argument("--sizes: no size given");
  return out;
}

nlohmann::json scale_scenario(const ScaleSize& size, const std::vector<std::string>& protocols,
                              std::int64_t virtual_ms) {
  using json = nlohmann::json;
  json doc;
  doc["name"] = fmt::format("scale-{}x{}", size.consumers, size.partitions);
  doc["description"] =
      "bench scale: one group, 1 record/s per partition, 1 % crash and restart, 10 % rolling "
      "restart";
  doc["seed"] = 1;
  doc["duration_ms"] = virtual_ms;
  doc["protocols"] = protocols;
  doc["cluster"] = {{"brokers", 3}};
  doc["topics"] = json::array(
      {{{"name", "t"}, {"partitions", size.partitions}, {"produce", {{"records_per_sec", 1}}}}});
  json consumers = json::array();
  json events = json::array();
  const auto name = [](std::int64_t i) { return fmt::format("c{}", i); };
  for (std::int64_t i = 0; i < size.consumers; ++i) {
    consumers.push_back({{"name", name(i)}, {"group", "g"}, {"topics", {"t"}}});
    // Everyone starts in the first second, 1 ms apart at most.
    events.push_back(
        {{"at_ms", 100 + (i * 900) / size.consumers}, {"do", "start"}, {"consumer", name(i)}});
  }
  // 1 % crash (no leave) and come back 10 s later, spread over the second quarter of the run.
  const std::int64_t crashes = std::max<std::int64_t>(1, size.consumers / 100);
  for (std::int64_t k = 0; k < crashes; ++k) {
    const std::int64_t i = (k * 97) % size.consumers;
    events.push_back({{"at_ms", virtual_ms / 4 + (k * (virtual_ms / 4)) / crashes},
                      {"do", "restart"},
                      {"consumer", name(i)},
                      {"after_ms", 10000},
                      {"graceful", false}});
  }
  // A rolling restart of 10 % in the last fifth: graceful, one every 200 ms, back after 5 s.
  const std::int64_t rolling = std::max<std::int64_t>(1, size.consumers / 10);
  for (std::int64_t k = 0; k < rolling; ++k) {
    const std::int64_t i =
        (size.consumers - 1 - k * 7 % size.consumers + size.consumers) % size.consumers;
    events.push_back({{"at_ms", virtual_ms * 4 / 5 + k * 200 % (virtual_ms / 10)},
                      {"do", "restart"},
                      {"consumer", name(i)},
                      {"after_ms", 5000},
                      {"graceful", true}});
  }
  doc["consumers"] = consumers;
  doc["events"] = events;
  return doc;
}

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string human_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}

}  // namespace

std::string run_scale_bench(const std::vector<ScaleSize>& sizes, const std::string& protocol,
                            std::int64_t virtual_ms, const std::string& trace_level,
                            bool critical_paths) {
  const bool write_trace = trace_level != "none";
  std::string out = fmt::format(
      "bench scale: protocol {}, {} virtual s, trace {}{}\n", protocol,
      static_cast<double>(virtual_ms) / 1000.0,
      write_trace ? fmt::format("at {} detail", trace_level) : std::string("none (summary only)"),
      critical_paths ? "" : ", no critical paths");
  out += fmt::format("{:>18} {:>12} {:>8} {:>12} {:>11} {:>11} {:>12} {:>9}\n", "consumers x parts",
                     "events", "CPU s", "virtual/CPU", "peak RSS", "trace", "trace/vs", "exponent");
  const long floor_kib = assignors::bench::baseline_rss_kib();
  double last_cpu = 0;
  std::int64_t last_n = 0;
  const auto tmp =
      std::filesystem::temp_directory_path() / fmt::format("rsim-bench-scale-{}", getpid());
  for (const auto& size : sizes) {
    const auto child = assignors::bench::run_in_child([&]() -> std::string {
      // Through text, as a scenario file is read (the loader expects parsed numbers' types).
      const ScenarioSpec spec =
          parse_scenario(nlohmann::json::parse(scale_scenario(size, {protocol}, virtual_ms).dump()),
                         "bench-scale");
      std::filesystem::create_directories(tmp);
      const double before = cpu_seconds();
      std::optional<trace::JsonlFileSink> jsonl;
      // As `run` summarizes: with the steady window (the script's leading starts).
      reports::SummaryInputs inputs{spec.name, protocol, spec.seed, nullptr};
      inputs.critical_paths = critical_paths;
      inputs.steady_consumers = start_up_consumers(spec);
      reports::SummarySink summary(inputs);
      // summary.json streamed at every level (SummarySink::spool_rebalances), as `run` writes it
      // without a trace: memory holds the open rebalances only, whatever the trace level.
      summary.spool_rebalances(tmp / "summary.rebalances.spool");
      std::vector<sim::TraceSink<trace::Event>*> sinks{&summary};
      if (write_trace) {
        jsonl.emplace((tmp / "trace.jsonl").string());
        jsonl->set_level(trace_level == "full" ? trace::Detail::Full : trace::Detail::Standard);
        sinks.push_back(&*jsonl);
      }
      const std::uint64_t events =
          run_scenario(spec, protocol, spec.seed, sinks,
                       trace_level == "full" ? trace::Detail::Full : trace::Detail::Standard);
      std::uint64_t bytes = 0;
      if (jsonl) {
        jsonl->close();
        bytes = jsonl->file().bytes_written();
      }
      {
        std::ofstream file(tmp / "summary.json", std::ios::binary);
        summary.write_json(file, summary.finish_streamed());
      }
      const double cpu = cpu_seconds() - before;
      std::filesystem::remove_all(tmp);
      return fmt::format("{} {} {}", events, cpu, bytes);
    });
    const std::string label = fmt::format("{} x {}", size.consumers, size.partitions);
    if (child.failed) {
      out += fmt::format("{:>18} failed: {}\n", label, child.output);
      continue;
    }
    std::uint64_t events = 0, bytes = 0;
    double cpu = 0;
    std::istringstream(child.output) >> events >> cpu >> bytes;
    std::string exponent = "-";
    if (last_n > 0 && last_cpu > 0 && size.consumers != last_n)
      exponent = fmt::format("{:.2f}", std::log(cpu / last_cpu) /
                                           std::log(static_cast<double>(size.consumers) / last_n));
    const double virtual_s = static_cast<double>(virtual_ms) / 1000.0;
    out += fmt::format("{:>18} {:>12} {:>8.2f} {:>12.1f} {:>11} {:>11} {:>12} {:>9}\n", label,
                       events, cpu, cpu > 0 ? virtual_s / cpu : 0.0,
                       human_bytes(static_cast<double>(child.peak_rss_kib) * 1024.0),
                       write_trace ? human_bytes(static_cast<double>(bytes)) : std::string("-"),
                       write_trace && virtual_s > 0
                           ? human_bytes(static_cast<double>(bytes) / virtual_s) + "/s"
                           : std::string("-"),
                       exponent);
    last_cpu = cpu;
    last_n = size.consumers;
  }
  out += fmt::format(
      "(peak RSS includes the forked child's floor of {}; trace/vs: trace bytes per virtual "
      "second; exponent: CPU growth in members between consecutive sizes)\n",
      human_bytes(static_cast<double>(floor_kib) * 1024.0));
  return out;
}

}  // namespace rsim::cli
