package dev.fencing.nodemanager.model;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

/** Small Node builders for tests. */
public final class TestNodes {

    private TestNodes() {
    }

    /** A node labelled into {@code group} with an InternalIP in 198.18.0.0/15. */
    public static Node node(String name, String group, int ipSuffix) {
        return new NodeBuilder()
                .withNewMetadata().withName(name).addToLabels(NodeLabels.GROUP, group).endMetadata()
                .withNewStatus()
                .addNewAddress().withType("InternalIP").withAddress("198.18.0." + ipSuffix).endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .endStatus()
                .build();
    }
}
