package dev.fencing.nodemanager.metrics;

import dev.fencing.nodemanager.reconciler.NodeGroupReconciler;
import dev.fencing.nodemanager.grpc.AgentControlService;
import dev.fencing.nodemanager.escalation.KdumpListener;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.cache.Leadership;
import dev.fencing.nodemanager.view.GroupView;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.search.Search;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * Controller-specific meters besides JOSDK's reconcile metrics: leadership, per group the connected agents, the
 * counts of its view (expected, reporting, armed, quorum held), its recorded fenced nodes, its out-of-service taints
 * and its ControlPlane tie grants; stream queue depth, config revision lag, bytes and messages streamed; build info
 * and the JVM and process meters. A deleted group's series are removed.
 */
public final class ControllerMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final ConfigDistributor distributor;
    private static final String PREFIX = "fencing_controller_";
    private static final String VERSION =
            Optional.ofNullable(ControllerMetrics.class.getPackage().getImplementationVersion()).orElse("dev");

    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();

    private final GroupSources groups;
    private final Set<String> groupsWithGauge = ConcurrentHashMap.newKeySet();

    /** What the per-group meters read, each time they are scraped, on this replica. */
    public interface GroupSources {

        /** The group's view as this replica holds it, empty for a group the caches do not know. */
        Optional<GroupView> view(String group);

        /**
         * Entries of the group's {@code status.fencedNodes}: as the leader computed it last, on a follower as the
         * leader wrote it to the NodeGroup (0 without a status).
         */
        int fencedNodes(String group);

        /** Nodes labelled into the group that carry the out-of-service taint this controller added. */
        int outOfServiceTaints(String group);

        /** Ties this replica's ControlPlane tie-breaker newly granted to a side of the group (leader only). */
        long tieGrants(String group);

        /** Whether the group's {@code spec.fencing} is present and refused (the informer caches, every replica). */
        boolean specInvalid(String group);
    }

    /** Registers the replica-wide meters; the per-group ones follow {@link #groupChanged}. */
    public ControllerMetrics(MeterRegistry registry, ConfigDistributor distributor, AgentControlService service,
                             GroupSources groups) {
        this.registry = registry;
        this.distributor = distributor;
        this.groups = groups;
        Gauge.builder("fencing_controller_stream_queue_depth_messages", service, AgentControlService::queuedMessages)
                .description("Messages queued for agents and not yet handed to the transport").register(registry);
        Gauge.builder("fencing_controller_config_revision_lag_max", this, m -> maxLag())
                .description("Largest gap between the revision sent to an agent and the revision it reports applied")
                .register(registry);
        Gauge.builder("fencing_controller_config_revision", distributor, ConfigDistributor::currentRevision)
                .description("Latest configuration revision of this controller's epoch").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_stream_sent_bytes_total", service,
                AgentControlService::bytesSent).description("Serialized bytes handed to agent streams")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_stream_sent_messages_total", service,
                AgentControlService::messagesSent).description("Messages handed to agent streams")
                .register(registry);
        Gauge.builder("fencing_controller_agent_streams", service, AgentControlService::openStreams)
                .description("Agent streams open on this replica").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_streams_refused_total", service,
                AgentControlService::refusedStreams).description("Agent streams refused over --max-agent-streams or the 16 per agent pod")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_stream_overflows_total", service,
                AgentControlService::overflowedStreams)
                .description("Agent streams ended because their queue overflowed (messages or bytes)")
                .register(registry);
        // Dotted, so Micrometer exports it as a Prometheus info metric (fencing_build_info); "_info" would be cut off.
        Gauge.builder("fencing.build.info", () -> 1).tags("version", VERSION, "component", "controller")
                .description("1, labelled with the controller's build version").register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        gcMetrics.bindTo(registry);
    }

    /** Stops listening to GC notifications. */
    @Override
    public void close() {
        gcMetrics.close();
    }

    /**
     * fence_kdump datagrams this replica received: {@code result="node"} from a Node's address, {@code "unmatched"}
     * valid but from no Node's address (they can never count), {@code "invalid"} not a fence_kdump message.
     */
    public void kdump(KdumpListener listener) {
        String description = "fence_kdump datagrams received by this replica";
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_kdump_messages_total", listener,
                l -> l.validMessages() - l.unmatchedMessages()).tag("result", "node").description(description)
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_kdump_messages_total", listener,
                KdumpListener::unmatchedMessages).tag("result", "unmatched").description(description)
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_kdump_messages_total", listener,
                KdumpListener::invalidMessages).tag("result", "invalid").description(description)
                .register(registry);
    }

    /**
     * Power fencings that failed and are still open (the leader's count; 0 on a follower): nodes no stage could
     * power off, whose workloads stay bound to them. Alert {@code FencingPowerFencingFailed}.
     */
    public void powerFencing(dev.fencing.nodemanager.escalation.NodeFencingController controller) {
        io.micrometer.core.instrument.Gauge.builder("fencing_controller_power_fencings_failed", controller,
                        dev.fencing.nodemanager.escalation.NodeFencingController::failedRecords)
                .description("Open NodeFencing records in phase Failed: nodes no stage could power off (leader only)")
                .register(registry);
    }

    /**
     * Agent calls refused before the hello by authentication and authorization (a bad or foreign token, the wrong
     * namespace or ServiceAccount: {@code code="UNAUTHENTICATED"} or {@code "PERMISSION_DENIED"}), or because the
     * TokenReview budget was spent ({@code "UNAVAILABLE"}); each is logged as {@code event=agent_refused}, at most
     * once per code per 10 s.
     */
    public void agentCallsRefused(dev.fencing.nodemanager.grpc.auth.AgentAuthInterceptor interceptor) {
        for (io.grpc.Status.Code code : List.of(io.grpc.Status.Code.UNAUTHENTICATED,
                io.grpc.Status.Code.PERMISSION_DENIED, io.grpc.Status.Code.UNAVAILABLE)) {
            io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_agent_calls_refused_total",
                            interceptor, i -> i.refusedCalls(code)).tag("code", code.name())
                    .description("Agent calls refused by authentication, authorization or the TokenReview budget")
                    .register(registry);
        }
    }

    /** Counts what the per-node write rate limit held back. */
    public void writeLimits(NodeGroupReconciler reconciler) {
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_report_writes_limited_total",
                        reconciler, NodeGroupReconciler::limitedLabelPatches).tag("kind", "label_patch")
                .description("Report-driven writes held back by the per-node rate limit").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_report_writes_limited_total",
                        reconciler, NodeGroupReconciler::limitedEvents).tag("kind", "event")
                .description("Report-driven writes held back by the per-node rate limit").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_report_writes_limited_total",
                        reconciler, NodeGroupReconciler::limitedConditionPatches).tag("kind", "node_condition")
                .description("Report-driven writes held back by the per-node rate limit").register(registry);
    }

    /** 1 while this replica leads; summed over replicas it is the number of leaders (alert: below 1). */
    public void leadership(Leadership leadership) {
        Gauge.builder("fencing_controller_leader", leadership, l -> l.isLeader() ? 1 : 0)
                .description("1 while this replica leads (writes status, labels and events; grants tie-breaks)")
                .register(registry);
    }

    /**
     * Registers the per-group gauges when a group has fencing on, and removes its series when it has not (fencing
     * switched off, or the group deleted), so dashboards and alerts stop seeing it. The node counts of the view
     * come from the reports this replica holds: the leader holds every agent's, a follower only its own agents'.
     * Fenced nodes and taints come from the informer caches, the same on every replica; tie grants are counted by
     * the leader (followers forward tie-break requests), so they sum over replicas.
     */
    public void groupChanged(String group, boolean fencingEnabled) {
        if (!fencingEnabled) {
            groupGone(group);
        } else if (groupsWithGauge.add(group)) {
            Gauge.builder("fencing_controller_connected_agents", distributor,
                            d -> d.subscriberCounts().getOrDefault(group, 0))
                    .tag("group", group)
                    .description("Agents holding an AgentControl stream to this replica")
                    .register(registry);
            groupGauge(group, "fencing_controller_group_expected_nodes", "Expected members of the group",
                    v -> v.members().size());
            groupGauge(group, "fencing_controller_group_quorum_size_nodes",
                    "Votes a partition needs to hold quorum (0 when the spec is invalid or fencing is off)",
                    GroupView::quorumSize);
            groupGauge(group, "fencing_controller_group_reporting_nodes",
                    "Members with a fresh report at this replica", v -> count(v, GroupView.NodeRow::reporting));
            groupGauge(group, "fencing_controller_group_armed_nodes", "Members whose fresh report says armed",
                    v -> count(v, r -> Boolean.TRUE.equals(r.armed())));
            groupGauge(group, "fencing_controller_group_quorum_held_nodes",
                    "Members whose fresh report says quorum held", v -> count(v, r -> Boolean.TRUE.equals(r.quorumHeld())));
            Gauge.builder("fencing_controller_group_fenced_nodes", groups, g -> g.fencedNodes(group))
                    .tag("group", group)
                    .description("Nodes the group's status.fencedNodes records as fenced (safe-to-assume-fenced)")
                    .register(registry);
            Gauge.builder("fencing_controller_group_out_of_service_nodes", groups,
                            g -> g.outOfServiceTaints(group))
                    .tag("group", group)
                    .description("Nodes of the group carrying the out-of-service taint this controller added")
                    .register(registry);
            Gauge.builder("fencing_controller_group_spec_invalid", groups, g -> g.specInvalid(group) ? 1 : 0)
                    .tag("group", group)
                    .description("1 while the group's spec.fencing is refused (Ready=False, InvalidSpec): its agents"
                            + " run on the last valid policy and members")
                    .register(registry);
            io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_tie_grants_total", groups,
                            g -> g.tieGrants(group))
                    .tag("group", group)
                    .description("Ties newly granted by the ControlPlane tie-breaker (renewals not counted)")
                    .register(registry);
        }
    }

    private void groupGone(String group) {
        if (groupsWithGauge.remove(group)) {
            // Only this class's meters: JOSDK's reconcile meters use a "group" tag for the API group.
            for (Meter m : Search.in(registry).tag("group", group).meters()) {
                if (m.getId().getName().startsWith(PREFIX)) {
                    registry.remove(m);
                }
            }
        }
    }

    private void groupGauge(String group, String name, String description, ToIntFunction<GroupView> value) {
        Gauge.builder(name, groups, g -> g.view(group).map(value::applyAsInt).orElse(0))
                .tag("group", group).description(description).register(registry);
    }

    private static int count(GroupView view, Predicate<GroupView.NodeRow> p) {
        return (int) view.nodes().stream().filter(p).count();
    }

    private double maxLag() {
        List<Long> lags = distributor.revisionLags();
        return lags.stream().mapToLong(Long::longValue).max().orElse(0);
    }
}
