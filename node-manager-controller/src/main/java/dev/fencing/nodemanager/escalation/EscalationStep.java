package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.FenceStage;

/** What the controller does next for one NodeFencing record (decided by {@link EscalationPlanner}). */
public sealed interface EscalationStep {

    /** Nothing now (a stage runs, on this or another replica, or the record is closed). */
    record Wait(String why) implements EscalationStep {
    }

    /** Claim and run a fence stage ({@code recovery}: the recovery stage, powering on). */
    record RunStage(FenceStage stage, boolean recovery, int attempt) implements EscalationStep {
    }

    /** The node is dumping (fence_kdump messages): record it, the power stages wait. */
    record Dumping(java.time.Instant lastMessage) implements EscalationStep {
    }

    /** Apply the out-of-service taint: a stage confirmed the node off, or it is dumping. */
    record Taint() implements EscalationStep {
    }

    /**
     * An operator confirmed the node of a Failed record powered off ({@code fencing.deckhouse.io/powered-off}, value
     * {@code by}): the record becomes Fenced, and the taint follows as after a stage's confirmed power-off.
     */
    record ConfirmPoweredOff(String by) implements EscalationStep {
    }

    /** Close the record: the node is back (Ready and its agent reports). */
    record MarkRecovered(String why) implements EscalationStep {
    }
}
