package dev.fencing.agent.quorum;

import java.util.OptionalLong;

/**
 * A tie-breaker's answer for one evaluation, with a reason shown in status ("LowestName: side holds node-a").
 *
 * @param outcome WIN, LOSE or NO_ANSWER
 * @param reason shown in status
 * @param winValidUntilNanos for a WIN that is a lease: the instant (this node's monotonic clock) it ends; the verdict's
 *     {@code heldUntil} never goes past it. Empty for answers that do not expire (LowestName) and for LOSE/NO_ANSWER.
 */
public record TieBreakVerdict(Outcome outcome, String reason, OptionalLong winValidUntilNanos) {

  /** WIN: this side holds quorum; LOSE: the other side does; NO_ANSWER: ask the next tie-breaker. */
  public enum Outcome {
    WIN,
    LOSE,
    NO_ANSWER
  }

  public TieBreakVerdict {
    if (outcome != Outcome.WIN && winValidUntilNanos.isPresent()) {
      throw new IllegalArgumentException("only a WIN has a validity, got " + outcome);
    }
  }

  public TieBreakVerdict(Outcome outcome, String reason) {
    this(outcome, reason, OptionalLong.empty());
  }

  public static TieBreakVerdict win(String reason) {
    return new TieBreakVerdict(Outcome.WIN, reason);
  }

  /** A WIN that holds only until {@code validUntilNanos} on this node's monotonic clock (a lease). */
  public static TieBreakVerdict winUntil(String reason, long validUntilNanos) {
    return new TieBreakVerdict(Outcome.WIN, reason, OptionalLong.of(validUntilNanos));
  }

  public static TieBreakVerdict lose(String reason) {
    return new TieBreakVerdict(Outcome.LOSE, reason);
  }

  public static TieBreakVerdict noAnswer(String reason) {
    return new TieBreakVerdict(Outcome.NO_ANSWER, reason);
  }
}
