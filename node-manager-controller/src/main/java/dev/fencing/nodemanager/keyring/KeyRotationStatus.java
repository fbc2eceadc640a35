package dev.fencing.nodemanager.keyring;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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
        List<Condition> before = previous == null || previous.getConditions() == null ? List.of()
                : previous.getConditions();
        KeyRotationPlanner.RotationCondition c = plan.condition().get();
        Long generation = group.getMetadata().getGeneration();
        List<Condition> conditions = new ArrayList<>(status.getConditions() == null ? List.of()
                : status.getConditions());
        conditions.removeIf(x -> KeyRotationPlanner.CONDITION.equals(x.getType()));
        conditions.add(GroupStatusCalculator.condition(before, KeyRotationPlanner.CONDITION, c.status(), c.reason(),
                c.message(), generation == null ? 0 : generation, now));
        return status.withConditions(conditions);
    }
}
