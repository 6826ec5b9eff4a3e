// Distributions of the scenario format, sampled from the project's own Rng. Values are in
// milliseconds (possibly fractional) and sampled to integral microseconds of SimTime.
// Every formula is ours: standard-library distributions differ between implementations.
#pragma once
#include <string>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace sim {

/// The largest draw of any distribution, in ms: 7 days, the longest run. A lognormal with a huge
/// sigma or median draws up to this, never past it (and never an overflowing time).
inline constexpr double kMaxSampleMs = 7.0 * 24 * 3600 * 1000;

struct Distribution {
  enum class Kind { Constant, Uniform, Exponential, Normal, Lognormal };
  Kind kind = Kind::Constant;
  double value = 0;   // constant
  double min = 0;     // uniform lower bound; normal lower clamp (if has_min)
  double max = 0;     // uniform upper bound; normal upper clamp (if has_max)
  double mean = 0;    // exponential, normal
  double stddev = 0;  // normal
  double median = 0;  // lognormal
  double sigma = 0;   // lognormal
  bool has_min = false;
  bool has_max = false;

  static Distribution constant(double v) {
    Distribution d;
    d.value = v;
    return d;
  }
  static Distribution lognormal(double median, double sigma) {
    Distribution d;
    d.kind = Kind::Lognormal;
    d.median = median;
    d.sigma = sigma;
    return d;
  }
  bool is_constant() const { return kind == Kind::Constant; }

  /// One draw in milliseconds, in [0, kMaxSampleMs] (NaN draws 0). A constant draws nothing from
  /// `rng`.
  double sample_ms(Rng& rng) const;
  /// One draw as SimTime (rounded to the nearest microsecond).
  SimTime sample(Rng& rng) const;
  /// The expected value in milliseconds, at most kMaxSampleMs, for documentation and checks.
  double expected_ms() const;
  std::string describe() const;
};

/// Standard normal draw by the Box-Muller transform (one of the pair is used).
double standard_normal(Rng& rng);

}  // namespace sim
