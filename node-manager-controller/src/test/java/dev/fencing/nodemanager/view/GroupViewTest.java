package dev.fencing.nodemanager.view;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.view.GroupView.NodeRow;
import dev.fencing.policy.FencingSpec;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class GroupViewTest {

    private static final java.time.Duration STALE = java.time.Duration.ofSeconds(30);
    private final Instant now = Instant.parse("2026-11-22T10:00:00Z");
    private final GroupModel model = GroupModel.from(new GroupSpecView("g", 4, FencingSpec.DEFAULTS, List.of()),
            List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3), node("d", "g", 4)), 7946);
    private final Map<String, ReceivedReport> reports = new HashMap<>();

    private void report(String node, Instant at, boolean armed, boolean quorum, int confirmed, PeerReport... peers) {
        reports.put(node, new ReceivedReport(node, "g", AgentReport.newBuilder().setArmed(armed)
                .setQuorumHeld(quorum).setConfirmed(confirmed).addAllPeers(List.of(peers)).build(), at));
    }

    private static PeerReport peer(String name, boolean confirmed, long heardSecondsAgo) {
        return PeerReport.newBuilder().setName(name).setConfirmed(confirmed)
                .setSinceLastHeard(Duration.newBuilder().setSeconds(heardSecondsAgo)).build();
    }

    private GroupView view() {
        return GroupView.of(model, n -> Optional.ofNullable(reports.get(n)), true, now, STALE);
    }

    private NodeRow row(GroupView v, String name) {
        return v.nodes().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aPartitionTwoAgainstTwoShowsEachSideConfirmingOnlyItself() {
        report("a", now, true, true, 2, peer("b", true, 1), peer("c", false, 20), peer("d", false, 20));
        report("b", now, true, true, 2, peer("a", true, 1), peer("c", false, 20), peer("d", false, 20));
        report("c", now, true, false, 2, peer("a", false, 20), peer("b", false, 20), peer("d", true, 1));
        report("d", now, false, false, 2, peer("a", false, 20), peer("b", false, 20), peer("c", true, 1));

        GroupView v = view();

        assertThat(v.members()).containsExactly("a", "b", "c", "d");
        assertThat(v.quorumSize()).isEqualTo(3);
        assertThat(v.nodes()).extracting(NodeRow::heard).containsExactly("=+--", "+=--", "--=+", "--+=");
        assertThat(row(v, "a").notConfirmed()).containsExactly("c", "d");
        assertThat(row(v, "c").notConfirmed()).containsExactly("a", "b");
        assertThat(row(v, "d").armed()).isFalse();
        assertThat(row(v, "c").quorumHeld()).isFalse();
        assertThat(row(v, "a").quorumHeld()).isTrue();
        // The group status is added by the replica that has one; everything else stays.
        assertThat(v.status()).isNull();
        dev.fencing.api.v1.NodeGroupStatus status = new dev.fencing.api.v1.NodeGroupStatus().withExpected(4);
        assertThat(v.withStatus(status)).isEqualTo(new GroupView(v.group(), v.leader(), v.generatedAt(),
                v.staleAfter(), v.quorumSize(), v.members(), v.nodes(), status, java.util.Map.of()));
        // So are the nodes the leader holds back from being counted fenced, in name order, and they stay with a
        // status added afterwards.
        GroupView held = v.withHeldBack(java.util.Map.of("d", "its last report says quorumLossAction WAIT", "c",
                "it may hold quorum"));
        assertThat(held.heldBack().keySet()).containsExactly("c", "d");
        assertThat(held.withStatus(status).heldBack()).isEqualTo(held.heldBack());
        assertThat(new io.fabric8.kubernetes.client.utils.KubernetesSerialization().asJson(held))
                .contains("\"heldBack\":{\"c\":\"it may hold quorum\",\"d\":");
    }

    @Test
    void aSilentNodeHasAnUnknownRowAndItsLastContactIsTheLatestAnyPeerHeardIt() {
        report("a", now, true, true, 3, peer("b", true, 1), peer("c", true, 1), peer("d", false, 12));
        report("b", now.minusSeconds(2), true, true, 3, peer("a", true, 1), peer("c", true, 1), peer("d", false, 9));
        report("c", now, true, true, 3, peer("a", true, 1), peer("b", true, 1));
        report("d", now.minusSeconds(60), true, true, 4);

        GroupView v = view();

        NodeRow d = row(v, "d");
        assertThat(d.reporting()).isFalse();
        assertThat(d.heard()).isEqualTo("???=");
        assertThat(d.armed()).isNull();
        assertThat(d.reportAge()).isEqualTo(60L);
        // b heard d 9 s before its report received 2 s ago: 11 s ago, later than a's 12 s and d's own 60 s.
        assertThat(d.lastContact()).isEqualTo(now.minusSeconds(11).toString());
        // c's report does not name d at all: not confirmed.
        assertThat(row(v, "c").heard()).isEqualTo("++=-");
        assertThat(row(v, "a").lastContact()).isEqualTo(now.toString());
    }

    @Test
    void aStaleReportDoesNotCountAsReportingNorAsContactEvidenceFromIt() {
        report("a", now.minusSeconds(31), true, true, 4, peer("b", true, 0));
        report("b", now.minusSeconds(40), true, true, 4);

        GroupView v = view();

        assertThat(row(v, "a").reporting()).isFalse();
        assertThat(row(v, "a").heard()).isEqualTo("=???");
        // a's stale report says it heard b 31 s ago, b's own report is 40 s old: only b's own counts.
        assertThat(row(v, "b").lastContact()).isEqualTo(now.minusSeconds(40).toString());
        assertThat(row(v, "c").lastContact()).isNull();
        assertThat(row(v, "c").reportAge()).isNull();
    }

    @Test
    void aReportServedForAnotherGroupIsIgnored() {
        reports.put("a", new ReceivedReport("a", "other", AgentReport.newBuilder().setArmed(true).build(), now));

        assertThat(row(view(), "a").reporting()).isFalse();
        assertThat(row(view(), "a").lastContact()).isNull();
    }
}
