package dev.fencing.policy;

/** An entry of {@code spec.fencing.quorum.tieBreakers}: asked in order only when exactly half is heard. */
public enum TieBreakerKind {
    /** The controller's leader grants the tie to exactly one side (qnetd-like). */
    CONTROL_PLANE("ControlPlane", true),
    /** The side holding the lowest expected member name wins (corosync auto-tie-breaker-like). */
    LOWEST_NAME("LowestName", true),
    /** Shared-disk arbiter (SBD-like). */
    DISK("Disk", true),
    /** Both halves may survive when they reach the Kubernetes API (ADR V1): not split-brain safe. */
    API_REACHABLE("APIReachable", false);

    private final String crdValue;
    private final boolean splitBrainSafe;

    TieBreakerKind(String crdValue, boolean splitBrainSafe) {
        this.crdValue = crdValue;
        this.splitBrainSafe = splitBrainSafe;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "ControlPlane"}. */
    public String crdValue() {
        return crdValue;
    }

    /** False when both halves of an even split may keep quorum through this tie-breaker. */
    public boolean splitBrainSafe() {
        return splitBrainSafe;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values when {@code crdValue} is not one of them
     */
    public static TieBreakerKind parse(String crdValue) {
        return CrdSpelling.parse(TieBreakerKind.class, "tie-breaker", crdValue, TieBreakerKind::crdValue);
    }
}
