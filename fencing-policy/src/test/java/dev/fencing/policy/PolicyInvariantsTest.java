package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Properties of resolution over random valid specs and group sizes (fixed seeds; jqwik prints the seed on failure). */
class PolicyInvariantsTest {

    @Property(tries = 400, seed = "424242")
    void resolvedPoliciesKeepTheSafetyInvariants(@ForAll("validSpecs") FencingSpec spec,
                                                 @ForAll @IntRange(min = 0, max = 2000) int expected) {
        FencingSpec fitted = spec.quorumSize() != null && !validQuorum(spec.quorumSize(), expected)
                ? spec.withQuorumSize(null) : spec;
        assertThat(PolicyResolver.validate(fitted, expected)).isEmpty();
        ResolvedPolicy p = PolicyResolver.resolve(fitted, expected);
        ResolvedTimings t = p.timings();
        assertThat(PolicyResolver.verify(p)).isEmpty();

        assertThat(t.feedInterval().multipliedBy(3)).isLessThan(t.watchdogTimeout());
        assertThat(t.watchdogTimeout()).isGreaterThanOrEqualTo(PolicyResolver.minWatchdogTimeout(
                fitted.effectiveProfile()));
        assertThat(2L * p.quorumSize()).isGreaterThan(expected);
        assertThat(p.quorumSize()).isLessThanOrEqualTo(Math.max(1, expected));
        assertThat(t.probeTimeout()).isLessThan(t.probeInterval());
        assertThat(t.heartbeatInterval()).isLessThan(t.quorumWindow());
        assertThat(t.evaluationTick()).isLessThanOrEqualTo(t.heartbeatInterval());
        assertThat(t.armingDelay()).isGreaterThanOrEqualTo(t.quorumWindow());
        assertThat(t.localHealthCap()).isBetween(1.0, 4.0);
        assertThat(t.tStop()).isGreaterThanOrEqualTo(t.quorumWindow().plus(t.evaluationTick()));
        long stretched = t.tStop().minus(t.evaluationTick()).toNanos();
        assertThat((double) stretched).isCloseTo(t.quorumWindow().toNanos() * t.localHealthCap(),
                org.assertj.core.data.Offset.offset(1.0));
        assertThat(t.safeToAssumeFencedDelay()).isEqualTo(t.tStop().plus(t.watchdogTimeout()).plus(t.fenceMargin()));
        assertThat(p.mode() == Mode.WATCHDOG || p.quorumLossAction() != QuorumLossAction.FENCE).isTrue();
    }

    @Property(tries = 300, seed = "7")
    void autoTimingsGrowMonotonicallyWithGroupSize(@ForAll @IntRange(min = 1, max = 1500) int n,
                                                   @ForAll @IntRange(min = 1, max = 500) int step) {
        ResolvedTimings small = PolicyResolver.resolve(FencingSpec.DEFAULTS, n).timings();
        ResolvedTimings large = PolicyResolver.resolve(FencingSpec.DEFAULTS, n + step).timings();
        assertThat(large.probeInterval()).isGreaterThanOrEqualTo(small.probeInterval());
        assertThat(large.probeTimeout()).isGreaterThanOrEqualTo(small.probeTimeout());
        assertThat(large.gossipInterval()).isGreaterThanOrEqualTo(small.gossipInterval());
        assertThat(large.quorumWindow()).isGreaterThanOrEqualTo(small.quorumWindow());
        if ((n > PolicyResolver.MAX_ALL_TO_ALL_MEMBERS) == (n + step > PolicyResolver.MAX_ALL_TO_ALL_MEMBERS)) {
            // Crossing into relayed groups halves the heartbeat interval (relayed evidence ages per hop).
            assertThat(large.heartbeatInterval()).isGreaterThanOrEqualTo(small.heartbeatInterval());
        }
        assertThat(large.tStop()).isGreaterThanOrEqualTo(small.tStop());
        assertThat(large.safeToAssumeFencedDelay()).isGreaterThanOrEqualTo(small.safeToAssumeFencedDelay());
    }

    @Property(tries = 300, seed = "99")
    void autoSuspicionTimeoutStaysInTheInterpolatedAdrRange(@ForAll @IntRange(min = 3, max = 1000) int n) {
        AdrSizeTable.Scaled scaled = AdrSizeTable.at(n);
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS, n).timings();
        assertThat(t.suspicionTimeout(n)).isBetween(scaled.suspicionLow(), scaled.suspicionHigh());
    }

    @Provide
    Arbitrary<FencingSpec> validSpecs() {
        Arbitrary<Mode> modes = Arbitraries.of(Mode.class).injectNull(0.2);
        Arbitrary<Duration> timeouts = Arbitraries.integers().between(2, 3600).map(Duration::ofSeconds).injectNull(0.2);
        Arbitrary<Profile> profiles = Arbitraries.of(Profile.class).injectNull(0.2);
        Arbitrary<Integer> sizes = Arbitraries.integers().between(1, 2000).injectNull(0.5);
        Arbitrary<List<TieBreakerKind>> tieBreakers = Arbitraries.of(TieBreakerKind.class)
                .filter(k -> k != TieBreakerKind.DISK).list().ofMaxSize(1)
                .map(list -> (List<TieBreakerKind>) new ArrayList<>(new LinkedHashSet<>(list))).injectNull(0.3);
        Arbitrary<TimingOverrides> overrides = validOverrides();
        return Combinators.combine(modes, timeouts, profiles, sizes, tieBreakers, overrides).as((mode, timeout,
                profile, size, tbs, o) -> {
            QuorumLossAction action = mode == Mode.NOTIFY ? QuorumLossAction.WAIT : null;
            // a timeout below 5s is valid only with profile Critical
            Profile fitted = timeout != null && timeout.compareTo(PolicyResolver.MIN_WATCHDOG_TIMEOUT) < 0
                    ? Profile.CRITICAL : profile;
            return new FencingSpec(mode, timeout, action, fitted, size, tbs, o);
        });
    }

    /** Overrides that are valid on their own and together whatever the profile: only relation-free fields. */
    private Arbitrary<TimingOverrides> validOverrides() {
        Arbitrary<Duration> probe = Arbitraries.integers().between(100, 5000).map(Duration::ofMillis).injectNull(0.6);
        Arbitrary<Integer> mult = Arbitraries.integers().between(1, 10).injectNull(0.6);
        Arbitrary<Duration> gossip = Arbitraries.integers().between(50, 3000).map(Duration::ofMillis).injectNull(0.6);
        Arbitrary<Duration> window = Arbitraries.integers().between(400, 30_000).map(Duration::ofMillis).injectNull(0.6);
        Arbitrary<Double> cap = Arbitraries.doubles().between(1.0, 4.0).injectNull(0.6);
        Arbitrary<Duration> margin = Arbitraries.integers().between(0, 60).map(Duration::ofSeconds).injectNull(0.6);
        return Combinators.combine(probe, mult, gossip, window, cap, margin).as((p, m, g, w, c, f) ->
                new TimingOverrides(p, null, m, null, g, null, null, null, null, w, c, null, null, null, f));
    }

    private static boolean validQuorum(int size, int expected) {
        return 2L * size > expected && size <= expected;
    }
}
