package dev.fencing.policy;

/**
 * {@code spec.fencing.gossipLabel}: whether the group's gossip carries a memberlist label.
 */
public enum GossipLabel {
    /** The label is the group name (memberlist 0.3+ label header; keeps groups that share a port apart). */
    GROUP_NAME("GroupName"),
    /**
     * No label: for groups with gossip peers that do not support one (Go memberlist before v0.3.0, e.g. Debian's
     * 0.2.2). Groups are then kept apart by their ports and encryption keys only.
     */
    NONE("None");

    private final String crdValue;

    GossipLabel(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "GroupName"}. */
    public String crdValue() {
        return crdValue;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values
     */
    public static GossipLabel parse(String crdValue) {
        return CrdSpelling.parse(GossipLabel.class, "gossipLabel", crdValue, GossipLabel::crdValue);
    }
}
