package dev.fencing.policy;

/**
 * {@code spec.fencing.profile}: the timing set. {@link #AUTO} scales with the group size along the ADR table; the
 * others are fixed sets, each equal to one row of that table (see fencing-policy/README.md).
 */
public enum Profile {
    /** Scaled by the number of expected members, interpolated on a log scale between the ADR table rows. */
    AUTO("Auto", 0),
    /** The ADR row for N=3: probe 500ms, gossip 200ms. */
    CRITICAL("Critical", 3),
    /** The ADR row for N=10: probe 750ms, gossip 250ms. */
    MEDIUM("Medium", 10),
    /** The ADR row for N=100: probe 1.5s, gossip 500ms. */
    MODERATE("Moderate", 100),
    /** The ADR row for N=1000: probe 3s, gossip 1.5s. */
    SLOW("Slow", 1000);

    private final String crdValue;
    private final int anchorSize;

    Profile(String crdValue, int anchorSize) {
        this.crdValue = crdValue;
        this.anchorSize = anchorSize;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "Auto"}. */
    public String crdValue() {
        return crdValue;
    }

    /** The group size of the ADR table row this fixed profile uses; 0 for {@link #AUTO}, which uses the real size. */
    int anchorSize() {
        return anchorSize;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values when {@code crdValue} is not one of them
     */
    public static Profile parse(String crdValue) {
        return CrdSpelling.parse(Profile.class, "profile", crdValue, Profile::crdValue);
    }
}
