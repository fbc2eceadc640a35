package dev.fencing.nodemanager.stream;

import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import java.util.Objects;

/**
 * One entry of a group's configuration history.
 *
 * @param revision   the revision this change produces
 * @param delta      the change, without base_revision (that depends on what each agent last received)
 * @param targetNode the only node this change concerns (a signals change), or null for every member's agent
 */
public record ConfigChange(long revision, ConfigDelta delta, String targetNode, long batch) {

    /** A change of its own (its own batch). */
    public ConfigChange(long revision, ConfigDelta delta, String targetNode) {
        this(revision, delta, targetNode, -revision);
    }

    /** Checks that the delta is present. */
    public ConfigChange {
        Objects.requireNonNull(delta, "delta");
    }

    /** True when the agent of {@code node} must receive this change. */
    public boolean concerns(String node) {
        return targetNode == null || targetNode.equals(node);
    }
}
