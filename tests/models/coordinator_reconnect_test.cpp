// The classic client's coordinator connection after markCoordinatorUnknown (docs/fidelity.md,
// finding 19): Kafka closes the connection (AbstractCoordinator.markCoordinatorUnknown ->
// disconnectAsync), which then waits its reconnect backoff (ClusterConnectionStates:
// reconnect.backoff.ms, doubled per failed attempt up to reconnect.backoff.max.ms, jitter 0.2).
// A FindCoordinator answer naming that broker inside the backoff finds the coordinator
// unavailable (NetworkClientUtils.isUnavailable): ensureCoordinatorReady marks it unknown again
// and asks again after retryBackoff.backoff(attempts++) (retry.backoff.ms doubled per attempt,
// jitter 0.2). Runs on the idealized machine (1 ms links, no texture), so that every time but
// the drawn backoffs is derived by hand.
#include <doctest/doctest.h>

#include "classic_pair.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

// A and B in one classic group; B's whole process is frozen from 10 s to 60 s (SIGSTOP), past
// session.timeout.ms (45 s): on SIGCONT at 60 s its heartbeat thread finds the session expired.
json paused_pair(const json& b_config) {
  json doc = testing::classic_pair("coordinator-reconnect", 5, 63000,
                                   {{"at_ms", 10000}, {"do", "pause"}, {"for_ms", 50000}});
  doc["consumers"][1]["config"] = b_config;
  return doc;
}

std::vector<json> run_ideal(const json& doc) {
  const auto spec = testing::ideal_machine(doc);
  return testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
}

double ms(const json& e) {
  return e["t_us"].get<double>() / 1000.0;
}

/// B's events after the resume: FindCoordinator sends and answers, "coordinator unknown" reasons.
struct Resume {
  std::vector<double> lookups, answers, unavailable;
  std::vector<std::string> unknown_reasons;
  double lost = -1;
};

Resume after_resume(const std::vector<json>& trace) {
  Resume r;
  for (const auto& e : trace) {
    if (ms(e) < 60000) continue;
    const auto type = e["type"].get<std::string>();
    if (type == "rpc" && e.value("api", "") == "FindCoordinator") {
      if (e["dir"] == "send" && e["from"] == "B") r.lookups.push_back(ms(e));
      if (e["dir"] == "recv" && e["to"] == "B") r.answers.push_back(ms(e));
    } else if (type == "consumer.coordinator_unknown" && e["consumer"] == "B") {
      r.unknown_reasons.push_back(e["reason"].get<std::string>());
      if (e["reason"] == "coordinator unavailable") r.unavailable.push_back(ms(e));
    } else if (type == "callback" && e["consumer"] == "B" && e["callback"] == "onPartitionsLost" &&
               e["phase"] == "start" && r.lost < 0) {
      r.lost = ms(e);
    }
  }
  return r;
}

}  // namespace

TEST_CASE(
    "classic coordinator rediscovery: the coordinator found again inside its connection's "
    "reconnect backoff is unavailable, and FindCoordinator is asked again after the retry "
    "backoff") {
  // Defaults: reconnect.backoff.ms 50 (40-60 ms drawn), retry.backoff.ms 100 (80-120 ms drawn).
  const auto r = after_resume(run_ideal(paused_pair(json::object())));
  // 60000: the session timeout noticed, the connection closed, FindCoordinator sent; its answer
  // at 60002 (1 ms each way) falls inside the reconnect backoff (>= 40 ms from 60000).
  REQUIRE(r.lookups.size() >= 2);
  REQUIRE(r.answers.size() >= 2);
  CHECK(r.unknown_reasons.at(0) == "session timed out without receiving a heartbeat response");
  CHECK(r.lookups[0] == 60000.0);
  CHECK(r.answers[0] == 60002.0);
  REQUIRE(r.unavailable.size() == 1);
  CHECK(r.unavailable[0] == 60002.0);
  // The second lookup: one retry backoff step later, a whole number of ms in [80, 120).
  const double step = r.lookups[1] - r.answers[0];
  CHECK(step >= 80.0);
  CHECK(step < 120.0);
  CHECK(step == static_cast<double>(static_cast<long>(step)));
  // Its answer (2 ms) is past the reconnect backoff (< 60 ms): B's commit and heartbeat go out
  // and come back UNKNOWN_MEMBER_ID 2 ms later, when B gives its partitions up as lost.
  CHECK(r.answers[1] == r.lookups[1] + 2.0);
  CHECK(r.lost == r.answers[1] + 2.0);
}

TEST_CASE("classic coordinator rediscovery: no reconnect backoff, no second lookup") {
  // reconnect.backoff.ms 0: the closed connection may reconnect at once (connectionDelay 0), so
  // the coordinator found at 60002 is taken, and B learns UNKNOWN_MEMBER_ID at 60004.
  const auto r = after_resume(run_ideal(paused_pair(json{{"reconnect.backoff.ms", 0}})));
  CHECK(r.unavailable.empty());
  REQUIRE(r.lookups.size() == 1);
  CHECK(r.answers.at(0) == 60002.0);
  CHECK(r.lost == 60004.0);
}

TEST_CASE(
    "classic coordinator rediscovery: a long reconnect backoff is waited out in retry backoff "
    "steps that double") {
  // reconnect.backoff.ms 1000 (drawn 800-1000: max 1000): every answer before 60800 is
  // unavailable; the retry steps are 100, 200, 400 ... ms, each drawn within +-20 %.
  const auto r = after_resume(run_ideal(
      paused_pair(json{{"reconnect.backoff.ms", 1000}, {"reconnect.backoff.max.ms", 1000}})));
  REQUIRE(r.unavailable.size() >= 3);
  REQUIRE(r.lookups.size() == r.unavailable.size() + 1);
  for (std::size_t i = 0; i < r.unavailable.size(); ++i) {
    INFO("attempt " << i);
    CHECK(r.unavailable[i] == r.answers[i]);
    CHECK(r.answers[i] < 61000.0);
    const double term = 100.0 * static_cast<double>(1 << i);
    const double step = r.lookups[i + 1] - r.answers[i];
    CHECK(step >= 0.8 * term);
    CHECK(step < 1.2 * term);
  }
  // The answer taken is past the drawn reconnect backoff, at least 800 ms after the close.
  CHECK(r.answers.back() >= 60800.0);
  CHECK(r.lost == r.answers.back() + 2.0);
}
