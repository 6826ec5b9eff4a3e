// ClassicGroupState's transitions, cell by cell, against Kafka's table (ClassicGroupState.java:
// each state lists the states it may be entered from). Anything else is an internal error.
#include <doctest/doctest.h>

#include "models/coordinator/classic_group.hpp"

TEST_CASE("classic group transitions are exactly Kafka's") {
  using S = rsim::ClassicGroupState;
  const S all[] = {S::Empty, S::PreparingRebalance, S::CompletingRebalance, S::Stable, S::Dead};
  // Kafka: PREPARING_REBALANCE <- {STABLE, COMPLETING_REBALANCE, EMPTY};
  // COMPLETING_REBALANCE <- {PREPARING_REBALANCE}; STABLE <- {COMPLETING_REBALANCE};
  // EMPTY <- {PREPARING_REBALANCE}; DEAD <- every state, DEAD included.
  auto kafka = [](S from, S to) {
    switch (to) {
      case S::PreparingRebalance:
        return from == S::Stable || from == S::CompletingRebalance || from == S::Empty;
      case S::CompletingRebalance:
        return from == S::PreparingRebalance;
      case S::Stable:
        return from == S::CompletingRebalance;
      case S::Empty:
        return from == S::PreparingRebalance;
      case S::Dead:
        return true;
    }
    return false;
  };
  int allowed = 0;
  for (const S from : all)
    for (const S to : all) {
      CAPTURE(rsim::state_name(from));
      CAPTURE(rsim::state_name(to));
      CHECK(rsim::classic_transition_allowed(from, to) == kafka(from, to));
      allowed += kafka(from, to) ? 1 : 0;
    }
  CHECK(allowed == 3 + 1 + 1 + 1 + 5);
  // Stable -> Stable, Empty -> Stable, Empty -> CompletingRebalance are refused.
  CHECK_FALSE(rsim::classic_transition_allowed(S::Stable, S::Stable));
  CHECK_FALSE(rsim::classic_transition_allowed(S::Empty, S::Stable));
  CHECK_FALSE(rsim::classic_transition_allowed(S::Empty, S::CompletingRebalance));
}
