package dev.fencing.nodemanager.status;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.policy.FencingSpec;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class GroupStatusCalculatorTest {

    private static final Duration STALE = Duration.ofSeconds(30);
    private final Instant now = Instant.parse("2026-11-22T10:00:00Z");
    private final GroupModel model = GroupModel.from(new GroupSpecView("g", 4, FencingSpec.DEFAULTS, List.of()),
            List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3)), 7946);
    private final Map<String, ReceivedReport> reports = new HashMap<>();
    private final Map<String, Map<String, String>> labels = new HashMap<>(Map.of(
            "a", Map.of(NodeLabels.GROUP, "g"), "b", Map.of(NodeLabels.GROUP, "g"), "c", Map.of(NodeLabels.GROUP, "g")));

    private void report(String node, Instant at, AgentReport.Builder r) {
        reports.put(node, new ReceivedReport(node, "g", r.setMode(FencingMode.FENCING_MODE_WATCHDOG).build(), at));
    }

    private StatusOutcome calc(NodeGroupStatus previous, Instant at) {
        return GroupStatusCalculator.calculate(model, previous, n -> Optional.ofNullable(reports.get(n)), labels, at,
                STALE);
    }

    private static Condition cond(StatusOutcome o, String type) {
        return o.status().getConditions().stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow();
    }

    @Test
    void allArmedAndHoldingQuorumIsReadyAndHealthyAndLabelsEveryNode() {
        for (String n : List.of("a", "b", "c")) {
            report(n, now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(3));
        }
        StatusOutcome o = calc(null, now);
        assertThat(o.status().getExpected()).isEqualTo(3);
        assertThat(o.status().getArmed()).isEqualTo(3);
        assertThat(o.status().getHeard()).isEqualTo(3);
        assertThat(o.status().getQuorumSize()).isEqualTo(2);
        assertThat(o.status().getObservedGeneration()).isEqualTo(4);
        assertThat(o.status().getTimings().getSafeToAssumeFencedDelay()).isNotBlank();
        assertThat(cond(o, "Ready").getStatus()).isEqualTo("True");
        assertThat(cond(o, "QuorumHealthy").getStatus()).isEqualTo("True");
        assertThat(o.labelChanges()).containsOnlyKeys("a", "b", "c");
        assertThat(o.labelChanges().get("a")).containsEntry(NodeLabels.FENCING_ENABLED, "")
                .containsEntry(NodeLabels.FENCING_MODE, "Watchdog");
        assertThat(o.events()).extracting(GroupEvent::reason).containsOnly("Armed");
    }

    @Test
    void aSilentAgentMakesReadyFalseNamingItButKeepsItsArmedLabel() {
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        report("a", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(2));
        report("b", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(2));
        report("c", now.minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true));
        StatusOutcome o = calc(null, now);
        Condition ready = cond(o, "Ready");
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("AgentsNotReporting");
        assertThat(ready.getMessage()).contains("1 of 3").contains(": c;").contains("fencing-agent-g");
        assertThat(o.labelChanges().getOrDefault("c", Map.of())).doesNotContainKey(NodeLabels.FENCING_ENABLED);
        assertThat(cond(o, "QuorumHealthy").getMessage()).contains("silent: c");
    }

    @Test
    void quorumLossIsAFalseConditionWithAnEventOnlyOnTheTransition() {
        for (String n : List.of("a", "b", "c")) {
            report(n, now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(3));
        }
        NodeGroupStatus healthy = calc(null, now).status();
        report("a", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(false).setConfirmed(1));
        report("b", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(false).setConfirmed(1));

        StatusOutcome lost = calc(healthy, now.plusSeconds(1));
        Condition q = cond(lost, "QuorumHealthy");
        assertThat(q.getStatus()).isEqualTo("False");
        assertThat(q.getMessage()).isEqualTo("only 1 of 3 members report quorum held, 2 needed; without quorum: a, b;"
                + " silent: none");
        assertThat(q.getLastTransitionTime()).isEqualTo(now.plusSeconds(1).toString());
        assertThat(lost.events()).extracting(GroupEvent::reason).contains("QuorumLost");
        assertThat(calc(lost.status(), now.plusSeconds(2)).events()).extracting(GroupEvent::reason)
                .doesNotContain("QuorumLost");
    }

    @Test
    void tooFewReportsToJudgeIsUnknownNotALoss() {
        report("a", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(3));
        Condition q = cond(calc(null, now), "QuorumHealthy");
        assertThat(q.getStatus()).isEqualTo("Unknown");
        assertThat(q.getReason()).isEqualTo("AwaitingReports");
        assertThat(q.getMessage()).contains("1 of 3").contains("silent: b, c");

        report("b", now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(false).setConfirmed(1));
        assertThat(cond(calc(null, now), "QuorumHealthy").getStatus()).isEqualTo("False");
    }

    @Test
    void anInvalidSpecIsReadyFalseWithEveryViolation() {
        GroupModel invalid = GroupModel.from(new GroupSpecView("g", 2, FencingSpec.DEFAULTS.withQuorumSize(9),
                List.of()), List.of(node("a", "g", 1)), 7946);
        StatusOutcome o = GroupStatusCalculator.calculate(invalid, null, n -> Optional.empty(), labels, now, STALE);
        Condition ready = cond(o, "Ready");
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).startsWith("spec.fencing.quorum.size: ");
    }

    @Test
    void anArmedNodeUnheardByTheMajorityIsRecordedFencedOnlyAfterTheSafeDelay() {
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        Duration delay = model.safeToAssumeFencedDelay();
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true));

        // lastContact(c) = receive time of a's and b's reports minus what they say; fenced from lastContact + delay.
        reportUnheard("a", delay.minusMillis(1));
        reportUnheard("b", delay.minusMillis(2));
        assertThat(calc(null, now).status().getFencedNodes()).isNull();

        reportUnheard("a", delay);
        reportUnheard("b", delay.plusSeconds(1));
        StatusOutcome fenced = calc(null, now);
        List<FencedNode> entries = fenced.status().getFencedNodes();
        assertThat(entries).extracting(FencedNode::getName).containsExactly("c");
        assertThat(entries.get(0).getFencedAt()).isEqualTo(now.toString());
        assertThat(fenced.events()).extracting(GroupEvent::reason).contains("NodeFenced");
        // Recorded once: with the entry in the previous status, no second event.
        assertThat(calc(fenced.status(), now.plusSeconds(1)).events()).extracting(GroupEvent::reason)
                .doesNotContain("NodeFenced");
    }

    private void reportUnheard(String reporter, Duration sinceLastHeardC) {
        report(reporter, now, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(2)
                .addPeers(PeerReport.newBuilder().setName("c").setConfirmed(false)
                        .setSinceLastHeard(com.google.protobuf.Duration.newBuilder()
                                .setSeconds(sinceLastHeardC.getSeconds()).setNanos(sinceLastHeardC.getNano()))));
    }

    @Test
    void aNodeAnyMajorityMemberStillConfirmsIsNeverRecordedFenced() {
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        Instant later = now.plus(Duration.ofHours(1));
        report("a", later, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(3)
                .addPeers(PeerReport.newBuilder().setName("c").setConfirmed(true)));
        report("b", later, AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(2)
                .addPeers(PeerReport.newBuilder().setName("c").setConfirmed(false)
                        .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(3000))));
        assertThat(calc(null, later).status().getFencedNodes()).isNull();
    }

    @Test
    void fencingOffRemovesTheFencingLabels() {
        GroupModel off = GroupModel.from(new GroupSpecView("g", 5, null, List.of()), List.of(node("a", "g", 1)),
                7946);
        labels.put("a", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, "",
                NodeLabels.FENCING_MODE, "Watchdog"));
        StatusOutcome o = GroupStatusCalculator.calculate(off, null, n -> Optional.empty(), labels, now, STALE);
        Map<String, String> expectedRemoval = new HashMap<>();
        expectedRemoval.put(NodeLabels.FENCING_ENABLED, null);
        expectedRemoval.put(NodeLabels.FENCING_MODE, null);
        assertThat(o.labelChanges()).containsEntry("a", expectedRemoval);
        assertThat(cond(o, "Ready").getReason()).isEqualTo("FencingDisabled");
    }
}
