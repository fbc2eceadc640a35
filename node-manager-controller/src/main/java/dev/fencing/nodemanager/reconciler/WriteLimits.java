package dev.fencing.nodemanager.reconciler;

import java.time.Duration;
import java.util.Objects;

/**
 * Rate limits on the writes that agent reports drive.
 *
 * @param labelPatchInterval at most one label patch per node within this interval ({@code --label-patch-interval})
 * @param eventInterval      at most one Event per object and reason within this interval ({@code --event-interval})
 */
public record WriteLimits(Duration labelPatchInterval, Duration eventInterval) {

    /** One label patch per node per 5 s, one Event per node and reason per minute. */
    public static final WriteLimits DEFAULTS = new WriteLimits(Duration.ofSeconds(5), Duration.ofMinutes(1));

    /** Validates. */
    public WriteLimits {
        Objects.requireNonNull(labelPatchInterval, "labelPatchInterval");
        Objects.requireNonNull(eventInterval, "eventInterval");
        if (labelPatchInterval.isNegative() || eventInterval.isNegative()) {
            throw new IllegalArgumentException("--label-patch-interval and --event-interval must not be negative");
        }
    }
}
