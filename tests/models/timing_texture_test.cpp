// Timing texture (docs/writing-scenarios.md): the classic heartbeat thread's wait loop of
// retry.backoff.ms steps with a consumer's heartbeat_wakeup_lateness_ms, the notify() from a
// poll() that finds a heartbeat due, and a broker's cluster.request_handling_ms. Their defaults
// are the Kafka-like timing texture measured on Kafka 4.4.0 (docs/fidelity.md, "Timing
// texture"); the tests of one knob run on the idealized machine (every knob they do not set at 0,
// tests/trace_helpers.hpp) so that each time can be derived by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "classic_pair.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

/// The run of `doc` on the idealized machine: the knobs it does not set at 0.
std::vector<std::string> run_lines(const json& doc, const std::string& variant) {
  const auto spec = testing::ideal_machine(doc);
  return rsim::run_scenario(spec, variant, spec.seed).trace_lines;
}

/// The run of `doc` as parsed: the knobs it does not set at their defaults.
std::vector<std::string> run_default_lines(const json& doc, const std::string& variant) {
  const auto spec = rsim::parse_scenario(doc, "test.json");
  return rsim::run_scenario(spec, variant, spec.seed).trace_lines;
}

std::vector<json> run_events(const json& doc, const std::string& variant) {
  std::vector<json> out;
  for (const auto& l : run_lines(doc, variant)) out.push_back(json::parse(l));
  return out;
}

/// Times (ms) at which `consumer` sent requests of `api`.
std::vector<double> sends(const std::vector<json>& trace, const std::string& consumer,
                          const std::string& api) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e.value("dir", "") == "send" && e.value("from", "") == consumer &&
        e.value("api", "") == api)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}

/// Times (ms) at which `consumer` received responses of `api`.
std::vector<double> receipts(const std::vector<json>& trace, const std::string& consumer,
                             const std::string& api) {
  std::vector<double> out;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e.value("dir", "") == "recv" && e.value("to", "") == consumer &&
        e.value("api", "") == api)
      out.push_back(e["t_us"].get<double>() / 1000.0);
  return out;
}

std::vector<double> within(const std::vector<double>& v, double from, double to) {
  std::vector<double> out;
  for (double x : v)
    if (x > from && x < to) out.push_back(x);
  return out;
}

// A and B in one classic group (links 1 ms each way, initial rebalance delay 0); B's application
// stops calling poll() from 10 s to 30 s, while its heartbeat thread goes on.
json stalled_pair(const json& lateness_a, const json& lateness_b,
                  int max_poll_interval_ms = 300000) {
  json doc = testing::classic_pair("heartbeat-thread", 3, 40000,
                                   {{"at_ms", 10000}, {"do", "stall"}, {"for_ms", 20000}});
  doc["consumers"][0]["heartbeat_wakeup_lateness_ms"] = lateness_a;
  doc["consumers"][1]["heartbeat_wakeup_lateness_ms"] = lateness_b;
  doc["consumers"][1]["config"] = json{{"max.poll.interval.ms", max_poll_interval_ms}};
  return doc;
}

std::vector<double> gaps(const std::vector<double>& v) {
  std::vector<double> out;
  for (std::size_t i = 1; i < v.size(); ++i) out.push_back(v[i] - v[i - 1]);
  return out;
}

}  // namespace

TEST_CASE(
    "the timing texture is on by default: the documented distributions, and 0 the idealized "
    "machine") {
  for (const auto& row : {std::pair<std::string, std::string>{
                              "scenarios/examples/two-consumers.json", "classic-eager"},
                          {"scenarios/examples/two-consumers-kip848.json", "consumer"}}) {
    const auto& path = std::get<0>(row);
    const auto& variant = std::get<1>(row);
    INFO(path);
    std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/" + path);
    std::stringstream ss;
    ss << in.rdbuf();
    const json doc = json::parse(ss.str());
    // The defaults written out give the trace of the file, which sets none of the knobs.
    json written = doc;
    written["cluster"]["request_handling_ms"] =
        json{{"dist", "lognormal"}, {"median", 1.5}, {"sigma", 0.5}};
    written["cluster"]["write_latency_ms"] =
        json{{"dist", "lognormal"}, {"median", 3.5}, {"sigma", 0.6}};
    written["cluster"]["purgatory_lateness_ms"] =
        json{{"dist", "lognormal"}, {"median", 1.1}, {"sigma", 0.6}};
    for (auto& c : written["consumers"]) {
      c["heartbeat_wakeup_lateness_ms"] =
          json{{"dist", "lognormal"}, {"median", 1}, {"sigma", 1.2}};
      c["connection_setup_ms"] = json{{"dist", "lognormal"}, {"median", 4.97}, {"sigma", 0.25}};
      c["poll_return_lateness_ms"] = 0.33;
      c["reconciliation_ms"] = json{{"dist", "lognormal"}, {"median", 18.3}, {"sigma", 0.6}};
    }
    const auto with_defaults = run_default_lines(doc, variant);
    CHECK(run_default_lines(written, variant) == with_defaults);
    // All seven at 0 is the idealized machine of the unit tests, and another trace.
    json zero = doc;
    zero["cluster"]["request_handling_ms"] = 0;
    zero["cluster"]["write_latency_ms"] = 0;
    zero["cluster"]["purgatory_lateness_ms"] = 0;
    for (auto& c : zero["consumers"]) {
      c["heartbeat_wakeup_lateness_ms"] = json{{"dist", "constant"}, {"value", 0}};
      c["connection_setup_ms"] = 0;
      c["poll_return_lateness_ms"] = 0;
      c["reconciliation_ms"] = 0;
    }
    const auto ideal = run_default_lines(zero, variant);
    CHECK(run_lines(doc, variant) == ideal);
    CHECK(ideal != with_defaults);
    // In the classic example (1 ms links, no other distribution) every event of the idealized
    // machine falls on the millisecond grid of the links and Kafka's timers; the texture moves
    // most of them off it. (The KIP-848 example draws its own latencies: off the grid anyway.)
    const auto off_grid = [](const std::vector<std::string>& lines) {
      std::size_t n = 0;
      for (const auto& l : lines)
        if (json::parse(l)["t_us"].get<std::int64_t>() % 1000 != 0) ++n;
      return n;
    };
    if (variant == "classic-eager") {
      CHECK(off_grid(ideal) == 0);
      CHECK(off_grid(with_defaults) > with_defaults.size() / 4);
    }
  }
}

TEST_CASE(
    "a busy application's heartbeats come from the thread's 100 ms waits, each wake's lateness "
    "adding up") {
  // B's heartbeats during the stall are sent by the heartbeat thread alone: it waits
  // retry.backoff.ms (100) at a time from its last send, so with each wake 1 ms late the first
  // wake at or after the due time (send + 3000) is the 30th, at send + 30 x 101 = send + 3030.
  // Before the stall B waits in poll(), which returns 1 ms after the due time and notifies the
  // thread. B's JoinGroup answer comes at 4013, 1 ms later than without lateness (A learns of
  // B's join at its heartbeat of 1006 + 3000 + 1 = 4007), so B's first heartbeat is at 4013 + 3000
  // + 1 = 7014 (the thread's own wake would be 4013 + 3030), the next, the thread's own, at 7014 +
  // 3030. A polls all the time (poll() returns every 100 ms without records), so each of its
  // heartbeats is the notified one, 1 ms after the due time: 3001 ms apart.
  const auto late = run_events(stalled_pair(1, 1), "classic-eager");
  const auto b_late = within(sends(late, "B", "Heartbeat"), 7000, 30000);
  REQUIRE(b_late.size() >= 6);
  CHECK(b_late[0] == 7014);
  CHECK(b_late[1] == 7014 + 3030);
  for (std::size_t i = 1; i + 1 < b_late.size(); ++i)
    CHECK(b_late[i + 1] - b_late[i] == doctest::Approx(3030));
  const auto a_late = within(sends(late, "A", "Heartbeat"), 10000, 30000);
  REQUIRE(a_late.size() >= 5);
  for (double g : gaps(a_late)) CHECK(g == doctest::Approx(3001));

  // Without lateness the waits add up to the interval exactly: B heartbeats every 3000 ms too,
  // at the same instants as without the stall.
  const auto exact = run_events(stalled_pair(0, 0), "classic-eager");
  const auto b_exact = within(sends(exact, "B", "Heartbeat"), 10000, 30000);
  REQUIRE(b_exact.size() >= 6);
  for (double g : gaps(b_exact)) CHECK(g == doctest::Approx(3000));
  CHECK(b_exact.front() == 10012);

  // A distribution draws per wake from B's own stream: the gaps vary, each 30 wakes of 100 ms
  // plus 30 draws in [0, 2] ms.
  const auto drawn = run_events(stalled_pair(0, json{{"dist", "uniform"}, {"min", 0}, {"max", 2}}),
                                "classic-eager");
  const auto b_drawn = within(sends(drawn, "B", "Heartbeat"), 10000, 30000);
  REQUIRE(b_drawn.size() >= 5);
  bool varied = false;
  for (double g : gaps(b_drawn)) {
    CHECK(g >= 3000);
    CHECK(g <= 3060);
    if (g != gaps(b_drawn).front()) varied = true;
  }
  CHECK(varied);
  CHECK(sends(drawn, "A", "Heartbeat") == sends(exact, "A", "Heartbeat"));  // A's draws are not B's
}

TEST_CASE("the poll timeout is noticed at a wake of the heartbeat thread, on its 100 ms grid") {
  // max.poll.interval.ms 10000: B's poll() returns every 100 ms from 2000 and its last pass
  // before the stall is at 9900 (the poll() it is in ends at 10000, when the stall begins), so its
  // poll timer expires at 19900. B's heartbeat thread last passed at its heartbeat of 19012
  // (4012 + 3000 k) and notices at its first wake at or after 19900: 19012 + 9 x 100.
  const auto trace = run_events(stalled_pair(0, 0, 10000), "classic-eager");
  CHECK(within(sends(trace, "B", "Heartbeat"), 10000, 20000) ==
        std::vector<double>{10012, 13012, 16012, 19012});
  CHECK(sends(trace, "B", "LeaveGroup") == std::vector<double>{19912});
  // With each wake 2 ms late, B's last poll-notified heartbeat is at 4012 + 3000 + 2 = 7014; the
  // heartbeats of the stall drift from there (7014 + 3060 k: 30 wakes of 102 ms each) and so does
  // the wake that notices: 19254 + 6 x 102 = 19866 < 19900 <= 19254 + 7 x 102.
  const auto late = run_events(stalled_pair(0, 2, 10000), "classic-eager");
  CHECK(within(sends(late, "B", "Heartbeat"), 7000, 20000) ==
        std::vector<double>{7014, 10074, 13134, 16194, 19254});
  CHECK(sends(late, "B", "LeaveGroup") == std::vector<double>{19254 + 7 * 102});
}

TEST_CASE("request_handling_ms delays every request a broker handles, in order per connection") {
  json doc = stalled_pair(0, 0);
  doc["events"] = json::array({json{{"at_ms", 1000}, {"do", "start"}, {"consumer", "A"}}});
  const auto base = run_events(doc, "classic-eager");
  doc["cluster"]["request_handling_ms"] = 5;
  const auto slow = run_events(doc, "classic-eager");
  // FindCoordinator at 1000: 1 ms there, 5 ms handled, 1 ms back.
  REQUIRE(!receipts(base, "A", "FindCoordinator").empty());
  CHECK(receipts(base, "A", "FindCoordinator")[0] == doctest::Approx(1002));
  CHECK(receipts(slow, "A", "FindCoordinator")[0] == doctest::Approx(1007));
  // Each heartbeat's round trip is 2 + 5 ms.
  const auto sent = sends(slow, "A", "Heartbeat"), got = receipts(slow, "A", "Heartbeat");
  REQUIRE(sent.size() >= 3);
  REQUIRE(got.size() >= 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(got[i] - sent[i] == doctest::Approx(7));
}
