// What a run of the models may be told besides the scenario, and what it counts about itself:
// test-only injected bugs and developer checks come in through ModelOptions (never through
// process-global state), so that runs on the worker threads of `check --jobs` and
// `explore --jobs` share nothing. Not user configuration: scenarios never set these.
#pragma once
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
  /// Every quiet poll() pass of the KIP-848 client also runs the full pass and compares
  /// (AsyncConsumer::quiet_poll_return); a difference is an internal error (exit 3).
  /// RSIM_CHECK_QUIET_PASSES=1 in the command line's environment sets it.
  bool check_quiet_passes = false;
};

/// Counts a world keeps about its own models (for tests and benchmarks; not in any output).
struct ModelCounters {
  /// Quiet passes taken (or, when checking, checked) by the world's KIP-848 clients.
  std::uint64_t quiet_passes = 0;
};

}  // namespace rsim
