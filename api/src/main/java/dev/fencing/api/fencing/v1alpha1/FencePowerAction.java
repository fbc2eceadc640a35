package dev.fencing.api.fencing.v1alpha1;

/** What the fence stages do to a node's power once they confirmed it off. */
public enum FencePowerAction {
    /** Leave it off: the node stays down until the record is annotated for recovery (or someone powers it on). */
    Off,
    /**
     * Power it on again right after the confirmed power-off: the node boots and rejoins by itself, the record closes
     * when it is back (Ready, agent reporting).
     */
    Reboot
}
