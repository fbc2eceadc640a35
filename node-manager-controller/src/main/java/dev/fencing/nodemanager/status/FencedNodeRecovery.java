package dev.fencing.nodemanager.status;

import dev.fencing.policy.AfterFence;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * node-fencing-controller's recovery step (ARCHITECTURE §7), pure: a node recorded as fenced (safe-to-assume-fenced
 * has passed) gets {@code node.kubernetes.io/out-of-service=nodeshutdown:NoExecute}, so Kubernetes deletes its pods
 * and detaches its volumes without waiting for eviction, and the taint goes again once the node's agent reports and
 * the Node is Ready; or, where the platform recreates machines ({@code afterFence} DeleteNode), its Node is deleted.
 * At most {@code maxOutOfService} nodes of a group carry the taint at once (0 disables tainting). Only taints this
 * controller added are removed. Every fencing action proposed here still needs the storm guard's admission.
 */
public final class FencedNodeRecovery {

    /** What to do with one node. */
    public enum Kind {
        /** Add the out-of-service taint (a fencing action). */
        ADD_TAINT,
        /** Remove our out-of-service taint (the fencing is over). */
        REMOVE_TAINT,
        /** Delete the Node so the platform replaces the machine (a fencing action). */
        DELETE_NODE;

        /** True for the actions that fence and so need the storm guard's admission. */
        public boolean fences() {
            return this != REMOVE_TAINT;
        }
    }

    /** One action and the Event that announces it once done. */
    public record Action(String node, Kind kind, GroupEvent event) {
    }

    /** The actions. */
    public record Plan(List<Action> actions) {
    }

    private FencedNodeRecovery() {
    }

    /**
     * @param fenced          nodes recorded as fenced now
     * @param nodes           facts of every node labelled into the group
     * @param reporting       nodes whose agent reported within the staleness window
     * @param fencingEnabled  false: fencing was switched off, our taints go once nodes are Ready
     * @param fencesNodes     the group is Watchdog + Fence; otherwise (Exclude, Wait, Notify) its nodes keep running
     *                        by design and none is ever tainted or deleted, whatever {@code fenced} says
     * @param maxOutOfService per group, the most nodes carrying our taint at once
     * @param afterFence      TAINT or DELETE_NODE (already resolved against the nodeType)
     */
    public static Plan plan(Set<String> fenced, Map<String, NodeFacts> nodes, Set<String> reporting,
                            boolean fencingEnabled, boolean fencesNodes, int maxOutOfService,
                            AfterFence afterFence) {
        List<Action> actions = new ArrayList<>();
        Set<String> tainted = new TreeSet<>();
        nodes.forEach((n, f) -> {
            if (f.outOfServiceByUs()) {
                tainted.add(n);
            }
        });
        for (String n : new ArrayList<>(tainted)) {
            NodeFacts f = nodes.get(n);
            if (f.ready() && (reporting.contains(n) || !fencingEnabled) && !fenced.contains(n)) {
                tainted.remove(n);
                actions.add(new Action(n, Kind.REMOVE_TAINT, new GroupEvent(true, n, "Normal", "OutOfServiceRemoved",
                        "node " + n + " is Ready and its agent reports again: removed "
                                + NodeFacts.OUT_OF_SERVICE_TAINT)));
            }
        }
        if (!fencingEnabled || !fencesNodes) {
            return new Plan(actions);
        }
        for (String n : new TreeSet<>(fenced)) {
            if (tainted.contains(n) || !nodes.containsKey(n)) {
                continue;
            }
            if (nodes.get(n).outOfServiceByOthers() && afterFence != AfterFence.DELETE_NODE) {
                // Someone else's out-of-service taint already moves its workloads: not replaced, not claimed, and
                // left for them to remove.
                continue;
            }
            if (afterFence == AfterFence.DELETE_NODE) {
                actions.add(new Action(n, Kind.DELETE_NODE, new GroupEvent(true, n, "Warning", "NodeDeleted",
                        "node " + n + " is treated as fenced: deleted the Node so the platform replaces the machine"
                                + " (spec.fencing.afterFence DeleteNode)")));
                continue;
            }
            if (tainted.size() >= maxOutOfService) {
                break;
            }
            actions.add(new Action(n, Kind.ADD_TAINT, new GroupEvent(true, n, "Warning", "OutOfServiceAdded",
                    "node " + n + " is treated as fenced: added " + NodeFacts.OUT_OF_SERVICE_TAINT + "="
                            + NodeFacts.OUT_OF_SERVICE_VALUE + ":" + NodeFacts.OUT_OF_SERVICE_EFFECT
                            + " so its pods and volumes move without waiting for eviction")));
            tainted.add(n);
        }
        return new Plan(actions);
    }
}
