package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Relayed evidence in groups above {@link Overlay#DIRECT_MAX}: what a reach digest may and may not prove. */
class QuorumEvaluatorRelayTest {

  private static final long MS = 1_000_000L;
  private static final long OTHER_BOOT = Heartbeat.newBootId(new java.util.Random(5));

  private static SortedSet<String> members(int n) {
    TreeSet<String> out = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      out.add(String.format("m%02d", i));
    }
    return out;
  }

  private static QuorumEvaluator evaluator(int n) {
    SortedSet<String> expected = members(n);
    return new QuorumEvaluator("g", Heartbeat.newBootId(new java.util.Random(1)),
        new QuorumSettings("m00", expected, n / 2 + 1, Duration.ofSeconds(6), 1.5, Duration.ofMillis(100),
            List.of()));
  }

  /** A digest from {@code sender} in which every member has the given level (the sender itself 0). */
  private static ReachDigest digest(QuorumEvaluator e, String sender, int level, long fingerprint) {
    List<String> order = e.overlay().members();
    byte[] packed = new byte[ReachDigest.packedLength(order.size())];
    for (int i = 0; i < order.size(); i++) {
      ReachDigest.setLevel(packed, i, order.get(i).equals(sender) ? 0 : level);
    }
    return new ReachDigest(fingerprint, 500, packed, order.size());
  }

  @Test
  void smallGroupsHeartbeatEveryPeerInVersionOne() {
    QuorumEvaluator e = evaluator(5);
    assertThat(e.heartbeatTargets(0)).isEqualTo(e.peers());
    Heartbeat hb = e.heartbeatFor("m01", 0);
    assertThat(hb.digest()).isEmpty();
    assertThat(HeartbeatCodec.encode(hb)[4]).isEqualTo((byte) 1);
  }

  @Test
  void relayedGroupsHeartbeatTheirRingNeighboursAndSendThemDigests() {
    QuorumEvaluator e = evaluator(100);
    SortedSet<String> neighbours = e.overlay().neighbours("m00");
    assertThat(e.heartbeatTargets(0)).isEqualTo(neighbours);
    for (String n : neighbours) {
      assertThat(e.heartbeatFor(n, 0).digest()).as("digest to neighbour %s", n).isPresent();
    }
  }

  private static QuorumEvaluator evaluatorOf(String self, int n, long seed) {
    return new QuorumEvaluator("g", Heartbeat.newBootId(new java.util.Random(seed)),
        new QuorumSettings(self, members(n), n / 2 + 1, Duration.ofSeconds(6), 1.5, Duration.ofMillis(100),
            List.of()));
  }

  /** The heartbeat from {@code e} to its neighbour {@code peer} at {@code now}, which carries a digest. */
  private static Heartbeat nextDigestHeartbeat(QuorumEvaluator e, String peer, long now) {
    Heartbeat hb = e.heartbeatFor(peer, now);
    assertThat(hb.digest()).as("digest to neighbour %s", peer).isPresent();
    return hb;
  }

  /** Gives {@code e} a round trip with {@code peer}: sent at {@code sent}, echoed back at {@code back}. */
  private static void roundTrip(QuorumEvaluator e, String peer, long peerBoot, long sent, long back) {
    e.heartbeatFor(peer, sent);
    e.onHeartbeat(new Heartbeat("g", peer, peerBoot, back, e.bootId(), sent, Optional.empty(), true), back);
  }

  @Test
  void evidenceRelayedOverTheCompactWireIsNeverFresherThanTheRoundTripItCameFrom() throws Exception {
    // a = m00 and its neighbour b run on clocks 7 s apart; b has a round trip with its other neighbour x.
    QuorumEvaluator a = evaluator(40);
    String b = a.overlay().neighbours("m00").first();
    QuorumEvaluator eb = evaluatorOf(b, 40, 2);
    String x = eb.overlay().neighbours(b).stream().filter(p -> !p.equals("m00")).findFirst().orElseThrow();
    long offset = 7_000 * MS;
    roundTrip(eb, x, OTHER_BOOT, 10_000 * MS + offset, 10_020 * MS + offset);

    // a sends at (real) 11.0 s, b receives it at 11.01 s and answers with a digest only at 12.3 s.
    Heartbeat fromA = a.heartbeatFor(b, 11_000 * MS);
    eb.onHeartbeat(HeartbeatCodec.decode(HeartbeatCodec.encode(fromA)).orElseThrow(), 11_010 * MS + offset);
    Heartbeat fromB = nextDigestHeartbeat(eb, "m00", 12_300 * MS + offset);
    byte[] wire = HeartbeatCodec.encode(fromB);
    assertThat(wire[4]).as("a's boot id reads version 3").isEqualTo((byte) 3);
    a.onHeartbeat(HeartbeatCodec.decode(wire).orElseThrow(), 12_320 * MS);

    long now = 13_000 * MS;
    long realAge = now - 10_000 * MS;
    assertThat(a.evidenceAgeNanos(x, now)).as("relayed, not lost on the wire").isPresent();
    assertThat(a.evidenceAgeNanos(x, now).getAsLong()).as("never younger than the round trip b had with x")
        .isGreaterThanOrEqualTo(realAge)
        // Counted from when b received a's send time (1.01 s after its evidence, rounded up to one 429 ms unit
        // per level), not from when it built the digest 1.3 s later.
        .isLessThanOrEqualTo(now - (11_000 * MS - 3 * 429 * MS));
  }

  /** Overlay index of a member that is not a neighbour of m00. */
  private static int farIndex(QuorumEvaluator e) {
    return e.overlay().members().indexOf(e.peers().stream()
        .filter(p -> !e.overlay().neighbours("m00").contains(p)).findFirst().orElseThrow());
  }

  /** {@code neighbour} (boot {@code boot}) echoes our send at {@code sent} with every member at level 1 (500 ms). */
  private static void reportsEveryoneAtLevelOne(QuorumEvaluator e, String neighbour, long boot, long sent) {
    e.heartbeatFor(neighbour, sent);
    e.onHeartbeat(new Heartbeat("g", neighbour, boot, sent / MS, e.bootId(), sent,
        Optional.of(digest(e, neighbour, 1, e.overlay().fingerprint())), true), sent + 50 * MS);
  }

  private static int levelInDigestTo(QuorumEvaluator e, String neighbour, long now, int index) {
    return nextDigestHeartbeat(e, neighbour, now).digest().orElseThrow().level(index);
  }

  @Test
  void entriesTheNeighbourReportedAsFreshAreLeftOutUntilOursIsFresherByMoreThanTheMargin() {
    QuorumEvaluator e = evaluator(40);
    String n1 = e.overlay().neighbours("m00").first();
    String n2 = e.overlay().neighbours("m00").last();
    int far = farIndex(e);
    // Our only evidence of far is what n1 told us.
    reportsEveryoneAtLevelOne(e, n1, OTHER_BOOT, 1_000 * MS);
    assertThat(levelInDigestTo(e, n1, 1_100 * MS, far)).as("n1 told us; telling it back is useless")
        .isEqualTo(ReachDigest.NONE);
    assertThat(levelInDigestTo(e, n2, 1_100 * MS, far)).as("n2 has not reported far")
        .isNotEqualTo(ReachDigest.NONE);
    // n2 reports far 2 s fresher than n1 did (the margin is two 429 ms units): now n1 gets it.
    reportsEveryoneAtLevelOne(e, n2, OTHER_BOOT + 2, 3_000 * MS);
    assertThat(levelInDigestTo(e, n1, 3_100 * MS, far)).isNotEqualTo(ReachDigest.NONE);
  }

  @Test
  void aRestartedNeighbourGetsEveryEntryAgain() {
    QuorumEvaluator e = evaluator(40);
    String n1 = e.overlay().neighbours("m00").first();
    int far = farIndex(e);
    reportsEveryoneAtLevelOne(e, n1, OTHER_BOOT, 1_000 * MS);
    assertThat(levelInDigestTo(e, n1, 1_100 * MS, far)).isEqualTo(ReachDigest.NONE);
    // n1 restarts: its new boot knows nothing of what the old one reported.
    e.onHeartbeat(new Heartbeat("g", n1, OTHER_BOOT + 4, 1, Heartbeat.NO_ECHO, 0), 1_200 * MS);
    assertThat(levelInDigestTo(e, n1, 1_300 * MS, far)).isNotEqualTo(ReachDigest.NONE);
  }

  @Test
  void aNeighbourThatAnswersInVersionTwoAfterHearingUsGetsVersionTwo() {
    QuorumEvaluator e = evaluator(40);
    String n1 = e.overlay().neighbours("m00").first();
    assertThat(nextDigestHeartbeat(e, n1, 900 * MS).compact()).as("nothing heard from it yet").isFalse();
    e.heartbeatFor(n1, 1_000 * MS);
    // Before it heard us, version 2 says nothing about it.
    e.onHeartbeat(new Heartbeat("g", n1, OTHER_BOOT, 5, Heartbeat.NO_ECHO, 0,
        Optional.of(digest(e, n1, 1, e.overlay().fingerprint())), true), 1_050 * MS);
    assertThat(nextDigestHeartbeat(e, n1, 1_100 * MS).compact()).isTrue();
    // After: it reads only version 2 (its boot id carries the version 3 tag by chance).
    e.onHeartbeat(new Heartbeat("g", n1, OTHER_BOOT, 6, e.bootId(), 1_000 * MS,
        Optional.of(digest(e, n1, 1, e.overlay().fingerprint())), true), 1_150 * MS);
    Heartbeat next = nextDigestHeartbeat(e, n1, 1_200 * MS);
    assertThat(next.compact()).isFalse();
    assertThat(HeartbeatCodec.encode(next)[4]).isEqualTo((byte) 2);
    // A version 2 agent's boot id (digest tag, no compact tag) gets version 2 from the start.
    long version2Boot = (Heartbeat.DIGEST_CAPABLE_TAG << 40) | 0x77L;
    assertThat(Heartbeat.readsDigests(version2Boot)).isTrue();
    assertThat(Heartbeat.readsCompactDigests(version2Boot)).isFalse();
    assertThat(Heartbeat.readsCompactDigests(OTHER_BOOT)).isTrue();
  }

  @Test
  void everyHeartbeatToAPeerThatReadsVersionThreeIsCompactOnceItHeardUsAndAnOlderAnswerStopsThat() {
    QuorumEvaluator e = evaluator(5);
    assertThat(e.heartbeatFor("m01", 900 * MS).compact()).as("nothing heard from it yet").isFalse();
    // A small group sends no digests; version 3 still shortens every heartbeat (41 bytes → 24 here).
    e.onHeartbeat(new Heartbeat("g", "m01", OTHER_BOOT, 5 * MS, Heartbeat.NO_ECHO, 0), 1_000 * MS);
    Heartbeat compact = e.heartbeatFor("m01", 1_100 * MS);
    assertThat(compact.compact()).isTrue();
    assertThat(HeartbeatCodec.encode(compact)[4]).isEqualTo((byte) 3);
    // It echoes our boot id in version 1: whatever its boot id says, it does not write (so may not read) v3.
    e.onHeartbeat(new Heartbeat("g", "m01", OTHER_BOOT, 6 * MS, e.bootId(), 1_100 * MS), 1_150 * MS);
    Heartbeat next = e.heartbeatFor("m01", 1_200 * MS);
    assertThat(next.compact()).isFalse();
    assertThat(HeartbeatCodec.encode(next)[4]).isEqualTo((byte) 1);
    // A version 3 answer echoing us lifts that.
    e.onHeartbeat(new Heartbeat("g", "m01", OTHER_BOOT, 7 * MS, e.bootId(), 1_200 * MS, Optional.empty(), true,
        true), 1_250 * MS);
    assertThat(e.heartbeatFor("m01", 1_300 * MS).compact()).isTrue();
  }

  /** A peer of m00 that is not its overlay neighbour. */
  private static String offOverlay(QuorumEvaluator e, int skip) {
    return e.peers().stream().filter(p -> !e.overlay().neighbours("m00").contains(p)).skip(skip).findFirst()
        .orElseThrow();
  }

  /** {@code peer} (boot {@code boot}) answers our heartbeat sent at {@code sent} in version 3. */
  private static void answersCompact(QuorumEvaluator e, String peer, long boot, long sent) {
    e.heartbeatFor(peer, sent);
    e.onHeartbeat(new Heartbeat("g", peer, boot, sent + 10 * MS, e.bootId(), sent, Optional.empty(), false, true),
        sent + 20 * MS);
  }

  @Test
  void aNodeShortOfEvidenceAsksOnePeerOffTheOverlayThatAnsweredItForItsDigestAndCountsWhatItRelays() {
    QuorumEvaluator e = evaluator(40);
    String source = offOverlay(e, 0);
    String olderAgent = offOverlay(e, 1);
    answersCompact(e, source, OTHER_BOOT, 1_000 * MS);
    // Answered in version 2 after hearing us: it does not read version 3, so it cannot be asked.
    e.heartbeatFor(olderAgent, 1_000 * MS);
    e.onHeartbeat(new Heartbeat("g", olderAgent, OTHER_BOOT + 2, 1_010 * MS, e.bootId(), 1_000 * MS,
        Optional.empty(), false), 1_020 * MS);

    // Only two peers have evidence: far below quorum (21 of 40), so the node sends detours and one digest request.
    long now = 1_500 * MS;
    java.util.Map<String, Heartbeat> round = new java.util.TreeMap<>();
    for (String target : e.heartbeatTargets(now)) {
      round.put(target, e.heartbeatFor(target, now));
    }
    assertThat(round.values().stream().filter(Heartbeat::wantsDigest).map(Heartbeat::sender).count()).isEqualTo(1);
    assertThat(round.get(source).wantsDigest()).as("the one that answered in version 3").isTrue();
    assertThat(round.get(source).wantsEcho()).isTrue();
    assertThat(HeartbeatCodec.encode(round.get(source))[5] & 8).as("flag bit 3 on the wire").isEqualTo(8);

    // Its answer relays everyone at level 1: the node counts them all (the digest of a peer off the overlay counts
    // exactly like a neighbour's, against the echo of our send time).
    e.onHeartbeat(new Heartbeat("g", source, OTHER_BOOT, 1_600 * MS, e.bootId(), now,
        Optional.of(digest(e, source, 1, e.overlay().fingerprint())), false, true), 1_700 * MS);
    assertThat(e.evaluate(1_800 * MS).held()).isTrue();
    assertThat(e.evidenceAgeNanos(offOverlay(e, 5), 1_800 * MS)).hasValue(1_800 * MS - (now - 500 * MS));
    // With everyone fresh nobody is asked for a digest any more.
    assertThat(e.heartbeatTargets(2_000 * MS).stream().map(t -> e.heartbeatFor(t, 2_000 * MS))
        .noneMatch(Heartbeat::wantsDigest)).isTrue();
  }

  @Test
  void aPeerOffTheOverlayThatAsksForADigestGetsOneInTheAnswerOnceWithNothingLeftOut() {
    QuorumEvaluator e = evaluator(40);
    String n1 = e.overlay().neighbours("m00").first();
    String asker = offOverlay(e, 1);
    int far = farIndex(e);
    // n1 told us about everyone: a digest to n1 leaves those entries out, one to the asker must not.
    reportsEveryoneAtLevelOne(e, n1, OTHER_BOOT + 4, 1_000 * MS);
    e.onHeartbeat(new Heartbeat("g", asker, OTHER_BOOT, 5 * MS, Heartbeat.NO_ECHO, 0, Optional.empty(), true, true,
        true), 1_100 * MS);

    assertThat(e.heartbeatTargets(1_200 * MS)).contains(asker);
    Heartbeat answer = e.heartbeatFor(asker, 1_200 * MS);
    assertThat(answer.digest()).isPresent();
    assertThat(answer.compact()).isTrue();
    assertThat(answer.digest().orElseThrow().level(far)).isNotEqualTo(ReachDigest.NONE);
    assertThat(answer.wantsDigest()).as("an answer never asks back").isFalse();
    assertThat(e.heartbeatFor(asker, 2_000 * MS).digest()).as("one digest per request").isEmpty();
    // A request in version 1 or 2 cannot exist: the flag only travels in version 3.
    assertThat(new Heartbeat("g", asker, 0x1234_5678_9ABCL | 1, 5, Heartbeat.NO_ECHO, 0, Optional.empty(), true,
        true, true).wantsDigest()).isFalse();
  }

  @Test
  void relayedEvidenceCountsFromTheEchoedSendTimeMinusTheRelayedAge() {
    QuorumEvaluator e = evaluator(40);
    String neighbour = e.overlay().neighbours("m00").first();
    long sent = 1_000 * MS;
    e.heartbeatFor(neighbour, sent);
    // The neighbour says: every member reached 3 levels (1.5 s) before it built this heartbeat.
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 77, e.bootId(), sent,
        Optional.of(digest(e, neighbour, 3, e.overlay().fingerprint())), true), sent + 400 * MS);

    long now = sent + 2_000 * MS;
    assertThat(e.evidenceAgeNanos("m17", now)).hasValue(now - (sent - 1_500 * MS));
    assertThat(e.evidenceAgeNanos(neighbour, now)).as("its own entry is the round trip").hasValue(now - sent);
    QuorumVerdict verdict = e.evaluate(now);
    assertThat(verdict.heard()).isEqualTo(40);
    assertThat(verdict.held()).isTrue();
    // Relayed evidence ages like any other: gone once the window (6 s) has passed since sent − 1.5 s, while the
    // neighbour's own round trip (from sent) still counts; it goes too at sent + 6 s.
    assertThat(e.evaluate(sent + 4_600 * MS).heard()).isEqualTo(2);
    assertThat(e.evaluate(sent + 6_100 * MS).heard()).isEqualTo(1);
  }

  @Test
  void aGroupWithSeveralNetworksHeartbeatsEveryPeerDirectlyOnEachNetworkAndIgnoresDigests() {
    QuorumEvaluator e = evaluator(40);
    String n1 = "198.18.0.0/24";
    String n2 = "198.19.0.0/24";
    e.useNetworks(List.of(n1, n2), dev.fencing.policy.Reachability.ALL);
    String neighbour = e.overlay().neighbours("m00").first();
    assertThat(e.heartbeatTargets(0)).isEqualTo(e.peers());
    Heartbeat ours = e.heartbeatFor(neighbour, n1, 1_000 * MS);
    assertThat(ours.digest()).isEmpty();
    assertThat(ours.wantsEcho()).isTrue();
    // A digest riding on a valid echo relays nothing here: only the neighbour's own round trip counts.
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 77, e.bootId(), 1_000 * MS,
        Optional.of(digest(e, neighbour, 3, e.overlay().fingerprint())), true), n1, 1_400 * MS);
    assertThat(e.evidenceAgeNanos("m17", 2_000 * MS)).isEmpty();
    assertThat(e.evidenceAgeNanos(neighbour, 2_000 * MS)).as("All: not yet confirmed on the second network")
        .isEmpty();
    Heartbeat onSecond = e.heartbeatFor(neighbour, n2, 1_500 * MS);
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 78, e.bootId(), onSecond.sendNanos(),
        Optional.empty(), true), n2, 1_600 * MS);
    assertThat(e.evidenceAgeNanos(neighbour, 2_000 * MS)).as("All: the older network's round trip")
        .hasValue(1_000 * MS);
    assertThat(e.evaluate(2_000 * MS).heard()).isEqualTo(2);
  }

  @Test
  void aDigestWithoutAValidEchoOfOurSendTimeProvesNothing() {
    QuorumEvaluator e = evaluator(40);
    String neighbour = e.overlay().neighbours("m00").first();
    e.heartbeatFor(neighbour, 1_000 * MS);
    ReachDigest d = digest(e, neighbour, 0, e.overlay().fingerprint());
    // No echo at all, an echo of another boot, and an echo of a time we never sent.
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 1, Heartbeat.NO_ECHO, 0, Optional.of(d), true), 1_100 * MS);
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 2, 12345, 1_000 * MS, Optional.of(d), true), 1_100 * MS);
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 3, e.bootId(), 1_050 * MS, Optional.of(d), true),
        1_100 * MS);
    assertThat(e.evidenceAgeNanos("m17", 1_200 * MS)).isEmpty();
    assertThat(e.evaluate(1_200 * MS).heard()).isEqualTo(1);
  }

  @Test
  void aDigestOverAnotherExpectedSetIsIgnoredButItsEchoCounts() {
    QuorumEvaluator e = evaluator(40);
    String neighbour = e.overlay().neighbours("m00").first();
    e.heartbeatFor(neighbour, 1_000 * MS);
    e.onHeartbeat(new Heartbeat("g", neighbour, OTHER_BOOT, 1, e.bootId(), 1_000 * MS,
        Optional.of(digest(e, neighbour, 0, e.overlay().fingerprint() + 1)), true), 1_100 * MS);
    assertThat(e.evidenceAgeNanos("m17", 1_200 * MS)).isEmpty();
    assertThat(e.evidenceAgeNanos(neighbour, 1_200 * MS)).hasValue(200 * MS);
  }

  @Test
  void anOlderAgentHeartbeatingEveryoneIsAnsweredInVersionOne() {
    QuorumEvaluator e = evaluator(40);
    String stranger = "m39";
    if (e.overlay().neighbours("m00").contains(stranger)) {
      stranger = "m38";
    }
    long untaggedBoot = 0x1234_5678_9ABCL | 1;
    assertThat(Heartbeat.readsDigests(untaggedBoot)).isFalse();
    e.onHeartbeat(new Heartbeat("g", stranger, untaggedBoot, 5, Heartbeat.NO_ECHO, 0), 1_000 * MS);

    assertThat(e.heartbeatTargets(1_100 * MS)).contains(stranger);
    byte[] answer = HeartbeatCodec.encode(e.heartbeatFor(stranger, 1_100 * MS));
    assertThat(answer[4]).as("version 1, the only one it reads").isEqualTo((byte) 1);
    assertThat(e.heartbeatTargets(1_100 * MS + 9_200 * MS)).as("no longer heard").doesNotContain(stranger);
  }

  @Test
  void aPeerAskingForAnEchoIsAnsweredWithoutBeingAskedBack() {
    QuorumEvaluator e = evaluator(40);
    String stranger = e.peers().stream().filter(p -> !e.overlay().neighbours("m00").contains(p)).findFirst()
        .orElseThrow();
    e.onHeartbeat(new Heartbeat("g", stranger, OTHER_BOOT, 5, Heartbeat.NO_ECHO, 0, Optional.empty(), true),
        1_000 * MS);
    assertThat(e.heartbeatTargets(1_100 * MS)).contains(stranger);
    Heartbeat answer = e.heartbeatFor(stranger, 1_100 * MS);
    assertThat(answer.wantsEcho()).isFalse();
    assertThat(answer.digest()).isEmpty();
    // Once per request: another answer would echo the same send time.
    assertThat(e.heartbeatTargets(1_900 * MS)).doesNotContain(stranger);
    e.onHeartbeat(new Heartbeat("g", stranger, OTHER_BOOT, 6, Heartbeat.NO_ECHO, 0, Optional.empty(), true),
        2_000 * MS);
    assertThat(e.heartbeatTargets(2_100 * MS)).contains(stranger);

    // An answer does not ask for one: two nodes never keep each other answering.
    QuorumEvaluator other = evaluator(40);
    other.onHeartbeat(new Heartbeat("g", stranger, OTHER_BOOT, 5, Heartbeat.NO_ECHO, 0, Optional.empty(), false),
        1_000 * MS);
    assertThat(other.heartbeatTargets(1_100 * MS)).doesNotContain(stranger);
  }

  @Test
  void unconfirmedPeersReportTheLatestDirectContactWithAnyUnconfirmedPeerInRelayedGroups() {
    QuorumEvaluator e = evaluator(40);
    String heardOneWay = "m30";
    e.onHeartbeat(new Heartbeat("g", heardOneWay, OTHER_BOOT, 5, Heartbeat.NO_ECHO, 0), 1_000 * MS);
    QuorumVerdict v = e.evaluate(3_000 * MS);
    PeerQuorumView never = v.peers().stream().filter(p -> p.name().equals("m10")).findFirst().orElseThrow();
    assertThat(never.confirmed()).isFalse();
    assertThat(never.sinceLastHeardNanos()).as("bounded by the last contact with any unconfirmed peer")
        .hasValue(2_000 * MS);
  }
}
