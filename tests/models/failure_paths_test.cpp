// Classic failure paths, each at the instant Kafka's defaults put it: a crash and a long pause
// cost session.timeout.ms from the last heartbeat or commit; a stall costs max.poll.interval.ms
// from the last poll(); a cut link costs request.timeout.ms before the client gives up.
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
double last_request_before(const std::vector<nlohmann::json>& trace, const std::string& consumer,
                           double before_ms) {
  return testing::last_send_before(trace, consumer, {"Heartbeat", "OffsetCommit"}, before_ms);
}
double first(const std::vector<nlohmann::json>& trace, const std::string& type,
             const std::string& key, const std::string& value) {
  return testing::first_time(trace, type, key, value);
}
}  // namespace

TEST_CASE(
    "a crashed member is removed session.timeout.ms (45 s) after its last heartbeat or commit") {
  const auto trace =
      testing::run_trace("scenarios/classic/crash-session-timeout.json", "classic-eager");
  const double last = last_request_before(trace, "B", 20000);
  CHECK(last == 19014);  // B's auto-commit, every 5 s after its assignment at 4014
  CHECK(first(trace, "member.leave", "consumer", "B") == last + 1 + 45000);  // arrival + 45 s
  // A learns at its next heartbeat (phase set by its JoinGroup response at 4012) and takes all.
  const auto a_revoked = testing::callback_starts(trace, "A", "onPartitionsRevoked");
  REQUIRE(a_revoked.size() == 2);
  CHECK(a_revoked[1] == 4012 + 3000 * 21 + 2 + 2);
}

TEST_CASE("a stall longer than max.poll.interval.ms makes the heartbeat thread leave the group") {
  const auto trace =
      testing::run_trace("scenarios/classic/stall-max-poll-interval.json", "classic-eager");
  // B polls on a 100 ms grid from 2000; its last poll() before the stall at 10000 was at 9900,
  // so its poll timer expires at 19900. The heartbeat thread notices at its first wake at or
  // after that: it last passed at its heartbeat of 19012 (B's JoinGroup answer at 4012 + 3000 k)
  // and waits retry.backoff.ms (100) at a time, so at 19012 + 9 x 100.
  CHECK(first(trace, "consumer.poll_timeout", "consumer", "B") == 19012 + 9 * 100);
  CHECK(first(trace, "member.leave", "consumer", "B") == 19913);
  // Back in poll() at 30000, B finds its generation reset: its partitions are lost, not revoked.
  const auto lost = testing::callback_starts(trace, "B", "onPartitionsLost");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0] == 30000);
  CHECK(testing::responses(trace, "B", "JoinGroup", "MEMBER_ID_REQUIRED").size() ==
        2);  // a new member
}

TEST_CASE("a pause longer than session.timeout.ms: removal by the coordinator, loss on wake-up") {
  const auto trace =
      testing::run_trace("scenarios/classic/pause-session-timeout.json", "classic-eager");
  const double last = last_request_before(trace, "B", 10000);
  CHECK(first(trace, "member.leave", "consumer", "B") == last + 1 + 45000);
  // On resume the client sees no good heartbeat response for 45 s, closes the coordinator
  // connection and looks the coordinator up (FindCoordinator answered at 60002). That connection
  // is still in its reconnect backoff (40-60 ms), so the coordinator is unavailable and the lookup
  // is asked again one retry backoff step (80-120 ms, drawn) later (finding 19). Its answer, 2 ms
  // on, lets the retried auto-commit and the long-due heartbeat go out together: the commit,
  // sent first, is answered UNKNOWN_MEMBER_ID 2 ms later, when B loses its partitions.
  CHECK(first(trace, "consumer.coordinator_unknown", "consumer", "B") == 60000);
  CHECK(testing::times(trace, "consumer.coordinator_unknown", "reason",
                       "coordinator unavailable") == std::vector<double>{60002});
  double again = -1;  // B's FindCoordinator sent after 60002
  for (const auto& e : trace)
    if (again < 0 && e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "B" &&
        e["api"] == "FindCoordinator" && e["t_us"].get<double>() > 60002000)
      again = e["t_us"].get<double>() / 1000.0;
  CHECK(again - 60002 >= 80);
  CHECK(again - 60002 < 120);
  CHECK(testing::responses(trace, "B", "Heartbeat", "UNKNOWN_MEMBER_ID").size() == 1);
  CHECK(testing::responses(trace, "B", "OffsetCommit", "UNKNOWN_MEMBER_ID") ==
        std::vector<double>{again + 4});
  CHECK(testing::callback_starts(trace, "B", "onPartitionsLost") == std::vector<double>{again + 4});
}

TEST_CASE("a cut link: request.timeout.ms (30 s) then a disconnect and coordinator rediscovery") {
  const auto trace =
      testing::run_trace("scenarios/classic/network-partition.json", "classic-eager");
  // The first request lost to the cut is B's heartbeat at 10012; 30 s later the connection is
  // closed and every request on it fails.
  CHECK(first(trace, "net.disconnect", "consumer", "B") == 10012 + 30000);
  CHECK(testing::responses(trace, "B", "Heartbeat", "NETWORK_EXCEPTION").size() ==
        10);  // 10012, 13012, ..., 37012
  // The disconnect wakes the application thread inside poll(), which looks the coordinator up
  // at once; that lookup is lost to the cut too and times out 30 s later.
  double find = -1;
  for (const auto& e : trace)
    if (e["type"] == "rpc" && e["dir"] == "send" && e["from"] == "B" &&
        e["api"] == "FindCoordinator" && e["t_us"].get<double>() >= 40012000) {
      find = e["t_us"].get<double>() / 1000.0;
      break;
    }
  CHECK(find == 40012);
  CHECK(first(trace, "member.leave", "consumer", "B") == 9014 + 1 + 45000);
}
