package dev.fencing.agent.quorum;

import static dev.fencing.agent.quorum.QuorumEvaluatorTest.MS;
import static dev.fencing.agent.quorum.QuorumEvaluatorTest.THREE;
import static dev.fencing.agent.quorum.QuorumEvaluatorTest.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.policy.Reachability;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Round-trip evidence per gossip network, combined by the reachability rule (window 2 s, quorum 2 of 3). */
class QuorumEvaluatorNetworksTest {

  static final String N1 = "198.18.0.0/24";
  static final String N2 = "198.19.0.0/24";

  static QuorumEvaluator evaluator(Reachability rule) {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    a.useNetworks(List.of(N1, N2), rule);
    return a;
  }

  /** Completes a round trip a → peer → a on {@code network}: the peer's heartbeat there echoes our send there. */
  static void roundTrip(QuorumEvaluator self, String peer, String network, long sentAt, long receivedAt) {
    Heartbeat ours = self.heartbeatFor(peer, network, sentAt);
    // The peer sends later each time: its send times are monotonic within its boot.
    Heartbeat reply = new Heartbeat("g", peer, 77, receivedAt, self.bootId(), ours.sendNanos());
    assertThat(self.onHeartbeat(reply, network, receivedAt)).isEqualTo(HeartbeatOutcome.CONFIRMED);
  }

  @Test
  void underAnyAPeerConfirmedOnOneNetworkCounts() {
    QuorumEvaluator a = evaluator(Reachability.ANY);
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    roundTrip(a, "c", N2, 100 * MS, 105 * MS);
    QuorumVerdict verdict = a.evaluate(200 * MS);
    assertThat(verdict.held()).isTrue();
    assertThat(verdict.side()).containsExactly("a", "b", "c");
  }

  @Test
  void underAllAPeerConfirmedOnOnlyOneNetworkDoesNotCount() {
    QuorumEvaluator a = evaluator(Reachability.ALL);
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    roundTrip(a, "c", N2, 100 * MS, 105 * MS);
    QuorumVerdict cut = a.evaluate(200 * MS);
    assertThat(cut.held()).isFalse();
    assertThat(cut.side()).containsExactly("a");

    roundTrip(a, "b", N2, 150 * MS, 155 * MS);
    QuorumVerdict both = a.evaluate(200 * MS);
    assertThat(both.held()).isTrue();
    assertThat(both.side()).containsExactly("a", "b");
  }

  @Test
  void allCombinesByTheOldestNetworkAndAnyByTheNewest() {
    QuorumEvaluator all = evaluator(Reachability.ALL);
    QuorumEvaluator any = evaluator(Reachability.ANY);
    for (QuorumEvaluator e : List.of(all, any)) {
      roundTrip(e, "b", N1, 100 * MS, 105 * MS);
      roundTrip(e, "b", N2, 900 * MS, 905 * MS);
    }
    PeerQuorumView b = all.evaluate(1_000 * MS).peers().get(0);
    assertThat(b.sinceLastConfirmedNanos()).isEqualTo(OptionalLong.of(900 * MS));
    assertThat(any.evaluate(1_000 * MS).peers().get(0).sinceLastConfirmedNanos())
        .isEqualTo(OptionalLong.of(100 * MS));
    // The quorum ends when the older network's round trip ages out under All, the newer one's under Any.
    assertThat(all.evaluate(1_000 * MS).heldUntilNanos()).isEqualTo(100 * MS + 2_000 * MS);
    assertThat(any.evaluate(1_000 * MS).heldUntilNanos()).isEqualTo(900 * MS + 2_000 * MS);
    assertThat(all.evaluate(2_101 * MS).held()).isFalse();
    assertThat(any.evaluate(2_101 * MS).held()).isTrue();
  }

  @Test
  void eachNetworkReportsItsOwnEvidence() {
    QuorumEvaluator a = evaluator(Reachability.ALL);
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    a.onHeartbeat(new Heartbeat("g", "b", 77, 6_000, Heartbeat.NO_ECHO, 0), N2, 150 * MS);
    PeerQuorumView b = a.evaluate(200 * MS).peers().get(0);
    assertThat(b.networks()).containsExactly(
        new NetworkEvidence(N1, true, OptionalLong.of(100 * MS), OptionalLong.of(95 * MS)),
        new NetworkEvidence(N2, false, OptionalLong.empty(), OptionalLong.of(50 * MS)));
    assertThat(b.sinceLastHeardNanos()).isEqualTo(OptionalLong.of(50 * MS));
  }

  @Test
  void anEchoOnOneNetworkNeverConfirmsAnother() {
    QuorumEvaluator a = evaluator(Reachability.ALL);
    Heartbeat onN1 = a.heartbeatFor("b", N1, 100 * MS);
    // The peer echoes our N1 send time, but on N2, where we never sent: no round trip on N2.
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 77, 5_000, a.bootId(), onN1.sendNanos()), N2, 105 * MS))
        .isEqualTo(HeartbeatOutcome.HEARD);
    assertThat(a.evaluate(200 * MS).peers().get(0).networks().get(1).confirmed()).isFalse();
  }

  @Test
  void oneNetworkReportsNoPerNetworkEvidence() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    QuorumEvaluatorTest.roundTrip(a, "b", 100 * MS, 105 * MS);
    assertThat(a.evaluate(200 * MS).peers()).allSatisfy(p -> assertThat(p.networks()).isEmpty());
    assertThat(a.networks()).containsExactly(QuorumEvaluator.SINGLE_NETWORK);
  }

  @Test
  void switchingNetworksKeepsTheEvidenceOfNetworksThatStay() {
    QuorumEvaluator a = evaluator(Reachability.ALL);
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    a.useNetworks(List.of(N1), Reachability.ALL);
    assertThat(a.evaluate(200 * MS).side()).containsExactly("a", "b");
    assertThatThrownBy(() -> a.heartbeatFor("b", N2, 300 * MS)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not one of the networks");
  }

  /**
   * Giving a running group networks (or taking them away) must not lose the quorum it holds: the new networks start
   * from the evidence measured so far, which still expires when it would have.
   */
  @Test
  void switchingAHeldGroupToOtherNetworksKeepsItsQuorumUntilTheEvidenceAgesOut() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    QuorumEvaluatorTest.roundTrip(a, "b", 100 * MS, 105 * MS);
    QuorumEvaluatorTest.roundTrip(a, "c", 300 * MS, 305 * MS);
    assertThat(a.evaluate(400 * MS).held()).isTrue();

    for (Reachability rule : Reachability.values()) {
      QuorumEvaluator e = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
      QuorumEvaluatorTest.roundTrip(e, "b", 100 * MS, 105 * MS);
      QuorumEvaluatorTest.roundTrip(e, "c", 300 * MS, 305 * MS);
      e.useNetworks(List.of(N1, N2), rule);
      QuorumVerdict after = e.evaluate(400 * MS);
      assertThat(after.held()).as(rule.name()).isTrue();
      assertThat(after.side()).containsExactly("a", "b", "c");
      // No new round trip: held until c's evidence (300 ms) is a window (2 s) old, as without the switch.
      assertThat(after.heldUntilNanos()).isEqualTo(300 * MS + 2_000 * MS);
      assertThat(e.evaluate(2_301 * MS).held()).isFalse();

      // And back to one network: the evidence measured on the networks goes along.
      roundTrip(e, "b", N1, 2_400 * MS, 2_405 * MS);
      roundTrip(e, "b", N2, 2_400 * MS, 2_405 * MS);
      e.useNetworks(List.of(QuorumEvaluator.SINGLE_NETWORK), Reachability.ANY);
      assertThat(e.evaluate(2_500 * MS).side()).containsExactly("a", "b");
    }
  }

  @Test
  void aNetworkAddedUnderAllCountsAsTheOthersOnlyUntilItsOwnEvidenceIsNeeded() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    a.useNetworks(List.of(N1), Reachability.ALL);
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    a.useNetworks(List.of(N1, N2), Reachability.ALL);
    assertThat(a.evaluate(200 * MS).side()).containsExactly("a", "b");
    // Later round trips on N1 alone: N2 still carries only the copy of 100 ms, which ages out.
    roundTrip(a, "b", N1, 1_500 * MS, 1_505 * MS);
    assertThat(a.evaluate(2_000 * MS).side()).containsExactly("a", "b");
    assertThat(a.evaluate(2_101 * MS).side()).containsExactly("a");
  }

  @Test
  void underAllAPeerIsJudgedOnlyOnTheNetworksItHasAnAddressOn() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    // c's address on N2 is not known yet: it neither confirms nor vetoes c.
    a.useNetworks(List.of(N1, N2), Reachability.ALL, java.util.Map.of("b", java.util.Set.of(N1, N2),
        "c", java.util.Set.of(N1)));
    roundTrip(a, "b", N1, 100 * MS, 105 * MS);
    roundTrip(a, "c", N1, 100 * MS, 105 * MS);
    assertThat(a.evaluate(200 * MS).side()).containsExactly("a", "c");
  }
}
