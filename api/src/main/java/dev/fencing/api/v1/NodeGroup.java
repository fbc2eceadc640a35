package dev.fencing.api.v1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.PrinterColumnFormat;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A Deckhouse NodeGroup ({@code deckhouse.io/v1}, cluster-scoped): a set of nodes labelled
 * {@code node.deckhouse.io/group=<name>}. This model carries the fields fencing needs ({@code spec.nodeType},
 * {@code spec.fencing}) and the status the node-manager controller writes. In a Deckhouse cluster the platform owns
 * the CRD; the chart installs the one generated from this class only in standalone clusters.
 *
 * <p>Besides the status counts, {@code kubectl get nodegroups} shows {@code Ready} (the status of the {@code Ready}
 * condition: fencing configured and every expected agent reporting, or fencing off), its reason with {@code -o wide},
 * {@code QuorumHealthy} (that condition's status: at least a quorum of members report quorum held) and {@code Age};
 * a CRD that lists printer columns loses the API server's default Age column, hence the explicit one.
 */
@Group(NodeGroup.GROUP)
@Version(NodeGroup.VERSION)
@Kind(NodeGroup.KIND)
@Plural(NodeGroup.PLURAL)
@Singular("nodegroup")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
        type = AdditionalPrinterColumn.Type.STRING,
        getDescription = "Status of the Ready condition: fencing is off, or configured and every expected agent reports.")
@AdditionalPrinterColumn(name = "QuorumHealthy",
        jsonPath = ".status.conditions[?(@.type==\"QuorumHealthy\")].status",
        type = AdditionalPrinterColumn.Type.STRING,
        getDescription = "Status of the QuorumHealthy condition: at least quorumSize members report quorum held.")
@AdditionalPrinterColumn(name = "Reason", jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
        type = AdditionalPrinterColumn.Type.STRING, priority = 1,
        getDescription = "Reason of the Ready condition (e.g. AgentsReporting, AgentsNotReporting, InvalidSpec).")
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE, format = PrinterColumnFormat.NONE,
        getDescription = "Time since the NodeGroup was created.")
public final class NodeGroup extends CustomResource<NodeGroupSpec, NodeGroupStatus> {

    private static final long serialVersionUID = 1L;

    /** API group. */
    public static final String GROUP = "deckhouse.io";
    /** API version. */
    public static final String VERSION = "v1";
    /** Kind. */
    public static final String KIND = "NodeGroup";
    /** Plural resource name. */
    public static final String PLURAL = "nodegroups";
    /** CRD name, also the base name of the generated YAML ({@code <CRD_NAME>-v1.yml}). */
    public static final String CRD_NAME = PLURAL + "." + GROUP;
    /** Node label that makes a Node a member of the group named by its value. */
    public static final String GROUP_LABEL = "node.deckhouse.io/group";

    /** An empty NodeGroup; Jackson fills it. */
    public NodeGroup() {
    }
}
