package dev.fencing.agent.quorum;

/** A tie-breaker's answer for one evaluation, with a reason shown in status ("LowestName: side holds node-a"). */
public record TieBreakVerdict(Outcome outcome, String reason) {

  /** WIN: this side holds quorum; LOSE: the other side does; NO_ANSWER: ask the next tie-breaker. */
  public enum Outcome {
    WIN,
    LOSE,
    NO_ANSWER
  }

  public static TieBreakVerdict win(String reason) {
    return new TieBreakVerdict(Outcome.WIN, reason);
  }

  public static TieBreakVerdict lose(String reason) {
    return new TieBreakVerdict(Outcome.LOSE, reason);
  }

  public static TieBreakVerdict noAnswer(String reason) {
    return new TieBreakVerdict(Outcome.NO_ANSWER, reason);
  }
}
