package dev.fencing.memberlist.transport;

import java.time.Duration;

/**
 * What a receive or accept loop does after a failure that did not come from a close: pause before the next try, the
 * first pause short and each following one twice as long up to a cap, and log the first failure of a run and then at
 * most once per interval with the number left unlogged. An error that repeats at once (an accept with no file
 * descriptor left, EMFILE, fails again immediately, since the connection stays queued) would otherwise keep a core
 * busy and flood the log, on a node whose quorum loop and watchdog feeder need that core. A success ends the run.
 *
 * <p>Not thread-safe: one instance per loop thread.
 */
final class FailureBackoff {

  /** The pause after the first failure of a run. */
  static final Duration FIRST_PAUSE = Duration.ofMillis(5);
  /** The longest pause. */
  static final Duration MAX_PAUSE = Duration.ofSeconds(1);
  /** Within a run of failures, at most one log line per this interval. */
  static final Duration LOG_INTERVAL = Duration.ofSeconds(10);

  /**
   * What to do about one failure.
   *
   * @param pauseNanos how long to wait before the next try
   * @param log whether to log this failure
   * @param unlogged failures of this run not logged since the last line (with {@code log})
   */
  record Step(long pauseNanos, boolean log, long unlogged) {}

  private boolean failing;
  private long nextPauseNanos;
  private long lastLogNanos;
  private long unlogged;

  /** A failure at {@code nowNanos} (monotonic). */
  Step failed(long nowNanos) {
    if (!failing) {
      failing = true;
      nextPauseNanos = FIRST_PAUSE.toNanos();
      lastLogNanos = nowNanos;
      unlogged = 0;
      return next(true, 0);
    }
    if (nowNanos - lastLogNanos >= LOG_INTERVAL.toNanos()) {
      long skipped = unlogged;
      lastLogNanos = nowNanos;
      unlogged = 0;
      return next(true, skipped);
    }
    unlogged++;
    return next(false, 0);
  }

  /** A success: the next failure starts a new run (short pause, logged). Cheap enough for every packet. */
  void succeeded() {
    if (failing) {
      failing = false;
    }
  }

  /** True while the latest attempt failed. */
  boolean failing() {
    return failing;
  }

  private Step next(boolean log, long skipped) {
    long pause = nextPauseNanos;
    nextPauseNanos = Math.min(2 * nextPauseNanos, MAX_PAUSE.toNanos());
    return new Step(pause, log, skipped);
  }
}
