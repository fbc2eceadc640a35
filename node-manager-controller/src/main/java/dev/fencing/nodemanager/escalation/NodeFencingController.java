package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.FencePowerAction;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.fencing.v1alpha1.NodeFencingSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingStatus;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.storm.StormGuard;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * node-fencing-escalation-controller (leader only). Goal: a node that should have fenced itself but may not have is
 * powered off through its NodeFencingConfig's stages before its workloads move, and powered on again when asked.
 * Trigger: a tick every {@code interval} while leading (escalation candidates from the caches, NodeFencing records
 * from the API). Output: NodeFencing records and their status, ClusterLabs fence agent runs, the out-of-service taint.
 *
 * <p>The record's status is the only state: a stage is claimed by writing it {@code Running} with this replica as
 * runner (an optimistic-lock update, so two replicas cannot both claim it), run on a worker, and its result written
 * back. A stage left {@code Running} by a replica that died is started again by the leader once the stage's bound
 * has passed ({@link EscalationPlanner#bound}); a node never has two stages running at once on this replica.
 *
 * <p>Against a replica that still believes it leads (it stalled past its Lease): a record's name is fixed by the node
 * and its fencing event ({@link EscalationTrigger.Due#recordName}), so a second create for the same event gets 409
 * Conflict; honest leadership ({@link #honestLeadership}) is asked right before each create, claim, stage start and
 * taint; and a new leader starts nothing for {@link #holdAfterLeading} while agents' reports reach it. A record keeps
 * holding its node when it is deleted ({@link NodeFencing#HOLDS_NODE_FINALIZER}) until the node returned.
 */
public final class NodeFencingController implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeFencingController.class);
    /** How long {@link #close} waits for interrupted stages: a killed agent is reaped within 5 s. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final int WRITE_RETRIES = 5;
    /**
     * A stage whose run ends in an exception (not a fence agent's failure, which is a result) is run again after
     * {@link #STAGE_ERROR_BACKOFF}, and recorded Failed at this attempt, so the ladder goes on.
     */
    static final int STAGE_ERROR_ATTEMPTS = 3;
    static final Duration STAGE_ERROR_BACKOFF = Duration.ofSeconds(10);
    /** Closed records deleted in one tick at most: a backlog goes over a few ticks, not in one burst of writes. */
    static final int DELETES_PER_TICK = 20;

    /** Where the controller's inputs come from. */
    public interface Sources {
        /** Every node of a Watchdog + Fence group, as the caches see it now. */
        List<EscalationTrigger.Candidate> candidates();

        /** The node is back: Node Ready and its agent reporting. */
        boolean returned(String node);
    }

    private final KubernetesClient client;
    private final FenceStageExecutor executor;
    private final ClusterWriter writer;
    // Open records in phase Failed at the latest tick of this replica while it led (0 on a follower).
    private volatile int failedRecords;
    private final Sources sources;
    private final KdumpSightings kdump;
    private final FencingAdmission admission;
    private final BooleanSupplier leading;
    private final InstantSource clock;
    private final String identity;
    private final Duration goneWithin;
    private final Duration interval;
    private final ScheduledExecutorService ticks;
    private final ExecutorService workers;
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    // node -> no stage before then (a run that ended in an exception).
    private final Map<String, Instant> retryAfter = new ConcurrentHashMap<>();
    private volatile List<NodeFencingConfig> configs = List.of();
    private volatile Duration retention = PowerFencingSettings.DEFAULT_RECORD_RETENTION;
    private volatile Supplier<Optional<String>> leadershipDoubt;
    private volatile Duration holdAfterLeading = Duration.ZERO;
    // When this replica's ticks first saw it lead (null while it does not).
    private volatile Instant leadingSince;
    // Deleted records still holding their node, logged once each.
    private final Set<String> heldAfterDelete = ConcurrentHashMap.newKeySet();

    /**
     * @param executor   runs stages
     * @param writer     the out-of-service taint
     * @param kdump      fence_kdump messages received (empty without a listener)
     * @param admission  storm limits, asked before a power stage or a taint
     * @param leading    true while this replica leads
     * @param identity   this replica (leader election identity)
     * @param goneWithin how long Kubernetes must have not heard a node without a working watchdog
     * @param interval   tick period
     * @param workers    stages run at once on this replica (for different nodes)
     */
    public NodeFencingController(KubernetesClient client, FenceStageExecutor executor, ClusterWriter writer,
                                 Sources sources, KdumpSightings kdump, FencingAdmission admission,
                                 BooleanSupplier leading,
                                 InstantSource clock, String identity, Duration goneWithin, Duration interval,
                                 int workers) {
        this.client = client;
        this.executor = executor;
        this.writer = writer;
        this.sources = sources;
        this.kdump = kdump;
        this.admission = admission;
        this.leading = leading;
        this.clock = clock;
        this.identity = identity;
        this.goneWithin = goneWithin;
        this.interval = interval;
        this.leadershipDoubt = () -> leading.getAsBoolean() ? Optional.empty() : Optional.of("not leader");
        this.ticks = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "node-fencing-ticks"));
        this.workers = Executors.newFixedThreadPool(workers, r -> daemon(r, "node-fencing-stage"));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * How long a closed record (its node returned) is kept after its {@code recoveredAt}; the leader deletes it then,
     * at most {@value #DELETES_PER_TICK} a tick. Zero keeps every record.
     */
    public NodeFencingController retainClosedRecords(Duration closedFor) {
        if (closedFor.isNegative()) {
            throw new IllegalArgumentException("--node-fencing-retention must not be negative");
        }
        this.retention = closedFor;
        return this;
    }

    /**
     * Acts only while {@code doubt} is empty, asked right before each record create, stage claim, stage start and
     * taint. JOSDK learns that it lost the Lease only at its next renew attempt, so a replica that stalled (a long GC,
     * SIGSTOP) past its Lease still believes it leads when it resumes, while another replica already escalates; the
     * tie-break arbiter's rule ({@link dev.fencing.nodemanager.tiebreak.TieBreakArbiter#leadershipDoubt}) answers
     * from the renewals of the election Lease seen on the monotonic clock. Without this, the {@code leading} flag.
     */
    public NodeFencingController honestLeadership(Supplier<Optional<String>> doubt) {
        this.leadershipDoubt = doubt;
        return this;
    }

    /**
     * After this replica starts leading (and after it starts), no record is created and no fence stage starts for
     * {@code reportsArriveWithin} ({@code --report-stale-after}): agents streaming to other replicas reach the new
     * leader only once those forward their reports, and until then a node that is back looks silent.
     */
    public NodeFencingController holdAfterLeading(Duration reportsArriveWithin) {
        if (reportsArriveWithin.isNegative()) {
            throw new IllegalArgumentException("the hold after leading must not be negative");
        }
        this.holdAfterLeading = reportsArriveWithin;
        return this;
    }

    /**
     * Starts ticking. Reads the NodeFencingConfigs once first, so {@link #ownsTaint} answers from the start.
     *
     * @throws IllegalStateException when they cannot be listed (e.g. the CRDs are not installed)
     */
    public NodeFencingController start() {
        try {
            configs = client.resources(NodeFencingConfig.class).list().getItems();
        } catch (KubernetesClientException e) {
            throw new IllegalStateException("--power-fencing: cannot list NodeFencingConfigs (HTTP " + e.getCode()
                    + "); install the fencing.deckhouse.io CRDs (chart controller.powerFencing.enabled) and allow "
                    + "the controller to list them: " + e.getMessage(), e);
        }
        ticks.scheduleWithFixedDelay(this::tickLogged, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * True for a node a NodeFencingConfig covers: its out-of-service taint comes from this controller once a stage
     * confirmed it powered off, not from the safe-to-assume-fenced rule alone.
     */
    public boolean ownsTaint(Node node) {
        return EscalationTrigger.configFor(node, configs).isPresent();
    }

    private void tickLogged() {
        try {
            tick();
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_fencing_tick_failed code={} error=\"{}\"", e.getCode(), e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("event=node_fencing_tick_failed", e);
        }
    }

    /** One round: start due escalations, advance every open record by one step. Leader only. */
    void tick() {
        if (!leading.getAsBoolean()) {
            leadingSince = null;
            return;
        }
        Instant now = clock.instant();
        if (leadingSince == null) {
            leadingSince = now;
            if (!holdAfterLeading.isZero()) {
                LOG.info("event=node_fencing_hold until={} reason=\"started leading: no record is created and no "
                        + "fence stage starts until the agents' reports had time to arrive (--report-stale-after {})\"",
                        now.plus(holdAfterLeading), holdAfterLeading);
            }
        }
        List<NodeFencingConfig> configs = client.resources(NodeFencingConfig.class).list().getItems();
        this.configs = configs;
        Map<String, NodeFencing> open = new HashMap<>();
        List<NodeFencing> records = new ArrayList<>(client.resources(NodeFencing.class).list().getItems());
        records.removeIf(r -> released(r, now));
        for (NodeFencing r : records) {
            if (r.getSpec() == null || EscalationPlanner.closed(r)) {
                continue;
            }
            open.merge(r.getSpec().nodeName(), r, (a, b) -> created(a).isAfter(created(b)) ? a : b);
        }
        // Before anything new is admitted: open records count against maxConcurrent even when a previous leader
        // started them (its admissions are gone with it) and no taint shows them yet. A Failed or deleted record
        // still holds its node (no new escalation for it) but fences nothing any more: it is not in progress, or one
        // dead BMC would stop every later fencing of the group.
        open.values().stream().filter(r -> phase(r) != NodeFencingPhase.Failed && !EscalationPlanner.deleted(r))
                .forEach(r -> admission.inProgress(r.getSpec().nodeGroup(), r.getSpec().nodeName()));
        failedRecords = (int) open.values().stream()
                .filter(r -> phase(r) == NodeFencingPhase.Failed && !EscalationPlanner.deleted(r)).count();
        for (EscalationTrigger.Candidate c : sources.candidates()) {
            String node = c.node().getMetadata().getName();
            if (open.containsKey(node)) {
                continue;
            }
            // One node's failure (a bad config value, a failed write) must not hold back the others.
            try {
                EscalationTrigger.due(c, configs, goneWithin, now).ifPresent(d -> {
                    if (!holding(now) && mayAct("create", node) && admitted(d.group(), node, now)) {
                        create(d, now).ifPresent(r -> open.put(node, r));
                    }
                });
            } catch (RuntimeException e) {
                LOG.warn("event=node_fencing_start_failed node={} error=\"{}\"", node, e.getMessage());
            }
        }
        for (NodeFencing record : open.values()) {
            Optional<NodeFencingConfigSpec> config = configs.stream()
                    .filter(c -> c.getMetadata().getName().equals(record.getSpec().config()))
                    .map(NodeFencingConfig::getSpec).findFirst();
            if (config.isEmpty()) {
                LOG.warn("event=node_fencing_config_missing node={} record={} config={}", record.getSpec().nodeName(),
                        record.getMetadata().getName(), record.getSpec().config());
                continue;
            }
            try {
                advance(record, config.get(), now);
            } catch (RuntimeException e) {
                LOG.warn("event=node_fencing_step_failed node={} record={} error=\"{}\"",
                        record.getSpec().nodeName(), record.getMetadata().getName(), e.getMessage());
            }
        }
        deleteExpired(records, now);
    }

    // Last in the tick: a failed delete must not hold back an escalation.
    private void deleteExpired(List<NodeFencing> records, Instant now) {
        Duration keep = retention;
        if (keep.isZero()) {
            return;
        }
        int deleted = 0;
        for (NodeFencing r : records) {
            Instant closedAt = closedAt(r);
            if (closedAt == null || now.isBefore(closedAt.plus(keep))) {
                continue;
            }
            if (deleted == DELETES_PER_TICK) {
                return;
            }
            deleted++;
            String name = r.getMetadata().getName();
            try {
                dropFinalizer(name);
                client.resources(NodeFencing.class).withName(name).delete();
                LOG.info("event=node_fencing_record_deleted record={} node={} recovered_at={} retention={}", name,
                        r.getSpec() == null ? "" : r.getSpec().nodeName(), closedAt, keep);
            } catch (KubernetesClientException e) {
                LOG.warn("event=node_fencing_record_delete_failed record={} code={} error=\"{}\"", name, e.getCode(),
                        e.getMessage());
            }
        }
    }

    // When a closed record's node returned, or null for a record that is open or does not say (kept).
    private static Instant closedAt(NodeFencing r) {
        if (!EscalationPlanner.closed(r) || r.getStatus().recoveredAt() == null) {
            return null;
        }
        try {
            return Instant.parse(r.getStatus().recoveredAt());
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    // Storm limits: when one holds, nothing is done for the node now; the next tick asks again.
    private boolean admitted(String group, String node, Instant now) {
        StormGuard.Admission a = admission.admit(group, node, now);
        if (!a.allowed()) {
            LOG.warn("event=power_fencing_storm_limited node={} group={} reason=\"{}\"", node, group, a.reason());
        }
        return a.allowed();
    }

    // Empty when the fencing event has a record already (409: another replica, or this one before it stalled).
    private Optional<NodeFencing> create(EscalationTrigger.Due due, Instant now) {
        NodeFencing record = new NodeFencing();
        record.setMetadata(new ObjectMetaBuilder().withName(due.recordName())
                .withLabels(Map.of(NodeFencing.NODE_LABEL, NodeFencing.nodeLabelValue(due.node())))
                .withFinalizers(NodeFencing.HOLDS_NODE_FINALIZER).build());
        record.setSpec(new NodeFencingSpec(due.node(), due.group(), due.reason(), due.config()));
        NodeFencing created;
        try {
            created = client.resources(NodeFencing.class).resource(record).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            LOG.info("event=node_fencing_start_skipped node={} record={} reason=\"this fencing event has its record "
                    + "already\"", due.node(), due.recordName());
            return Optional.empty();
        }
        created.setStatus(EscalationPlanner.empty(now));
        created = client.resources(NodeFencing.class).resource(created).updateStatus();
        LOG.warn("event=node_fencing_started node={} group={} record={} config={} reason=\"{}\"", due.node(),
                due.group(), created.getMetadata().getName(), due.config(), due.reason());
        return Optional.of(created);
    }

    // While a new leader waits for the agents' reports (holdAfterLeading).
    private boolean holding(Instant now) {
        return leadingSince != null && now.isBefore(leadingSince.plus(holdAfterLeading));
    }

    // Asked right before a write or a run that must not happen twice: honest leadership, not the leading flag alone.
    private boolean mayAct(String action, String node) {
        Optional<String> doubt = leadershipDoubt.get();
        doubt.ifPresent(why -> LOG.warn("event=node_fencing_not_leading action={} node={} reason=\"{}\"", action,
                node, why));
        return doubt.isEmpty();
    }

    /**
     * A deleted record (its finalizer keeps it) goes once its fencing event is over: its node returned, its Node is
     * gone, or the record was closed. Until then it holds its node, so the event is not escalated again.
     */
    private boolean released(NodeFencing r, Instant now) {
        if (!EscalationPlanner.deleted(r)) {
            return false;
        }
        String name = r.getMetadata().getName();
        String node = r.getSpec() == null ? null : r.getSpec().nodeName();
        if (node != null && !EscalationPlanner.closed(r) && !sources.returned(node)
                && client.nodes().withName(node).get() != null) {
            if (heldAfterDelete.add(name)) {
                LOG.warn("event=node_fencing_record_held record={} node={} reason=\"deleted before its node "
                        + "returned: no further stage runs and this fencing event is not escalated again; the record "
                        + "goes once the node returns or its Node is deleted; annotate it {} once the node is "
                        + "powered off to have it tainted\"", name, node, NodeFencing.POWERED_OFF_ANNOTATION);
            }
            return false;
        }
        try {
            dropFinalizer(name);
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_fencing_release_failed record={} code={} error=\"{}\"", name, e.getCode(),
                    e.getMessage());
            return false;
        }
        heldAfterDelete.remove(name);
        if (node != null && r.getSpec() != null) {
            admission.finished(r.getSpec().nodeGroup(), node, now);
        }
        LOG.info("event=node_fencing_record_released record={} node={}", name, node);
        return true;
    }

    // Removes our finalizer (an optimistic-lock update; a conflict is retried at the next tick).
    private void dropFinalizer(String name) {
        NodeFencing latest = client.resources(NodeFencing.class).withName(name).get();
        if (latest == null || latest.getMetadata().getFinalizers() == null
                || !latest.getMetadata().getFinalizers().contains(NodeFencing.HOLDS_NODE_FINALIZER)) {
            return;
        }
        List<String> rest = new ArrayList<>(latest.getMetadata().getFinalizers());
        rest.removeAll(Set.of(NodeFencing.HOLDS_NODE_FINALIZER));
        latest.getMetadata().setFinalizers(rest);
        client.resources(NodeFencing.class).resource(latest).update();
    }

    private void advance(NodeFencing record, NodeFencingConfigSpec config, Instant now) {
        String node = record.getSpec().nodeName();
        Node n = client.nodes().withName(node).get();
        // Someone else's out-of-service taint counts as tainted: the workloads move already, and it stays theirs.
        NodeFacts facts = n == null ? null : NodeFacts.of(n, null);
        Instant lastKdump = n == null ? null : kdump.last(n).orElse(null);
        // Asked only while the node sends kdump messages: the candidates are every node of the fencing groups.
        boolean recordedFenced = lastKdump != null && sources.candidates().stream()
                .anyMatch(c -> c.node().getMetadata().getName().equals(node) && c.fencedAt() != null);
        EscalationPlanner.NodeState state = new EscalationPlanner.NodeState(
                facts != null && (facts.outOfServiceByUs() || facts.outOfServiceByOthers()),
                n != null, sources.returned(node), lastKdump, recordedFenced);
        EscalationStep step = EscalationPlanner.next(record, config, state, running.contains(node), identity, now);
        String group = record.getSpec().nodeGroup();
        boolean fencingAction = step instanceof EscalationStep.Taint
                || step instanceof EscalationStep.RunStage r && !r.recovery();
        if (step instanceof EscalationStep.RunStage r && !r.recovery() && holding(now)) {
            return;
        }
        if (fencingAction && !admitted(group, node, now)) {
            return;
        }
        if (step instanceof EscalationStep.RunStage run) {
            Instant pause = retryAfter.get(node);
            if (pause != null && now.isBefore(pause)) {
                return;
            }
            NodeFencingStatus claimed = EscalationPlanner.claimed(record.getStatus(), run, identity, now);
            if (!mayAct("claim", node) || !running.add(node)) {
                return;
            }
            NodeFencing claimedRecord;
            try {
                claimedRecord = writeStatus(record, claimed);
            } catch (KubernetesClientException e) {
                running.remove(node);
                // 409: another replica (or a newer status) got there first; the next tick reads it.
                LOG.info("event=node_fencing_claim_lost node={} stage={} code={}", node, run.stage().name(),
                        e.getCode());
                return;
            }
            Map<String, String> annotations = n == null || n.getMetadata().getAnnotations() == null ? Map.of()
                    : Map.copyOf(n.getMetadata().getAnnotations());
            LOG.warn("event=fence_stage_started node={} record={} stage={} action={} attempt={}", node,
                    record.getMetadata().getName(), run.stage().name(),
                    target(run, config) == PowerAction.REBOOT ? "reboot" : target(run, config).action(),
                    run.attempt());
            workers.execute(() -> runStage(claimedRecord, config, run, annotations));
        } else if (step instanceof EscalationStep.Taint) {
            if (!mayAct("taint", node)) {
                return;
            }
            // Re-reads the Node and skips one that is Ready: a running node never gets the taint.
            writer.setOutOfService(node, true);
            Node after = client.nodes().withName(node).get();
            if (after != null && NodeFacts.of(after, null).outOfServiceByUs()) {
                updateStatus(record.getMetadata().getName(), s -> EscalationPlanner.tainted(s, clock.instant()));
                LOG.warn("event=node_fencing_tainted node={} record={}", node, record.getMetadata().getName());
            }
        } else if (step instanceof EscalationStep.Dumping dumping) {
            NodeFencingStatus next = EscalationPlanner.dumped(record.getStatus() == null
                    ? EscalationPlanner.empty(now) : record.getStatus(), dumping.lastMessage());
            if (next != null) {
                updateStatus(record.getMetadata().getName(), s -> Optional.ofNullable(
                        EscalationPlanner.dumped(s, dumping.lastMessage())).orElse(s));
                LOG.warn("event=node_fencing_dumping node={} record={} last_message={}", node,
                        record.getMetadata().getName(), dumping.lastMessage());
            }
        } else if (step instanceof EscalationStep.ConfirmPoweredOff confirmed) {
            NodeFencing written = updateStatus(record.getMetadata().getName(),
                    s -> EscalationPlanner.confirmedOff(s, confirmed.by(), clock.instant()));
            LOG.warn("event=node_fencing_power_off_confirmed node={} record={} phase={} by=\"{}\"", node,
                    record.getMetadata().getName(), written == null ? null : phase(written), confirmed.by());
        } else if (step instanceof EscalationStep.MarkRecovered recovered) {
            updateStatus(record.getMetadata().getName(),
                    s -> EscalationPlanner.recovered(s, recovered.why(), clock.instant()));
            admission.finished(group, node, clock.instant());
            LOG.info("event=node_fencing_closed node={} record={} why=\"{}\"", node, record.getMetadata().getName(),
                    recovered.why());
        }
    }

    private void runStage(NodeFencing record, NodeFencingConfigSpec config, EscalationStep.RunStage run,
                          Map<String, String> annotations) {
        String node = record.getSpec().nodeName();
        try {
            // Right before the agent runs (a queued stage may start later than its claim).
            Optional<String> doubt = leadershipDoubt.get();
            if (doubt.isPresent()) {
                LOG.warn("event=fence_stage_abandoned node={} record={} stage={} reason=\"{}\"", node,
                        record.getMetadata().getName(), run.stage().name(), doubt.get());
                return;
            }
            StageRun result = executor.run(run.stage(), target(run, config), node, annotations, run.attempt());
            if (Thread.currentThread().isInterrupted()) {
                // The controller is stopping and killed the agent: what it saw says nothing about the BMC. The
                // record stays Running, and the next leader runs the stage again once the stage's bound has passed.
                LOG.warn("event=fence_stage_abandoned node={} record={} stage={} reason=\"controller stopping\"",
                        node, record.getMetadata().getName(), run.stage().name());
                return;
            }
            recordResult(record, config, run, result);
        } catch (RuntimeException e) {
            LOG.error("event=fence_stage_failed node={} record={} stage={} attempt={}", node,
                    record.getMetadata().getName(), run.stage().name(), run.attempt(), e);
            if (run.attempt() < STAGE_ERROR_ATTEMPTS) {
                // The record stays Running with this replica as its runner; it is run again after a pause, not at
                // the next tick (which follows at once).
                retryAfter.put(node, clock.instant().plus(STAGE_ERROR_BACKOFF));
            } else {
                try {
                    recordResult(record, config, run, new StageRun(run.stage().name(), StageRun.FAILED,
                            run.attempt(), claimedAt(record, run), identity, clock.instant().toString(), "the controller failed to run "
                            + "the stage " + run.attempt() + " times, last: " + e, List.of()));
                } catch (RuntimeException again) {
                    retryAfter.put(node, clock.instant().plus(STAGE_ERROR_BACKOFF));
                    LOG.error("event=fence_stage_failed node={} record={} stage={} detail=\"cannot record the "
                            + "failure either\" error=\"{}\"", node, record.getMetadata().getName(),
                            run.stage().name(), again.getMessage());
                }
            }
        } finally {
            running.remove(node);
            if (!ticks.isShutdown()) {
                ticks.execute(this::tickLogged);
            }
        }
    }

    /** What a stage drives the node to: on for the recovery stage, else off (then on with powerAction Reboot). */
    private static PowerAction target(EscalationStep.RunStage run, NodeFencingConfigSpec config) {
        if (run.recovery()) {
            return PowerAction.ON;
        }
        return config.powerActionOrDefault() == FencePowerAction.Reboot ? PowerAction.REBOOT : PowerAction.OFF;
    }

    // When this replica claimed the stage (the Running run it wrote), for the failed run that replaces it.
    private static String claimedAt(NodeFencing record, EscalationStep.RunStage run) {
        NodeFencingStatus s = record.getStatus();
        if (s == null) {
            return null;
        }
        if (run.recovery()) {
            return s.recovery() == null ? null : s.recovery().startedAt();
        }
        return s.stages() == null ? null : s.stages().stream().filter(r -> r.name().equals(run.stage().name()))
                .map(StageRun::startedAt).findFirst().orElse(null);
    }

    private void recordResult(NodeFencing record, NodeFencingConfigSpec config, EscalationStep.RunStage run,
                              StageRun result) {
        String node = record.getSpec().nodeName();
        NodeFencing written = updateStatus(record.getMetadata().getName(), s -> run.recovery()
                ? EscalationPlanner.recoveryFinished(s, result, clock.instant())
                : EscalationPlanner.stageFinished(s, config, result, clock.instant()));
        retryAfter.remove(node);
        LOG.warn("event=fence_stage_recorded node={} record={} stage={} result={} phase={}", node,
                record.getMetadata().getName(), result.name(), result.result(),
                written == null ? null : phase(written));
        if (written != null && (phase(written) == NodeFencingPhase.Failed
                || phase(written) == NodeFencingPhase.Recovered)) {
            admission.finished(record.getSpec().nodeGroup(), node, clock.instant());
        }
        if (written != null && !run.recovery() && phase(written) == NodeFencingPhase.Failed
                && phase(record) != NodeFencingPhase.Failed) {
            Node n = client.nodes().withName(node).get();
            writer.emit(new dev.fencing.nodemanager.status.GroupEvent(true, node, "Warning", "PowerFencingFailed",
                    "power fencing of " + node + " failed (NodeFencing " + record.getMetadata().getName() + ", last"
                    + " stage " + result.name() + " " + result.result() + "): no stage confirmed it powered off, so it"
                    + " may still run and its workloads stay on it; power it off by hand, then annotate the record "
                    + NodeFencing.POWERED_OFF_ANNOTATION + "=<who> and it is tainted (do not delete the record)"),
                    null, n == null ? Map.of() : Map.of(node, n));
        }
    }

    /** NodeFencing records in phase Failed that this replica saw at its latest tick as leader (0 on a follower). */
    public int failedRecords() {
        return leading.getAsBoolean() ? failedRecords : 0;
    }

    /** Applies {@code change} to the record's latest status, retrying on conflicts. Null when the record is gone. */
    private NodeFencing updateStatus(String name, UnaryOperator<NodeFencingStatus> change) {
        for (int i = 0; ; i++) {
            NodeFencing latest = client.resources(NodeFencing.class).withName(name).get();
            if (latest == null) {
                return null;
            }
            try {
                return writeStatus(latest, change.apply(latest.getStatus() == null
                        ? EscalationPlanner.empty(clock.instant()) : latest.getStatus()));
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || i + 1 >= WRITE_RETRIES) {
                    throw e;
                }
            }
        }
    }

    private NodeFencing writeStatus(NodeFencing record, NodeFencingStatus status) {
        record.setStatus(status);
        return client.resources(NodeFencing.class).resource(record).updateStatus();
    }

    private static NodeFencingPhase phase(NodeFencing r) {
        return r.getStatus() == null || r.getStatus().phase() == null ? NodeFencingPhase.Pending
                : r.getStatus().phase();
    }

    private static Instant created(NodeFencing r) {
        String ts = r.getMetadata().getCreationTimestamp();
        return ts == null ? Instant.EPOCH : Instant.parse(ts);
    }

    /**
     * Stops ticking and interrupts running stages (their fence agents are killed), then waits up to
     * {@link #CLOSE_WAIT} for the stage threads to end, so nothing this controller started outlives it.
     */
    @Override
    public void close() {
        ticks.shutdownNow();
        workers.shutdownNow();
        try {
            if (!workers.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("event=node_fencing_stop_slow wait={} reason=\"a stage thread did not end\"", CLOSE_WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
