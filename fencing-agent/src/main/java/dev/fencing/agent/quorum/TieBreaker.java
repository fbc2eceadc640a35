package dev.fencing.agent.quorum;

import java.util.SortedSet;

/**
 * Decides an exact-half split. The verdict is asked only when exactly half of the expected members (this node
 * included) have a confirmed round trip; tie-breakers are asked in the configured order and the first WIN or LOSE
 * decides. No answer from any of them means quorum is not held.
 *
 * <p>A tie-breaker that needs a remote answer cannot produce it on the evaluation where the tie appears, so the
 * evaluator also calls {@link #prepare} ahead of a likely tie: while the full window still holds a majority but the
 * confirmations younger than {@code window − tieBreakLead} are exactly half. {@code prepare} only starts (or renews)
 * a request; it never changes whether quorum is held, so it cannot extend {@code T_stop}.
 */
public interface TieBreaker {

  /** The CRD name of this tie-breaker, e.g. "LowestName" or "ControlPlane". */
  String name();

  /**
   * Called on every evaluation tick while the tie lasts. Must not block: an implementation that needs a remote
   * answer starts (or renews) the request and decides from answers already received, returning
   * {@link TieBreakVerdict.Outcome#NO_ANSWER} while it has none for this exact {@code side}.
   *
   * @param side the confirmed members on this node's side, this node included
   * @param expected every expected member, this node included
   * @param nowNanos this node's monotonic clock
   */
  TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos);

  /**
   * Called on every evaluation tick while a tie is likely soon: quorum still holds by a majority, but only
   * {@code side} (exactly half of {@code expected}) would remain once the older confirmations lapse. An
   * implementation that needs a remote answer starts or renews its request for {@code side} now, so that the answer
   * is in hand when {@link #evaluate} is asked for the same side. Must not block and must not assume the tie will
   * come (the old confirmations may be refreshed) or that it will come with the same side. Pure tie-breakers need
   * nothing and keep this default.
   *
   * @param side the members whose round trips are younger than {@code window − tieBreakLead}, this node included
   * @param expected every expected member, this node included
   * @param nowNanos this node's monotonic clock
   */
  default void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {}
}
