package dev.fencing.nodemanager.storm;

import dev.fencing.policy.MinHealthy;
import java.util.Objects;

/**
 * The cluster-wide storm limits ({@code --storm-min-healthy}, {@code --storm-max-concurrent}), over every group
 * with fencing on.
 *
 * @param minHealthy    fencing is admitted only while more than this many of all fencing groups' nodes are healthy
 * @param maxConcurrent fencings in progress at once over all groups; at least 1
 */
public record ClusterStormLimits(MinHealthy minHealthy, int maxConcurrent) {

    /** The flags' defaults: 50%, 2. */
    public static final ClusterStormLimits DEFAULTS = new ClusterStormLimits(MinHealthy.DEFAULT, 2);

    /** Checks the values. */
    public ClusterStormLimits {
        Objects.requireNonNull(minHealthy, "minHealthy");
        if (maxConcurrent < 1) {
            throw new IllegalArgumentException("--storm-max-concurrent must be at least 1, not " + maxConcurrent);
        }
    }
}
