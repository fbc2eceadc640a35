package dev.fencing.nodemanager.escalation;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The escalation's flags ({@code --power-fencing}, {@code --fence-agents-dir}, {@code --power-fencing-interval}).
 *
 * @param agentsDir where the ClusterLabs fence agents are ({@code /usr/sbin} with Debian's fence-agents)
 * @param interval  how often the leader looks at escalation candidates and NodeFencing records
 * @param workers   stages run at once (for different nodes)
 */
public record PowerFencingSettings(Path agentsDir, Duration interval, int workers) {

    /** Checks the values. */
    public PowerFencingSettings {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("--power-fencing-interval must be positive");
        }
        if (workers < 1) {
            throw new IllegalArgumentException("power fencing needs at least one worker");
        }
    }
}
