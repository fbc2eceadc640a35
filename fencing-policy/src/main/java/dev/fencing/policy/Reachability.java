package dev.fencing.policy;

/**
 * {@code spec.fencing.reachability}: how a peer's round trips on several gossip networks combine into one vote.
 * With one network both rules mean the same.
 */
public enum Reachability {
    /** A peer counts when a round trip with it is confirmed on at least one network (a network may fail alone). */
    ANY("Any"),
    /** A peer counts only when round trips with it are confirmed on every network (losing one network fences). */
    ALL("All");

    private final String crdValue;

    Reachability(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "Any"}. */
    public String crdValue() {
        return crdValue;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values when {@code crdValue} is not one of them
     */
    public static Reachability parse(String crdValue) {
        return CrdSpelling.parse(Reachability.class, "reachability", crdValue, Reachability::crdValue);
    }
}
