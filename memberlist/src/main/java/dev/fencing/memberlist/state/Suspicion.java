package dev.fencing.memberlist.state;

import java.util.HashSet;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * Lifeguard's LHA-Suspicion timer for one suspected node. It starts at {@code max} and shrinks logarithmically towards
 * {@code min} as independent accusers confirm the suspicion, so a node that many members suspect is declared dead
 * quickly while a lone (possibly slow) accuser has to wait the full {@code max}. With {@code k < 1} there is no
 * acceleration and the timeout is {@code min}.
 */
public final class Suspicion {
  private final Clock clock;
  private final Timers timers;
  private final int k;
  private final long minNanos;
  private final long maxNanos;
  private final long startNanos;
  private final Set<String> confirmations = new HashSet<>();
  private final IntConsumer onTimeout;
  private int n;
  private Timers.Timer timer;
  private boolean fired;

  /**
   * @param from the first accuser; it never counts as a confirmation
   * @param k confirmations that shrink the timeout to {@code min}
   * @param onTimeout called once with the number of confirmations received
   */
  public Suspicion(
      Clock clock, Timers timers, String from, int k, long minNanos, long maxNanos, IntConsumer onTimeout) {
    this.clock = clock;
    this.timers = timers;
    this.k = k;
    this.minNanos = minNanos;
    this.maxNanos = maxNanos;
    this.onTimeout = onTimeout;
    this.startNanos = clock.nanos();
    confirmations.add(from);
    long timeout = k < 1 ? minNanos : maxNanos;
    this.timer = timers.schedule(timeout, this::fire);
  }

  /**
   * Registers an accusation from {@code from}.
   *
   * @return true if it was a new, independent confirmation (the caller then re-gossips the suspicion)
   */
  public boolean confirm(String from) {
    if (fired || n >= k || !confirmations.add(from)) {
      return false;
    }
    n++;
    long remaining = remainingNanos(n, k, clock.nanos() - startNanos, minNanos, maxNanos);
    timer.cancel();
    timer = timers.schedule(Math.max(0, remaining), this::fire);
    return true;
  }

  /** Confirmations received so far. */
  public int confirmations() {
    return n;
  }

  /** Stops the timer (the node was refuted or declared dead by other means). */
  public void cancel() {
    fired = true;
    timer.cancel();
  }

  private void fire() {
    if (fired) {
      return;
    }
    fired = true;
    onTimeout.accept(n);
  }

  /**
   * Time left after {@code n} of {@code k} confirmations: {@code max − (max−min)·ln(n+1)/ln(k+1)}, truncated to whole
   * milliseconds and never below {@code min}, minus the time already elapsed (may be negative: fire now).
   */
  public static long remainingNanos(int n, int k, long elapsedNanos, long minNanos, long maxNanos) {
    double frac = Math.log(n + 1.0) / Math.log(k + 1.0);
    double rawSeconds = maxNanos / 1e9 - frac * (maxNanos / 1e9 - minNanos / 1e9);
    long timeout = (long) Math.floor(1000.0 * rawSeconds) * 1_000_000L;
    if (timeout < minNanos) {
      timeout = minNanos;
    }
    return timeout - elapsedNanos;
  }

  /**
   * The minimum suspicion timeout: {@code SuspicionMult × max(1, log10(max(1, n))) × ProbeInterval}, with the node
   * scale truncated to thousandths as memberlist does.
   */
  public static long minTimeoutNanos(int suspicionMult, int n, long probeIntervalNanos) {
    double nodeScale = Math.max(1.0, Math.log10(Math.max(1.0, n)));
    long scaleMillis = (long) (nodeScale * 1000);
    return suspicionMult * scaleMillis * probeIntervalNanos / 1000;
  }

  /** Confirmations that shrink the timer fully: {@code SuspicionMult − 2}, or 0 when fewer than that many peers exist. */
  public static int confirmationsWanted(int suspicionMult, int n) {
    int k = suspicionMult - 2;
    return n - 2 < k ? 0 : k;
  }
}
