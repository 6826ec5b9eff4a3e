// Virtual time of the simulation: integral microseconds since the start of a run.
// Never wall-clock time; nothing in sim/ or models/ reads a real clock.
// Arithmetic on times saturates at kNever instead of overflowing: a timer set "very far" away
// simply never fires within a run.
#pragma once
#include <chrono>
#include <cstdint>

namespace sim {

using SimTime = std::chrono::microseconds;

inline constexpr SimTime kNever = SimTime{INT64_MAX};

/// v milliseconds; saturates at kNever (and at the most negative time) instead of overflowing.
constexpr SimTime ms(std::int64_t v) {
  if (v > INT64_MAX / 1000) return kNever;
  if (v < INT64_MIN / 1000) return SimTime{INT64_MIN};
  return SimTime{v * 1000};
}
constexpr SimTime us(std::int64_t v) {
  return SimTime{v};
}
constexpr std::int64_t to_ms(SimTime t) {
  return t.count() / 1000;
}
/// a + b for b >= 0, saturating at kNever.
constexpr SimTime saturating_add(SimTime a, SimTime b) {
  if (b > SimTime::zero() && a.count() > INT64_MAX - b.count()) return kNever;
  return a + b;
}

}  // namespace sim
