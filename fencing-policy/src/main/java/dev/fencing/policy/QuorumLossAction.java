package dev.fencing.policy;

/** {@code spec.fencing.quorumLossAction}: what a node does when it loses quorum. */
public enum QuorumLossAction {
    /** Stop feeding the watchdog so the node is reset; requires {@link Mode#WATCHDOG}. */
    FENCE("Fence"),
    /** Stay up but announce "isolated" in gossip so every agent that still hears the node reports it LEFT. */
    EXCLUDE("Exclude"),
    /** Only report. */
    WAIT("Wait");

    private final String crdValue;

    QuorumLossAction(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "Fence"}. */
    public String crdValue() {
        return crdValue;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values when {@code crdValue} is not one of them
     */
    public static QuorumLossAction parse(String crdValue) {
        return CrdSpelling.parse(QuorumLossAction.class, "quorumLossAction", crdValue, QuorumLossAction::crdValue);
    }
}
