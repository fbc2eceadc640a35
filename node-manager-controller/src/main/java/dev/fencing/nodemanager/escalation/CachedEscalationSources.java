package dev.fencing.nodemanager.escalation;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.cache.ClusterCache;
import dev.fencing.nodemanager.cache.NodeLeases;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import dev.fencing.nodemanager.status.NodeFacts;
import io.fabric8.kubernetes.api.model.Node;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The escalation's inputs from this replica's caches: the nodes of every Watchdog + Fence group, when the group's
 * status records them as fenced (wherever the status is kept: the leader's latest computation, else the NodeGroup
 * or its status ConfigMap), their agents' last watchdog condition and Kubernetes' view.
 */
public final class CachedEscalationSources implements NodeFencingController.Sources {

    private static final Logger LOG = LoggerFactory.getLogger(CachedEscalationSources.class);

    private final ClusterCache cache;
    private final Function<String, Optional<NodeGroupStatus>> status;
    // fencedAt values that did not parse, logged once each.
    private final Set<String> badFencedAt = ConcurrentHashMap.newKeySet();
    private final AgentReports reports;
    private final NodeLeases leases;
    private final Duration staleAfter;
    private final InstantSource clock;

    /**
     * @param status     a group's status by name: what this replica computed last when it leads, else what the
     *                   leader kept (NodeGroup status or status ConfigMap)
     * @param staleAfter a report older than this no longer counts as the agent reporting
     */
    public CachedEscalationSources(ClusterCache cache, Function<String, Optional<NodeGroupStatus>> status,
                                   AgentReports reports, NodeLeases leases, Duration staleAfter, InstantSource clock) {
        this.cache = cache;
        this.status = status;
        this.reports = reports;
        this.leases = leases;
        this.staleAfter = staleAfter;
        this.clock = clock;
    }

    @Override
    public List<EscalationTrigger.Candidate> candidates() {
        List<EscalationTrigger.Candidate> out = new ArrayList<>();
        for (GroupModel model : cache.models().values()) {
            if (!GroupStatusCalculator.fencesNodes(model)) {
                continue;
            }
            Map<String, Instant> fencedAt = new HashMap<>();
            status.apply(model.group()).map(NodeGroupStatus::getFencedNodes).ifPresent(list -> {
                for (FencedNode f : list) {
                    parse(model.group(), f).ifPresent(at -> fencedAt.put(f.getName(), at));
                }
            });
            for (Node node : cache.nodesOf(model.group())) {
                String name = node.getMetadata().getName();
                Optional<ReceivedReport> last = reports.latest(name);
                out.add(new EscalationTrigger.Candidate(node, model.group(), fencedAt.get(name),
                        last.map(r -> r.report().getWatchdogCondition()).orElse(null),
                        last.map(r -> EscalationTrigger.onPurpose(r.report())).orElse(false), reporting(last),
                        NodeFacts.of(node, leases.renewedAt(name).orElse(null))));
            }
        }
        return out;
    }

    // The status is written by the leader, but anyone with write access to it can put anything there: an entry whose
    // time does not parse counts as not recorded, without holding back the group's other nodes.
    private Optional<Instant> parse(String group, FencedNode f) {
        try {
            return Optional.of(Instant.parse(f.getFencedAt()));
        } catch (DateTimeParseException | NullPointerException e) {
            if (badFencedAt.add(group + "/" + f.getName() + "/" + f.getFencedAt())) {
                LOG.warn("event=fenced_node_ignored group={} node={} fenced_at=\"{}\" detail=\"not an RFC 3339 time; "
                        + "not escalated on this entry\"", group, f.getName(), f.getFencedAt());
            }
            return Optional.empty();
        }
    }

    @Override
    public boolean returned(String node) {
        boolean ready = cache.groupOf(node).flatMap(g -> cache.nodesOf(g).stream()
                .filter(n -> n.getMetadata().getName().equals(node)).findFirst())
                .map(n -> NodeFacts.of(n, null).ready()).orElse(false);
        return ready && reporting(reports.latest(node));
    }

    private boolean reporting(Optional<ReceivedReport> last) {
        return last.map(r -> r.receivedAt().plus(staleAfter).isAfter(clock.instant())).orElse(false);
    }
}
