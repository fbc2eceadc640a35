package dev.fencing.nodemanager.config;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import dev.fencing.policy.DurationFormat;
import java.time.Duration;
import java.util.Objects;

/**
 * The leader election Lease's timings ({@code --leader-lease-duration}, {@code --leader-renew-deadline},
 * {@code --leader-retry-period}). The tie-break arbiter follows them too: a new leader grants nothing for
 * {@code --max-tie-lease} plus the lease duration, and a leader grants only within the renew deadline of its latest
 * renewal.
 *
 * @param leaseDuration how long a candidate waits after the holder's last renewal before it takes the Lease over
 * @param renewDeadline how long the leader keeps retrying a failed renewal before it gives leadership up; shorter
 *                      than the lease duration, so a leader stops before another replica may take over
 * @param retryPeriod   how often candidates try to acquire and the leader renews
 */
public record LeaderElectionTimings(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {

    /** JOSDK's defaults: 15 s, 10 s, 2 s. */
    public static final LeaderElectionTimings DEFAULTS = new LeaderElectionTimings(
            LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
            LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
            LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE);

    /** Validates: {@code 1.2 × retryPeriod < renewDeadline < leaseDuration}, all positive (fabric8's elector bounds). */
    public LeaderElectionTimings {
        Objects.requireNonNull(leaseDuration, "leaseDuration");
        Objects.requireNonNull(renewDeadline, "renewDeadline");
        Objects.requireNonNull(retryPeriod, "retryPeriod");
        if (retryPeriod.isNegative() || retryPeriod.isZero()) {
            throw new IllegalArgumentException("--leader-retry-period must be positive, got " + retryPeriod.toMillis()
                    + "ms");
        }
        if (renewDeadline.compareTo(leaseDuration) >= 0) {
            throw new IllegalArgumentException("--leader-renew-deadline " + DurationFormat.format(renewDeadline)
                    + " must be shorter than --leader-lease-duration " + DurationFormat.format(leaseDuration)
                    + ": a leader that cannot renew must stop before another replica may take the Lease over");
        }
        // fabric8's elector jitters each retry by up to 20 %: the leader needs at least one retry before it gives up.
        if (retryPeriod.multipliedBy(6).compareTo(renewDeadline.multipliedBy(5)) >= 0) {
            throw new IllegalArgumentException("--leader-retry-period " + DurationFormat.format(retryPeriod)
                    + " must be shorter than --leader-renew-deadline " + DurationFormat.format(renewDeadline)
                    + " / 1.2: the leader needs at least one retry (jittered by up to 20 %) before it gives up");
        }
    }
}
