#include "tools/cli_args.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"

namespace rsim::cli {

CLI::Validator non_negative_integer(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& value) -> std::string {
        const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
        if (!digits)
          return fmt::format("must be an integer >= 0, got \"{}\"", one_line(value.substr(0, 40)));
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || v > max)
          return fmt::format("must be <= {}, got {}", max, value.substr(0, 40));
        return {};
      },
      fmt::format("UINT<={}", max));
}

void add_watchdog_options(CLI::App* command, sim::WatchdogLimits& limits) {
  command
      ->add_option("--max-events", limits.max_events,
                   "watchdog: events one run may fire (exit 2 past it)")
      ->check(non_negative_integer(UINT64_MAX))
      ->capture_default_str();
  command
      ->add_option("--max-events-per-instant", limits.max_events_per_instant,
                   "watchdog: events one virtual instant may fire (a loop that takes no time)")
      ->check(non_negative_integer(UINT64_MAX))
      ->capture_default_str();
  command
      ->add_option("--max-trace-bytes", limits.max_trace_bytes,
                   "watchdog: bytes of trace one run may write")
      ->check(non_negative_integer(UINT64_MAX))
      ->capture_default_str();
}

}  // namespace rsim::cli
