package dev.fencing.agent.quorum;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What one node's quorum evaluation needs: who it is, the fixed expected set (from configuration, never from who is
 * alive), the votes needed, and the timings that bound how long a node cut off from the majority may keep quorum.
 *
 * @param self this node's member name; must be in {@code expected}
 * @param expected every expected member, this node included
 * @param quorumSize votes needed, this node's own vote included; more than half of {@code expected}
 * @param quorumWindow a peer counts while its latest round trip started within this window
 * @param localHealthCap the window may stretch by measured local lag up to {@code quorumWindow × localHealthCap}
 * @param evaluationTick how often the evaluation runs (part of the hard bound)
 * @param tieBreakers asked in order when exactly half of {@code expected} is confirmed
 * @param tieBreakLead how long before the window could lapse into an exact-half tie the tie-breakers are already
 *     prepared ({@link TieBreaker#prepare}): confirmations older than {@code window − tieBreakLead} are treated as
 *     lapsing soon. Must cover a tie-break round trip plus an evaluation tick and stay below half the window, so
 *     that healthy round trips never look like they are lapsing. Only when the tie-breakers are asked changes;
 *     never whether quorum is held.
 */
public record QuorumSettings(
    String self,
    SortedSet<String> expected,
    int quorumSize,
    Duration quorumWindow,
    double localHealthCap,
    Duration evaluationTick,
    List<TieBreaker> tieBreakers,
    Duration tieBreakLead) {

  /** With the default tie-break lead for an unknown heartbeat interval: a third of the window. */
  public QuorumSettings(String self, SortedSet<String> expected, int quorumSize, Duration quorumWindow,
      double localHealthCap, Duration evaluationTick, List<TieBreaker> tieBreakers) {
    this(self, expected, quorumSize, quorumWindow, localHealthCap, evaluationTick, tieBreakers,
        defaultTieBreakLead(quorumWindow, Duration.ZERO, Duration.ZERO));
  }

  /**
   * {@code max(quorumWindow / 3, heartbeatInterval + 2 × evaluationTick)}, at most half the window: time for a
   * tie-break request and its answer (answers arrive within about a heartbeat interval on a working control plane)
   * plus the tick that notices the early lapse and the tick that notices the tie. Healthy round trips are younger
   * than {@code 2 × heartbeatInterval + evaluationTick} (≤ half the window with the default four heartbeats per
   * window), so they stay inside {@code window − lead}.
   */
  public static Duration defaultTieBreakLead(Duration quorumWindow, Duration heartbeatInterval,
      Duration evaluationTick) {
    Duration lead = quorumWindow.dividedBy(3);
    Duration needed = heartbeatInterval.plus(evaluationTick.multipliedBy(2));
    if (needed.compareTo(lead) > 0) {
      lead = needed;
    }
    Duration half = quorumWindow.dividedBy(2);
    return lead.compareTo(half) > 0 ? half : lead;
  }

  /** Validates the safety preconditions; the messages say what to change. */
  public QuorumSettings {
    Objects.requireNonNull(self, "self");
    Objects.requireNonNull(quorumWindow, "quorumWindow");
    Objects.requireNonNull(evaluationTick, "evaluationTick");
    expected = Collections.unmodifiableSortedSet(new TreeSet<>(expected));
    tieBreakers = List.copyOf(tieBreakers);
    if (!expected.contains(self)) {
      throw new IllegalArgumentException(
          "node '" + self + "' is not in the expected members " + expected + "; add it or start the agent with"
              + " the name of an expected member");
    }
    if (quorumSize < 1 || quorumSize > expected.size()) {
      throw new IllegalArgumentException("quorum size " + quorumSize + " must be between 1 and the "
          + expected.size() + " expected members");
    }
    if (2 * quorumSize <= expected.size()) {
      throw new IllegalArgumentException("quorum size " + quorumSize + " of " + expected.size()
          + " expected members lets two disjoint halves both hold quorum; use more than half ("
          + (expected.size() / 2 + 1) + ") and a tie-breaker for even splits");
    }
    if (quorumWindow.isNegative() || quorumWindow.isZero()) {
      throw new IllegalArgumentException("quorum window must be positive, got " + quorumWindow);
    }
    if (evaluationTick.isNegative() || evaluationTick.isZero()) {
      throw new IllegalArgumentException("evaluation tick must be positive, got " + evaluationTick);
    }
    Objects.requireNonNull(tieBreakLead, "tieBreakLead");
    if (tieBreakLead.isNegative() || tieBreakLead.compareTo(quorumWindow) >= 0) {
      throw new IllegalArgumentException("tie-break lead must be between 0 and the quorum window " + quorumWindow
          + ", got " + tieBreakLead);
    }
    if (!(localHealthCap >= 1.0) || Double.isInfinite(localHealthCap)) {
      throw new IllegalArgumentException("local health cap must be a finite number >= 1.0, got " + localHealthCap);
    }
  }

  /** The longest the window may ever be: {@code quorumWindow × localHealthCap}, in nanoseconds. */
  public long maxWindowNanos() {
    return (long) Math.ceil(quorumWindow.toNanos() * localHealthCap);
  }

  /**
   * The hard bound {@code T_stop = quorumWindow × localHealthCap + evaluationTick}: a node cut off from the
   * majority stops holding quorum at most this long after the send time of its last heartbeat a majority member
   * received.
   */
  public Duration tStop() {
    return Duration.ofNanos(maxWindowNanos()).plus(evaluationTick);
  }
}
