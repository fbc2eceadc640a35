package dev.fencing.nodemanager.model;

import java.util.Objects;

/**
 * Per-node signals the controller sends to that node's agent.
 *
 * @param maintenanceSource the annotation that put the node in maintenance, or null
 * @param maintenanceValue  its value (informational), or null
 * @param beingRemoved      deletionTimestamp set or the node left the group: disarm, not expected
 * @param removalReason     why, when beingRemoved
 */
public record NodeSignal(String maintenanceSource, String maintenanceValue, boolean beingRemoved,
                         String removalReason) {

    /** No maintenance, not being removed. */
    public static final NodeSignal NONE = new NodeSignal(null, null, false, "");

    /** Normalises the reason. */
    public NodeSignal {
        removalReason = Objects.requireNonNullElse(removalReason, "");
    }

    /** The signal for a node that is no longer labelled into {@code group}. */
    public static NodeSignal leftGroup(String group) {
        return new NodeSignal(null, null, true, "label " + NodeLabels.GROUP + " no longer names group " + group
                + " (relabelled, unlabelled or Node deleted)");
    }

    /** True while a maintenance annotation is present. */
    public boolean inMaintenance() {
        return maintenanceSource != null;
    }
}
