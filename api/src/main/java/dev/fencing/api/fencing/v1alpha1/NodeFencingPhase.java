package dev.fencing.api.fencing.v1alpha1;

/** {@code NodeFencing.status.phase}. */
public enum NodeFencingPhase {
    /** Recorded, no stage started yet. */
    Pending,
    /** The node sends kdump messages: it counts as fenced, the power stages wait. */
    Dumping,
    /** A stage is running (see {@code status.currentStage}). */
    Fencing,
    /** A stage confirmed the node powered off; the out-of-service taint follows. */
    Fenced,
    /** No stage fenced the node, or a mustSucceed stage failed; nothing more is tried for this event. */
    Failed,
    /** The recovery stage is running. */
    Recovering,
    /** The recovery stage confirmed the node powered on, or the node returned by itself. */
    Recovered
}
