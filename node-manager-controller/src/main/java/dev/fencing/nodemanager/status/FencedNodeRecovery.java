package dev.fencing.nodemanager.status;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * node-fencing-controller's recovery step (ARCHITECTURE §7), pure: a node recorded as fenced (safe-to-assume-fenced
 * has passed) gets {@code node.kubernetes.io/out-of-service=nodeshutdown:NoExecute}, so Kubernetes deletes its pods
 * and detaches its volumes without waiting for eviction; the taint goes again once the node's agent reports and the
 * Node is Ready. Storm limit: at most {@code maxOutOfService} nodes of a group carry the taint at once (0 disables
 * tainting). Only taints this controller added are removed.
 */
public final class FencedNodeRecovery {

    /** One taint to add or remove. */
    public record Action(String node, boolean add) {
    }

    /** The actions and their Events. */
    public record Plan(List<Action> actions, List<GroupEvent> events) {
    }

    private FencedNodeRecovery() {
    }

    /**
     * @param fenced          nodes recorded as fenced now
     * @param nodes           facts of every node labelled into the group
     * @param reporting       nodes whose agent reported within the staleness window
     * @param fencingEnabled  false: fencing was switched off, our taints go once nodes are Ready
     * @param fencesNodes     the group is Watchdog + Fence; otherwise (Exclude, Wait, Notify) its nodes keep running
     *                        by design and none is ever tainted, whatever {@code fenced} says
     * @param maxOutOfService storm limit per group
     */
    public static Plan plan(Set<String> fenced, Map<String, NodeFacts> nodes, Set<String> reporting,
                            boolean fencingEnabled, boolean fencesNodes, int maxOutOfService) {
        List<Action> actions = new ArrayList<>();
        List<GroupEvent> events = new ArrayList<>();
        Set<String> tainted = new TreeSet<>();
        nodes.forEach((n, f) -> {
            if (f.outOfServiceByUs()) {
                tainted.add(n);
            }
        });
        for (String n : new ArrayList<>(tainted)) {
            NodeFacts f = nodes.get(n);
            if (f.ready() && (reporting.contains(n) || !fencingEnabled) && !fenced.contains(n)) {
                actions.add(new Action(n, false));
                tainted.remove(n);
                events.add(new GroupEvent(true, n, "Normal", "OutOfServiceRemoved", "node " + n
                        + " is Ready and its agent reports again: removed " + NodeFacts.OUT_OF_SERVICE_TAINT));
            }
        }
        if (!fencingEnabled || !fencesNodes) {
            return new Plan(actions, events);
        }
        for (String n : new TreeSet<>(fenced)) {
            if (tainted.contains(n) || !nodes.containsKey(n)) {
                continue;
            }
            if (tainted.size() >= maxOutOfService) {
                break;
            }
            actions.add(new Action(n, true));
            tainted.add(n);
            events.add(new GroupEvent(true, n, "Warning", "OutOfServiceAdded", "node " + n + " is treated as fenced:"
                    + " added " + NodeFacts.OUT_OF_SERVICE_TAINT + "=" + NodeFacts.OUT_OF_SERVICE_VALUE + ":"
                    + NodeFacts.OUT_OF_SERVICE_EFFECT + " so its pods and volumes move without waiting for eviction"));
        }
        return new Plan(actions, events);
    }
}
