package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyResolverTest {

    private static final TimingOverrides NONE = TimingOverrides.NONE;

    private static TimingOverrides feed(Duration feedInterval) {
        return new TimingOverrides(null, null, null, null, null, null, null, null, null, null, null, null,
                feedInterval, null, null);
    }

    @Test
    void defaultsMatchDeckhouseAndTheDocumentedTable() {
        ResolvedPolicy p = PolicyResolver.resolve(FencingSpec.DEFAULTS, 3);
        assertThat(p.mode()).isEqualTo(Mode.WATCHDOG);
        assertThat(p.quorumLossAction()).isEqualTo(QuorumLossAction.FENCE);
        assertThat(p.expected()).isEqualTo(3);
        assertThat(p.quorumSize()).isEqualTo(2);
        assertThat(p.tieBreakers()).containsExactly(TieBreakerKind.CONTROL_PLANE);
        ResolvedTimings t = p.timings();
        assertThat(t.profile()).isEqualTo("Auto(n=3)");
        assertThat(t.watchdogTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(t.probeInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(t.probeTimeout()).isEqualTo(Duration.ofMillis(200));
        assertThat(t.gossipInterval()).isEqualTo(Duration.ofMillis(200));
        assertThat(t.suspicionMult()).isEqualTo(3);
        assertThat(t.suspicionMaxTimeoutMult()).isEqualTo(6);
        assertThat(t.gossipNodes()).isEqualTo(3);
        assertThat(t.retransmitMult()).isEqualTo(4);
        assertThat(t.pushPullInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(t.quorumWindow()).isEqualTo(Duration.ofSeconds(2));
        assertThat(t.heartbeatInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(t.localHealthCap()).isEqualTo(1.5);
        assertThat(t.evaluationTick()).isEqualTo(Duration.ofMillis(100));
        assertThat(t.feedInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(t.armingDelay()).isEqualTo(Duration.ofSeconds(4));
        assertThat(t.fenceMargin()).isEqualTo(Duration.ofSeconds(5));
        assertThat(t.tStop()).isEqualTo(Duration.ofMillis(3_100));
        assertThat(t.safeToAssumeFencedDelay()).isEqualTo(Duration.ofMillis(68_100));
    }

    @Test
    void notifyModeDefaultsToWaitNotFence() {
        ResolvedPolicy p = PolicyResolver.resolve(FencingSpec.DEFAULTS.withMode(Mode.NOTIFY), 3);
        assertThat(p.quorumLossAction()).isEqualTo(QuorumLossAction.WAIT);
    }

    @Test
    void fenceRequiresWatchdogMode() {
        FencingSpec spec = FencingSpec.DEFAULTS.withMode(Mode.NOTIFY).withQuorumLossAction(QuorumLossAction.FENCE);
        assertThat(PolicyResolver.validate(spec, 3)).containsExactly(new Violation("spec.fencing.quorumLossAction",
                "Fence needs mode Watchdog, but mode is Notify; set mode: Watchdog, or quorumLossAction: Exclude or Wait"));
    }

    @Test
    void excludeAndWaitAreAllowedInNotifyMode() {
        FencingSpec notify = FencingSpec.DEFAULTS.withMode(Mode.NOTIFY);
        assertThat(PolicyResolver.validate(notify.withQuorumLossAction(QuorumLossAction.EXCLUDE), 3)).isEmpty();
        assertThat(PolicyResolver.validate(notify.withQuorumLossAction(QuorumLossAction.WAIT), 3)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"0", "1", "3601", "7200"})
    void watchdogTimeoutOutsideTwoSecondsToAnHourIsRejectedForEveryProfile(long seconds) {
        FencingSpec spec = FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL)
                .withWatchdogTimeout(Duration.ofSeconds(seconds));
        assertThat(PolicyResolver.validate(spec, 3)).singleElement().satisfies(v -> {
            assertThat(v.field()).isEqualTo("spec.fencing.watchdog.timeout");
            assertThat(v.message()).isEqualTo("watchdog timeout " + DurationFormat.format(Duration.ofSeconds(seconds))
                    + " is outside 2s..1h for profile Critical; the watchdog timeout must be between 2s (profile "
                    + "Critical only) and 1h; below 2s one late feed resets a healthy node; 60s is the Deckhouse "
                    + "default");
        });
    }

    @Test
    void oneSecondIsRejectedWhateverTheProfile() {
        for (Profile profile : Profile.values()) {
            FencingSpec spec = FencingSpec.DEFAULTS.withProfile(profile).withWatchdogTimeout(Duration.ofSeconds(1));
            assertThat(PolicyResolver.validate(spec, 3)).as(profile.crdValue()).extracting(Violation::field)
                    .containsExactly("spec.fencing.watchdog.timeout");
        }
    }

    @ParameterizedTest
    @CsvSource({"Medium, 2", "Medium, 4", "Moderate, 3", "Slow, 2", "Auto, 2", "Auto, 4"})
    void shortTimeoutsNeedProfileCritical(String profile, long seconds) {
        FencingSpec spec = FencingSpec.DEFAULTS.withProfile(Profile.parse(profile))
                .withWatchdogTimeout(Duration.ofSeconds(seconds));
        assertThat(PolicyResolver.validate(spec, 3)).containsExactly(new Violation("spec.fencing.watchdog.timeout",
                "watchdog timeout " + seconds + "s is outside 5s..1h for profile " + profile + "; a watchdog timeout "
                        + "below 5s needs profile Critical, which allows down to 2s; set profile: Critical, or a "
                        + "timeout of at least 5s"));
    }

    @Test
    void autoKeepsTheFiveSecondFloorEvenWhereItUsesTheCriticalRow() {
        FencingSpec auto = FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(2));
        assertThat(PolicyResolver.effectiveTimings(auto, 3).probeInterval())
                .isEqualTo(PolicyResolver.effectiveTimings(auto.withProfile(Profile.CRITICAL), 3).probeInterval());
        assertThat(PolicyResolver.validate(auto, 3)).extracting(Violation::field)
                .containsExactly("spec.fencing.watchdog.timeout");
    }

    @Test
    void criticalAcceptsTwoSecondsWithCoherentTimings() {
        FencingSpec spec = FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL).withWatchdogTimeout(Duration.ofSeconds(2));
        for (int n : new int[] {3, 5}) {
            ResolvedPolicy p = PolicyResolver.resolve(spec, n);
            assertThat(PolicyResolver.verify(p)).isEmpty();
            ResolvedTimings t = p.timings();
            assertThat(t.watchdogTimeout()).isEqualTo(Duration.ofSeconds(2));
            // timeout / 10: below timeout / 3 (0.66s), so two feeds may be missed without a reset
            assertThat(t.feedInterval()).isEqualTo(Duration.ofMillis(200));
            assertThat(t.evaluationTick()).isEqualTo(Duration.ofMillis(100)).isLessThanOrEqualTo(t.feedInterval());
            assertThat(t.quorumWindow()).isEqualTo(Duration.ofSeconds(2));
            assertThat(t.heartbeatInterval()).isEqualTo(Duration.ofMillis(500));
            assertThat(t.armingDelay()).isEqualTo(Duration.ofSeconds(4));
            // 2s × 1.5 + 100ms, and T_stop + 2s + 5s margin: the same at N=3 and N=5 (a fixed profile)
            assertThat(t.tStop()).isEqualTo(Duration.ofMillis(3_100));
            assertThat(t.safeToAssumeFencedDelay()).isEqualTo(Duration.ofMillis(10_100));
        }
    }

    @Test
    void criticalWithTwoSecondsStillRejectsAFeedIntervalOfAThird() {
        FencingSpec spec = FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL).withWatchdogTimeout(Duration.ofSeconds(2));
        assertThat(PolicyResolver.validate(spec.withTimings(feed(Duration.ofMillis(667))), 3))
                .extracting(Violation::field).containsExactly("spec.fencing.timings.feedInterval");
        assertThat(PolicyResolver.validate(spec.withTimings(feed(Duration.ofMillis(666))), 3)).isEmpty();
    }

    @Test
    void watchdogTimeoutBoundsAreAccepted() {
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(5)), 3)).isEmpty();
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofHours(1)), 3)).isEmpty();
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL)
                .withWatchdogTimeout(Duration.ofSeconds(2)), 3)).isEmpty();
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withProfile(Profile.MEDIUM)
                .withWatchdogTimeout(Duration.ofSeconds(5)), 3)).isEmpty();
    }

    @Test
    void fractionalWatchdogTimeoutIsRejected() {
        FencingSpec spec = FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofMillis(10_500));
        assertThat(PolicyResolver.validate(spec, 3)).containsExactly(new Violation("spec.fencing.watchdog.timeout",
                "watchdog timeout 10.5s is not a whole number of seconds; watchdog devices count whole seconds, write e.g. 60s"));
    }

    @Test
    void feedIntervalMustBeBelowAThirdOfTheTimeout() {
        FencingSpec spec = FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(30))
                .withTimings(feed(Duration.ofSeconds(10)));
        assertThat(PolicyResolver.validate(spec, 3)).containsExactly(new Violation("spec.fencing.timings.feedInterval",
                "feedInterval 10s must be shorter than a third of the watchdog timeout 30s so two missed feeds never "
                        + "reset a healthy node; set it below 10s"));
        assertThat(PolicyResolver.validate(spec.withTimings(feed(Duration.ofMillis(9_999))), 3)).isEmpty();
    }

    @Test
    void defaultFeedIntervalFollowsShortTimeouts() {
        ResolvedPolicy p = PolicyResolver.resolve(FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(5)), 3);
        assertThat(p.timings().feedInterval()).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void probeTimeoutMustBeBelowProbeInterval() {
        TimingOverrides o = new TimingOverrides(Duration.ofMillis(500), Duration.ofMillis(500), null, null, null, null,
                null, null, null, null, null, null, null, null, null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).containsExactly(new Violation(
                "spec.fencing.timings.probeTimeout",
                "probeTimeout 500ms must be shorter than probeInterval 500ms; lower probeTimeout or raise probeInterval"));
    }

    @Test
    void heartbeatIntervalMustBeBelowQuorumWindow() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, Duration.ofSeconds(2),
                Duration.ofSeconds(2), null, null, null, null, null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).containsExactly(new Violation(
                "spec.fencing.timings.heartbeatInterval",
                "heartbeatInterval 2s must be shorter than quorumWindow 2s (a round trip must fit in the window); "
                        + "lower heartbeatInterval to at most a quarter of quorumWindow or raise quorumWindow"));
    }

    @Test
    void shrinkingOnlyTheWindowBlamesTheWindow() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null,
                Duration.ofMillis(400), null, null, null, Duration.ofSeconds(4), null);
        // default heartbeat = window / 4 = 100ms, so only an explicit heartbeat can collide; here the default fits
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).isEmpty();
        TimingOverrides tooShort = new TimingOverrides(null, null, null, null, null, null, null, null,
                Duration.ofMillis(500), Duration.ofMillis(400), null, null, null, Duration.ofSeconds(4), null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(tooShort), 3))
                .extracting(Violation::field).containsExactly("spec.fencing.timings.heartbeatInterval");
    }

    @Test
    void evaluationTickMustNotExceedHeartbeatInterval() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null, null, null,
                Duration.ofSeconds(1), null, null, null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).containsExactly(new Violation(
                "spec.fencing.timings.evaluationTick",
                "evaluationTick 1s must not exceed heartbeatInterval 500ms; lower evaluationTick or raise heartbeatInterval"));
    }

    @Test
    void defaultEvaluationTickFollowsAShortHeartbeat() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, Duration.ofMillis(50),
                null, null, null, null, null, null);
        ResolvedPolicy p = PolicyResolver.resolve(FencingSpec.DEFAULTS.withTimings(o), 3);
        assertThat(p.timings().evaluationTick()).isEqualTo(Duration.ofMillis(50));
        assertThat(p.timings().profile()).isEqualTo("Auto(n=3)+overrides");
    }

    @Test
    void armingDelayMustCoverTheQuorumWindow() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null, null, null, null,
                null, Duration.ofSeconds(1), null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).containsExactly(new Violation(
                "spec.fencing.timings.armingDelay",
                "armingDelay 1s must be at least quorumWindow 2s so a node that boots into a minority never arms; "
                        + "raise armingDelay"));
    }

    @ParameterizedTest
    @CsvSource({"0.99", "4.01", "NaN", "-1"})
    void localHealthCapOutsideOneToFourIsRejected(double cap) {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null, null, cap, null,
                null, null, null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).containsExactly(new Violation(
                "spec.fencing.timings.localHealthCap",
                "localHealthCap " + cap + " is outside 1.0..4.0; 1.0 disables stretching, 1.5 is the default"));
    }

    @Test
    void durationsMustBePositiveAndCountsAtLeastOne() {
        TimingOverrides o = new TimingOverrides(Duration.ZERO, Duration.ofMillis(-1), 0, 0, Duration.ZERO, 0, 0,
                Duration.ZERO, Duration.ZERO, Duration.ZERO, null, Duration.ZERO, Duration.ZERO, Duration.ZERO,
                Duration.ofSeconds(-1));
        List<Violation> violations = PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3);
        assertThat(violations).extracting(Violation::field).containsExactly(
                "spec.fencing.timings.probeInterval", "spec.fencing.timings.probeTimeout",
                "spec.fencing.timings.suspicionMult", "spec.fencing.timings.suspicionMaxTimeoutMult",
                "spec.fencing.timings.gossipInterval", "spec.fencing.timings.gossipNodes",
                "spec.fencing.timings.retransmitMult", "spec.fencing.timings.pushPullInterval",
                "spec.fencing.timings.heartbeatInterval", "spec.fencing.timings.quorumWindow",
                "spec.fencing.timings.evaluationTick", "spec.fencing.timings.feedInterval",
                "spec.fencing.timings.armingDelay", "spec.fencing.timings.fenceMargin");
        assertThat(violations.get(0).message()).isEqualTo(
                "probeInterval 0s must be greater than 0s and at most 1h; remove the override to use the profile's value");
        assertThat(violations.get(2).message()).isEqualTo(
                "suspicionMult 0 must be between 1 and 1000; remove the override to use the profile's value");
    }

    @Test
    void overridesLongerThanAnHourAreRejectedAsUnitMistakes() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, Duration.ofHours(2), null,
                null, null, null, null, null, null);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTimings(o), 3)).extracting(Violation::field)
                .containsExactly("spec.fencing.timings.pushPullInterval");
    }

    @Test
    void autoQuorumIsAStrictMajority() {
        assertThat(PolicyResolver.autoQuorumSize(0)).isEqualTo(1);
        assertThat(PolicyResolver.autoQuorumSize(1)).isEqualTo(1);
        assertThat(PolicyResolver.autoQuorumSize(4)).isEqualTo(3);
        assertThat(PolicyResolver.autoQuorumSize(5)).isEqualTo(3);
        assertThat(PolicyResolver.resolve(FencingSpec.DEFAULTS, 1000).quorumSize()).isEqualTo(501);
    }

    @Test
    void explicitQuorumMustBeAMajority() {
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withQuorumSize(2), 4)).containsExactly(new Violation(
                "spec.fencing.quorum.size", "quorum size 2 is not a majority of 4 expected members, so two disjoint "
                + "sides could both hold quorum; use Auto or at least 3"));
        assertThat(PolicyResolver.resolve(FencingSpec.DEFAULTS.withQuorumSize(3), 4).quorumSize()).isEqualTo(3);
    }

    @Test
    void explicitQuorumCannotExceedTheGroup() {
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withQuorumSize(5), 4)).containsExactly(new Violation(
                "spec.fencing.quorum.size", "quorum size 5 exceeds the 4 expected members, so no node can ever hold "
                + "quorum and every armed node would fence; use Auto or at most 4"));
        assertThat(PolicyResolver.resolve(FencingSpec.DEFAULTS.withQuorumSize(4), 4).quorumSize()).isEqualTo(4);
    }

    @Test
    void explicitQuorumBelowOneIsRejected() {
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withQuorumSize(0), 3))
                .extracting(Violation::message)
                .containsExactly("quorum size 0 must be at least 1; use Auto (= 2 for 3 expected members) or a number in 2..3");
    }

    @Test
    void emptyTieBreakerEntriesAndRepeatsAreRejectedByIndex() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(Arrays.asList(TieBreakerKind.LOWEST_NAME, null,
                TieBreakerKind.CONTROL_PLANE, TieBreakerKind.LOWEST_NAME));
        assertThat(PolicyResolver.validate(spec, 4)).containsExactly(
                new Violation("spec.fencing.quorum.tieBreakers[1]",
                        "entry is empty; remove it or use one of ControlPlane, LowestName, Disk, APIReachable"),
                new Violation("spec.fencing.quorum.tieBreakers[2]",
                        "ControlPlane after LowestName is never asked (LowestName always answers); list one "
                                + "tie-breaker"),
                new Violation("spec.fencing.quorum.tieBreakers[3]",
                        "LowestName is already listed at index 0; remove the repeat (each tie-breaker is asked once)"));
    }

    /**
     * A second tie-breaker is refused: ControlPlane (or Disk, or APIReachable) answers the half that reaches its
     * referee and gives no answer to the other, which would then ask the next entry and could hold quorum too.
     */
    @Test
    void aTieBreakerAfterOneWithAReferee() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.CONTROL_PLANE,
                TieBreakerKind.LOWEST_NAME));
        assertThat(PolicyResolver.validate(spec, 4)).containsExactly(new Violation(
                "spec.fencing.quorum.tieBreakers[1]", "LowestName after ControlPlane is refused: ControlPlane gives no "
                + "answer to a half that does not reach its referee while it answers the other half, and that half "
                + "would ask LowestName and could hold quorum too (split brain); list one tie-breaker"));
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withTieBreakers(List.of(
                TieBreakerKind.LOWEST_NAME)), 4)).isEmpty();
    }

    @Test
    void anEmptyTieBreakerListIsAllowedButWarnedForEvenGroups() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of());
        assertThat(PolicyResolver.resolve(spec, 4).tieBreakers()).isEmpty();
        assertThat(PolicyResolver.warnings(spec, 4)).containsExactly(new Violation("spec.fencing.quorum.tieBreakers",
                "the group has an even number of members (4) and no tie-breakers, so an exact half split fences both "
                        + "halves; add ControlPlane or LowestName"));
        assertThat(PolicyResolver.warnings(spec, 5)).isEmpty();
    }

    @Test
    void apiReachableIsAcceptedButWarnedAsNotSplitBrainSafe() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.API_REACHABLE));
        assertThat(PolicyResolver.validate(spec, 4)).isEmpty();
        assertThat(PolicyResolver.warnings(spec, 4)).singleElement().satisfies(w -> {
            assertThat(w.field()).isEqualTo("spec.fencing.quorum.tieBreakers[0]");
            assertThat(w.message()).startsWith("APIReachable is not split-brain safe");
        });
    }

    @Test
    void diskTieBreakerWithoutADeviceIsRejected() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.DISK));
        assertThat(PolicyResolver.validate(spec, 4)).containsExactly(new Violation(
                "spec.fencing.quorum.tieBreakers[0]", PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE));
        assertThatThrownBy(() -> PolicyResolver.resolve(spec, 4)).isInstanceOf(InvalidPolicyException.class);
        assertThat(PolicyResolver.warnings(spec, 4)).isEmpty();
    }

    @Test
    void diskTieBreakerWithADeviceResolvesWithTheDefaults() {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.DISK))
                .withDisk(new DiskSpec("/dev/disk/by-id/wwn-0x1", null, null));
        ResolvedPolicy policy = PolicyResolver.resolve(spec, 4);
        assertThat(policy.disk()).contains(new ResolvedDisk("/dev/disk/by-id/wwn-0x1", false, Duration.ofSeconds(5)));
        assertThat(PolicyResolver.verify(policy)).isEmpty();
    }

    @Test
    void diskFieldsAreChecked() {
        FencingSpec spec = FencingSpec.DEFAULTS.withDisk(new DiskSpec("dev/sdb", true, Duration.ofMillis(10)));
        assertThat(PolicyResolver.validate(spec, 3)).extracting(Violation::field)
                .containsExactly("spec.fencing.disk.device", "spec.fencing.disk.ioTimeout");
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withDisk(new DiskSpec(null, true, null)), 3))
                .extracting(Violation::field).containsExactly("spec.fencing.disk.device");
    }

    @Test
    void diskMessagesSayToCreateTheDeviceWithAMsgwaitLongEnoughForTheDefaultTimings() {
        // plain 'sbd -d DEVICE create' writes sbd's default msgwait, 10s; the default timings need 81s (MsgwaitCheck)
        String create = "'sbd -d DEVICE -4 90 create'";
        assertThat(PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE).contains(create);
        assertThat(PolicyResolver.validate(FencingSpec.DEFAULTS.withDisk(new DiskSpec(null, true, null)), 3))
                .singleElement().extracting(Violation::message).asString().contains(create);
    }

    @Test
    void defaultPolicyHasNoWarnings() {
        assertThat(PolicyResolver.warnings(FencingSpec.DEFAULTS, 4)).isEmpty();
    }

    @Test
    void resolveThrowsWithEveryViolationInTheMessage() {
        FencingSpec spec = FencingSpec.DEFAULTS.withMode(Mode.NOTIFY).withQuorumLossAction(QuorumLossAction.FENCE)
                .withQuorumSize(1);
        assertThatThrownBy(() -> PolicyResolver.resolve(spec, 4))
                .isInstanceOfSatisfying(InvalidPolicyException.class, e -> {
                    assertThat(e.violations()).extracting(Violation::field)
                            .containsExactly("spec.fencing.quorumLossAction", "spec.fencing.quorum.size");
                    assertThat(e.getMessage()).startsWith("invalid fencing policy: spec.fencing.quorumLossAction: Fence "
                            + "needs mode Watchdog").contains("; spec.fencing.quorum.size: quorum size 1 is not a majority");
                });
    }

    @Test
    void violationPathsFollowTheGivenBlockPath() {
        FencingSpec spec = FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(30))
                .withTimings(feed(Duration.ofSeconds(10))).withQuorumSize(9)
                .withTieBreakers(List.of(TieBreakerKind.API_REACHABLE));
        assertThat(PolicyResolver.validate(spec, 3, "fencing")).extracting(Violation::field)
                .containsExactly("fencing.quorum.size", "fencing.timings.feedInterval");
        assertThat(PolicyResolver.warnings(spec, 3, "fencing")).extracting(Violation::field)
                .containsExactly("fencing.quorum.tieBreakers[0]");
        assertThatThrownBy(() -> PolicyResolver.resolve(spec, 3, "fencing"))
                .hasMessageStartingWith("invalid fencing policy: fencing.quorum.size: ");
    }

    @Test
    void verifyFindsBrokenInvariantsOfAPolicyFromElsewhere() {
        ResolvedPolicy good = PolicyResolver.resolve(FencingSpec.DEFAULTS, 5);
        assertThat(PolicyResolver.verify(good)).isEmpty();
        ResolvedTimings t = good.timings();
        ResolvedTimings zeroWindow = new ResolvedTimings(t.profile(), t.probeInterval(), t.probeTimeout(),
                t.suspicionMult(), 0, t.gossipInterval(), t.gossipNodes(), t.retransmitMult(), t.pushPullInterval(),
                t.heartbeatInterval(), Duration.ZERO, t.localHealthCap(), t.evaluationTick(), t.feedInterval(),
                t.watchdogTimeout(), t.armingDelay(), t.fenceMargin());
        ResolvedPolicy broken = new ResolvedPolicy(Mode.NOTIFY, QuorumLossAction.FENCE, 5, 6,
                List.of(TieBreakerKind.DISK, TieBreakerKind.DISK), zeroWindow);
        assertThat(PolicyResolver.verify(broken)).extracting(Violation::field).containsExactly("quorumSize",
                "quorumLossAction", "tieBreakers", "tieBreakers", "timings.quorumWindow",
                "timings.suspicionMaxTimeoutMult");
        ResolvedTimings slowTick = new ResolvedTimings(t.profile(), t.probeInterval(), t.probeInterval(),
                t.suspicionMult(), 6, t.gossipInterval(), t.gossipNodes(), t.retransmitMult(), t.pushPullInterval(),
                t.quorumWindow(), t.quorumWindow(), t.localHealthCap(), t.quorumWindow().multipliedBy(2),
                t.watchdogTimeout(), t.watchdogTimeout(), Duration.ofMillis(1), t.fenceMargin());
        assertThat(PolicyResolver.verify(new ResolvedPolicy(Mode.WATCHDOG, QuorumLossAction.FENCE, 5, 3, List.of(),
                slowTick))).extracting(Violation::field).containsExactly("timings.probeTimeout",
                "timings.heartbeatInterval", "timings.evaluationTick", "timings.feedInterval", "timings.armingDelay");
    }

    @Test
    void verifyRejectsDiskAndAWatchdogTimeoutNoProfileAllows() {
        ResolvedPolicy good = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL)
                .withWatchdogTimeout(Duration.ofSeconds(2)), 3);
        assertThat(PolicyResolver.verify(good)).isEmpty();
        ResolvedPolicy disk = new ResolvedPolicy(good.mode(), good.quorumLossAction(), 3, 2,
                List.of(TieBreakerKind.DISK), good.timings());
        assertThat(PolicyResolver.verify(disk)).containsExactly(new Violation("tieBreakers",
                PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE));
        ResolvedTimings t = good.timings();
        for (Duration timeout : List.of(Duration.ofSeconds(1), Duration.ofMillis(2_500), Duration.ofSeconds(3_601))) {
            ResolvedTimings bad = new ResolvedTimings(t.profile(), t.probeInterval(), t.probeTimeout(),
                    t.suspicionMult(), t.suspicionMaxTimeoutMult(), t.gossipInterval(), t.gossipNodes(),
                    t.retransmitMult(), t.pushPullInterval(), t.heartbeatInterval(), t.quorumWindow(),
                    t.localHealthCap(), t.evaluationTick(), Duration.ofMillis(100), timeout, t.armingDelay(),
                    t.fenceMargin());
            assertThat(PolicyResolver.verify(new ResolvedPolicy(good.mode(), good.quorumLossAction(), 3, 2,
                    List.of(), bad))).as(timeout.toString()).extracting(Violation::field)
                    .containsExactly("timings.watchdogTimeout");
        }
    }

    @Test
    void negativeExpectedIsACallerBug() {
        assertThatThrownBy(() -> PolicyResolver.validate(FencingSpec.DEFAULTS, -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("expected members must be >= 0, got -1");
    }

    @Test
    void fixedProfilesIgnoreGroupSizeExceptForTheRelayedHeartbeatInterval() {
        ResolvedTimings small = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.SLOW), 3).timings();
        ResolvedTimings sixteen = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.SLOW), 16)
                .timings();
        ResolvedTimings large = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.SLOW), 500).timings();
        assertThat(small).isEqualTo(sixteen);
        assertThat(small.profile()).isEqualTo("Slow");
        assertThat(large.heartbeatInterval()).isEqualTo(large.quorumWindow().dividedBy(8));
        assertThat(new ResolvedTimings(large.profile(), large.probeInterval(), large.probeTimeout(),
                large.suspicionMult(), large.suspicionMaxTimeoutMult(), large.gossipInterval(), large.gossipNodes(),
                large.retransmitMult(), large.pushPullInterval(), small.heartbeatInterval(), large.quorumWindow(),
                large.localHealthCap(), large.evaluationTick(), large.feedInterval(), large.watchdogTimeout(),
                large.armingDelay(), large.fenceMargin())).isEqualTo(small);
    }

    @ParameterizedTest(name = "n={0}")
    @CsvSource({"3, 2000, 500, 3.1", "16, 3292, 823, 5.038", "17, 3328, 416, 5.092", "100, 6000, 750, 9.1",
            "1000, 6000, 750, 9.1"})
    void autoKeepsTStopUnderTenSecondsAtEverySizeAndRelayedGroupsHeartbeatEightTimesPerWindow(
            int n, long window, long heartbeat, double tStopSeconds) {
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS, n).timings();
        assertThat(t.quorumWindow()).isEqualTo(Duration.ofMillis(window));
        assertThat(t.heartbeatInterval()).isEqualTo(Duration.ofMillis(heartbeat));
        assertThat(t.tStop()).isEqualTo(Duration.ofNanos(Math.round(tStopSeconds * 1e9)));
        assertThat(t.tStop()).isLessThanOrEqualTo(Duration.ofSeconds(10));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "CRITICAL, 500, 200, 3, 200, 2000, 500",
            "MEDIUM,   750, 250, 3, 300, 3000, 750",
            "MODERATE, 1500, 500, 3, 600, 6000, 1500",
            "SLOW,     3000, 1500, 2, 1200, 6000, 1500"})
    void fixedProfilesAreTheDocumentedRows(Profile profile, long probe, long gossip, int mult, long probeTimeout,
                                           long window, long heartbeat) {
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(profile), 7).timings();
        assertThat(t.probeInterval()).isEqualTo(Duration.ofMillis(probe));
        assertThat(t.gossipInterval()).isEqualTo(Duration.ofMillis(gossip));
        assertThat(t.suspicionMult()).isEqualTo(mult);
        assertThat(t.probeTimeout()).isEqualTo(Duration.ofMillis(probeTimeout));
        assertThat(t.quorumWindow()).isEqualTo(Duration.ofMillis(window));
        assertThat(t.heartbeatInterval()).isEqualTo(Duration.ofMillis(heartbeat));
    }

    @ParameterizedTest(name = "n={0}")
    @CsvSource({"3, 1000, 2000", "10, 2000, 3000", "50, 4000, 6000", "100, 6000, 10000", "1000, 15000, 25000"})
    void autoSuspicionTimeoutLandsInTheAdrRange(int n, long lowMillis, long highMillis) {
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS, n).timings();
        assertThat(t.suspicionTimeout(n)).isBetween(Duration.ofMillis(lowMillis), Duration.ofMillis(highMillis));
    }

    @Test
    void autoInterpolatesOnALogScaleBetweenRows() {
        // sqrt(10 * 1000) = 100 is a row; sqrt(100 * 1000) ≈ 316 is halfway in log between 100 and 1000
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS, 316).timings();
        assertThat(t.profile()).isEqualTo("Auto(n=316)");
        assertThat(t.probeInterval().toMillis()).isBetween(2_240L, 2_260L);
        assertThat(t.gossipInterval().toMillis()).isBetween(990L, 1_010L);
    }

    @Test
    void autoClampsOutsideTheTable() {
        ResolvedTimings one = PolicyResolver.resolve(FencingSpec.DEFAULTS, 1).timings();
        ResolvedTimings three = PolicyResolver.resolve(FencingSpec.DEFAULTS, 3).timings();
        assertThat(one.probeInterval()).isEqualTo(three.probeInterval());
        assertThat(one.profile()).isEqualTo("Auto(n=1)");
        ResolvedTimings huge = PolicyResolver.resolve(FencingSpec.DEFAULTS, 5000).timings();
        assertThat(huge.probeInterval()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void anEmptyGroupResolvesSoTheControllerCanReportIt() {
        ResolvedPolicy p = PolicyResolver.resolve(FencingSpec.DEFAULTS, 0);
        assertThat(p.quorumSize()).isEqualTo(1);
        assertThat(p.expected()).isZero();
    }

    @Test
    void tStopAndSafeDelayFollowTheirFormulas() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null,
                Duration.ofSeconds(3), 2.0, Duration.ofMillis(250), null, Duration.ofSeconds(6), Duration.ofSeconds(7));
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS.withWatchdogTimeout(Duration.ofSeconds(20))
                .withTimings(o), 5).timings();
        assertThat(t.tStop()).isEqualTo(Duration.ofMillis(6_250));
        assertThat(t.safeToAssumeFencedDelay()).isEqualTo(Duration.ofMillis(6_250 + 20_000 + 7_000));
    }

    @Test
    void suspicionTimeoutMatchesMemberlistFormula() {
        ResolvedTimings t = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.SLOW), 3).timings();
        // 2 × log10(1000)=3 × 3s
        assertThat(t.suspicionTimeout(1000)).isEqualTo(Duration.ofSeconds(18));
        // below 10 members the scale is 1
        assertThat(t.suspicionTimeout(5)).isEqualTo(Duration.ofSeconds(6));
    }
}
