// The project's RNG: reference outputs of SplitMix64 and xoshiro256**, independent named
// streams, and the moments of each scenario distribution at a fixed seed.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/rng.hpp"

TEST_CASE("splitmix64 matches its reference output") {
  std::uint64_t state = 0;
  CHECK(sim::splitmix64(state) == 0xe220a8397b1dcdafULL);
  CHECK(sim::splitmix64(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(sim::splitmix64(state) == 0x06c45d188009454fULL);
}

TEST_CASE("xoshiro256** matches its reference output from state {1,2,3,4}") {
  auto r = sim::Rng::from_state(1, 2, 3, 4);
  CHECK(r.next() == 11520ULL);
  CHECK(r.next() == 0ULL);
  CHECK(r.next() == 1509978240ULL);
  CHECK(r.next() == 1215971899390074240ULL);
}

TEST_CASE("named streams are independent and reproducible") {
  sim::Rng a1(7, "consumer-A"), a2(7, "consumer-A"), b(7, "consumer-B"),
      a_other_seed(8, "consumer-A");
  std::vector<std::uint64_t> x, y, z, w;
  for (int i = 0; i < 8; ++i) {
    x.push_back(a1.next());
    y.push_back(a2.next());
    z.push_back(b.next());
    w.push_back(a_other_seed.next());
  }
  CHECK(x == y);
  CHECK(x != z);
  CHECK(x != w);
}

TEST_CASE("uniform integers stay in range and hit both ends") {
  sim::Rng r(1, "u");
  bool lo = false, hi = false;
  for (int i = 0; i < 10000; ++i) {
    const auto v = r.uniform(3, 7);
    REQUIRE(v >= 3);
    REQUIRE(v <= 7);
    lo = lo || v == 3;
    hi = hi || v == 7;
  }
  CHECK(lo);
  CHECK(hi);
  CHECK_FALSE(r.chance_ppm(0));
  CHECK(r.chance_ppm(1'000'000));
}

namespace {
struct Moments {
  double mean = 0, var = 0, min = 1e300;
};
Moments moments(const sim::Distribution& d, int n) {
  sim::Rng r(42, "moments");
  double s = 0, s2 = 0, mn = 1e300;
  for (int i = 0; i < n; ++i) {
    const double v = d.sample_ms(r);
    s += v;
    s2 += v * v;
    mn = std::min(mn, v);
  }
  Moments m;
  m.mean = s / n;
  m.var = s2 / n - m.mean * m.mean;
  m.min = mn;
  return m;
}
}  // namespace

TEST_CASE("distribution moments at a fixed seed") {
  constexpr int n = 200000;
  sim::Distribution u;
  u.kind = sim::Distribution::Kind::Uniform;
  u.min = 1;
  u.max = 5;
  auto m = moments(u, n);
  CHECK(m.mean == doctest::Approx(3.0).epsilon(0.01));
  CHECK(m.var == doctest::Approx(16.0 / 12.0).epsilon(0.02));

  sim::Distribution e;
  e.kind = sim::Distribution::Kind::Exponential;
  e.mean = 2;
  m = moments(e, n);
  CHECK(m.mean == doctest::Approx(2.0).epsilon(0.01));
  CHECK(m.var == doctest::Approx(4.0).epsilon(0.03));

  sim::Distribution no;
  no.kind = sim::Distribution::Kind::Normal;
  no.mean = 5;
  no.stddev = 1;
  m = moments(no, n);
  CHECK(m.mean == doctest::Approx(5.0).epsilon(0.01));
  CHECK(m.var == doctest::Approx(1.0).epsilon(0.02));

  no.has_min = true;
  no.min = 5;  // clamped at the mean: nothing below 5
  m = moments(no, n);
  CHECK(m.min == 5.0);

  sim::Distribution ln;
  ln.kind = sim::Distribution::Kind::Lognormal;
  ln.median = 3;
  ln.sigma = 0.5;
  m = moments(ln, n);
  CHECK(m.mean == doctest::Approx(3.0 * std::exp(0.125)).epsilon(0.01));

  sim::Distribution c = sim::Distribution::constant(1.25);
  sim::Rng r(1, "c");
  CHECK(c.sample(r) == sim::SimTime{1250});
}
