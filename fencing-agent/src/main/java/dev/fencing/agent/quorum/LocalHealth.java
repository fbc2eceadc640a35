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
  private boolean observed;

  /** @param memoryNanos how long an observed lag keeps stretching the window (one quorum window) */
  public LocalHealth(long memoryNanos) {
    if (memoryNanos <= 0) {
      throw new IllegalArgumentException("local health memory must be positive, got " + memoryNanos + " ns");
    }
    this.memoryNanos = memoryNanos;
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
      observed = true;
    }
  }

  /** The largest lag observed within the memory, 0 when healthy. */
  public long currentLag(long nowNanos) {
    if (!observed || nowNanos - observedAtNanos > memoryNanos) {
      return 0;
    }
    return lagNanos;
  }
}
