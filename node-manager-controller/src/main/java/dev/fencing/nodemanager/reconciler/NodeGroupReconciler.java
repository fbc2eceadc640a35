package dev.fencing.nodemanager.reconciler;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.dependent.AgentDaemonSets;
import dev.fencing.nodemanager.dependent.GossipKeyringSecrets;
import dev.fencing.nodemanager.keyring.KeyRotationStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.status.AgentDaemonSetCondition;
import dev.fencing.nodemanager.status.FencedNodeRecovery;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.nodemanager.status.NodeFacts;
import java.util.TreeSet;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import dev.fencing.nodemanager.status.StatusOutcome;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.Function;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.concurrent.ConcurrentHashMap;
import dev.fencing.api.v1.NodeGroupStatus;

/**
 * nodegroup-status-controller (leader only; JOSDK runs reconcilers only on the leader). Goal: every NodeGroup's agent
 * DaemonSet, status, node labels and Events match its spec and its agents' reports. Trigger: NodeGroup changes,
 * Node changes (secondary informer mapped by {@code node.deckhouse.io/group}), agent report changes (inbound event
 * source), and a periodic resync for time-based transitions. Output: DaemonSet create/update/delete, status patch,
 * label merge patches, Events. Decisions live in {@link GroupModel} and {@link GroupStatusCalculator}.
 */
@ControllerConfiguration(name = "nodegroup-status-controller")
public final class NodeGroupReconciler implements Reconciler<NodeGroup> {

    private final ControllerConfig config;
    private final AgentDaemonSets daemonSets;
    private final GossipKeyringSecrets keyrings;
    private final AgentReports reports;
    private final ClusterWriter writer;
    private final InstantSource clock;
    private final BooleanSupplier leading;
    private final Function<String, Optional<Instant>> leaseRenewedAt;
    private final SimpleInboundEventSource<NodeGroup> reportEvents = new SimpleInboundEventSource<>("agent-reports");
    // What this leader last wrote. The informer caches lag behind our own writes; judging transitions against them
    // would announce the same transition (Event) twice.
    private final Map<String, NodeGroupStatus> lastStatus = new ConcurrentHashMap<>();
    private final Map<String, Map<String, String>> writtenLabels = new ConcurrentHashMap<>();
    private static final String REMOVED = "\u0000removed";
    private final ReportWriteLimiter writeLimiter;
    private volatile Predicate<Node> taintOwnedElsewhere = n -> false;

    /**
     * @param keyrings       null when gossip encryption is off
     * @param leaseRenewedAt per node, when its kubelet last renewed its heartbeat Lease (empty: never seen)
     */
    public NodeGroupReconciler(ControllerConfig config, AgentDaemonSets daemonSets, GossipKeyringSecrets keyrings,
                               AgentReports reports, ClusterWriter writer, InstantSource clock,
                               BooleanSupplier leading, Function<String, Optional<Instant>> leaseRenewedAt) {
        this(config, daemonSets, keyrings, reports, writer, clock, leading, leaseRenewedAt, WriteLimits.DEFAULTS);
    }

    /** @param writeLimits per-node rate limits on report-driven label patches and Events */
    public NodeGroupReconciler(ControllerConfig config, AgentDaemonSets daemonSets, GossipKeyringSecrets keyrings,
                               AgentReports reports, ClusterWriter writer, InstantSource clock,
                               BooleanSupplier leading, Function<String, Optional<Instant>> leaseRenewedAt,
                               WriteLimits writeLimits) {
        this.writeLimiter = new ReportWriteLimiter(writeLimits);
        this.config = config;
        this.daemonSets = daemonSets;
        this.keyrings = keyrings;
        this.reports = reports;
        this.writer = writer;
        this.clock = clock;
        this.leading = leading;
        this.leaseRenewedAt = leaseRenewedAt;
        reports.addListener(this::trigger);
    }

    /**
     * Asks for a status reconcile of {@code group} (its reports or its model changed, e.g. a Node was relabelled out
     * of it). Only while leading: event sources take events once JOSDK has started them for the leader.
     */
    public void trigger(String group) {
        if (leading.getAsBoolean()) {
            reportEvents.propagateEvent(new ResourceID(group));
        }
    }

    /**
     * Nodes whose out-of-service taint another actor adds (power fencing adds it only once a fence stage confirmed
     * the node off); this reconciler still removes its taint from them when they return.
     */
    public void taintOwnedElsewhere(Predicate<Node> owned) {
        this.taintOwnedElsewhere = owned;
    }

    /** Label patches held back by the per-node rate limit. */
    public long limitedLabelPatches() {
        return writeLimiter.limitedLabelPatches();
    }

    /** Events dropped as duplicates within the per-object, per-reason interval. */
    public long limitedEvents() {
        return writeLimiter.limitedEvents();
    }

    @Override
    public List<EventSource<?, NodeGroup>> prepareEventSources(EventSourceContext<NodeGroup> context) {
        InformerEventSourceConfiguration<Node> nodes = InformerEventSourceConfiguration
                .from(Node.class, NodeGroup.class)
                .withName("group-nodes")
                .withLabelSelector(NodeLabels.GROUP)
                .withSecondaryToPrimaryMapper(node -> {
                    Map<String, String> labels = node.getMetadata().getLabels();
                    String group = labels == null ? null : labels.get(NodeLabels.GROUP);
                    return group == null ? Set.of() : Set.of(new ResourceID(group));
                })
                .build();
        return List.of(new InformerEventSource<>(nodes, context), reportEvents);
    }

    @Override
    public UpdateControl<NodeGroup> reconcile(NodeGroup group, Context<NodeGroup> context) {
        String name = group.getMetadata().getName();
        Map<String, Node> nodes = new TreeMap<>();
        for (Node n : context.getSecondaryResources(Node.class)) {
            if (name.equals(n.getMetadata().getLabels().get(NodeLabels.GROUP))) {
                nodes.put(n.getMetadata().getName(), n);
            }
        }
        GroupModel model = GroupModel.from(group, nodes.values(), config.gossipPort());
        boolean neverFenced = !model.fencingEnabled()
                && (group.getStatus() == null || group.getStatus().getConditions() == null);
        AgentDaemonSets.Applied daemonSet = null;
        if (model.fencingEnabled()) {
            if (keyrings != null) {
                keyrings.ensure(group);
            }
            daemonSet = daemonSets.apply(group);
        } else if (!neverFenced) {
            daemonSets.delete(name, group.getMetadata().getUid());
        }
        Map<String, Map<String, String>> labels = new HashMap<>();
        nodes.forEach((n, node) -> {
            Map<String, String> view = new HashMap<>(Objects.requireNonNullElse(node.getMetadata().getLabels(),
                    Map.of()));
            Map<String, String> written = writtenLabels.getOrDefault(n, Map.of());
            // Entries the cache already reflects are dropped; the others override the lagging cache.
            written.entrySet().removeIf(w -> REMOVED.equals(w.getValue()) ? !view.containsKey(w.getKey())
                    : w.getValue().equals(view.get(w.getKey())));
            written.forEach((k, v) -> {
                if (REMOVED.equals(v)) {
                    view.remove(k);
                } else {
                    view.put(k, v);
                }
            });
            labels.put(n, view);
        });
        Map<String, NodeFacts> facts = new HashMap<>();
        nodes.forEach((n, node) -> facts.put(n, NodeFacts.of(node, leaseRenewedAt.apply(n).orElse(null))));
        NodeGroupStatus previous = lastStatus.getOrDefault(name, group.getStatus());
        StatusOutcome outcome = GroupStatusCalculator.calculate(model, previous, reports::latest, labels, facts,
                clock.instant(), config.reportStaleAfter());
        NodeGroupStatus status = outcome.status();
        if (daemonSet != null) {
            status = AgentDaemonSetCondition.apply(status, previous, name, daemonSet.daemonSet(),
                    daemonSet.outcome() == AgentDaemonSets.Outcome.NOT_OWNED ? Optional.of(daemonSet.owner())
                            : Optional.empty(), model.generation(), clock.instant(),
                    e -> writer.emit(e, group, nodes));
        }
        if (keyrings != null && model.fencingEnabled()) {
            status = KeyRotationStatus.apply(keyrings.rotations().reconcile(group, model, reports, clock.instant(),
                    config.reportStaleAfter()), status, previous, group, clock.instant(), e -> writer.emit(e, group,
                    nodes));
        }
        // Remembered before any write, so a failing write never makes the next reconcile announce an Event twice.
        lastStatus.put(name, status);
        outcome.labelChanges().forEach((node, change) -> {
            // A clean stop's label removal is never held back: the fenced-node rule reads the label after a
            // controller restart. One final report per stream cannot flood.
            boolean cleanStop = reports.latest(node).map(r -> r.report().getFinalReport()).orElse(false);
            if (!writeLimiter.allowLabelPatch(node, clock.instant()) && !cleanStop) {
                // Not remembered as written: the next reconcile computes it again once the interval has passed.
                return;
            }
            writer.patchLabels(node, change);
            writtenLabels.computeIfAbsent(node, k -> new ConcurrentHashMap<>());
            Map<String, String> written = writtenLabels.get(node);
            change.forEach((k, v) -> written.put(k, v == null ? REMOVED : v));
        });
        for (GroupEvent e : outcome.events()) {
            if (writeLimiter.allowEvent(e, clock.instant())) {
                writer.emit(e, group, nodes);
            }
        }
        Set<String> fenced = new TreeSet<>();
        if (status.getFencedNodes() != null) {
            status.getFencedNodes().forEach(f -> fenced.add(f.getName()));
        }
        fenced.removeIf(n -> nodes.containsKey(n) && taintOwnedElsewhere.test(nodes.get(n)));
        FencedNodeRecovery.Plan recovery = FencedNodeRecovery.plan(fenced, facts, outcome.reporting(),
                model.fencingEnabled(), GroupStatusCalculator.fencesNodes(model), config.maxOutOfService());
        recovery.actions().forEach(a -> writer.setOutOfService(a.node(), a.add()));
        for (GroupEvent e : recovery.events()) {
            writer.emit(e, group, nodes);
        }
        UpdateControl<NodeGroup> control;
        if (neverFenced || status.equals(group.getStatus())) {
            // A group that never had fencing keeps whatever status its owner (the platform) writes.
            control = UpdateControl.noUpdate();
        } else {
            NodeGroup fresh = new NodeGroup();
            fresh.setMetadata(new ObjectMetaBuilder().withName(name).build());
            fresh.setStatus(status);
            control = UpdateControl.patchStatus(fresh);
        }
        return control.rescheduleAfter(config.statusInterval());
    }
}
