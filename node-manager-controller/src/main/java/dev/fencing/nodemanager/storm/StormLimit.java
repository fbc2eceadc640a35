package dev.fencing.nodemanager.storm;

/** Which storm limit held a fencing back; its condition reason is the {@code FencingStormLimit} reason. */
public enum StormLimit {
    /** The group's healthy nodes are {@code spec.fencing.storm.minHealthy} or fewer. */
    MIN_HEALTHY("MinHealthy"),
    /** Over every fencing group, the healthy nodes are {@code --storm-min-healthy} or fewer. */
    CLUSTER_MIN_HEALTHY("ClusterMinHealthy"),
    /** The group already has {@code spec.fencing.storm.maxConcurrent} fencings in progress. */
    MAX_CONCURRENT("MaxConcurrent"),
    /** The cluster already has {@code --storm-max-concurrent} fencings in progress. */
    CLUSTER_MAX_CONCURRENT("ClusterMaxConcurrent"),
    /** A minHealthy limit held less than {@code spec.fencing.storm.cooldown} ago. */
    COOLDOWN("Cooldown"),
    /** The group is not (yet) among the fencing groups the guard sees, or its spec is invalid. */
    UNKNOWN_GROUP("UnknownGroup");

    private final String reason;

    StormLimit(String reason) {
        this.reason = reason;
    }

    /** The condition reason, e.g. {@code MinHealthy}. */
    public String reason() {
        return reason;
    }

    /** True for the limits after which the cooldown runs (the ones a shared failure trips). */
    public boolean startsCooldown() {
        return this == MIN_HEALTHY || this == CLUSTER_MIN_HEALTHY || this == COOLDOWN;
    }
}
