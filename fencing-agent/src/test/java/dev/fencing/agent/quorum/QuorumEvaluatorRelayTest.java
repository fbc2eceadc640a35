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
