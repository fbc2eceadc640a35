package dev.fencing.agent.quorum;

import java.util.SortedSet;

/**
 * Decides an exact-half split. Asked only when exactly half of the expected members (this node included) have a
 * confirmed round trip; tie-breakers are asked in the configured order and the first WIN or LOSE decides. No answer
 * from any of them means quorum is not held.
 */
public interface TieBreaker {

  /** The CRD name of this tie-breaker, e.g. "LowestName" or "ControlPlane". */
  String name();

  /**
   * Called on every evaluation tick while the tie lasts. Must not block: an implementation that needs a remote
   * answer starts the request and returns {@link TieBreakVerdict.Outcome#NO_ANSWER} until it has one.
   *
   * @param side the confirmed members on this node's side, this node included
   * @param expected every expected member, this node included
   * @param nowNanos this node's monotonic clock
   */
  TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos);
}
