package dev.fencing.nodemanager.escalation;

/**
 * The power state a stage drives a node to, with the fence agents' {@code status} exit code that confirms it (the
 * ClusterLabs convention: 0 on, 2 off, 1 error).
 */
public enum PowerAction {
    /** Fence stages. */
    OFF("off", 2),
    /**
     * Fence stages with {@code powerAction: Reboot}: off, confirmed by {@code status}, then {@code on}. The stage
     * succeeds on the confirmed power-off (what lets the workloads move); the {@code on} that follows is recorded.
     */
    REBOOT("off", 2),
    /** The recovery stage. */
    ON("on", 0);

    private final String action;
    private final int confirmingStatusExit;

    PowerAction(String action, int confirmingStatusExit) {
        this.action = action;
        this.confirmingStatusExit = confirmingStatusExit;
    }

    /** The {@code action=} value. */
    public String action() {
        return action;
    }

    /** The {@code status} exit code that confirms this state. */
    public int confirmingStatusExit() {
        return confirmingStatusExit;
    }
}
