package dev.fencing.policy;

import java.time.Duration;

/**
 * {@code spec.fencing.storm}: how many of a group's nodes may be fenced, and when. Every component is nullable and
 * then takes its default.
 *
 * @param minHealthy    fencing is admitted only while more than this many of the group's nodes are healthy
 *                      (default {@link MinHealthy#DEFAULT}, 50%)
 * @param maxConcurrent fencings of the group in progress at once (default 1)
 * @param cooldown      after the {@code minHealthy} limit last held, how long no new fencing starts (default 10m)
 */
public record StormLimits(MinHealthy minHealthy, Integer maxConcurrent, Duration cooldown) {

    /** Default of {@code maxConcurrent}. */
    public static final int DEFAULT_MAX_CONCURRENT = 1;
    /** Default of {@code cooldown}. */
    public static final Duration DEFAULT_COOLDOWN = Duration.ofMinutes(10);
    /** Everything at its default. */
    public static final StormLimits DEFAULTS = new StormLimits(null, null, null);

    /** The minHealthy in effect. */
    public MinHealthy effectiveMinHealthy() {
        return minHealthy != null ? minHealthy : MinHealthy.DEFAULT;
    }

    /** The maxConcurrent in effect. */
    public int effectiveMaxConcurrent() {
        return maxConcurrent != null ? maxConcurrent : DEFAULT_MAX_CONCURRENT;
    }

    /** The cooldown in effect. */
    public Duration effectiveCooldown() {
        return cooldown != null ? cooldown : DEFAULT_COOLDOWN;
    }
}
