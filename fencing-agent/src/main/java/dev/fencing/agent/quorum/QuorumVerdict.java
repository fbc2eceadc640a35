package dev.fencing.agent.quorum;

import java.util.List;
import java.util.SortedSet;

/**
 * The result of one quorum evaluation.
 *
 * @param held quorum is held
 * @param evaluatedAtNanos when the evaluation ran (this node's monotonic clock)
 * @param heldUntilNanos while {@code held}: the instant at which it stops holding unless new round trips arrive
 *     (feeding after this instant is never allowed, even if the next evaluation is late); otherwise equal to
 *     {@code evaluatedAtNanos}
 * @param expected number of expected members, this node included
 * @param heard members with a confirmed round trip in the window, this node included
 * @param quorumSize votes needed
 * @param side the confirmed members, this node included
 * @param tieBreakerOutcome "none" unless exactly half is heard (then which tie-breaker said what) or a majority is
 *     heard but only an exact half recently enough that the tie-breakers were asked early (then which side)
 * @param windowNanos the window used (the configured one stretched by the local lag, capped)
 * @param localLagNanos the local lag that stretched the window
 * @param peers every expected peer except this node, in name order
 */
public record QuorumVerdict(
    boolean held,
    long evaluatedAtNanos,
    long heldUntilNanos,
    int expected,
    int heard,
    int quorumSize,
    SortedSet<String> side,
    String tieBreakerOutcome,
    long windowNanos,
    long localLagNanos,
    List<PeerQuorumView> peers) {

  public QuorumVerdict {
    // A copy nothing else can change; the evaluator's side is one already and is shared across its verdicts.
    side = FrozenSide.of(side);
    peers = List.copyOf(peers);
  }

  /** True when quorum held at the evaluation still holds at {@code nowNanos}. */
  public boolean holdsAt(long nowNanos) {
    return held && nowNanos - heldUntilNanos <= 0;
  }
}
