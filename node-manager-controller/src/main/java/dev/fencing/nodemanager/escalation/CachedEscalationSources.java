package dev.fencing.nodemanager.escalation;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroup;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The escalation's inputs from this replica's caches: the nodes of every Watchdog + Fence group, when the group's
 * status records them as fenced, their agents' last watchdog condition and Kubernetes' view.
 */
public final class CachedEscalationSources implements NodeFencingController.Sources {

    private final ClusterCache cache;
    private final AgentReports reports;
    private final NodeLeases leases;
    private final Duration staleAfter;
    private final InstantSource clock;

    /** @param staleAfter a report older than this no longer counts as the agent reporting */
    public CachedEscalationSources(ClusterCache cache, AgentReports reports, NodeLeases leases, Duration staleAfter,
                                   InstantSource clock) {
        this.cache = cache;
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
            Optional<NodeGroup> group = cache.nodeGroup(model.group());
            group.map(NodeGroup::getStatus).map(s -> s.getFencedNodes()).ifPresent(list -> {
                for (FencedNode f : list) {
                    fencedAt.put(f.getName(), Instant.parse(f.getFencedAt()));
                }
            });
            for (Node node : cache.nodesOf(model.group())) {
                String name = node.getMetadata().getName();
                Optional<ReceivedReport> last = reports.latest(name);
                out.add(new EscalationTrigger.Candidate(node, model.group(), fencedAt.get(name),
                        last.map(r -> r.report().getWatchdogCondition()).orElse(null), reporting(last),
                        NodeFacts.of(node, leases.renewedAt(name).orElse(null))));
            }
        }
        return out;
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
