package dev.fencing.api.fencing.v1alpha1;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * How the controller power-fences nodes whose self-fencing it cannot trust ({@code fencing.deckhouse.io/v1alpha1},
 * cluster-scoped): which nodes, the ordered fence stages of ClusterLabs {@code fence_*} agents, the recovery stage,
 * the grace after safe-to-assume-fenced, and kdump. Only the node-manager controller's leader runs the stages; each
 * run is recorded in a {@link NodeFencing}.
 */
@Group(NodeFencingConfig.GROUP)
@Version(NodeFencingConfig.VERSION)
@Kind("NodeFencingConfig")
@Plural(NodeFencingConfig.PLURAL)
@Singular("nodefencingconfig")
public final class NodeFencingConfig extends CustomResource<NodeFencingConfigSpec, Void> {

    private static final long serialVersionUID = 1L;

    /** API group of both fencing CRDs. */
    public static final String GROUP = "fencing.deckhouse.io";
    /** API version of both fencing CRDs. */
    public static final String VERSION = "v1alpha1";
    /** Plural resource name. */
    public static final String PLURAL = "nodefencingconfigs";
    /** CRD name, also the base name of the generated YAML. */
    public static final String CRD_NAME = PLURAL + "." + GROUP;

    /** An empty config; Jackson fills it. */
    public NodeFencingConfig() {
    }
}
