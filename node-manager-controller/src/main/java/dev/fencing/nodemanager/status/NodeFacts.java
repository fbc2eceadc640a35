package dev.fencing.nodemanager.status;

import io.fabric8.kubernetes.api.model.Node;
import java.time.Instant;
import java.util.Map;

/**
 * What the fenced-node rule and recovery need to know about one Node from Kubernetes.
 *
 * @param outOfServiceByUs the node carries {@code node.kubernetes.io/out-of-service} and this controller put it there
 * @param ready            the Node's Ready condition is True
 * @param leaseRenewedAt   when its kubelet last renewed its {@code kube-node-lease} Lease as this replica knows it
 *                         (see {@code NodeLeases}), or null when no renewal was seen
 * @param outOfServiceByOthers the node carries {@code node.kubernetes.io/out-of-service} without our marker: an
 *                         administrator (Kubernetes' non-graceful shutdown procedure) or another tool put it there;
 *                         its workloads move already, and it is theirs to remove
 */
public record NodeFacts(boolean outOfServiceByUs, boolean ready, Instant leaseRenewedAt,
                        boolean outOfServiceByOthers) {

    /** Facts of a Node without someone else's out-of-service taint. */
    public NodeFacts(boolean outOfServiceByUs, boolean ready, Instant leaseRenewedAt) {
        this(outOfServiceByUs, ready, leaseRenewedAt, false);
    }

    /** Taint key of Kubernetes' non-graceful node shutdown. */
    public static final String OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service";
    /** Taint value and effect used here. */
    public static final String OUT_OF_SERVICE_VALUE = "nodeshutdown";
    /** Effect of the taint. */
    public static final String OUT_OF_SERVICE_EFFECT = "NoExecute";
    /** Annotation marking a taint this controller added (it removes only its own). */
    public static final String TAINTED_BY_ANNOTATION = "node-manager.deckhouse.io/out-of-service-by";
    /** Value of {@link #TAINTED_BY_ANNOTATION}. */
    public static final String TAINTED_BY = "fencing";

    /** Reads the facts of a Node, with its Lease's renewal (null: none seen). */
    public static NodeFacts of(Node node, Instant leaseRenewedAt) {
        boolean taint = node.getSpec() != null && node.getSpec().getTaints() != null
                && node.getSpec().getTaints().stream().anyMatch(t -> OUT_OF_SERVICE_TAINT.equals(t.getKey()));
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        boolean ours = taint && annotations != null && TAINTED_BY.equals(annotations.get(TAINTED_BY_ANNOTATION));
        boolean ready = node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        return new NodeFacts(ours, ready, leaseRenewedAt, taint && !ours);
    }

    /**
     * True when Kubernetes agrees the node is gone as of {@code now}: its Node is not Ready and its kubelet has not
     * renewed its Lease within {@code within} (a node without any Lease renewal seen counts as not renewing; its
     * kubelet, if alive, recreates the Lease within seconds).
     */
    public boolean goneFor(Instant now, java.time.Duration within) {
        return !ready && (leaseRenewedAt == null || !now.isBefore(leaseRenewedAt.plus(within)));
    }
}
