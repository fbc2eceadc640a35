package dev.fencing.nodemanager.keyring;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import java.time.Instant;
import java.util.function.Consumer;

/** Puts a rotation decision into the group's status: the {@code GossipKeyRotation} condition and its Event. */
public final class KeyRotationStatus {

    private KeyRotationStatus() {
    }

    /**
     * The status with the rotation's condition added (replacing an older one); the decision's Event goes to
     * {@code emit}.
     *
     * @param previous the status last written, whose condition keeps its lastTransitionTime
     */
    public static NodeGroupStatus apply(KeyRotationPlanner.Plan plan, NodeGroupStatus status,
                                        NodeGroupStatus previous, NodeGroup group, Instant now,
                                        Consumer<GroupEvent> emit) {
        plan.event().ifPresent(emit);
        if (plan.condition().isEmpty()) {
            return status;
        }
        KeyRotationPlanner.RotationCondition c = plan.condition().get();
        Long generation = group.getMetadata().getGeneration();
        return GroupStatusCalculator.withCondition(status, previous, KeyRotationPlanner.CONDITION, c.status(),
                c.reason(), c.message(), generation == null ? 0 : generation, now);
    }
}
