package dev.fencing.agent.control;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential reconnect backoff with full jitter: attempt k waits a uniform time in [base × 2^k / 2, base × 2^k],
 * capped, so a thousand agents that lost the same controller do not reconnect in lock step.
 */
public final class ReconnectBackoff {

    private final Duration initial;
    private final Duration max;
    private final RandomGenerator random;
    private int attempt;

    /**
     * @param initial first delay (upper bound of the jitter range)
     * @param max     cap on the delay
     * @param random  jitter source
     */
    public ReconnectBackoff(Duration initial, Duration max, RandomGenerator random) {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("need 0 < initial <= max, got initial=" + initial + " max=" + max);
        }
        this.initial = initial;
        this.max = max;
        this.random = random;
    }

    /** The delay before the next attempt; each call doubles the range up to the cap. */
    public Duration nextDelay() {
        long ceiling = initial.toNanos();
        for (int i = 0; i < attempt && ceiling < max.toNanos(); i++) {
            ceiling *= 2;
        }
        ceiling = Math.min(ceiling, max.toNanos());
        attempt = Math.min(attempt + 1, 62);
        long floor = ceiling / 2;
        return Duration.ofNanos(floor + random.nextLong(ceiling - floor + 1));
    }

    /** Called once a connection delivered a config: the next failure starts from the initial delay again. */
    public void reset() {
        attempt = 0;
    }
}
