package dev.fencing.nodemanager.storm;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.cache.ClusterCache;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.model.NodeGroupSpecs;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.policy.StormLimits;
import io.fabric8.kubernetes.api.model.Node;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The storm census from this replica's informer caches: every NodeGroup with fencing on, its expected members, which
 * are Ready, and which carry the out-of-service taint this controller added. What a previous leader started is
 * therefore counted by the next one. A group whose spec is invalid is listed too (marked so): the fencings in
 * progress there go on existing, and left out they let other groups exceed {@code --storm-max-concurrent}.
 */
public final class CachedStormCensus implements StormCensus {

    private final ClusterCache cache;
    private final GroupStatusStore statusStore;

    /**
     * @param cache       this replica's caches
     * @param statusStore where the last leader kept each group's status (a storm limit that held: its cooldown)
     */
    public CachedStormCensus(ClusterCache cache, GroupStatusStore statusStore) {
        this.cache = cache;
        this.statusStore = statusStore;
    }

    @Override
    public Map<String, GroupCensus> groups() {
        Map<String, GroupCensus> out = new TreeMap<>();
        for (GroupModel model : cache.models().values()) {
            if (!model.fencingEnabled()) {
                continue;
            }
            cache.nodeGroup(model.group()).ifPresent(ng -> out.put(model.group(),
                    of(model, ng, statusStore.read(ng).orElse(null), cache.nodesOf(model.group()))));
        }
        return out;
    }

    /**
     * One group's census, pure: {@code nodes} are the Nodes labelled into it, {@code kept} the status the last
     * leader kept for it (null: none).
     */
    public static GroupCensus of(GroupModel model, NodeGroup nodeGroup, NodeGroupStatus kept,
                                 Collection<Node> nodes) {
        GroupSpecView view = NodeGroupSpecs.view(nodeGroup);
        StormLimits limits = view.fencing() == null ? StormLimits.DEFAULTS : view.fencing().effectiveStorm();
        Set<String> expected = model.expected().keySet();
        Set<String> members = new HashSet<>();
        Set<String> healthy = new HashSet<>();
        Set<String> fencing = new HashSet<>();
        for (Node node : nodes) {
            String name = node.getMetadata().getName();
            // A Node no kubelet has reported yet (no Ready condition at all: a machine still joining, a controller
            // that started before the kubelets) is not a failed node: counted, a group being set up looked like a
            // storm and its cooldown held back the first real fencing for 10 minutes.
            if (!expected.contains(name) || !reported(node)) {
                continue;
            }
            members.add(name);
            NodeFacts facts = NodeFacts.of(node, null);
            if (facts.outOfServiceByUs()) {
                fencing.add(name);
            } else if (facts.ready()) {
                healthy.add(name);
            }
        }
        return new GroupCensus(model.group(), limits, members, healthy, fencing,
                StormLimitCondition.recordsStorm(kept), model.valid());
    }

    private static boolean reported(Node node) {
        return node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()));
    }
}
