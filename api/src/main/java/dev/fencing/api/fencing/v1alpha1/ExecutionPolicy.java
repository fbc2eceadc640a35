package dev.fencing.api.fencing.v1alpha1;

/** How the methods of a stage combine. */
public enum ExecutionPolicy {
    /** Every method must confirm the power state (e.g. a node with two power supplies on two PDUs). */
    All,
    /** The methods in order until one confirms the power state. */
    One
}
