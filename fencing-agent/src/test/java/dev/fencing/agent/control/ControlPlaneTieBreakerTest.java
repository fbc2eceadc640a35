package dev.fencing.agent.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link ControlPlaneTieBreaker} on its own: requests captured, answers injected, times given. */
class ControlPlaneTieBreakerTest {

  static final long MS = 1_000_000L;
  static final SortedSet<String> EXPECTED = new TreeSet<>(List.of("node-1", "node-2", "node-3", "node-4"));
  static final SortedSet<String> RIGHT = new TreeSet<>(List.of("node-3", "node-4"));
  static final SortedSet<String> MIXED = new TreeSet<>(List.of("node-2", "node-3"));

  private final List<TieBreakRequest> sent = new ArrayList<>();
  private boolean connected = true;
  private final ControlPlaneTieBreaker tieBreaker = new ControlPlaneTieBreaker(r -> {
    if (!connected) {
      return false;
    }
    sent.add(r);
    return true;
  }, new ControlPlaneTieBreaker.ConfigIdentity() {
    @Override
    public String epoch() {
      return "e";
    }

    @Override
    public long revision() {
      return 3;
    }
  });

  private static TieBreakGrant grant(TieBreakRequest request, long validForMs) {
    return TieBreakGrant.newBuilder().setRequestId(request.getRequestId()).setGranted(true)
        .setValidFor(Duration.newBuilder().setSeconds(validForMs / 1000).setNanos((int) (validForMs % 1000) * 1_000_000))
        .setReason("granted").build();
  }

  @Test
  void aGrantObtainedEarlyDecidesTheFirstTiedEvaluationOfTheSameSide() {
    tieBreaker.prepare(RIGHT, EXPECTED, 1_000 * MS);
    assertThat(sent).hasSize(1);
    assertThat(sent.get(0).getSideList()).containsExactly("node-3", "node-4");
    tieBreaker.onGrant(grant(sent.get(0), 2_000));

    TieBreakVerdict first = tieBreaker.evaluate(RIGHT, EXPECTED, 1_500 * MS);
    assertThat(first.outcome()).isEqualTo(TieBreakVerdict.Outcome.WIN);
    assertThat(first.winValidUntilNanos()).as("counted from the early request's send time").hasValue(3_000 * MS);
    assertThat(sent).as("the tie renews").hasSize(2);
    assertThat(tieBreaker.evaluate(RIGHT, EXPECTED, 3_000 * MS).outcome())
        .as("the lease ends at send time + valid_for, whatever was sent since").isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
  }

  @Test
  void aGrantForAnotherSideIsNotHonouredTheTieAsksAgain() {
    tieBreaker.prepare(MIXED, EXPECTED, 1_000 * MS);
    tieBreaker.onGrant(grant(sent.get(0), 5_000));
    TieBreakVerdict verdict = tieBreaker.evaluate(RIGHT, EXPECTED, 1_500 * MS);
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(sent).hasSize(2);
    assertThat(sent.get(1).getSideList()).containsExactly("node-3", "node-4");
    tieBreaker.onGrant(grant(sent.get(1), 5_000));
    assertThat(tieBreaker.evaluate(RIGHT, EXPECTED, 1_600 * MS).outcome()).isEqualTo(TieBreakVerdict.Outcome.WIN);
  }

  @Test
  void heldByTheOtherSideAnsweredEarlyIsALossAtTheTie() {
    tieBreaker.prepare(RIGHT, EXPECTED, 1_000 * MS);
    tieBreaker.onGrant(TieBreakGrant.newBuilder().setRequestId(sent.get(0).getRequestId()).setGranted(false)
        .setReason(ControlPlaneTieBreaker.HELD_BY_OTHER_SIDE_PREFIX + "node-1").build());
    TieBreakVerdict verdict = tieBreaker.evaluate(RIGHT, EXPECTED, 1_500 * MS);
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.LOSE);
    assertThat(verdict.winValidUntilNanos()).isEmpty();
  }

  @Test
  void notConnectedIsNoAnswerAtOnce() {
    connected = false;
    tieBreaker.prepare(RIGHT, EXPECTED, 1_000 * MS);
    TieBreakVerdict verdict = tieBreaker.evaluate(RIGHT, EXPECTED, 1_500 * MS);
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(verdict.reason()).contains("not connected");
    assertThat(sent).isEmpty();
  }

  @Test
  void answersToRequestsNeverSentAreIgnored() {
    connected = false;
    tieBreaker.prepare(RIGHT, EXPECTED, 1_000 * MS);
    tieBreaker.onGrant(TieBreakGrant.newBuilder().setRequestId(1).setGranted(true)
        .setValidFor(Duration.newBuilder().setSeconds(5)).build());
    connected = true;
    assertThat(tieBreaker.evaluate(RIGHT, EXPECTED, 1_500 * MS).outcome())
        .isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
  }
}
