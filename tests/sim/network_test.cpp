// Network<int>: latency, per-link order, drops, cut links, held delivery while paused.
#include <doctest/doctest.h>

#include <vector>

#include "sim/network.hpp"

namespace {
struct Fixture {
  sim::Kernel k;
  int drops = 0;
  sim::Process proc{k};
  sim::Activity recv{proc, "net"};
  std::vector<std::pair<std::int64_t, int>> got;  // (arrival µs, payload)
  sim::Network<int> net;
  sim::NodeId a, b;
  explicit Fixture(sim::LinkSpec spec, std::uint64_t seed = 1)
      : net(k, sim::Rng(seed, "net"), std::move(spec),
            [this](sim::NodeId, sim::NodeId, bool) { ++drops; }) {
    proc.attach(&recv);
    proc.start();
    a = net.add_node("a", nullptr, [](sim::NodeId, int&&) {});
    b = net.add_node("b", &recv,
                     [this](sim::NodeId, int&& v) { got.emplace_back(k.now().count(), v); });
  }
};
sim::LinkSpec constant(double ms) {
  sim::LinkSpec s;
  s.latency = sim::Distribution::constant(ms);
  return s;
}
}  // namespace

TEST_CASE("a message arrives after the link's latency") {
  Fixture f(constant(2.5));
  f.net.send(f.a, f.b, 1);
  f.k.run(sim::ms(10));
  REQUIRE(f.got.size() == 1);
  CHECK(f.got[0] == std::make_pair(std::int64_t{2500}, 1));
}

TEST_CASE("one link never reorders, even when a later message draws a shorter latency") {
  sim::LinkSpec spec;
  spec.latency.kind = sim::Distribution::Kind::Uniform;
  spec.latency.min = 0;
  spec.latency.max = 50;
  Fixture f(spec);
  for (int i = 0; i < 200; ++i) {
    f.k.schedule_closure_after(sim::SimTime{i * 100}, [&f, i] { f.net.send(f.a, f.b, i); });
  }
  f.k.run(sim::ms(1000));
  REQUIRE(f.got.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(f.got[static_cast<std::size_t>(i)].second == i);
}

TEST_CASE("drop rate loses about that share of messages, and the trace says so") {
  sim::LinkSpec spec = constant(1);
  spec.drop_ppm = 250000;
  Fixture f(spec);
  int sent = 0;
  for (int i = 0; i < 4000; ++i) sent += f.net.send(f.a, f.b, i) ? 1 : 0;
  f.k.run(sim::ms(10));
  CHECK(static_cast<int>(f.got.size()) == sent);
  CHECK(sent == doctest::Approx(3000).epsilon(0.05));
  CHECK(f.drops == 4000 - sent);
}

TEST_CASE("a cut link drops both ways until healed") {
  Fixture f(constant(1));
  f.net.set_cut(f.a, f.b, true);
  CHECK_FALSE(f.net.send(f.a, f.b, 1));
  f.net.set_cut(f.a, f.b, false);
  CHECK(f.net.send(f.a, f.b, 2));
  f.k.run(sim::ms(10));
  REQUIRE(f.got.size() == 1);
  CHECK(f.got[0].second == 2);
}

TEST_CASE("changes() moves with every cut, heal and link change, and with nothing else") {
  Fixture f(constant(1));
  const std::uint64_t start = f.net.changes();
  f.net.send(f.a, f.b, 1);
  CHECK(f.net.is_cut(f.a, f.b) == false);
  CHECK(f.net.mean_latency_ms(f.a, f.b) == 1.0);
  CHECK(f.net.changes() == start);
  f.net.set_cut(f.a, f.b, true);
  CHECK(f.net.changes() == start + 1);
  f.net.set_cut(f.a, f.b, false);
  CHECK(f.net.changes() == start + 2);
  f.net.set_link(f.b, f.a, constant(3));
  CHECK(f.net.changes() == start + 3);
  CHECK(f.net.mean_latency_ms(f.b, f.a) == 3.0);
}

TEST_CASE(
    "messages for a paused process wait and arrive in order on resume - a dead one gets none") {
  Fixture f(constant(1));
  f.proc.pause();
  f.net.send(f.a, f.b, 1);
  f.net.send(f.a, f.b, 2);
  f.k.schedule_closure_after(sim::ms(5), [&f] { f.proc.resume(); });
  f.k.run(sim::ms(10));
  REQUIRE(f.got.size() == 2);
  CHECK(f.got[0] == std::make_pair(std::int64_t{5000}, 1));
  CHECK(f.got[1] == std::make_pair(std::int64_t{5000}, 2));
  f.proc.kill();
  f.net.send(f.a, f.b, 3);
  f.k.run(sim::ms(20));
  CHECK(f.got.size() == 2);
}

TEST_CASE("random latency is reproducible per seed and differs across seeds") {
  auto arrivals = [](std::uint64_t seed) {
    sim::LinkSpec spec;
    spec.latency.kind = sim::Distribution::Kind::Exponential;
    spec.latency.mean = 3;
    Fixture f(spec, seed);
    for (int i = 0; i < 50; ++i) f.net.send(f.a, f.b, i);
    f.k.run(sim::ms(1000));
    return f.got;
  };
  CHECK(arrivals(1) == arrivals(1));
  CHECK(arrivals(1) != arrivals(2));
}

TEST_CASE("a node keeps link slots up to the highest node it sent to, not one per node") {
  // 10,000 consumers each talking to three brokers made first: a slot per node would cost every
  // consumer 10,000 pointers.
  sim::Kernel k;
  sim::Network<int> net(k, sim::Rng(1, "net"), constant(1));
  std::vector<sim::NodeId> brokers, clients;
  for (int i = 0; i < 3; ++i)
    brokers.push_back(net.add_node("broker", nullptr, [](sim::NodeId, int&&) {}));
  for (int i = 0; i < 2000; ++i)
    clients.push_back(net.add_node("client", nullptr, [](sim::NodeId, int&&) {}));
  for (const sim::NodeId c : clients)
    for (const sim::NodeId b : brokers) {
      net.send(c, b, 1);
      net.send(b, c, 2);
    }
  k.run(sim::ms(10));
  for (const sim::NodeId c : clients) CHECK(net.link_slots(c) == 3);
  CHECK(net.link_slots(brokers[0]) == clients.back() + 1);
  // A link made later still works and keeps its place.
  CHECK(net.send(clients[0], clients.back(), 3));
  CHECK(net.link_slots(clients[0]) == clients.back() + 1);
}
