// Strict argument checks shared by the subcommands: integers as digits only (no sign, no
// wrap-around: "--seed -1" is refused as "seed": -1 is), within a bound.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/kernel.hpp"

namespace rsim::cli {

/// A CLI11 validator: the value is a decimal integer in [0, max].
CLI::Validator non_negative_integer(std::uint64_t max);

/// --max-events, --max-events-per-instant, --max-trace-bytes: the kernel watchdog's bounds.
void add_watchdog_options(CLI::App* command, sim::WatchdogLimits& limits);

}  // namespace rsim::cli
