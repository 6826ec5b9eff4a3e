// Virtual time of the simulation: integral microseconds since the start of a run.
// Never wall-clock time; nothing in sim/ or models/ reads a real clock.
#pragma once
#include <chrono>
#include <cstdint>

namespace sim {

using SimTime = std::chrono::microseconds;

constexpr SimTime ms(std::int64_t v) { return SimTime{v * 1000}; }
constexpr SimTime us(std::int64_t v) { return SimTime{v}; }
constexpr std::int64_t to_ms(SimTime t) { return t.count() / 1000; }
inline constexpr SimTime kNever = SimTime{INT64_MAX};

}  // namespace sim
