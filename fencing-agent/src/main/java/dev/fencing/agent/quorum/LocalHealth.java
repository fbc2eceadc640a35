package dev.fencing.agent.quorum;

/**
 * Lifeguard's local-health idea applied to ourselves: when this node's own timers fire late or its inbound
 * messages wait in a backlog (GC pause, CPU starvation), peers' heartbeats may be sitting unprocessed, so a peer must
 * not be judged lost for a delay that is ours. The evaluator's window is stretched by the largest lag observed within
 * the last quorum window; the stretch is capped by {@link QuorumSettings#localHealthCap()}, which is what keeps the
 * hard bound {@code T_stop} independent of how long the stall was.
 *
 * <p>Not thread-safe: used by the single evaluation thread.
 */
public final class LocalHealth {

  private final long memoryNanos;
  private long lagNanos;
  private long observedAtNanos;
  // How long the current lag keeps stretching: the memory it was observed under, or a longer one it was carried into.
  private long lagMemoryNanos;
  private boolean observed;

  /** @param memoryNanos how long an observed lag keeps stretching the window (one quorum window) */
  public LocalHealth(long memoryNanos) {
    if (memoryNanos <= 0) {
      throw new IllegalArgumentException("local health memory must be positive, got " + memoryNanos + " ns");
    }
    this.memoryNanos = memoryNanos;
  }

  /**
   * This node's health under new settings (a reconfigure): the lag observed so far keeps stretching the window for
   * as long as the old or the new memory allows, whichever is longer. A config that lands right after a stall must
   * not take back the stretch the stall's own late round still needs; the evaluator caps the stretch by the new
   * settings, so {@code T_stop} stays theirs.
   *
   * @param newMemoryNanos the new quorum window
   */
  public LocalHealth carriedInto(long newMemoryNanos) {
    LocalHealth next = new LocalHealth(newMemoryNanos);
    if (observed) {
      next.observed = true;
      next.lagNanos = lagNanos;
      next.observedAtNanos = observedAtNanos;
      next.lagMemoryNanos = Math.max(lagMemoryNanos, newMemoryNanos);
    }
    return next;
  }

  /**
   * Records one measurement.
   *
   * @param nowNanos when it was measured
   * @param lateNanos how late a timer fired, or how long the oldest unprocessed inbound message waited
   */
  public void observe(long nowNanos, long lateNanos) {
    long lag = Math.max(0, lateNanos);
    if (!observed || lag >= currentLag(nowNanos)) {
      lagNanos = lag;
      observedAtNanos = nowNanos;
      lagMemoryNanos = memoryNanos;
      observed = true;
    }
  }

  /** The largest lag observed within the memory, 0 when healthy. */
  public long currentLag(long nowNanos) {
    if (!observed || nowNanos - observedAtNanos > lagMemoryNanos) {
      return 0;
    }
    return lagNanos;
  }
}
