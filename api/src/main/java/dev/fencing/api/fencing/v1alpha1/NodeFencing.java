package dev.fencing.api.fencing.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.PrinterColumnFormat;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One fencing event of one node ({@code fencing.deckhouse.io/v1alpha1}, cluster-scoped), created and driven by the
 * node-manager controller's leader: the stages it ran, each agent invocation with its exit code and output (secrets
 * removed), and the out-of-service taint and recovery that followed. The status is the escalation's only state, so a
 * new leader continues where the previous one stopped.
 */
@Group(NodeFencingConfig.GROUP)
@Version(NodeFencingConfig.VERSION)
@Kind("NodeFencing")
@Plural(NodeFencing.PLURAL)
@Singular("nodefencing")
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.nodeName", type = AdditionalPrinterColumn.Type.STRING,
        getDescription = "The fenced node.")
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING,
        getDescription = "Where the escalation is.")
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE, format = PrinterColumnFormat.NONE,
        getDescription = "Time since the fencing event started.")
public final class NodeFencing extends CustomResource<NodeFencingSpec, NodeFencingStatus> {

    private static final long serialVersionUID = 1L;

    /** Plural resource name. */
    public static final String PLURAL = "nodefencings";
    /** CRD name, also the base name of the generated YAML. */
    public static final String CRD_NAME = PLURAL + "." + NodeFencingConfig.GROUP;
    /** Annotation asking the controller to run the recovery stage (power on); any value. */
    public static final String RECOVER_ANNOTATION = NodeFencingConfig.GROUP + "/recover";
    /**
     * Annotation by which an operator confirms that the node of a {@code Failed} record is powered off (by hand: the
     * BMC's own interface, a PDU); any value (who, a ticket). The record moves to {@code Fenced} and the node gets
     * the out-of-service taint as after a stage's confirmed power-off, unless its Node is Ready.
     */
    public static final String POWERED_OFF_ANNOTATION = NodeFencingConfig.GROUP + "/powered-off";
    /**
     * Finalizer on every record the controller creates: a record deleted before its node returned stays (terminating)
     * and keeps holding its node, so its fencing event is not escalated again; the controller removes the finalizer
     * once the node has returned, its Node is deleted, or the record was closed.
     */
    public static final String HOLDS_NODE_FINALIZER = NodeFencingConfig.GROUP + "/holds-node";
    /**
     * Label naming the node, so a node's records are listed with a selector; its value is
     * {@link #nodeLabelValue}.
     */
    public static final String NODE_LABEL = NodeFencingConfig.GROUP + "/node";
    /** The longest label value Kubernetes accepts. */
    static final int MAX_LABEL_VALUE = 63;

    /**
     * The {@link #NODE_LABEL} value for {@code node}: the node's name when it fits a label value (63 characters; a
     * Node name may have up to 253), else its first 52 characters, {@code -} and the first 10 hex digits of the
     * name's SHA-256, so a long name (a fully qualified host name) still gets a valid, distinct label.
     */
    public static String nodeLabelValue(String node) {
        if (node.length() <= MAX_LABEL_VALUE) {
            return node;
        }
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(node.getBytes(StandardCharsets.UTF_8));
            String head = node.substring(0, 52).replaceAll("[^A-Za-z0-9]+$", "");
            return head + "-" + HexFormat.of().formatHex(sha).substring(0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    /** An empty record; Jackson fills it. */
    public NodeFencing() {
    }
}
