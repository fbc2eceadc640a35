package dev.fencing.nodemanager.escalation;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The escalation's flags ({@code --power-fencing}, {@code --fence-agents-dir}, {@code --power-fencing-interval},
 * {@code --kdump-port}, {@code --node-fencing-retention}).
 *
 * @param agentsDir where the ClusterLabs fence agents are ({@code /usr/sbin} with Debian's fence-agents)
 * @param interval  how often the leader looks at escalation candidates and NodeFencing records
 * @param workers   stages run at once (for different nodes)
 * @param kdumpPort UDP port for fence_kdump_send messages ({@code --kdump-port}, 7410), -1: no listener
 * @param recordRetention how long a closed NodeFencing record (its node returned) is kept ({@code
 *                  --node-fencing-retention}); zero keeps every record
 */
public record PowerFencingSettings(Path agentsDir, Duration interval, int workers, int kdumpPort,
                                   Duration recordRetention) {

    /** {@code --node-fencing-retention}'s default: 30 days after the node returned. */
    public static final Duration DEFAULT_RECORD_RETENTION = Duration.ofDays(30);

    /** With the default record retention. */
    public PowerFencingSettings(Path agentsDir, Duration interval, int workers, int kdumpPort) {
        this(agentsDir, interval, workers, kdumpPort, DEFAULT_RECORD_RETENTION);
    }

    /** Checks the values. */
    public PowerFencingSettings {
        if (recordRetention.isNegative()) {
            throw new IllegalArgumentException("--node-fencing-retention must not be negative (0 keeps every record)");
        }
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("--power-fencing-interval must be positive");
        }
        if (kdumpPort < -1 || kdumpPort > 65535) {
            throw new IllegalArgumentException("--kdump-port must be a UDP port, 0 (any) or -1 (off)");
        }
        if (workers < 1) {
            throw new IllegalArgumentException("power fencing needs at least one worker");
        }
    }
}
