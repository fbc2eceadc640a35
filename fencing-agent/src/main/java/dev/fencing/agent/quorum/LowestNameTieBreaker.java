package dev.fencing.agent.quorum;

import java.util.SortedSet;

/**
 * Corosync's auto_tie_breaker with {@code lowest}: on an exact half split the side holding the lowest expected
 * member name keeps quorum. Two disjoint sides cannot both contain that name, so at most one of them wins; no
 * communication is needed. The price: if the lowest-named node itself fails, its half can never win a tie.
 */
public final class LowestNameTieBreaker implements TieBreaker {

  @Override
  public String name() {
    return "LowestName";
  }

  @Override
  public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    if (expected.isEmpty()) {
      return TieBreakVerdict.noAnswer("LowestName: no expected members");
    }
    String lowest = expected.first();
    return side.contains(lowest)
        ? TieBreakVerdict.win("LowestName: side holds " + lowest)
        : TieBreakVerdict.lose("LowestName: " + lowest + " is on the other side");
  }
}
