package dev.rebalancesim.oracle;

import java.util.concurrent.locks.LockSupport;

/**
 * The scenario's clock: microseconds since the scenario's start, from System.nanoTime(), which on
 * Linux is CLOCK_MONOTONIC and so shared by every JVM of the run (each is given the same origin).
 */
final class Clock {
  private final long originNanos;

  Clock(long originNanos) {
    this.originNanos = originNanos;
  }

  long nowUs() {
    return (System.nanoTime() - originNanos) / 1000;
  }

  long nanosAt(long tUs) {
    return originNanos + tUs * 1000;
  }

  /** Sleeps until the scenario time tUs (returns at once when it has passed). */
  void sleepUntilUs(long tUs) {
    long deadline = nanosAt(tUs);
    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }

  static void sleepMs(double ms) {
    if (ms <= 0) return;
    long deadline = System.nanoTime() + (long) (ms * 1e6);
    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }
}
