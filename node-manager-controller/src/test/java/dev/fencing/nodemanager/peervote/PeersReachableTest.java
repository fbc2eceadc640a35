package dev.fencing.nodemanager.peervote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.grpc.TestReports;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PeersReachableTest {

    private static final Instant NOW = Instant.parse("2026-11-23T10:00:00Z");
    private static final Set<String> FIVE = Set.of("n1", "n2", "n3", "n4", "n5");
    private static final Duration WINDOW = Duration.ofSeconds(3);

    private static ReceivedReport hearing(String self, Set<String> unheard, Duration since) {
        return new ReceivedReport(self, "g", TestReports.armedHearing(self, new java.util.TreeSet<>(FIVE), unheard,
                since).getReport(), NOW);
    }

    private static Map<String, ReceivedReport> reports(Map<String, ReceivedReport> m) {
        return new TreeMap<>(m);
    }

    @Test
    void aNodeTheControlPlaneLostButItsPeersHearIsVotedReachable() {
        // n5's own agent is not reporting (its link to the controller is gone), the four others hear it.
        Map<String, ReceivedReport> fresh = reports(Map.of("n1", hearing("n1", Set.of(), Duration.ZERO),
                "n2", hearing("n2", Set.of(), Duration.ZERO), "n3", hearing("n3", Set.of(), Duration.ZERO),
                "n4", hearing("n4", Set.of(), Duration.ZERO)));
        PeersReachable.Vote vote = PeersReachable.of("n5", FIVE, fresh, WINDOW);
        assertThat(vote).isEqualTo(new PeersReachable.Vote("True", "MajorityHears", "4 of 4 reporting peers heard n5 "
                + "within the quorum window 3s (4 other members in the group)"));
    }

    @Test
    void aNodeMostPeersHaveNotHeardWithinTheWindowIsVotedLost() {
        Map<String, ReceivedReport> fresh = reports(Map.of("n1", hearing("n1", Set.of("n5"), Duration.ofSeconds(10)),
                "n2", hearing("n2", Set.of("n5"), Duration.ofSeconds(10)),
                "n3", hearing("n3", Set.of("n5"), Duration.ofSeconds(2))));
        PeersReachable.Vote vote = PeersReachable.of("n5", FIVE, fresh, WINDOW);
        assertThat(vote.status()).isEqualTo("False");
        assertThat(vote.reason()).isEqualTo("MajorityLost");
        assertThat(vote.message()).startsWith("1 of 3 reporting peers heard n5");
    }

    @Test
    void tooFewReportsOrATieIsUnknown() {
        assertThat(PeersReachable.of("n5", FIVE, reports(Map.of("n1", hearing("n1", Set.of(), Duration.ZERO),
                "n2", hearing("n2", Set.of(), Duration.ZERO))), WINDOW).reason()).isEqualTo("TooFewReports");
        PeersReachable.Vote tie = PeersReachable.of("n5", FIVE, reports(Map.of(
                "n1", hearing("n1", Set.of(), Duration.ZERO), "n2", hearing("n2", Set.of(), Duration.ZERO),
                "n3", hearing("n3", Set.of("n5"), Duration.ofMinutes(1)),
                "n4", hearing("n4", Set.of("n5"), Duration.ofMinutes(1)))), WINDOW);
        assertThat(tie.status()).isEqualTo("Unknown");
        assertThat(tie.reason()).isEqualTo("SplitVote");
    }

    @Test
    void theNodesOwnReportAndPeersThatDoNotNameItDoNotVoteForIt() {
        ReceivedReport silentAboutN5 = new ReceivedReport("n1", "g", AgentReport.newBuilder()
                .addPeers(PeerReport.newBuilder().setName("n2").setConfirmed(true)).build(), NOW);
        Map<String, ReceivedReport> fresh = reports(Map.of("n5", hearing("n5", Set.of(), Duration.ZERO),
                "n1", silentAboutN5, "n2", hearing("n2", Set.of("n5"), Duration.ofMinutes(1)),
                "n3", hearing("n3", Set.of("n5"), Duration.ofMinutes(1))));
        PeersReachable.Vote vote = PeersReachable.of("n5", FIVE, fresh, WINDOW);
        assertThat(vote.status()).isEqualTo("False");
        assertThat(vote.message()).startsWith("0 of 3 reporting peers heard n5");
    }

    @Test
    void theConditionIsPatchedOnlyWhenItChangesAndKeepsItsTransitionTime() {
        PeersReachable.Vote up = new PeersReachable.Vote("True", "MajorityHears", "4 of 4");
        Node plain = new NodeBuilder().withNewMetadata().withName("n5").endMetadata().withNewStatus()
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
        List<Map<String, Object>> add = NodeConditionPatch.of(plain, PeersReachable.TYPE, up, NOW).orElseThrow();
        assertThat(add).extracting(op -> op.get("op") + " " + op.get("path")).containsExactly(
                "test /status/conditions/0/type", "add /status/conditions/-");
        assertThat(add.get(0)).containsEntry("value", "Ready");
        Node unreported = new NodeBuilder().withNewMetadata().withName("n6").endMetadata().build();
        assertThat(NodeConditionPatch.of(unreported, PeersReachable.TYPE, up, NOW)).as("no kubelet status yet")
                .isEmpty();

        Node voted = new NodeBuilder(plain).editStatus().addNewCondition().withType(PeersReachable.TYPE)
                .withStatus("True").withReason("MajorityHears").withMessage("4 of 4")
                .withLastTransitionTime("2026-11-23T09:00:00Z").endCondition().endStatus().build();
        assertThat(NodeConditionPatch.of(voted, PeersReachable.TYPE, up, NOW)).isEmpty();

        List<Map<String, Object>> moreVoters = NodeConditionPatch.of(voted, PeersReachable.TYPE,
                new PeersReachable.Vote("True", "MajorityHears", "3 of 4"), NOW).orElseThrow();
        assertThat(moreVoters).extracting(op -> op.get("op")).containsExactly("test", "replace");
        assertThat(moreVoters.get(1)).containsEntry("path", "/status/conditions/1");
        @SuppressWarnings("unchecked")
        Map<String, Object> value = (Map<String, Object>) moreVoters.get(1).get("value");
        assertThat(value).containsEntry("lastTransitionTime", "2026-11-23T09:00:00Z");

        List<Map<String, Object>> lost = NodeConditionPatch.of(voted, PeersReachable.TYPE,
                new PeersReachable.Vote("False", "MajorityLost", "0 of 4"), NOW).orElseThrow();
        @SuppressWarnings("unchecked")
        Map<String, Object> lostValue = (Map<String, Object>) lost.get(1).get("value");
        assertThat(lostValue).containsEntry("lastTransitionTime", "2026-11-23T10:00:00Z");
    }

    @Test
    void aTransitionIsANewStatusOrReasonOrAFirstCondition() {
        Node plain = new NodeBuilder().withNewMetadata().withName("n5").endMetadata().withNewStatus()
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
        Node voted = new NodeBuilder(plain).editStatus().addNewCondition().withType(PeersReachable.TYPE)
                .withStatus("True").withReason("MajorityHears").withMessage("4 of 4").endCondition().endStatus()
                .build();
        PeersReachable.Vote up = new PeersReachable.Vote("True", "MajorityHears", "3 of 4");
        assertThat(NodeConditionPatch.isTransition(plain, PeersReachable.TYPE, up)).isTrue();
        assertThat(NodeConditionPatch.isTransition(voted, PeersReachable.TYPE, up)).as("only the counts").isFalse();
        assertThat(NodeConditionPatch.isTransition(voted, PeersReachable.TYPE,
                new PeersReachable.Vote("False", "MajorityLost", "0 of 4"))).isTrue();
        assertThat(NodeConditionPatch.isTransition(voted, PeersReachable.TYPE,
                new PeersReachable.Vote("True", "OtherReason", "4 of 4"))).isTrue();
        assertThat(NodeConditionPatch.isTransition(voted, PeersReachable.TYPE, PeersReachable.notVoted("off")))
                .isTrue();
    }
}
