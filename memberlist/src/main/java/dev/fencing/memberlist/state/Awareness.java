package dev.fencing.memberlist.state;

/**
 * Lifeguard's local health multiplier (LHA-Probe): a saturating score in {@code [0, max-1]} that rises when this
 * node's own probes fail for lack of nacks or when it must refute accusations, and falls with every successful
 * probe. A node that is itself slow thereby probes less often and waits longer before blaming others.
 */
public final class Awareness {
  private final int max;
  private int score;

  /** @param max AwarenessMaxMultiplier; 1 disables Lifeguard's self-awareness (score stays 0) */
  public Awareness(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("AwarenessMaxMultiplier must be >= 1, was " + max);
    }
    this.max = max;
  }

  /** Adds {@code delta} and clamps the score to {@code [0, max-1]}. */
  public void applyDelta(int delta) {
    score = Math.max(0, Math.min(max - 1, score + delta));
  }

  /** 0 is healthy; higher is worse. */
  public int healthScore() {
    return score;
  }

  /** {@code timeout × (score + 1)}. */
  public long scaleTimeout(long timeoutNanos) {
    return timeoutNanos * (score + 1);
  }
}
