#include "sim/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace sim {

double standard_normal(Rng& rng) {
  // 1 - u keeps the argument of log in (0, 1].
  const double u1 = 1.0 - rng.uniform01();
  const double u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Distribution::sample_ms(Rng& rng) const {
  double v = 0;
  switch (kind) {
    case Kind::Constant:
      v = value;
      break;
    case Kind::Uniform:
      v = min + (max - min) * rng.uniform01();
      break;
    case Kind::Exponential:
      v = -mean * std::log(1.0 - rng.uniform01());
      break;
    case Kind::Normal:
      v = mean + stddev * standard_normal(rng);
      if (has_min) v = std::max(v, min);
      if (has_max) v = std::min(v, max);
      break;
    case Kind::Lognormal:
      v = median * std::exp(sigma * standard_normal(rng));
      break;
  }
  if (!(v > 0)) return 0;  // negative, zero or NaN
  return std::min(v, kMaxSampleMs);
}

SimTime Distribution::sample(Rng& rng) const {
  return SimTime{static_cast<std::int64_t>(std::llround(sample_ms(rng) * 1000.0))};
}

double Distribution::expected_ms() const {
  double e = 0;
  switch (kind) {
    case Kind::Constant:
      e = value;
      break;
    case Kind::Uniform:
      e = (min + max) / 2;
      break;
    case Kind::Exponential:
      e = mean;
      break;
    case Kind::Normal:
      e = mean;
      break;
    case Kind::Lognormal:
      e = median * std::exp(sigma * sigma / 2);
      break;
  }
  // Draws never pass kMaxSampleMs, nor can their mean (a huge sigma overflows to inf).
  if (!(e > 0)) return 0;
  return std::min(e, kMaxSampleMs);
}

std::string Distribution::describe() const {
  switch (kind) {
    case Kind::Constant:
      return fmt::format("constant {}", value);
    case Kind::Uniform:
      return fmt::format("uniform [{}, {}]", min, max);
    case Kind::Exponential:
      return fmt::format("exponential mean {}", mean);
    case Kind::Normal:
      return fmt::format("normal mean {} stddev {}", mean, stddev);
    case Kind::Lognormal:
      return fmt::format("lognormal median {} sigma {}", median, sigma);
  }
  return "?";
}

}  // namespace sim
