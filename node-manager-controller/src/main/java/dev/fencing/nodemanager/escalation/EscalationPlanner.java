package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.Durations;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.KdumpSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.fencing.v1alpha1.NodeFencingStatus;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The escalation's state machine, pure: from a NodeFencing record (its status is the only state, so any replica
 * continues where another stopped), its config and what is known about the node, the next step; and the status after
 * a stage ran. Stages run in order; a failed stage moves to the next unless it must succeed; a confirmed power-off is
 * followed by the out-of-service taint; the recovery stage runs when the record is annotated
 * {@link NodeFencing#RECOVER_ANNOTATION}; a Failed record annotated {@link NodeFencing#POWERED_OFF_ANNOTATION} (the
 * operator powered the node off by hand) becomes Fenced; a deleted record runs no further stage; a record closes
 * when the node is back.
 */
public final class EscalationPlanner {

    /** Attempts of the recovery stage per record. */
    static final int RECOVERY_ATTEMPTS = 3;
    /**
     * A dump counts as finished once the node sent no fence_kdump message for this long: three of
     * {@code fence_kdump_send}'s default 10 s intervals.
     */
    static final Duration KDUMP_GAP = Duration.ofSeconds(30);
    /** {@code lastKdumpAt} is written again only when it advanced this much (not at every message). */
    static final Duration KDUMP_WRITE_STEP = Duration.ofSeconds(10);
    /** Added to a stage's own bound before another replica takes a Running stage over. */
    static final Duration TAKEOVER_MARGIN = Duration.ofSeconds(30);
    /** Longest part of the {@link NodeFencing#POWERED_OFF_ANNOTATION} value kept in the record's condition. */
    static final int CONFIRMED_BY_MAX = 256;

    private EscalationPlanner() {
    }

    /**
     * What is known about the node, from the caches.
     *
     * @param tainted   the node carries our out-of-service taint
     * @param exists    the Node object exists
     * @param returned  the node is back: Node Ready and its agent reporting
     * @param lastKdump the last fence_kdump message from one of the node's addresses, or null
     * @param recordedFenced its group records it fenced (safe-to-assume-fenced held: its own watchdog reset it)
     */
    public record NodeState(boolean tainted, boolean exists, boolean returned, Instant lastKdump,
                            boolean recordedFenced) {
    }

    /**
     * The next step for {@code record}.
     *
     * @param running  this replica runs a stage for the node right now
     * @param identity this replica
     */
    public static EscalationStep next(NodeFencing record, NodeFencingConfigSpec config, NodeState node,
                                      boolean running, String identity, Instant now) {
        EscalationStep step = step(record, config, node, running, identity, now);
        // Deleting a record stops its escalation: no agent runs for it any more (one running finishes and is
        // recorded); it still closes, and is still tainted after a confirmed power-off.
        return deleted(record) && step instanceof EscalationStep.RunStage
                ? new EscalationStep.Wait("record deleted: no further stage runs") : step;
    }

    private static EscalationStep step(NodeFencing record, NodeFencingConfigSpec config, NodeState node,
                                       boolean running, String identity, Instant now) {
        NodeFencingStatus status = record.getStatus();
        NodeFencingPhase phase = status == null || status.phase() == null ? NodeFencingPhase.Pending : status.phase();
        if (running) {
            return new EscalationStep.Wait("a stage runs on this replica");
        }
        if ((phase == NodeFencingPhase.Pending || phase == NodeFencingPhase.Dumping)
                && dumping(status, config, node, now)) {
            // fence_kdump messages are unauthenticated: anything sending from the node's address (a pod on it, behind
            // the CNI's masquerade) can make a running node look like it dumps. They hold the power stages back,
            // but taint at once only a node its group records fenced, which its own watchdog has reset anyway; one
            // escalated for a watchdog that is not working is tainted after the confirmed power-off.
            if (node.recordedFenced() && node.exists() && !node.tainted()
                    && (status == null || status.taintedAt() == null)) {
                return new EscalationStep.Taint();
            }
            return new EscalationStep.Dumping(node.lastKdump());
        }
        switch (phase) {
            case Pending, Dumping -> {
                FenceStage first = config.stages().get(0);
                return unlessReturned(claimable(first, status == null ? null : run(status.stages(), first.name()),
                        false, identity, now), node);
            }
            case Fencing -> {
                Optional<FenceStage> stage = stage(config, status.currentStage());
                if (stage.isEmpty()) {
                    return node.returned() ? new EscalationStep.MarkRecovered(RETURNED_UNFENCED)
                            : new EscalationStep.Wait("stage " + status.currentStage() + " is no longer in config "
                                    + record.getSpec().config());
                }
                return unlessReturned(claimable(stage.get(), run(status.stages(), stage.get().name()), false,
                        identity, now), node);
            }
            case Fenced -> {
                // Back already (powerAction Reboot, or powered on by hand): a taint now would only evict the
                // workloads of a healthy node.
                if (node.returned()) {
                    return new EscalationStep.MarkRecovered("node returned: Ready and its agent reports");
                }
                if (node.exists() && !node.tainted() && status.taintedAt() == null) {
                    return new EscalationStep.Taint();
                }
                boolean asked = annotation(record, NodeFencing.RECOVER_ANNOTATION) != null;
                if (asked && config.recovery() != null) {
                    StageRun recovery = status.recovery();
                    if (recovery == null) {
                        return new EscalationStep.RunStage(config.recovery(), true, 1);
                    }
                    if (StageRun.FAILED.equals(recovery.result()) && attempts(recovery) < RECOVERY_ATTEMPTS) {
                        return new EscalationStep.RunStage(config.recovery(), true, attempts(recovery) + 1);
                    }
                    return new EscalationStep.Wait("recovery stage " + recovery.result());
                }
                return new EscalationStep.Wait(asked ? "no recovery stage in config " + record.getSpec().config()
                        : "fenced; waiting for " + NodeFencing.RECOVER_ANNOTATION + " or the node's return");
            }
            case Recovering -> {
                if (config.recovery() == null) {
                    return new EscalationStep.Wait("no recovery stage in config " + record.getSpec().config());
                }
                return claimable(config.recovery(), status.recovery(), true, identity, now);
            }
            case Failed -> {
                if (node.returned()) {
                    return new EscalationStep.MarkRecovered("node returned after the escalation failed");
                }
                String by = annotation(record, NodeFencing.POWERED_OFF_ANNOTATION);
                return by != null ? new EscalationStep.ConfirmPoweredOff(by)
                        : new EscalationStep.Wait("escalation failed; waiting for "
                                + NodeFencing.POWERED_OFF_ANNOTATION + " or the node's return");
            }
            case Recovered -> {
                if (closed(record)) {
                    return new EscalationStep.Wait("closed");
                }
                return node.returned() ? new EscalationStep.MarkRecovered("node returned after the recovery stage "
                        + "powered it on") : new EscalationStep.Wait("powered on; waiting for the node to return");
            }
            default -> {
                return new EscalationStep.Wait("closed");
            }
        }
    }

    private static final String RETURNED_UNFENCED = "node returned before a stage confirmed power off: Ready and its "
            + "agent reports; no further stage runs";

    // Before a stage starts (the first, the next after a failed one, or one taken over from a replica that died):
    // a node that is back (Ready, its agent reporting) is not powered off. Its workloads have not moved (the taint
    // comes after a confirmed power-off or while it dumps, and the node-recovery-controller lifts it once the node
    // is back), so the record closes. A stage already running cannot be called back.
    private static EscalationStep unlessReturned(EscalationStep step, NodeState node) {
        return step instanceof EscalationStep.RunStage && node.returned()
                ? new EscalationStep.MarkRecovered(RETURNED_UNFENCED) : step;
    }

    private static String annotation(NodeFencing record, String key) {
        return record.getMetadata().getAnnotations() == null ? null : record.getMetadata().getAnnotations().get(key);
    }

    /** True for a record someone deleted (its finalizer keeps it until its node returned). */
    public static boolean deleted(NodeFencing record) {
        return record.getMetadata().getDeletionTimestamp() != null;
    }

    /**
     * True once a record no longer holds its node: the node returned (Ready, agent reporting). A record whose
     * recovery stage powered the node on still holds it until then, so the boot that follows (the node still
     * unheard, still recorded as fenced) does not start a new escalation that would power it off again.
     */
    public static boolean closed(NodeFencing record) {
        NodeFencingStatus s = record.getStatus();
        return s != null && s.phase() == NodeFencingPhase.Recovered && s.conditions() != null
                && s.conditions().stream().anyMatch(c -> "Recovered".equals(c.getType())
                        && "NodeReturned".equals(c.getReason()));
    }

    // The node sends fence_kdump messages: it is dumping, so it counts as fenced (its pods may move) and the power
    // stages wait until the messages stop or kdump.timeout has passed since the first one.
    private static boolean dumping(NodeFencingStatus status, NodeFencingConfigSpec config, NodeState node,
                                   Instant now) {
        if (config.kdump() == null || !config.kdump().enabledOrDefault() || node.lastKdump() == null
                || !now.isBefore(node.lastKdump().plus(KDUMP_GAP))) {
            return false;
        }
        Duration timeout = Durations.parse("kdump.timeout", config.kdump().timeout(),
                Durations.parse("default", KdumpSpec.DEFAULT_TIMEOUT, Duration.ZERO));
        Instant first = status == null || status.kdumpStartedAt() == null ? node.lastKdump()
                : Instant.parse(status.kdumpStartedAt());
        return now.isBefore(first.plus(timeout));
    }

    /** The status of a dumping node after a message at {@code last}; null when nothing needs writing. */
    public static NodeFencingStatus dumped(NodeFencingStatus s, Instant last) {
        if (s.phase() == NodeFencingPhase.Dumping && s.lastKdumpAt() != null
                && last.isBefore(Instant.parse(s.lastKdumpAt()).plus(KDUMP_WRITE_STEP))) {
            return null;
        }
        return new NodeFencingStatus(NodeFencingPhase.Dumping, s.currentStage(), s.stages(), s.recovery(),
                s.startedAt(), s.kdumpStartedAt() == null ? last.toString() : s.kdumpStartedAt(), last.toString(),
                s.fencedAt(), s.taintedAt(), s.recoveredAt(), s.conditions());
    }

    // A stage another replica marked Running is taken over only once its bound has passed: until then that replica
    // may still be running the agent, and two stages for one node must never run at once.
    private static EscalationStep claimable(FenceStage stage, StageRun run, boolean recovery, String identity,
                                            Instant now) {
        if (run == null) {
            return new EscalationStep.RunStage(stage, recovery, 1);
        }
        if (!StageRun.RUNNING.equals(run.result())) {
            return new EscalationStep.Wait("stage " + stage.name() + " " + run.result());
        }
        Instant deadline = Instant.parse(run.startedAt()).plus(bound(stage));
        if (identity.equals(run.runner()) || !now.isBefore(deadline)) {
            return new EscalationStep.RunStage(stage, recovery, attempts(run) + 1);
        }
        return new EscalationStep.Wait("stage " + stage.name() + " runs on " + run.runner() + " until " + deadline);
    }

    /** The longest a stage can take: every method's status, action and status at the stage's timeout, plus margin. */
    static Duration bound(FenceStage stage) {
        Duration timeout;
        try {
            timeout = Durations.parse("timeout", stage.timeout(), FenceStageExecutor.DEFAULT_TIMEOUT);
        } catch (IllegalArgumentException e) {
            // The stage itself fails on it at once (FenceStageExecutor); its bound is the default's.
            timeout = FenceStageExecutor.DEFAULT_TIMEOUT;
        }
        return timeout.multipliedBy(3L * stage.methods().size()).plus(TAKEOVER_MARGIN);
    }

    /** The status recording that this replica starts {@code step}. */
    public static NodeFencingStatus claimed(NodeFencingStatus status, EscalationStep.RunStage step, String identity,
                                            Instant now) {
        StageRun running = new StageRun(step.stage().name(), StageRun.RUNNING, step.attempt(), now.toString(),
                identity, null, null, null);
        NodeFencingStatus s = status == null ? empty(now) : status;
        if (step.recovery()) {
            return new NodeFencingStatus(NodeFencingPhase.Recovering, s.currentStage(), s.stages(), running,
                    s.startedAt(), s.kdumpStartedAt(), s.lastKdumpAt(), s.fencedAt(), s.taintedAt(), s.recoveredAt(),
                    s.conditions());
        }
        return new NodeFencingStatus(NodeFencingPhase.Fencing, step.stage().name(), replace(s.stages(), running),
                s.recovery(), s.startedAt(), s.kdumpStartedAt(), s.lastKdumpAt(), s.fencedAt(), s.taintedAt(),
                s.recoveredAt(), s.conditions());
    }

    /** The status after a fence stage (not the recovery stage) finished with {@code run}. */
    public static NodeFencingStatus stageFinished(NodeFencingStatus status, NodeFencingConfigSpec config,
                                                  StageRun run, Instant now) {
        List<StageRun> stages = replace(status.stages(), run);
        if (StageRun.SUCCEEDED.equals(run.result())) {
            return new NodeFencingStatus(NodeFencingPhase.Fenced, null, stages, status.recovery(), status.startedAt(),
                    status.kdumpStartedAt(), status.lastKdumpAt(), run.finishedAt(), status.taintedAt(),
                    status.recoveredAt(), condition(status.conditions(), "Fenced", "True", "StageSucceeded", "stage " + run.name() + ": "
                            + run.message(), now));
        }
        List<FenceStage> all = config.stages();
        int index = indexOf(all, run.name());
        FenceStage stage = index < 0 ? null : all.get(index);
        if (stage != null && stage.mustSucceedOrDefault()) {
            return failed(status, stages, "MustSucceedStageFailed", "stage " + run.name() + " must succeed and "
                    + "failed: " + run.message() + "; no later stage runs and the node is not tainted", now);
        }
        if (index >= 0 && index + 1 < all.size()) {
            String next = all.get(index + 1).name();
            return new NodeFencingStatus(NodeFencingPhase.Fencing, next, stages, status.recovery(),
                    status.startedAt(), status.kdumpStartedAt(), status.lastKdumpAt(), status.fencedAt(),
                    status.taintedAt(), status.recoveredAt(), condition(status.conditions(), "Fenced", "False", "StageFailed",
                            "stage " + run.name() + " failed (" + run.message() + "); next stage " + next, now));
        }
        return failed(status, stages, "AllStagesFailed", "every stage failed; last: " + run.name() + " ("
                + run.message() + "); the node is not tainted", now);
    }

    /** The status after the recovery stage finished with {@code run}. */
    public static NodeFencingStatus recoveryFinished(NodeFencingStatus status, StageRun run, Instant now) {
        boolean ok = StageRun.SUCCEEDED.equals(run.result());
        return new NodeFencingStatus(ok ? NodeFencingPhase.Recovered : NodeFencingPhase.Fenced, null, status.stages(),
                run, status.startedAt(), status.kdumpStartedAt(), status.lastKdumpAt(), status.fencedAt(),
                status.taintedAt(), ok ? run.finishedAt() : status.recoveredAt(),
                condition(status.conditions(), "Recovered", ok ? "True" : "False",
                        ok ? "RecoveryStageSucceeded" : "RecoveryStageFailed", run.message(), now));
    }

    /**
     * The status of a Failed record whose node an operator confirmed powered off ({@code by}: the annotation's
     * value); unchanged when the record is no longer Failed.
     */
    public static NodeFencingStatus confirmedOff(NodeFencingStatus s, String by, Instant now) {
        if (s.phase() != NodeFencingPhase.Failed) {
            return s;
        }
        String who = by.length() > CONFIRMED_BY_MAX ? by.substring(0, CONFIRMED_BY_MAX) + "…" : by;
        return new NodeFencingStatus(NodeFencingPhase.Fenced, null, s.stages(), s.recovery(), s.startedAt(),
                s.kdumpStartedAt(), s.lastKdumpAt(), now.toString(), s.taintedAt(), s.recoveredAt(),
                condition(s.conditions(), "Fenced", "True", "PowerOffConfirmedByOperator", "no stage confirmed the "
                        + "power-off; an operator did (" + NodeFencing.POWERED_OFF_ANNOTATION + ": " + who + ")", now));
    }

    /** The status once the taint is on. */
    public static NodeFencingStatus tainted(NodeFencingStatus s, Instant now) {
        return new NodeFencingStatus(s.phase(), s.currentStage(), s.stages(), s.recovery(), s.startedAt(),
                s.kdumpStartedAt(), s.lastKdumpAt(), s.fencedAt(), now.toString(), s.recoveredAt(), s.conditions());
    }

    /** The status of a closed record: the node is back. */
    public static NodeFencingStatus recovered(NodeFencingStatus s, String why, Instant now) {
        return new NodeFencingStatus(NodeFencingPhase.Recovered, null, s.stages(), s.recovery(), s.startedAt(),
                s.kdumpStartedAt(), s.lastKdumpAt(), s.fencedAt(), s.taintedAt(),
                s.recoveredAt() != null ? s.recoveredAt() : now.toString(),
                condition(s.conditions(), "Recovered", "True", "NodeReturned", why, now));
    }

    /** The status of a new record. */
    public static NodeFencingStatus empty(Instant now) {
        return new NodeFencingStatus(NodeFencingPhase.Pending, null, List.of(), null, now.toString(), null, null, null,
                null, null, List.of());
    }

    private static NodeFencingStatus failed(NodeFencingStatus s, List<StageRun> stages, String reason,
                                            String message, Instant now) {
        return new NodeFencingStatus(NodeFencingPhase.Failed, null, stages, s.recovery(), s.startedAt(),
                s.kdumpStartedAt(), s.lastKdumpAt(), s.fencedAt(), s.taintedAt(), s.recoveredAt(),
                condition(s.conditions(), "Fenced", "False", reason, message, now));
    }

    private static Optional<FenceStage> stage(NodeFencingConfigSpec config, String name) {
        return config.stages().stream().filter(s -> s.name().equals(name)).findFirst();
    }

    private static StageRun run(List<StageRun> runs, String name) {
        return runs == null ? null : runs.stream().filter(r -> r.name().equals(name)).findFirst().orElse(null);
    }

    private static int attempts(StageRun run) {
        return run.attempts() == null ? 0 : run.attempts();
    }

    private static int indexOf(List<FenceStage> stages, String name) {
        for (int i = 0; i < stages.size(); i++) {
            if (stages.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static List<StageRun> replace(List<StageRun> runs, StageRun run) {
        List<StageRun> out = new ArrayList<>(runs == null ? List.of() : runs);
        out.removeIf(r -> r.name().equals(run.name()));
        out.add(run);
        return out;
    }

    private static List<Condition> condition(List<Condition> conditions, String type, String status, String reason,
                                             String message, Instant now) {
        List<Condition> out = new ArrayList<>(conditions == null ? List.of() : conditions);
        Optional<Condition> previous = out.stream().filter(c -> type.equals(c.getType())).findFirst();
        String since = previous.filter(c -> status.equals(c.getStatus())).map(Condition::getLastTransitionTime)
                .orElse(now.toString());
        out.removeIf(c -> type.equals(c.getType()));
        out.add(new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
                .withLastTransitionTime(since).build());
        return out;
    }
}
