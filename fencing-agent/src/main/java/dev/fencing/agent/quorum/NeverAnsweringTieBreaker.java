package dev.fencing.agent.quorum;

import java.util.Objects;
import java.util.SortedSet;

/**
 * A configured tie-breaker this agent cannot answer, so it never grants a tie and the next one is asked:
 * {@code Disk} (shared-LUN arbiter, not implemented yet) and {@code APIReachable} (both halves of a split may reach
 * the API server, so granting on reachability is not split-brain safe; this agent refuses to).
 */
public final class NeverAnsweringTieBreaker implements TieBreaker {

  private final String name;
  private final String reason;

  public NeverAnsweringTieBreaker(String name, String reason) {
    this.name = Objects.requireNonNull(name, "name");
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** The {@code Disk} tie-breaker: no shared-disk arbiter is implemented. */
  public static NeverAnsweringTieBreaker disk() {
    return new NeverAnsweringTieBreaker("Disk", "not implemented");
  }

  /** The {@code APIReachable} tie-breaker: both halves may reach the API, so it never grants a tie here. */
  public static NeverAnsweringTieBreaker apiReachable() {
    return new NeverAnsweringTieBreaker("APIReachable", "not split-brain safe, never grants a tie");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    return TieBreakVerdict.noAnswer(name + ": " + reason);
  }
}
