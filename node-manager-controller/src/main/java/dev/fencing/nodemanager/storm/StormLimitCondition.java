package dev.fencing.nodemanager.storm;

import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The NodeGroup condition {@code FencingStormLimit}, pure: True with the limit as reason and the guard's words as
 * message while a storm limit holds fencing back in the group (or would hold any new one: minHealthy, cooldown);
 * False ({@code WithinLimits}) otherwise. A Warning Event {@code FencingStormLimited} announces each new hold (the
 * condition turning True, or its reason changing).
 */
public final class StormLimitCondition {

    /** Condition type. */
    public static final String TYPE = "FencingStormLimit";
    /** Event reason. */
    public static final String EVENT_REASON = "FencingStormLimited";
    /** Reason while nothing is held back. */
    public static final String WITHIN_LIMITS = "WithinLimits";

    /** The status with the condition, and the Events to emit. */
    public record Outcome(NodeGroupStatus status, List<GroupEvent> events) {
    }

    private StormLimitCondition() {
    }

    /**
     * @param status     the status being written
     * @param previous   the status as last written (for transitions)
     * @param group      NodeGroup name
     * @param assessed   the guard's node-independent view of the group ({@link StormGuard#assess}), empty when the
     *                   group is not a fencing group
     * @param refused    the guard's refusals for this group's candidates in this reconcile, by node
     * @param generation metadata.generation
     * @param now        controller clock
     */
    public static Outcome apply(NodeGroupStatus status, NodeGroupStatus previous, String group,
                                Optional<StormGuard.Decision> assessed,
                                java.util.Map<String, StormGuard.Decision> refused, long generation, Instant now) {
        StormGuard.Decision held = assessed.filter(d -> !d.allowed()).orElse(null);
        if (held == null && !refused.isEmpty()) {
            held = refused.values().iterator().next();
        }
        List<GroupEvent> events = new ArrayList<>();
        if (held == null) {
            return new Outcome(GroupStatusCalculator.withCondition(status, previous, TYPE, "False", WITHIN_LIMITS,
                    "no fencing action is held back by the storm limits", generation, now), events);
        }
        Set<String> waiting = new TreeSet<>(refused.keySet());
        String message = held.message() + (waiting.isEmpty() ? "" : "; waiting: " + String.join(", ", waiting));
        Optional<Condition> before = condition(previous);
        boolean newHold = before.isEmpty() || !"True".equals(before.get().getStatus())
                || !held.limit().reason().equals(before.get().getReason());
        if (newHold) {
            events.add(new GroupEvent(false, group, "Warning", EVENT_REASON, message));
        }
        return new Outcome(GroupStatusCalculator.withCondition(status, previous, TYPE, "True", held.limit().reason(),
                message, generation, now), events);
    }

    /**
     * True when {@code status} says a limit after which the cooldown runs held (so a new leader, which has no memory
     * of when, starts a full cooldown).
     */
    public static boolean recordsStorm(NodeGroupStatus status) {
        return condition(status).filter(c -> "True".equals(c.getStatus())).map(Condition::getReason)
                .filter(r -> java.util.Arrays.stream(StormLimit.values())
                        .anyMatch(l -> l.startsCooldown() && l.reason().equals(r)))
                .isPresent();
    }

    private static Optional<Condition> condition(NodeGroupStatus status) {
        if (status == null || status.getConditions() == null) {
            return Optional.empty();
        }
        return status.getConditions().stream().filter(c -> TYPE.equals(c.getType())).findFirst();
    }
}
