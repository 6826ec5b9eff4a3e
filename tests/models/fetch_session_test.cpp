// Fetch sessions of both clients and the classic leader's Metadata round trip (docs/fidelity.md,
// finding 9), at the instants Kafka's rules give:
// - a consumer has at most one Fetch in flight per leader; with no records the broker answers it
//   fetch.max.wait.ms (500) after its arrival, plus its request handling and the fetch purgatory's
//   lateness (their means), and the answer ends poll()'s network wait, whose next pass sends the
//   next Fetch (Fetcher.sendFetches skips nodes with a Fetch pending);
// - a classic leader whose group subscribes to a topic outside its own subscription waits for a
//   metadata update before it assigns (ConsumerCoordinator.updateGroupSubscription:
//   SubscriptionState.groupSubscribe, Metadata.requestUpdateForNewTopics, ensureFreshMetadata);
//   the Metadata request goes to the least loaded node, the connection of its Fetch, and the
//   broker reads it only once that Fetch is answered (SocketServer mutes a connection while a
//   request of it is being served).
// scenarios/classic/subscription-change.json: 1 ms links, one broker, no records; B subscribes
// to t2 at 20 s.
#include <doctest/doctest.h>

#include <cmath>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

constexpr const char* kSubscriptionChange = "scenarios/classic/subscription-change.json";

double ms(const json& e) {
  return e["t_us"].get<double>() / 1000.0;
}

std::vector<json> rpcs(const std::vector<json>& trace, const std::string& dir,
                       const std::string& api, const std::string& party) {
  std::vector<json> out;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == dir && e["api"] == api &&
        (e["from"] == party || e["to"] == party))
      out.push_back(e);
  return out;
}
}  // namespace

TEST_CASE(
    "fetch session: an empty Fetch is answered after fetch.max.wait.ms, and the next follows at "
    "once") {
  for (const char* variant : {"classic-eager", "consumer"}) {
    CAPTURE(variant);
    const std::string path = std::string(variant) == "consumer"
                                 ? "scenarios/consumer/subscription-change.json"
                                 : kSubscriptionChange;
    // Idealized machine: 1 ms out, 500 ms in the purgatory, 1 ms back.
    const auto ideal = testing::run_trace(path, variant);
    const auto sends = rpcs(ideal, "send", "Fetch", "A");
    const auto answers = rpcs(ideal, "recv", "Fetch", "A");
    REQUIRE(sends.size() > 20);
    std::size_t checked = 0;
    for (std::size_t i = 0; i + 1 < sends.size(); ++i) {
      if (ms(sends[i]) < 8000 || ms(sends[i + 1]) > 19000) continue;  // A's assignment is settled
      CHECK(ms(sends[i + 1]) - ms(sends[i]) == doctest::Approx(502).epsilon(1e-9));
      ++checked;
    }
    CHECK(checked > 15);
    // Each answer comes before the next Fetch is sent (one in flight), at the same instant.
    for (const auto& a : answers) {
      bool next_sent = false;
      for (const auto& s : sends) next_sent = next_sent || (ms(s) == ms(a) && s["id"] != a["id"]);
      if (ms(a) > 8000 && ms(a) < 19000) CHECK(next_sent);
    }
  }
  // With the timing texture's defaults the broker adds the means of request_handling_ms
  // (lognormal median 1.5, sigma 0.5) and purgatory_lateness_ms (median 1.1, sigma 0.6): a cycle
  // of 505.017 ms, where Kafka 4.4.0's classic consumer A of the recorded subscription-change
  // run sent its Fetches every 505.03 ms (median of 77).
  const auto spec =
      rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/" + kSubscriptionChange);
  const auto textured =
      testing::parse_trace(rsim::run_scenario(spec, "classic-eager", spec.seed).trace_lines);
  const auto sends = rpcs(textured, "send", "Fetch", "A");
  const double cycle = 502 + 1.5 * std::exp(0.5 * 0.5 * 0.5) + 1.1 * std::exp(0.5 * 0.6 * 0.6);
  std::size_t checked = 0;
  for (std::size_t i = 0; i + 1 < sends.size(); ++i) {
    if (ms(sends[i]) < 8000 || ms(sends[i + 1]) > 19000) continue;
    CHECK(ms(sends[i + 1]) - ms(sends[i]) ==
          doctest::Approx(std::round(cycle * 1000) / 1000).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked > 15);
}

TEST_CASE("the classic leader's Metadata waits behind its Fetch before it assigns a new topic") {
  for (const char* variant : {"classic-eager", "classic-cooperative"}) {
    CAPTURE(variant);
    const auto trace = testing::run_trace(kSubscriptionChange, variant);
    // Before 20 s every member reads t1 only: no Metadata round trip at any join.
    const auto metadata_sends = rpcs(trace, "send", "Metadata", "A");
    const auto metadata_answers = rpcs(trace, "recv", "Metadata", "A");
    // B's subscription to t2 is outside the leader A's: one round trip at the rebalance it
    // causes, and (cooperative) another at the follow-up rebalance that hands over t1-2, t1-3.
    REQUIRE(metadata_sends.size() == (std::string(variant) == "classic-eager" ? 1u : 2u));
    REQUIRE(metadata_answers.size() == metadata_sends.size());
    for (std::size_t k = 0; k < metadata_sends.size(); ++k) {
      const json& sent = metadata_sends[k];
      const json& answered = metadata_answers[k];
      CHECK(ms(sent) > 20000);
      CHECK(sent["to"] == "broker-0");
      // Sent with A's JoinGroup answer.
      bool with_join = false;
      for (const auto& j : rpcs(trace, "recv", "JoinGroup", "A"))
        with_join = with_join || ms(j) == ms(sent);
      CHECK(with_join);
      // The Fetch in flight then was sent at f and is answered at f + 502 (arriving at the broker
      // at f + 1, answered there at f + 501); the broker reads the Metadata request then and its
      // answer arrives 1 ms later, with the Fetch's.
      double fetch_sent = -1;
      for (const auto& f : rpcs(trace, "send", "Fetch", "A"))
        if (ms(f) <= ms(sent)) fetch_sent = ms(f);
      REQUIRE(fetch_sent > 0);
      CHECK(ms(sent) < fetch_sent + 502);
      CHECK(ms(answered) == doctest::Approx(fetch_sent + 502).epsilon(1e-9));
      // Only then does A assign: its SyncGroup goes with the answer.
      bool sync_then = false;
      for (const auto& s : rpcs(trace, "send", "SyncGroup", "A"))
        sync_then = sync_then || ms(s) == ms(answered);
      CHECK(sync_then);
    }
  }
}

TEST_CASE("no Metadata round trip when the group reads only the leader's topics") {
  const auto trace = testing::run_trace("scenarios/examples/two-consumers.json", "classic-eager");
  CHECK(rpcs(trace, "send", "Metadata", "A").empty());
  CHECK(rpcs(trace, "send", "Metadata", "B").empty());
  CHECK_FALSE(rpcs(trace, "send", "Fetch", "A").empty());
}
