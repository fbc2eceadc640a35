package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class QuorumEvaluatorTest {

  static final long MS = 1_000_000L;
  static final SortedSet<String> THREE = new TreeSet<>(List.of("a", "b", "c"));
  static final SortedSet<String> FOUR = new TreeSet<>(List.of("a", "b", "c", "d"));

  static QuorumSettings settings(String self, SortedSet<String> expected, List<TieBreaker> tieBreakers) {
    return new QuorumSettings(self, expected, expected.size() / 2 + 1, Duration.ofSeconds(2), 1.5,
        Duration.ofMillis(100), tieBreakers);
  }

  /** Completes one round trip self → peer → self: the peer's heartbeat echoes our send at {@code sentAt}. */
  static void roundTrip(QuorumEvaluator self, String peer, long sentAt, long receivedAt) {
    Heartbeat ours = self.heartbeatFor(peer, sentAt);
    // The peer sends later each time: its send times are monotonic within its boot.
    Heartbeat reply = new Heartbeat("g", peer, 77, receivedAt, self.bootId(), ours.sendNanos());
    assertThat(self.onHeartbeat(reply, receivedAt)).isEqualTo(HeartbeatOutcome.CONFIRMED);
  }

  @Test
  void hearingPeersWithoutEchoNeverHoldsQuorum() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    a.heartbeatFor("b", 0);
    a.heartbeatFor("c", 0);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 10, Heartbeat.NO_ECHO, 0), 10 * MS))
        .isEqualTo(HeartbeatOutcome.HEARD);
    assertThat(a.onHeartbeat(new Heartbeat("g", "c", 8, 10, Heartbeat.NO_ECHO, 0), 10 * MS))
        .isEqualTo(HeartbeatOutcome.HEARD);
    QuorumVerdict verdict = a.evaluate(20 * MS);
    assertThat(verdict.held()).isFalse();
    assertThat(verdict.heard()).isEqualTo(1);
    assertThat(verdict.peers()).allSatisfy(p -> assertThat(p.sinceLastHeardNanos()).isPresent());
  }

  @Test
  void aRoundTripWithOnePeerOfThreeHoldsQuorumUntilItAgesOut() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    roundTrip(a, "b", 100 * MS, 105 * MS);
    QuorumVerdict verdict = a.evaluate(200 * MS);
    assertThat(verdict.held()).isTrue();
    assertThat(verdict.side()).containsExactly("a", "b");
    assertThat(verdict.heldUntilNanos()).isEqualTo(100 * MS + 2_000 * MS);
    assertThat(a.evaluate(2_100 * MS).held()).isTrue();
    assertThat(a.evaluate(2_101 * MS).held()).isFalse();
  }

  @Test
  void echoesOfAnotherBootOrOfTimesNeverSentDoNotCount() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    a.heartbeatFor("b", 100 * MS);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 1, 2, 100 * MS), 110 * MS)).isEqualTo(HeartbeatOutcome.HEARD);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 2, 1, 150 * MS), 160 * MS)).isEqualTo(HeartbeatOutcome.HEARD);
    assertThat(a.evaluate(170 * MS).held()).isFalse();
  }

  /**
   * A captured heartbeat sent again (by someone on the node network after the peer died) must not keep the dead
   * peer "heard": its last contact feeds the controller's fenced-node rule and drbd-fence-peer. Only a newer heartbeat
   * of the peer's current boot, or one of a boot not seen before, counts; alternating packets of two old boots
   * refreshes nothing more.
   */
  @Test
  void replayedHeartbeatsDoNotRefreshLastHeard() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    Heartbeat boot1 = new Heartbeat("g", "b", 7, 1_000 * MS, Heartbeat.NO_ECHO, 0);
    Heartbeat boot2 = new Heartbeat("g", "b", 8, 50 * MS, Heartbeat.NO_ECHO, 0);
    assertThat(a.onHeartbeat(boot1, 10 * MS)).isEqualTo(HeartbeatOutcome.HEARD);
    assertThat(a.onHeartbeat(boot1, 5_000 * MS)).isEqualTo(HeartbeatOutcome.STALE);
    assertThat(heardAgo(a, "b", 5_000 * MS)).isEqualTo(4_990 * MS);

    // The peer restarted: a new boot counts, however small its times.
    assertThat(a.onHeartbeat(boot2, 6_000 * MS)).isEqualTo(HeartbeatOutcome.HEARD);
    // Then it died; packets of both of its boots come again, in turns.
    for (long t = 7_000; t < 9_000; t += 500) {
      assertThat(a.onHeartbeat(boot1, t * MS)).isEqualTo(HeartbeatOutcome.STALE);
      assertThat(a.onHeartbeat(boot2, t * MS + 1)).isEqualTo(HeartbeatOutcome.STALE);
    }
    assertThat(heardAgo(a, "b", 9_000 * MS)).isEqualTo(3_000 * MS);

    // A later boot whose id happens to be a left one's sends newer times: it counts.
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 2_000 * MS, Heartbeat.NO_ECHO, 0), 10_000 * MS))
        .isEqualTo(HeartbeatOutcome.HEARD);
  }

  /**
   * A holder of the group key forges one heartbeat in b's name, with b's boot and a send time far ahead. Before, b's
   * real heartbeats were then all older than the recorded time (stale: never heard, never confirmed) and a echoed the
   * forged time, which b could never confirm, for about 146 years. Now the first real heartbeat that completes a fresh
   * round trip proves it is b's and replaces the record; a replay, or the same heartbeat again, stays stale.
   */
  @Test
  void aForgedSendTimeAheadIsReplacedByTheFirstRealRoundTrip() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    long t = 1_000 * MS;
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 100 * MS, Heartbeat.NO_ECHO, 0), t))
        .isEqualTo(HeartbeatOutcome.HEARD);
    long firstSend = a.heartbeatFor("b", t + 10 * MS).sendNanos();
    Heartbeat firstAnswer = new Heartbeat("g", "b", 7, 200 * MS, 1, firstSend);
    assertThat(a.onHeartbeat(firstAnswer, t + 20 * MS)).isEqualTo(HeartbeatOutcome.CONFIRMED);

    long forgedSend = 200 * MS + (1L << 62);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, forgedSend, Heartbeat.NO_ECHO, 0), t + 30 * MS))
        .isEqualTo(HeartbeatOutcome.HEARD);
    Heartbeat toB = a.heartbeatFor("b", t + 40 * MS);
    assertThat(toB.echoNanos()).as("the forged time is what a echoes now").isEqualTo(forgedSend);

    assertThat(a.onHeartbeat(firstAnswer, t + 45 * MS)).as("a replay: its round trip is confirmed already")
        .isEqualTo(HeartbeatOutcome.STALE);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 250 * MS, Heartbeat.NO_ECHO, 0), t + 46 * MS))
        .as("older than the record and no round trip: nothing proves it").isEqualTo(HeartbeatOutcome.STALE);
    Heartbeat real = new Heartbeat("g", "b", 7, 300 * MS, 1, toB.sendNanos());
    assertThat(a.onHeartbeat(real, t + 50 * MS)).isEqualTo(HeartbeatOutcome.CORRECTED);
    assertThat(a.heartbeatFor("b", t + 60 * MS).echoNanos()).as("b's real time is echoed again").isEqualTo(300 * MS);
    assertThat(heardAgo(a, "b", t + 60 * MS)).isEqualTo(10 * MS);
    assertThat(a.evidenceAgeNanos("b", t + 60 * MS)).hasValue(20 * MS);
    assertThat(a.onHeartbeat(real, t + 70 * MS)).as("the same heartbeat again").isEqualTo(HeartbeatOutcome.STALE);
    assertThat(a.onHeartbeat(new Heartbeat("g", "b", 7, 400 * MS, 1, toB.sendNanos()), t + 80 * MS))
        .as("b's next heartbeat is newer than the corrected record").isEqualTo(HeartbeatOutcome.CONFIRMED);
  }

  private static long heardAgo(QuorumEvaluator a, String peer, long now) {
    return a.evaluate(now).peers().stream().filter(p -> p.name().equals(peer)).findFirst().orElseThrow()
        .sinceLastHeardNanos().orElseThrow();
  }

  @Test
  void heartbeatsOfOtherGroupsStrangersAndSelfAreIgnored() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    assertThat(a.onHeartbeat(new Heartbeat("other", "b", 7, 1, 1, 0), 1)).isEqualTo(HeartbeatOutcome.WRONG_GROUP);
    assertThat(a.onHeartbeat(new Heartbeat("g", "zed", 7, 1, 1, 0), 1)).isEqualTo(HeartbeatOutcome.UNKNOWN_SENDER);
    assertThat(a.onHeartbeat(new Heartbeat("g", "a", 7, 1, 1, 0), 1)).isEqualTo(HeartbeatOutcome.FROM_SELF);
  }

  @Test
  void theEchoSentToAPeerIsItsLatestSendTimeWeReceived() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    a.onHeartbeat(new Heartbeat("g", "b", 7, 500, Heartbeat.NO_ECHO, 0), 10);
    a.onHeartbeat(new Heartbeat("g", "b", 7, 400, Heartbeat.NO_ECHO, 0), 11);
    Heartbeat toB = a.heartbeatFor("b", 20);
    assertThat(toB.echoBootId()).isEqualTo(7);
    assertThat(toB.echoNanos()).isEqualTo(500);
    a.onHeartbeat(new Heartbeat("g", "b", 9, 3, Heartbeat.NO_ECHO, 0), 30);
    assertThat(a.heartbeatFor("b", 40).echoBootId()).as("a restarted peer's new boot replaces the old").isEqualTo(9);
  }

  @Test
  void exactHalfAsksTheTieBreakerAndItsAnswerDecides() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", FOUR, List.of(new LowestNameTieBreaker())));
    roundTrip(a, "b", 0, MS);
    QuorumVerdict verdict = a.evaluate(10 * MS);
    assertThat(verdict.held()).isTrue();
    assertThat(verdict.tieBreakerOutcome()).isEqualTo("LowestName: side holds a");

    QuorumEvaluator c = new QuorumEvaluator("g", 3, settings("c", FOUR, List.of(new LowestNameTieBreaker())));
    roundTrip(c, "d", 0, MS);
    QuorumVerdict lost = c.evaluate(10 * MS);
    assertThat(lost.held()).isFalse();
    assertThat(lost.tieBreakerOutcome()).isEqualTo("LowestName: a is on the other side");
  }

  /**
   * No answer from the tie-breaker means not held, and nothing after it is asked, even in a list the policy would
   * refuse (an older controller, a cached config): {a,b} get no answer from the controller while {c,d} got its grant;
   * a LowestName asked next would hold {a,b} too.
   */
  @Test
  void noAnswerMeansNotHeldAndNoLaterTieBreakerIsAsked() {
    List<String> asked = new ArrayList<>();
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", FOUR,
        List.of(recording("ControlPlane", TieBreakVerdict.noAnswer("ControlPlane: controller not connected"), asked),
            recording("LowestName", TieBreakVerdict.win("LowestName: side holds a"), asked))));
    roundTrip(a, "b", 0, MS);
    QuorumVerdict verdict = a.evaluate(10 * MS);
    assertThat(verdict.held()).isFalse();
    assertThat(verdict.tieBreakerOutcome()).isEqualTo("ControlPlane: controller not connected");
    assertThat(asked).containsExactly("ControlPlane");
  }

  @Test
  void localLagStretchesTheWindowButNeverBeyondTheCap() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    roundTrip(a, "b", 0, MS);
    a.observeLocalLag(2_400 * MS, 500 * MS);
    QuorumVerdict stretched = a.evaluate(2_400 * MS);
    assertThat(stretched.held()).isTrue();
    assertThat(stretched.windowNanos()).isEqualTo(2_500 * MS);
    a.observeLocalLag(2_900 * MS, 10_000 * MS);
    QuorumVerdict capped = a.evaluate(2_900 * MS);
    assertThat(capped.windowNanos()).isEqualTo(3_000 * MS);
    assertThat(capped.held()).isTrue();
    assertThat(a.evaluate(3_001 * MS).held()).isFalse();
  }

  /**
   * A config delta (another member's address, a signal, a key) that lands right after a stall must not shrink the
   * stretched window back: the round of the late tick is still under way, and without the stretch the node would
   * lose quorum — under Fence for good — for a delay that was its own.
   */
  @Test
  void reconfigureKeepsTheObservedLocalLag() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    roundTrip(a, "b", 0, MS);
    a.observeLocalLag(2_400 * MS, 500 * MS);
    a.reconfigure(settings("a", THREE, List.of()));
    QuorumVerdict afterSameSettings = a.evaluate(2_400 * MS);
    assertThat(afterSameSettings.windowNanos()).isEqualTo(2_500 * MS);
    assertThat(afterSameSettings.held()).isTrue();

    // The new settings cap the carried lag: a cap of 1.125 allows 250 ms of stretch, not 500.
    a.reconfigure(new QuorumSettings("a", THREE, 2, Duration.ofSeconds(2), 1.125, Duration.ofMillis(100),
        List.of()));
    QuorumVerdict capped = a.evaluate(2_400 * MS);
    assertThat(capped.windowNanos()).isEqualTo(2_250 * MS);
    assertThat(capped.held()).isFalse();
    // Forgotten one window after it was observed, as without a reconfigure.
    assertThat(a.evaluate(4_401 * MS).windowNanos()).isEqualTo(2_000 * MS);
  }

  @Test
  void tStopIsWindowTimesCapPlusTick() {
    assertThat(settings("a", THREE, List.of()).tStop()).isEqualTo(Duration.ofMillis(3_100));
  }

  @Test
  void reconfigureKeepsHistoryOfMembersThatStay() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of()));
    roundTrip(a, "b", 0, MS);
    a.reconfigure(settings("a", new TreeSet<>(List.of("a", "b", "c", "d", "e")), List.of()));
    assertThat(a.evaluate(10 * MS).heard()).isEqualTo(2);
    assertThat(a.evaluate(10 * MS).held()).isFalse();
    assertThat(a.peers()).containsExactly("b", "c", "d", "e");
  }

  @Test
  void settingsThatWouldLetTwoHalvesHoldQuorumAreRejected() {
    assertThatThrownBy(() -> new QuorumSettings("a", FOUR, 2, Duration.ofSeconds(1), 1.5, Duration.ofMillis(100),
        List.of())).hasMessageContaining("lets two disjoint halves both hold quorum");
    assertThatThrownBy(() -> settings("z", THREE, List.of())).hasMessageContaining("not in the expected members");
    assertThatThrownBy(() -> new QuorumSettings("a", THREE, 2, Duration.ofSeconds(1), 0.5, Duration.ofMillis(100),
        List.of())).hasMessageContaining("local health cap");
  }

  @Test
  void aSingleMemberGroupAlwaysHoldsQuorum() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", new TreeSet<>(List.of("a")), List.of()));
    QuorumVerdict verdict = a.evaluate(5);
    assertThat(verdict.held()).isTrue();
    assertThat(verdict.holdsAt(5 + 100 * MS)).isTrue();
    assertThat(verdict.holdsAt(6 + 100 * MS)).isFalse();
  }

  @Test
  void tieBreakersArePreparedForTheSideThatRemainsBeforeTheWindowLapsesIntoATie() {
    // Window 2 s, lead 2 s / 3: a confirmation older than 1333 ms is "lapsing soon".
    List<String> prepared = new ArrayList<>();
    List<String> asked = new ArrayList<>();
    TieBreaker remote = new TieBreaker() {
      @Override
      public String name() {
        return "Remote";
      }

      @Override
      public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        asked.add(side + "@" + nowNanos / MS);
        return TieBreakVerdict.winUntil("Remote: granted", 2_500 * MS);
      }

      @Override
      public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        prepared.add(side + "@" + nowNanos / MS);
      }
    };
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", FOUR, List.of(remote)));
    roundTrip(a, "b", 0, MS);
    roundTrip(a, "c", 0, MS);
    roundTrip(a, "d", 0, MS);
    QuorumVerdict healthy = a.evaluate(1_000 * MS);
    assertThat(healthy.held()).isTrue();
    assertThat(healthy.tieBreakerOutcome()).isEqualTo("none");
    assertThat(prepared).isEmpty();

    // b keeps answering; c and d stopped after their round trips at 0.
    roundTrip(a, "b", 1_000 * MS, 1_001 * MS);
    QuorumVerdict early = a.evaluate(1_400 * MS);
    assertThat(early.held()).as("preparing never changes held").isTrue();
    assertThat(early.heldUntilNanos()).as("nor heldUntil").isEqualTo(2_000 * MS);
    assertThat(early.tieBreakerOutcome()).contains("asked early for [a, b]");
    assertThat(prepared).containsExactly("[a, b]@1400");
    assertThat(asked).isEmpty();

    QuorumVerdict tie = a.evaluate(2_100 * MS);
    assertThat(tie.held()).isTrue();
    assertThat(asked).containsExactly("[a, b]@2100");
    assertThat(tie.heldUntilNanos()).as("a lease caps heldUntil").isEqualTo(2_500 * MS);
    assertThat(prepared).hasSize(1);
  }

  @Test
  void aMajorityWhoseYoungConfirmationsAreNotExactlyHalfPreparesNothing() {
    List<String> prepared = new ArrayList<>();
    TieBreaker remote = new TieBreaker() {
      @Override
      public String name() {
        return "Remote";
      }

      @Override
      public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        return TieBreakVerdict.noAnswer("Remote: none");
      }

      @Override
      public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        prepared.add(side.toString());
      }
    };
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", THREE, List.of(remote)));
    roundTrip(a, "b", 0, MS);
    roundTrip(a, "c", 0, MS);
    assertThat(a.evaluate(1_900 * MS).held()).isTrue();
    assertThat(prepared).as("an odd group has no exact half").isEmpty();
  }

  @Test
  void theTieBreakLeadMustStayBelowTheWindow() {
    assertThatThrownBy(() -> new QuorumSettings("a", FOUR, 3, Duration.ofSeconds(2), 1.5, Duration.ofMillis(100),
        List.of(), Duration.ofSeconds(2))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tie-break lead");
    assertThat(QuorumSettings.defaultTieBreakLead(Duration.ofMillis(1500), Duration.ofMillis(250),
        Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(500));
    assertThat(QuorumSettings.defaultTieBreakLead(Duration.ofSeconds(2), Duration.ofMillis(500),
        Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(700));
    assertThat(QuorumSettings.defaultTieBreakLead(Duration.ofSeconds(2), Duration.ofMillis(1900),
        Duration.ofMillis(100))).as("capped at half the window").isEqualTo(Duration.ofSeconds(1));
  }

  private static TieBreaker recording(String name, TieBreakVerdict answer, List<String> asked) {
    return new TieBreaker() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        asked.add(name);
        return answer;
      }
    };
  }
}
