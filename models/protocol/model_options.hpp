// What a run of the models may be told besides the scenario, and what it counts about itself:
// test-only injected bugs and developer checks come in through ModelOptions (never through
// process-global state), so that runs on the worker threads of `check --jobs` and
// `explore --jobs` share nothing. Not user configuration: scenarios never set these.
#pragma once
#include <array>
#include <cstdint>

namespace rsim {

/// Test-only (`--inject-bug`, hidden): deliberately broken models that prove explore's checkers
/// and shrink catch real bugs. Never set in a normal run.
struct InjectedBugs {
  /// The KIP-848 coordinator hands a partition to its new owner without waiting for the old
  /// owner to revoke it (a coordinator that skips revocation).
  bool skip_revocation = false;
};

struct ModelOptions {
  InjectedBugs bugs;
  /// Every quiet poll() pass of the KIP-848 and classic clients also runs the full pass and
  /// compares (their quiet_poll_return); a difference is an internal error (exit 3).
  /// RSIM_CHECK_QUIET_PASSES=1 in the command line's environment sets it.
  bool check_quiet_passes = false;
  /// Quiet chains (both clients' quiet_pass): a quiet client's further quiet returns of poll()
  /// fire a small stand-in instead of the client's timers. Off: every quiet return goes through
  /// the poll-return timer and the client (the same outputs and event count, slower).
  /// RSIM_QUIET_CHAINS=0 in the command line's environment turns them off.
  bool quiet_chains = true;
};

/// Counts a world keeps about its own models (for tests and benchmarks; not in any output).
struct ModelCounters {
  /// Quiet passes taken (or, when checking, checked) by the world's KIP-848 and classic clients.
  std::uint64_t quiet_passes = 0;
  /// Of those, the returns that quiet chains took without the client.
  std::uint64_t chain_returns = 0;
  /// What closed the quiet chains (ChainEnd).
  std::array<std::uint64_t, 7> chain_ends{};
};

/// What closes a quiet chain (on_chain_return): an entry into the client, or at a return: a
/// heartbeat or auto-commit due or a record's arrival (`until`), the queued entry of the timer the
/// pass re-arms (KIP-848: poll timer; classic: auto-commit), a fetch wake-up the pass would arm,
/// the app thread not runnable (paused, stalled, dead), production or the reach epoch changed.
enum class ChainEnd { Entry, Until, PollTimer, FetchWake, NotRunnable, Production, ReachEpoch };

}  // namespace rsim
