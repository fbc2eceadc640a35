package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.NodeGroupStatus;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The {@value #TYPE} condition of a fencing-enabled group: whether this controller runs the group's agents, or a
 * DaemonSet of the same name belongs to someone else (Deckhouse's own agent, an older install) and is left alone.
 * Entering {@value #NOT_OWNED} emits one Warning Event; the condition turns True once the controller's own DaemonSet
 * is in place.
 */
public final class AgentDaemonSetCondition {

    /** Condition type. */
    public static final String TYPE = "AgentDaemonSet";
    /** Reason while the DaemonSet of the group's name belongs to someone else. */
    public static final String NOT_OWNED = "NotOwned";
    /** Reason while the controller's own DaemonSet is applied. */
    public static final String APPLIED = "Applied";

    private AgentDaemonSetCondition() {
    }

    /**
     * @param daemonSet {@code <namespace>/<name>} of the group's DaemonSet
     * @param owner     who owns the DaemonSet found instead of ours, or empty when the controller applied its own
     * @param previous  the status last written (transitions, lastTransitionTime)
     * @param emit      receives the Warning Event when the group enters {@value #NOT_OWNED}
     */
    public static NodeGroupStatus apply(NodeGroupStatus status, NodeGroupStatus previous, String group,
                                        String daemonSet, Optional<String> owner, long generation, Instant now,
                                        Consumer<GroupEvent> emit) {
        if (owner.isEmpty()) {
            return GroupStatusCalculator.withCondition(status, previous, TYPE, "True", APPLIED, "DaemonSet "
                    + daemonSet + " runs this group's agents and is managed by node-manager-controller",
                    generation, now);
        }
        String message = "DaemonSet " + daemonSet + " exists and is not controlled by this NodeGroup (owner: "
                + owner.get() + "); node-manager-controller neither updates nor deletes it and runs no agents for"
                + " this group until it is removed";
        boolean wasNotOwned = previous != null && previous.getConditions() != null && previous.getConditions()
                .stream().anyMatch(c -> TYPE.equals(c.getType()) && NOT_OWNED.equals(c.getReason()));
        if (!wasNotOwned) {
            emit.accept(new GroupEvent(false, group, "Warning", "AgentDaemonSetNotOwned", message));
        }
        return GroupStatusCalculator.withCondition(status, previous, TYPE, "False", NOT_OWNED, message, generation,
                now);
    }
}
