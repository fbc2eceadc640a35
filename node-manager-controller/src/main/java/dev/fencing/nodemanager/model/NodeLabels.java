package dev.fencing.nodemanager.model;

import java.util.List;

/** Node labels and annotations the controller reads and writes (ARCHITECTURE §3.2, Deckhouse-compatible). */
public final class NodeLabels {

    /** Membership: {@code node.deckhouse.io/group=<NodeGroup name>}. */
    public static final String GROUP = "node.deckhouse.io/group";
    /** Written while the node's agent reports an armed watchdog (value ""). */
    public static final String FENCING_ENABLED = "node-manager.deckhouse.io/fencing-enabled";
    /** Written from the group's mode while its agent reports: {@code Watchdog} or {@code Notify}. */
    public static final String FENCING_MODE = "node-manager.deckhouse.io/fencing-mode";
    /** Maintenance annotations, any value counts; checked in this order, the first present is the reported source. */
    public static final List<String> MAINTENANCE_ANNOTATIONS = List.of(
            "update.node.deckhouse.io/disruption-approved",
            "update.node.deckhouse.io/approved",
            "node-manager.deckhouse.io/fencing-disable");

    private NodeLabels() {
    }
}
