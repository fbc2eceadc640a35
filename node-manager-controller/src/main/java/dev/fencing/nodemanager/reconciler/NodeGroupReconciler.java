package dev.fencing.nodemanager.reconciler;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.peervote.NodeConditionPatch;
import dev.fencing.nodemanager.peervote.PeersReachable;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.storm.StormGuard;
import dev.fencing.nodemanager.storm.StormLimitCondition;
import dev.fencing.policy.AfterFence;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipNetworks;
import java.util.ArrayList;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.dependent.AgentDaemonSets;
import dev.fencing.nodemanager.dependent.GossipKeyringSecrets;
import dev.fencing.nodemanager.keyring.KeyRotationStatus;
import dev.fencing.nodemanager.model.GossipAddressAnnotation;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.status.AgentDaemonSetCondition;
import dev.fencing.nodemanager.status.FencedNodeRecovery;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.LastValidConfigStore;
import dev.fencing.nodemanager.stream.ServedConfig;
import dev.fencing.nodemanager.stream.ServedMemberSets;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget;
import java.util.TreeSet;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import dev.fencing.nodemanager.status.StatusOutcome;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;
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
 * label merge patches, Events, and the ConfigMap keeping what the agents are served ({@link LastValidConfigStore}).
 * Decisions live in {@link GroupModel} and {@link GroupStatusCalculator}.
 */
@ControllerConfiguration(name = "nodegroup-status-controller")
// A reconcile that throws is retried for as long as it throws (every 30 s at most): JOSDK's default gives up after 5
// attempts, and a quiet group (no event) would then not be reconciled again, so safe-to-assume-fenced, which is a
// time-based transition, would not be recorded.
@io.javaoperatorsdk.operator.processing.retry.GradualRetry(maxAttempts = -1, maxInterval = 30_000)
public final class NodeGroupReconciler implements Reconciler<NodeGroup> {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NodeGroupReconciler.class);

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
    // This leader's own label and gossip-address annotation writes, believed over the lagging cache for at most one
    // label interval.
    private final OwnWrites writtenLabels;
    private final OwnWrites writtenGossipAddresses;
    private final ReportWriteLimiter writeLimiter;
    private final StormGuard stormGuard;
    private volatile Predicate<Node> taintOwnedElsewhere = n -> false;
    // Where group status is kept (the NodeGroups or ConfigMaps; NodeGroupStatusTarget decides once at start).
    private final GroupStatusStore statusStore;
    // Groups without fencing whose agent DaemonSet this leader has already removed (or found absent) since it last
    // saw them with fencing or since it started: checked once per switch-off, not at every reconcile.
    private final Set<String> daemonSetGone = ConcurrentHashMap.newKeySet();
    // Per group, the nodes the fenced-node rule held back at the last reconcile, and why (logged on a change).
    private final Map<String, Map<String, String>> heldBackLogged = new ConcurrentHashMap<>();
    // Where the last valid policy and members are kept (null: not kept), and what this replica serves.
    private volatile LastValidConfigStore lastValidConfigs;
    private volatile Function<String, Optional<ServedConfig>> servedConfig = g -> Optional.empty();
    // The member sets this replica served each group's agents (what a silent node may still count its quorum over).
    private volatile Function<String, ServedMemberSets> servedMemberSets = g -> new ServedMemberSets();

    /**
     * @param keyrings       null when gossip encryption is off
     * @param leaseRenewedAt per node, when its kubelet last renewed its heartbeat Lease (empty: never seen)
     * @param writeLimits    per-node rate limits on report-driven label patches and Events
     * @param stormGuard     admits every fencing action (taint, Node deletion) within the storm limits
     * @param statusStore    where each group's status is kept for the next leader
     */
    public NodeGroupReconciler(ControllerConfig config, AgentDaemonSets daemonSets, GossipKeyringSecrets keyrings,
                               AgentReports reports, ClusterWriter writer, InstantSource clock,
                               BooleanSupplier leading, Function<String, Optional<Instant>> leaseRenewedAt,
                               WriteLimits writeLimits, StormGuard stormGuard, GroupStatusStore statusStore) {
        this.statusStore = statusStore;
        this.stormGuard = stormGuard;
        this.writeLimiter = new ReportWriteLimiter(writeLimits);
        this.writtenLabels = new OwnWrites(writeLimits.labelPatchInterval());
        this.writtenGossipAddresses = new OwnWrites(writeLimits.labelPatchInterval());
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
     * Keeps, for each group with fencing on, the policy and members its agents are served ({@code served}, from this
     * replica's config distributor: while the spec is invalid, the frozen pair) in {@code store}, and deletes them
     * when fencing is switched off; call before the operator starts. Without it nothing is kept.
     */
    public void keepLastValidConfigs(LastValidConfigStore store, Function<String, Optional<ServedConfig>> served) {
        this.lastValidConfigs = Objects.requireNonNull(store, "store");
        this.servedConfig = Objects.requireNonNull(served, "served");
    }

    /**
     * Where the fenced-node rule finds the member sets this replica served a group's agents ({@code sets}, from its
     * config distributor): a node last reported on a set not found there is not counted as fenced. Without it only
     * the current set is known.
     */
    public void servedMemberSets(Function<String, ServedMemberSets> sets) {
        this.servedMemberSets = Objects.requireNonNull(sets, "sets");
    }

    /**
     * Nodes whose out-of-service taint another actor adds (power fencing adds it only once a fence stage confirmed
     * the node off); this reconciler still removes its taint from them when they return.
     */
    public void taintOwnedElsewhere(Predicate<Node> owned) {
        this.taintOwnedElsewhere = owned;
    }

    /** The status this leader computed last for {@code group} (also where it is not written); empty before that. */
    public Optional<NodeGroupStatus> status(String group) {
        return Optional.ofNullable(lastStatus.get(group));
    }

    /** Label patches held back by the per-node rate limit. */
    public long limitedLabelPatches() {
        return writeLimiter.limitedLabelPatches();
    }

    /** Peer-vote Node condition patches held back by the per-node rate limit. */
    public long limitedConditionPatches() {
        return writeLimiter.limitedConditionPatches();
    }

    /** Events dropped as duplicates within the per-object, per-reason interval. */
    public long limitedEvents() {
        return writeLimiter.limitedEvents();
    }

    // A report from the node received after the plan's instant: the node the plan would fence is back.
    private boolean reportedSince(String node, Instant planned) {
        return reports.latest(node).map(r -> r.receivedAt().isAfter(planned)).orElse(false);
    }

    // peer-vote-node-condition: each expected member's FencingPeersReachable from its peers' fresh reports, written
    // only when it changed; per node at most one message-only change and one status or reason change per label
    // interval (a message-only change cannot hold back the flip that follows it).
    private void writePeerVotes(GroupModel model, Map<String, Node> nodes, Set<String> reporting, Instant now) {
        Map<String, ReceivedReport> fresh = new TreeMap<>();
        for (String n : reporting) {
            reports.latest(n).filter(r -> r.group().equals(model.group())).ifPresent(r -> fresh.put(n, r));
        }
        Map<String, PeersReachable.Vote> votes = PeersReachable.all(model.expected().keySet(), fresh,
                model.policy().timings().quorumWindow());
        for (Map.Entry<String, PeersReachable.Vote> v : votes.entrySet()) {
            String n = v.getKey();
            Node node = nodes.get(n);
            if (node == null) {
                continue;
            }
            NodeConditionPatch.of(node, PeersReachable.TYPE, v.getValue(), now).ifPresent(ops -> {
                if (writeLimiter.allowConditionPatch(n, now,
                        NodeConditionPatch.isTransition(node, PeersReachable.TYPE, v.getValue()))) {
                    writer.patchNodeStatus(n, ops);
                }
            });
        }
    }

    // A node that carries FencingPeersReachable but gets no vote any more: Unknown/NotVoted once, so that a True
    // from before does not keep saying that its peers hear it.
    private void clearPeerVotes(Map<String, Node> nodes, Set<String> voted, String why, Instant now) {
        nodes.forEach((n, node) -> {
            if (voted.contains(n)) {
                return;
            }
            PeersReachable.withdrawal(node, why, now).ifPresent(ops -> {
                if (writeLimiter.allowConditionPatch(n, now,
                        NodeConditionPatch.isTransition(node, PeersReachable.TYPE, PeersReachable.notVoted(why)))) {
                    writer.patchNodeStatus(n, ops);
                }
            });
        });
    }

    /**
     * Keeps each node's gossip-address annotation ({@link GossipAddressAnnotation}) on what its agent last reported
     * while its group gossips on listed networks, so every replica can tell the peers; removes it once the group has
     * no networks or no fencing. An invalid spec leaves it as it is. Written only on a change, at most once per node
     * per label interval.
     */
    private void writeGossipAddresses(GroupModel model, Map<String, Node> nodes, Instant now) {
        if (model.fencingEnabled() && model.policy() == null) {
            return;
        }
        GossipNetworks networks = model.fencingEnabled() ? model.policy().networks() : GossipNetworks.SINGLE;
        nodes.forEach((name, node) -> {
            String current = writtenGossipAddresses.current(name, GossipAddressAnnotation.KEY,
                    Optional.ofNullable(GossipAddressAnnotation.of(node)), now).orElse(null);
            String desired = !networks.multiple() ? null : reports.latest(name)
                    .filter(r -> r.group().equals(model.group()))
                    .flatMap(r -> GossipAddressAnnotation.fromReport(networks, r.report().getNetworkAddressesMap()))
                    .orElse(current);
            if (Objects.equals(desired, current) || !writeLimiter.allowAnnotationPatch(name, now)) {
                return;
            }
            if (writer.patchAnnotation(name, GossipAddressAnnotation.KEY, desired)) {
                writtenGossipAddresses.wrote(name, GossipAddressAnnotation.KEY, Optional.ofNullable(desired), now);
            }
        });
    }

    /**
     * The nodes of {@code group} the fenced-node rule held back at this leader's last reconcile, and why (silent and
     * unheard, yet they may still be holding quorum under the config their last report says they run).
     */
    public Map<String, String> heldBack(String group) {
        Map<String, String> held = heldBackLogged.get(group);
        return held == null ? Map.of() : Map.copyOf(held);
    }

    // Logs each node the fenced-node rule holds back, once per reason: silent and unheard, yet it may still be
    // holding quorum under the config its last report says it runs.
    private void logHeldBack(String group, Map<String, String> now) {
        Map<String, String> before = heldBackLogged.computeIfAbsent(group, g -> new ConcurrentHashMap<>());
        before.keySet().retainAll(now.keySet());
        now.forEach((node, reason) -> {
            if (!reason.equals(before.put(node, reason))) {
                LOG.warn("event=fenced_record_held_back group={} node={} reason=\"{}\" action=\"not counted as fenced"
                        + " (no taint, no Node deletion) until the majority rules it out; power fencing, or an operator"
                        + " who checked the node is off, takes it from there (docs/runbook.md#node-not-recorded-fenced)\"",
                        group, node, reason);
            }
        });
    }

    // afterFence resolved against the nodeType: Auto deletes only what the platform recreates.
    private static AfterFence afterFence(NodeGroup group) {
        if (!NodeGroupFencing.fencingEnabled(group)) {
            return AfterFence.TAINT;
        }
        FencingSpec spec = NodeGroupFencing.map(group).spec();
        AfterFence setting = spec == null ? AfterFence.AUTO : spec.effectiveAfterFence();
        NodeType type = group.getSpec().getNodeType();
        return setting.effective(type != null && type.recreatedByPlatform());
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
        if (!leading.getAsBoolean()) {
            // JOSDK keeps processing events after the Lease is lost (this replica exits soon after): a deposed
            // leader must not write taints, Node deletions, labels or status from caches the new leader has moved
            // past.
            LOG.debug("event=reconcile_skipped group={} reason=not_leading", name);
            // Asked again later: a replica that leads a moment after (without election, leadership is taken just
            // after the operator starts) reconciles then.
            return UpdateControl.<NodeGroup>noUpdate().rescheduleAfter(config.statusInterval());
        }
        Map<String, Node> nodes = new TreeMap<>();
        for (Node n : context.getSecondaryResources(Node.class)) {
            if (name.equals(n.getMetadata().getLabels().get(NodeLabels.GROUP))) {
                nodes.put(n.getMetadata().getName(), n);
            }
        }
        GroupModel model = GroupModel.from(group, nodes.values(), config.gossipPort());
        // Only a group with fencing, or one we kept a status for before, gets a status write.
        NodeGroupStatus stored = statusStore.read(group).orElse(null);
        boolean neverFenced = !model.fencingEnabled() && !NodeGroupStatusTarget.writtenByController(stored);
        AgentDaemonSets.Applied daemonSet = null;
        // The agents' DaemonSet and keyring are written here, but a refused or failed write (a webhook, a 403, the
        // API server slow) must not stop the rest: the status, the fenced-node rule and the taints do not depend on
        // them. Logged, and tried again at the next reconcile.
        if (model.fencingEnabled()) {
            daemonSetGone.remove(name);
            try {
                if (keyrings != null) {
                    keyrings.ensure(group);
                }
                daemonSet = daemonSets.apply(group);
            } catch (KubernetesClientException e) {
                LOG.warn("event=agent_objects_write_failed group={} code={} error=\"{}\" action=\"status and fencing"
                        + " go on; retried at the next reconcile\"", name, e.getCode(), e.getMessage());
            }
        } else if (!daemonSetGone.contains(name)) {
            try {
                daemonSets.delete(name, group.getMetadata().getUid());
                daemonSetGone.add(name);
            } catch (KubernetesClientException e) {
                LOG.warn("event=agent_daemonset_delete_failed group={} code={} error=\"{}\"", name, e.getCode(),
                        e.getMessage());
            }
        }
        Map<String, Map<String, String>> labels = new HashMap<>();
        Instant viewedAt = clock.instant();
        nodes.forEach((n, node) -> labels.put(n, writtenLabels.view(n, node.getMetadata().getLabels(), viewedAt)));
        Map<String, NodeFacts> facts = new HashMap<>();
        nodes.forEach((n, node) -> facts.put(n, NodeFacts.of(node, leaseRenewedAt.apply(n).orElse(null))));
        NodeGroupStatus previous = lastStatus.getOrDefault(name, stored);
        StatusOutcome outcome = GroupStatusCalculator.calculate(model, previous, reports::latest, labels, facts,
                clock.instant(), config.reportStaleAfter(), servedMemberSets.apply(name));
        NodeGroupStatus status = outcome.status();
        logHeldBack(name, outcome.heldBack());
        if (daemonSet != null) {
            status = AgentDaemonSetCondition.apply(status, previous, name, daemonSet.daemonSet(),
                    daemonSet.outcome() == AgentDaemonSets.Outcome.NOT_OWNED ? Optional.of(daemonSet.owner())
                            : Optional.empty(), model.generation(), clock.instant(),
                    e -> writer.emit(e, group, nodes));
        }
        if (keyrings != null && model.fencingEnabled()) {
            try {
                status = KeyRotationStatus.apply(keyrings.rotations().reconcile(group, model, reports,
                        clock.instant(), config.reportStaleAfter()), status, previous, group, clock.instant(),
                        e -> writer.emit(e, group, nodes));
            } catch (KubernetesClientException e) {
                LOG.warn("event=key_rotation_step_failed group={} code={} error=\"{}\" action=\"retried at the next"
                        + " reconcile\"", name, e.getCode(), e.getMessage());
            }
        }
        Instant now = clock.instant();
        Set<String> fenced = new TreeSet<>();
        if (status.getFencedNodes() != null) {
            status.getFencedNodes().forEach(f -> fenced.add(f.getName()));
        }
        // Nodes whose taint the power-fencing escalation owns (it follows a confirmed power-off).
        fenced.removeIf(n -> nodes.containsKey(n) && taintOwnedElsewhere.test(nodes.get(n)));
        boolean fencesNodes = GroupStatusCalculator.fencesNodes(model);
        FencedNodeRecovery.Plan recovery = FencedNodeRecovery.plan(fenced, facts, outcome.reporting(),
                model.fencingEnabled(), fencesNodes, config.maxOutOfService(), afterFence(group));
        // Every fencing action passes the storm guard first; a refused one is simply not done (asked again at the
        // next reconcile).
        List<FencedNodeRecovery.Action> actions = new ArrayList<>();
        Map<String, StormGuard.Decision> refused = new TreeMap<>();
        for (FencedNodeRecovery.Action a : recovery.actions()) {
            StormGuard.Decision d = a.kind().fences() ? stormGuard.decide(name, a.node(), now) : null;
            if (d == null || d.allowed()) {
                actions.add(a);
            } else {
                refused.put(a.node(), d);
            }
        }
        List<GroupEvent> stormEvents = List.of();
        if (model.valid() && fencesNodes) {
            StormLimitCondition.Outcome storm = StormLimitCondition.apply(status, previous, name,
                    stormGuard.assess(name, now), refused, model.generation(), now);
            status = storm.status();
            stormEvents = storm.events();
        }
        // Remembered before any write, so a failing write never makes the next reconcile announce an Event twice.
        lastStatus.put(name, status);
        // The fencing actions first, before the label, Event and condition writes: on a slow API server those can
        // take long, and a plan made from the caches must not be carried out after its node came back.
        for (FencedNodeRecovery.Action a : actions) {
            if (a.kind().fences() && reportedSince(a.node(), now)) {
                LOG.info("event=fencing_action_skipped group={} node={} action={} reason=\"its agent reported"
                        + " after the plan\"", name, a.node(), a.kind());
                continue;
            }
            boolean done = switch (a.kind()) {
                case ADD_TAINT -> writer.setOutOfService(a.node(), true);
                case REMOVE_TAINT -> writer.setOutOfService(a.node(), false);
                case DELETE_NODE -> writer.deleteNode(a.node());
            };
            // A write that did not go through (a conflict with the kubelet, the API server away, the Node Ready
            // again) is planned again at the next reconcile: no Event says it happened, and the fencing it ends is
            // not over yet.
            if (!done) {
                continue;
            }
            if (a.kind() == FencedNodeRecovery.Kind.REMOVE_TAINT) {
                stormGuard.finished(name, a.node(), now);
            }
            writer.emit(a.event(), group, nodes);
        }
        outcome.labelChanges().forEach((node, change) -> {
            // A clean stop's label removal is never held back: the fenced-node rule reads the label after a
            // controller restart. One final report per stream cannot flood.
            boolean cleanStop = reports.latest(node).map(r -> r.report().getFinalReport()).orElse(false);
            if (!writeLimiter.allowLabelPatch(node, clock.instant()) && !cleanStop) {
                // Not remembered as written: the next reconcile computes it again once the interval has passed.
                return;
            }
            writer.patchLabels(node, change);
            change.forEach((k, v) -> writtenLabels.wrote(node, k, Optional.ofNullable(v), clock.instant()));
        });
        List<GroupEvent> events = new ArrayList<>(outcome.events());
        events.addAll(stormEvents);
        for (GroupEvent e : events) {
            if (writeLimiter.allowEvent(e, clock.instant())) {
                writer.emit(e, group, nodes);
            }
        }
        if (model.valid()) {
            writePeerVotes(model, nodes, outcome.reporting(), now);
            clearPeerVotes(nodes, model.expected().keySet(), "not an expected member of group " + name + " (no "
                    + "peer vote)", now);
        } else {
            clearPeerVotes(nodes, Set.of(), model.fencingEnabled() ? "spec.fencing of group " + name + " is invalid"
                    + " (no peer vote)" : "fencing is off for group " + name + " (no peer vote)", now);
        }
        writeGossipAddresses(model, nodes, now);
        if (lastValidConfigs != null) {
            // Last, after the fencing actions: what the agents are served (while the spec is invalid, the frozen
            // pair), stamped with the generation of the model it was served for, for a replica that starts while
            // the spec is invalid. Deleted at every reconcile without fencing, for as long as the cache shows one (a
            // failed delete is tried again).
            if (model.fencingEnabled()) {
                servedConfig.apply(name).ifPresent(served -> lastValidConfigs.keep(group, served.config(),
                        served.generation(), served.frozen()));
            } else {
                lastValidConfigs.delete(name, group.getMetadata().getUid());
            }
        }
        UpdateControl<NodeGroup> control;
        if (!statusStore.inNodeGroup()) {
            // Where the CRD's owner defines the status, no NodeGroup gets a status write: it is kept in a ConfigMap.
            if (!neverFenced && !status.equals(stored)) {
                statusStore.keep(group, status);
            }
            control = UpdateControl.noUpdate();
        } else if (neverFenced || status.equals(group.getStatus())) {
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
