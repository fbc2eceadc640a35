package dev.fencing.nodemanager.status;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.stream.ServedMemberSets;
import dev.fencing.policy.MemberSetDigest;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.proto.fencing.v1.DisarmReason;
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
import java.util.Set;
import org.junit.jupiter.api.Test;

class GroupStatusCalculatorTest {

    private static final Duration STALE = Duration.ofSeconds(30);
    private final Instant now = Instant.parse("2026-11-22T10:00:00Z");
    private final GroupModel model = GroupModel.from(new GroupSpecView("g", 4, FencingSpec.DEFAULTS, List.of()),
            List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3)), 7946);
    private final Map<String, ReceivedReport> reports = new HashMap<>();
    // The member sets this replica served: {a, b, c} for the last hour unless a test says otherwise.
    private final ServedMemberSets served = new ServedMemberSets();

    {
        served.record(Set.of("a", "b", "c"), now.minus(Duration.ofHours(1)));
    }
    // Kubernetes' view: every node Ready with a fresh kubelet Lease unless a test says otherwise.
    private final Map<String, NodeFacts> facts = new HashMap<>(Map.of("a", new NodeFacts(false, true, now),
            "b", new NodeFacts(false, true, now), "c", new NodeFacts(false, true, now)));
    private final Map<String, Map<String, String>> labels = new HashMap<>(Map.of(
            "a", Map.of(NodeLabels.GROUP, "g"), "b", Map.of(NodeLabels.GROUP, "g"), "c", Map.of(NodeLabels.GROUP, "g")));

    private void report(String node, Instant at, AgentReport.Builder r) {
        reports.put(node, new ReceivedReport(node, "g", r.setMode(FencingMode.FENCING_MODE_WATCHDOG).build(), at));
    }

    private StatusOutcome calc(NodeGroupStatus previous, Instant at) {
        return calc(model, previous, at);
    }

    private StatusOutcome calc(GroupModel m, NodeGroupStatus previous, Instant at) {
        return GroupStatusCalculator.calculate(m, previous, n -> Optional.ofNullable(reports.get(n)), labels, facts,
                at, STALE, served);
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
        StatusOutcome o = GroupStatusCalculator.calculate(invalid, null, n -> Optional.empty(), labels, facts, now,
                STALE, served);
        Condition ready = cond(o, "Ready");
        assertThat(ready.getStatus()).isEqualTo("False");
        assertThat(ready.getReason()).isEqualTo("InvalidSpec");
        assertThat(ready.getMessage()).startsWith("spec.fencing.quorum.size: ");
        // A Warning Event says it too (where the NodeGroup keeps no status of ours it is the only sign), once.
        assertThat(o.events()).filteredOn(e -> e.reason().equals("InvalidSpec")).singleElement()
                .satisfies(e -> {
                    assertThat(e.type()).isEqualTo("Warning");
                    assertThat(e.onNode()).isFalse();
                    assertThat(e.name()).isEqualTo("g");
                    assertThat(e.message()).isEqualTo(ready.getMessage());
                });
        StatusOutcome again = GroupStatusCalculator.calculate(invalid, o.status(), n -> Optional.empty(), labels,
                facts, now.plusSeconds(10), STALE, served);
        assertThat(again.events()).extracting(GroupEvent::reason).doesNotContain("InvalidSpec");
    }

    @Test
    void anArmedNodeUnheardByTheMajorityIsRecordedFencedOnlyAfterTheSafeDelay() {
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        Duration delay = model.safeToAssumeFencedDelay();
        kubernetesSeesCGone(delay);
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

    /**
     * c was cut off before a shorter watchdog timeout reached it: its last report says its device runs 50 s longer
     * than the policy now says, and it is recorded fenced only once that longer timer has run out.
     */
    @Test
    void aNodeWhoseDeviceRunsALongerTimeoutThanThePolicyIsRecordedFencedOnlyAfterIt() {
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        Duration delay = model.safeToAssumeFencedDelay();
        Duration policy = model.policy().timings().watchdogTimeout();
        Duration longer = Duration.ofSeconds(50);
        kubernetesSeesCGone(delay.plus(longer));
        report("c", now.minus(delay).minus(longer).minusSeconds(60), AgentReport.newBuilder().setArmed(true)
                .setQuorumHeld(true).setWatchdogTimeout(com.google.protobuf.Duration.newBuilder()
                        .setSeconds(policy.plus(longer).getSeconds())));

        reportUnheard("a", delay.plusSeconds(1));
        reportUnheard("b", delay.plusSeconds(1));
        assertThat(calc(null, now).status().getFencedNodes()).as("the policy's delay has passed, c's has not")
                .isNull();

        reportUnheard("a", delay.plus(longer));
        reportUnheard("b", delay.plus(longer).plusSeconds(1));
        List<FencedNode> entries = calc(null, now).status().getFencedNodes();
        assertThat(entries).extracting(FencedNode::getName).containsExactly("c");
        assertThat(entries.get(0).getFencedAt()).isEqualTo(now.toString());
    }

    @Test
    void aReportedTimeoutShorterThanThePolicysChangesNothing() {
        Duration policy = model.policy().timings().watchdogTimeout();
        ReceivedReport shorter = new ReceivedReport("c", "g", AgentReport.newBuilder().setWatchdogTimeout(
                com.google.protobuf.Duration.newBuilder().setSeconds(1)).build(), now);
        ReceivedReport same = new ReceivedReport("c", "g", AgentReport.newBuilder().setWatchdogTimeout(
                com.google.protobuf.Duration.newBuilder().setSeconds(policy.getSeconds())).build(), now);
        assertThat(GroupStatusCalculator.longerWatchdog(model, shorter)).isZero();
        assertThat(GroupStatusCalculator.longerWatchdog(model, same)).isZero();
        assertThat(GroupStatusCalculator.longerWatchdog(model, null)).isZero();
    }

    // c's Node is NotReady and its kubelet last renewed its Lease well before the delay.
    private void kubernetesSeesCGone(Duration delay) {
        facts.put("c", new NodeFacts(false, false, now.minus(delay).minusSeconds(60)));
    }

    // c armed, then silent for longer than the safe delay, as a and b (the majority) report it.
    private Duration cArmedThenUnheardPastTheDelay(GroupModel m) {
        Duration delay = m.safeToAssumeFencedDelay();
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        return delay;
    }

    @Test
    void excludeAndWaitGroupsNeverRecordAFencedNode() {
        for (QuorumLossAction action : List.of(QuorumLossAction.EXCLUDE, QuorumLossAction.WAIT)) {
            GroupModel m = GroupModel.from(new GroupSpecView("g", 4, FencingSpec.DEFAULTS
                    .withQuorumLossAction(action), List.of()), List.of(node("a", "g", 1), node("b", "g", 2),
                    node("c", "g", 3)), 7946);
            kubernetesSeesCGone(cArmedThenUnheardPastTheDelay(m));
            StatusOutcome o = calc(m, null, now);
            assertThat(o.status().getFencedNodes()).as(action.crdValue()).isNull();
            assertThat(o.events()).extracting(GroupEvent::reason).doesNotContain("NodeFenced");
        }
        // The same facts under Fence do record c: only the policy differs.
        assertThat(calc(null, now).status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
    }

    @Test
    void aCleanStopIsNeverRecordedFencedAndItsLabelGoesEvenIfTheNodeThenGoesAway() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        kubernetesSeesCGone(delay);
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(false).setFinalReport(true)
                .addDisarmReasons(DisarmReason.newBuilder().setKind(DisarmReason.Kind.KIND_SHUTTING_DOWN)));
        StatusOutcome o = calc(null, now);
        assertThat(o.status().getFencedNodes()).isNull();
        assertThat(o.labelChanges().get("c")).containsEntry(NodeLabels.FENCING_ENABLED, null);
        assertThat(o.events()).filteredOn(e -> e.reason().equals("Disarmed")).extracting(GroupEvent::message)
                .containsExactly("fencing agent stopped cleanly (final report) (shutting_down)");
    }

    @Test
    void aFinalReportWhileAlreadyStarvingStillCountsAsFencing() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        kubernetesSeesCGone(delay);
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setFinalReport(true)
                .setFencingInProgress(true));
        StatusOutcome o = calc(null, now);
        assertThat(o.status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
        assertThat(o.labelChanges().getOrDefault("c", Map.of())).doesNotContainKey(NodeLabels.FENCING_ENABLED);
    }

    /** A stop whose disarm did not happen (the quorum thread stuck past the shutdown wait) left the device running. */
    @Test
    void aFinalReportThatStillSaysArmedIsNoCleanStop() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        kubernetesSeesCGone(delay);
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setFinalReport(true));
        StatusOutcome o = calc(null, now);
        assertThat(o.status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
        assertThat(o.labelChanges().getOrDefault("c", Map.of())).doesNotContainKey(NodeLabels.FENCING_ENABLED);
    }

    @Test
    void theLatestReportDecidesOverAStaleArmedLabel() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        kubernetesSeesCGone(delay);
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(false)
                .addDisarmReasons(DisarmReason.newBuilder().setKind(DisarmReason.Kind.KIND_MAINTENANCE)));
        assertThat(calc(null, now).status().getFencedNodes()).isNull();
    }

    @Test
    void withoutAnyReportTheArmedLabelStandsInAndKubernetesMustStillAgree() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        reports.remove("c");
        assertThat(calc(null, now).status().getFencedNodes()).as("Node still Ready").isNull();
        kubernetesSeesCGone(delay);
        assertThat(calc(null, now).status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
        labels.put("c", Map.of(NodeLabels.GROUP, "g"));
        assertThat(calc(null, now).status().getFencedNodes()).as("no label, no report").isNull();
    }

    @Test
    void aNodeKubernetesStillSeesReadyIsNeverRecordedFenced() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        facts.put("c", new NodeFacts(false, true, now.minus(delay).minusSeconds(60)));
        assertThat(calc(null, now).status().getFencedNodes()).isNull();
    }

    @Test
    void aNodeWhoseKubeletRenewedItsLeaseWithinTheDelayIsNeverRecordedFenced() {
        Duration delay = cArmedThenUnheardPastTheDelay(model);
        facts.put("c", new NodeFacts(false, false, now.minus(delay).plusMillis(1)));
        assertThat(calc(null, now).status().getFencedNodes()).isNull();
        facts.put("c", new NodeFacts(false, false, now.minus(delay)));
        StatusOutcome fenced = calc(null, now);
        assertThat(fenced.status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
        // fencedAt counts from the later of lastContact and the last Lease renewal.
        assertThat(fenced.status().getFencedNodes().get(0).getFencedAt()).isEqualTo(now.toString());
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

    // ---- a silent node may still run a config the group has moved on from (ARCHITECTURE §7) ----

    // c armed, silent past the delay, its last report counting quorum over `set` with Fence; Kubernetes sees it gone.
    private Duration cLastReportedOn(GroupModel m, Set<String> set) {
        Duration delay = m.safeToAssumeFencedDelay();
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setQuorumLossAction(dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_FENCE)
                .setExpectedDigest(MemberSetDigest.of(set)));
        kubernetesSeesCGone(delay);
        return delay;
    }

    private GroupModel fiveMembers() {
        for (String n : List.of("d", "e")) {
            facts.put(n, new NodeFacts(false, true, now));
            labels.put(n, Map.of(NodeLabels.GROUP, "g"));
        }
        return GroupModel.from(new GroupSpecView("g", 5, FencingSpec.DEFAULTS, List.of()), List.of(node("a", "g", 1),
                node("b", "g", 2), node("c", "g", 3), node("d", "g", 4), node("e", "g", 5)), 7946);
    }

    /**
     * {a, c} were cut off from b and the control plane; meanwhile d and e joined. b, d and e hold 3 of 5, but c, whose
     * last report counts quorum over {a, b, c}, may be holding 2 of 3 with a: it is not counted as fenced until a
     * member of {a, b, c} besides b reports not hearing it too.
     */
    @Test
    void aNodeCutOffBeforeTheGroupGrewIsNotRecordedFencedWhileItMayHoldItsOldMajority() {
        GroupModel grown = fiveMembers();
        served.record(Set.of("a", "b", "c", "d", "e"), now.minus(Duration.ofMinutes(10)));
        Duration delay = cLastReportedOn(grown, Set.of("a", "b", "c"));
        for (String n : List.of("b", "d", "e")) {
            reportUnheard(n, delay.plusSeconds(30));
        }
        StatusOutcome held = calc(grown, null, now);
        assertThat(held.status().getFencedNodes()).as("c may hold 2 of {a, b, c} with a").isNull();
        assertThat(held.heldBack()).containsOnlyKeys("c");
        assertThat(held.heldBack().get("c")).isEqualTo("it may hold quorum over the member set a, b, c it may still"
                + " run: only 1 of its 3 report not hearing it");

        // a reports from the majority side, not hearing c either: c is left with 1 of 3.
        reportUnheard("a", delay.plusSeconds(30));
        assertThat(calc(grown, null, now).status().getFencedNodes()).extracting(FencedNode::getName)
                .containsExactly("c");
    }

    /**
     * d and e were removed while c was cut off with them: c's last report counts quorum over {a, b, c, d, e}, and a
     * and b alone are not more than half of that set.
     */
    @Test
    void aNodeCutOffBeforeTheGroupShrankIsNotRecordedFencedWhileItMayHoldItsOldMajority() {
        served.record(Set.of("a", "b", "c", "d", "e"), now.minus(Duration.ofMinutes(50)));
        served.record(Set.of("a", "b", "c"), now.minus(Duration.ofMinutes(10)));
        Duration delay = cLastReportedOn(model, Set.of("a", "b", "c", "d", "e"));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        assertThat(calc(null, now).status().getFencedNodes()).as("c may hold 3 of 5 with d and e").isNull();

        // The same facts, c last reported on the current set: recorded.
        cLastReportedOn(model, Set.of("a", "b", "c"));
        assertThat(calc(null, now).status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
    }

    @Test
    void aNodeLastReportedOnASetThisReplicaNeverServedIsNotRecordedFenced() {
        Duration delay = cLastReportedOn(model, Set.of("a", "b", "c", "x"));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        StatusOutcome held = calc(null, now);
        assertThat(held.status().getFencedNodes()).as("unknown set").isNull();
        assertThat(held.heldBack().get("c")).startsWith("its last report counts quorum over a member set this replica"
                + " never served (expected_digest " + MemberSetDigest.of(Set.of("a", "b", "c", "x")) + ")");

        // An agent from before expected_digest existed: the current set is all there is to go on, as before.
        report("c", now.minus(delay).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true));
        assertThat(calc(null, now).status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
    }

    /** A set served after c's last report may have reached c before its stream ended: c may hold 3 of 5 on it. */
    @Test
    void aSetServedAfterTheNodesLastReportCountsToo() {
        Duration delay = model.safeToAssumeFencedDelay();
        Instant lastReport = now.minus(delay).minusSeconds(60);
        served.record(Set.of("a", "b", "c", "d", "e"), lastReport.plusSeconds(5));
        served.record(Set.of("a", "b", "c"), lastReport.plusSeconds(20));
        cLastReportedOn(model, Set.of("a", "b", "c"));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        assertThat(calc(null, now).status().getFencedNodes()).isNull();

        // Served and replaced long before c's last report: c cannot be running it.
        ServedMemberSets older = new ServedMemberSets();
        older.record(Set.of("a", "b", "c", "d", "e"), lastReport.minus(Duration.ofMinutes(30)));
        older.record(Set.of("a", "b", "c"), lastReport.minus(Duration.ofMinutes(20)));
        assertThat(GroupStatusCalculator.calculate(model, null, n -> Optional.ofNullable(reports.get(n)), labels,
                facts, now, STALE, older).status().getFencedNodes()).extracting(FencedNode::getName)
                .containsExactly("c");
    }

    /** Once c is recorded, a set served afterwards (d and e joining, not reporting yet) cannot have reached it. */
    @Test
    void aRecordedNodeStaysRecordedWhenTheGroupChangesAfterwards() {
        Duration delay = cLastReportedOn(model, Set.of("a", "b", "c"));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        StatusOutcome recorded = calc(null, now);
        assertThat(recorded.status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");

        served.record(Set.of("a", "b", "c", "d", "e"), now.plusSeconds(1));
        assertThat(calc(null, now.plusSeconds(2)).heldBack()).as("not recorded before: held back").containsKey("c");
        StatusOutcome after = calc(recorded.status(), now.plusSeconds(2));
        assertThat(after.status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
        assertThat(after.events()).extracting(GroupEvent::reason).doesNotContain("NodeFenced");
    }

    /** The group switched from Wait to Fence while c was cut off: c never learned it and keeps running. */
    @Test
    void aNodeWhoseLastReportSaysWaitOrExcludeIsNotRecordedFencedAfterTheGroupSwitchedToFence() {
        for (var action : List.of(dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_WAIT,
                dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_EXCLUDE)) {
            Duration delay = cLastReportedOn(model, Set.of("a", "b", "c"));
            reports.put("c", new ReceivedReport("c", "g", reports.get("c").report().toBuilder()
                    .setQuorumLossAction(action).build(), reports.get("c").receivedAt()));
            reportUnheard("a", delay.plusSeconds(30));
            reportUnheard("b", delay.plusSeconds(30));
            StatusOutcome held = calc(null, now);
            assertThat(held.status().getFencedNodes()).as(action.name()).isNull();
            assertThat(held.heldBack().get("c")).contains("quorumLossAction "
                    + action.name().replace("QUORUM_LOSS_ACTION_", ""));
        }
    }

    /** The group's timings were shortened while c was cut off: c stops feeding by its own, longer delay. */
    @Test
    void aNodeThatReportedALongerDelayIsRecordedFencedOnlyAfterIt() {
        Duration delay = model.safeToAssumeFencedDelay();
        Duration longer = delay.plusSeconds(100);
        labels.put("c", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, ""));
        kubernetesSeesCGone(longer);
        report("c", now.minus(longer).minusSeconds(60), AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setSafeToAssumeFencedDelay(com.google.protobuf.Duration.newBuilder().setSeconds(longer.getSeconds())
                        .setNanos(longer.getNano())));
        reportUnheard("a", delay.plusSeconds(30));
        reportUnheard("b", delay.plusSeconds(30));
        assertThat(calc(null, now).status().getFencedNodes()).as("the policy's delay has passed, c's has not")
                .isNull();

        reportUnheard("a", longer);
        reportUnheard("b", longer.plusSeconds(1));
        assertThat(calc(null, now).status().getFencedNodes()).extracting(FencedNode::getName).containsExactly("c");
    }

    @Test
    void fencingOffRemovesTheFencingLabels() {
        GroupModel off = GroupModel.from(new GroupSpecView("g", 5, null, List.of()), List.of(node("a", "g", 1)),
                7946);
        labels.put("a", Map.of(NodeLabels.GROUP, "g", NodeLabels.FENCING_ENABLED, "",
                NodeLabels.FENCING_MODE, "Watchdog"));
        StatusOutcome o = GroupStatusCalculator.calculate(off, null, n -> Optional.empty(), labels, facts, now, STALE,
                served);
        Map<String, String> expectedRemoval = new HashMap<>();
        expectedRemoval.put(NodeLabels.FENCING_ENABLED, null);
        expectedRemoval.put(NodeLabels.FENCING_MODE, null);
        assertThat(o.labelChanges()).containsEntry("a", expectedRemoval);
        assertThat(cond(o, "Ready").getReason()).isEqualTo("FencingDisabled");
    }
}
