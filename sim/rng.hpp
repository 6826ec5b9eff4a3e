// The project's own seeded random generator: xoshiro256** seeded through SplitMix64.
// Each component draws from its own named stream, so adding a consumer never shifts the
// draws of another. No standard-library engine or distribution is used anywhere.
#pragma once
#include <cstdint>
#include <string_view>

namespace sim {

constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  /// A stream is identified by the run's seed and a stable name ("net", "consumer-B").
  Rng(std::uint64_t seed, std::string_view stream) {
    std::uint64_t sm = seed ^ fnv1a(stream);
    for (auto& word : s_) word = splitmix64(sm);
  }

  /// For reference tests: a generator with this exact xoshiro256** state.
  static Rng from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3) {
    Rng r(0, "");
    r.s_[0] = s0;
    r.s_[1] = s1;
    r.s_[2] = s2;
    r.s_[3] = s3;
    return r;
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [lo, hi], inclusive, without modulo bias (Lemire's method).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    const auto range = static_cast<std::uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<std::int64_t>(next());  // the full 64-bit range
    __uint128_t m = static_cast<__uint128_t>(next()) * range;
    auto low = static_cast<std::uint64_t>(m);
    if (low < range) {
      const std::uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next()) * range;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return lo + static_cast<std::int64_t>(m >> 64);
  }

  bool chance_ppm(std::uint32_t ppm) { return ppm > 0 && uniform(1, 1'000'000) <= ppm; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace sim
