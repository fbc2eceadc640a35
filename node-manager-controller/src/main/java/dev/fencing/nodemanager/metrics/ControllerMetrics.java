package dev.fencing.nodemanager.metrics;

import dev.fencing.nodemanager.reconciler.NodeGroupReconciler;
import dev.fencing.nodemanager.grpc.AgentControlService;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Controller-specific meters besides JOSDK's reconcile metrics: connected agents per group, stream queue depth,
 * config revision lag, bytes and messages streamed.
 */
public final class ControllerMetrics {

    private final MeterRegistry registry;
    private final ConfigDistributor distributor;
    private final Set<String> groupsWithGauge = ConcurrentHashMap.newKeySet();

    public ControllerMetrics(MeterRegistry registry, ConfigDistributor distributor, AgentControlService service) {
        this.registry = registry;
        this.distributor = distributor;
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
                AgentControlService::refusedStreams).description("Agent streams refused over --max-agent-streams")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_stream_overflows_total", service,
                AgentControlService::overflowedStreams)
                .description("Agent streams ended because their queue overflowed (messages or bytes)")
                .register(registry);
        new JvmMemoryMetrics().bindTo(registry);
    }

    /** Counts what the per-node write rate limit held back. */
    public void writeLimits(NodeGroupReconciler reconciler) {
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_report_writes_limited_total",
                        reconciler, NodeGroupReconciler::limitedLabelPatches).tag("kind", "label_patch")
                .description("Report-driven writes held back by the per-node rate limit").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fencing_controller_report_writes_limited_total",
                        reconciler, NodeGroupReconciler::limitedEvents).tag("kind", "event")
                .description("Report-driven writes held back by the per-node rate limit").register(registry);
    }

    /** Registers the per-group gauge the first time a group is seen. */
    public void groupSeen(String group) {
        if (groupsWithGauge.add(group)) {
            Gauge.builder("fencing_controller_connected_agents", distributor,
                            d -> d.subscriberCounts().getOrDefault(group, 0))
                    .tag("group", group)
                    .description("Agents holding an AgentControl stream to this replica")
                    .register(registry);
        }
    }

    private double maxLag() {
        List<Long> lags = distributor.revisionLags();
        return lags.stream().mapToLong(Long::longValue).max().orElse(0);
    }
}
