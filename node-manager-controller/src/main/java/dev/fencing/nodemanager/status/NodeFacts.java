package dev.fencing.nodemanager.status;

import io.fabric8.kubernetes.api.model.Node;
import java.util.Map;

/**
 * What fenced-node recovery needs to know about one Node.
 *
 * @param outOfServiceByUs the node carries {@code node.kubernetes.io/out-of-service} and this controller put it there
 * @param ready            the Node's Ready condition is True
 */
public record NodeFacts(boolean outOfServiceByUs, boolean ready) {

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

    /** Reads the facts of a Node. */
    public static NodeFacts of(Node node) {
        boolean taint = node.getSpec() != null && node.getSpec().getTaints() != null
                && node.getSpec().getTaints().stream().anyMatch(t -> OUT_OF_SERVICE_TAINT.equals(t.getKey()));
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        boolean ours = taint && annotations != null && TAINTED_BY.equals(annotations.get(TAINTED_BY_ANNOTATION));
        boolean ready = node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        return new NodeFacts(ours, ready);
    }
}
