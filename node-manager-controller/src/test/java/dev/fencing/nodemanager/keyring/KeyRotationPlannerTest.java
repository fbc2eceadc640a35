package dev.fencing.nodemanager.keyring;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyRotationPlannerTest {

    private static final Instant NOW = Instant.parse("2026-11-23T10:00:00Z");
    private static final java.time.Duration WINDOW = java.time.Duration.ofSeconds(30);
    private static final String OLD = "b2xkLWtleS1vbGQta2V5LW9sZC1rZXktb2xkLWtleS0=";
    private static final String NEW = "bmV3LWtleS1uZXcta2V5LW5ldy1rZXktbmV3LWtleS0=";

    private final Map<String, ReceivedReport> reports = new HashMap<>();

    private void report(String node, Instant at, long keyringRevision, String heardPeer, long heardSecondsAgo) {
        AgentReport.Builder r = AgentReport.newBuilder().setKeyringRevision(keyringRevision);
        if (heardPeer != null) {
            r.addPeers(PeerReport.newBuilder().setName(heardPeer)
                    .setSinceLastHeard(Duration.newBuilder().setSeconds(heardSecondsAgo)));
        }
        reports.put(node, new ReceivedReport(node, "g", r.build(), at));
    }

    private Optional<ReceivedReport> latest(String node) {
        return Optional.ofNullable(reports.get(node));
    }

    private static KeyringState idle(String completed) {
        return new KeyringState(Map.of("primary", OLD), 0, null, "", completed);
    }

    @Test
    void anAgentHeardByAFreshReportIsReachableEvenWithoutAStream() {
        report("a", NOW.minusSeconds(1), 0, "c", 2);
        assertThat(KeyRotationPlanner.reachable(List.of("a", "b", "c"), "a"::equals, this::latest, NOW, WINDOW))
                .containsExactly("a", "c");
    }

    @Test
    void anAgentNobodyHeardRecentlyIsNotReachable() {
        report("a", NOW.minusSeconds(1), 0, "c", 60);
        // A stale report that still heard c does not count either.
        report("b", NOW.minusSeconds(45), 0, "c", 1);
        assertThat(KeyRotationPlanner.reachable(List.of("a", "b", "c"), n -> false, this::latest, NOW, WINDOW))
                .isEmpty();
    }

    @Test
    void aDepartedNodeIsNeverReachableEvenWhenHeard() {
        report("a", NOW, 0, "gone", 1);
        assertThat(KeyRotationPlanner.reachable(List.of("a"), "gone"::equals, this::latest, NOW, WINDOW)).isEmpty();
    }

    @Test
    void waitingListsReachableAgentsBehindTheRevision() {
        report("a", NOW, 3, null, 0);
        report("b", NOW, 2, null, 0);
        assertThat(KeyRotationPlanner.waitingFor(Set.of("a", "b", "c"), this::latest, 3)).containsExactly("b", "c");
    }

    /**
     * A controller that just started (or a new leader) holds no reports: a running phase must wait for the group, not
     * read "nobody is reachable" as "nobody needs to catch up" and write the remaining phases at once.
     */
    @Test
    void withFewerThanAQuorumReachableAPhaseWaitsForEveryoneUnheard() {
        List<String> five = List.of("a", "b", "c", "d", "e");
        assertThat(KeyRotationPlanner.awaited(five, Set.of(), this::latest, 2, 3))
                .containsExactly("a", "b", "c", "d", "e");
        report("a", NOW, 2, null, 0);
        report("b", NOW, 2, null, 0);
        assertThat(KeyRotationPlanner.awaited(five, Set.of("a", "b"), this::latest, 2, 3))
                .containsExactly("c", "d", "e");
        // A quorum reachable (c heard by a, say), all on the revision: the phase may complete; d and e, unheard,
        // get the keyring in their full config when they come back.
        report("c", NOW, 2, null, 0);
        assertThat(KeyRotationPlanner.awaited(five, Set.of("a", "b", "c"), this::latest, 2, 3)).isEmpty();
        // Plan with nobody awaited writes the next phase; the restart case no longer gets there.
        KeyringState phase1 = new KeyringState(Map.of("primary", OLD, KeyRotationPlanner.NEXT_KEY, NEW), 2,
                KeyRotationPhase.INSTALL_SECONDARY, "r1", "");
        assertThat(KeyRotationPlanner.plan("g", "r1", phase1, KeyRotationPlanner.awaited(five, Set.of(),
                this::latest, 2, 3), () -> NEW).write()).isEmpty();
    }

    @Test
    void aNewRequestStartsPhaseOneWithTheNewKeyAsSecondary() {
        KeyRotationPlanner.Plan plan = KeyRotationPlanner.plan("g", "r1", idle(""), Set.of(), () -> NEW);
        KeyringState next = plan.write().orElseThrow();
        assertThat(next.data()).containsEntry("primary", OLD).containsEntry(KeyRotationPlanner.NEXT_KEY, NEW);
        assertThat(next.revision()).isEqualTo(1);
        assertThat(next.phase()).isEqualTo(KeyRotationPhase.INSTALL_SECONDARY);
        assertThat(plan.condition().orElseThrow().reason()).isEqualTo("Phase1InstallSecondary");
        assertThat(plan.event().orElseThrow().reason()).isEqualTo("GossipKeyPhase1InstallSecondary");
    }

    @Test
    void aCompletedRequestDoesNotRotateAgain() {
        KeyRotationPlanner.Plan plan = KeyRotationPlanner.plan("g", "r1", idle("r1"), Set.of(), () -> NEW);
        assertThat(plan.write()).isEmpty();
        assertThat(plan.event()).isEmpty();
        assertThat(plan.condition().orElseThrow().reason()).isEqualTo("Completed");
    }

    @Test
    void aPhaseWaitsForEveryReachableAgentAndNamesThem() {
        KeyringState phase1 = new KeyringState(Map.of("primary", OLD, KeyRotationPlanner.NEXT_KEY, NEW), 1,
                KeyRotationPhase.INSTALL_SECONDARY, "r1", "");
        KeyRotationPlanner.Plan plan = KeyRotationPlanner.plan("g", "r1", phase1, Set.of("node-x", "node-y"),
                () -> NEW);
        assertThat(plan.write()).isEmpty();
        assertThat(plan.condition().orElseThrow().message()).contains("WaitingFor: node-x,node-y");
    }

    @Test
    void threePhasesSwapThePrimaryThenDropTheOldKeyThenComplete() {
        KeyringState s = KeyRotationPlanner.plan("g", "r1", idle(""), Set.of(), () -> NEW).write().orElseThrow();

        KeyRotationPlanner.Plan p2 = KeyRotationPlanner.plan("g", "r1", s, Set.of(), () -> "unused");
        s = p2.write().orElseThrow();
        assertThat(s.phase()).isEqualTo(KeyRotationPhase.USE_NEW_PRIMARY);
        assertThat(s.revision()).isEqualTo(2);
        assertThat(s.data()).containsOnly(Map.entry("primary", NEW), Map.entry(KeyRotationPlanner.PREVIOUS_KEY, OLD));

        KeyRotationPlanner.Plan p3 = KeyRotationPlanner.plan("g", "r1", s, Set.of(), () -> "unused");
        s = p3.write().orElseThrow();
        assertThat(s.phase()).isEqualTo(KeyRotationPhase.REMOVE_OLD);
        assertThat(s.revision()).isEqualTo(3);
        assertThat(s.data()).containsOnly(Map.entry("primary", NEW));
        assertThat(p3.event().orElseThrow().reason()).isEqualTo("GossipKeyPhase3RemoveOld");

        KeyRotationPlanner.Plan done = KeyRotationPlanner.plan("g", "r1", s, Set.of(), () -> "unused");
        s = done.write().orElseThrow();
        assertThat(s.phase()).isNull();
        assertThat(s.revision()).isEqualTo(3);
        assertThat(s.completedRequest()).isEqualTo("r1");
        assertThat(done.condition().orElseThrow().status()).isEqualTo("True");
        assertThat(done.event().orElseThrow().reason()).isEqualTo("GossipKeyRotationCompleted");
    }

    @Test
    void theStateSurvivesARoundTripThroughSecretAnnotations() {
        KeyringState s = new KeyringState(Map.of("primary", NEW), 7, KeyRotationPhase.USE_NEW_PRIMARY, "r2", "r1");
        Map<String, String> annotations = new HashMap<>();
        s.annotations().forEach((k, v) -> {
            if (v != null) {
                annotations.put(k, v);
            }
        });
        assertThat(KeyringState.of(s.data(), annotations)).isEqualTo(s);
    }

    @Test
    void aNewRequestDuringARotationWaitsForItToFinish() {
        KeyringState phase2 = new KeyringState(Map.of("primary", NEW, KeyRotationPlanner.PREVIOUS_KEY, OLD), 2,
                KeyRotationPhase.USE_NEW_PRIMARY, "r1", "");
        KeyRotationPlanner.Plan plan = KeyRotationPlanner.plan("g", "r2", phase2, Set.of(), () -> "unused");
        assertThat(plan.write().orElseThrow().request()).isEqualTo("r1");
        assertThat(plan.condition().orElseThrow().message()).contains("request r2 starts after this one");
    }
}
