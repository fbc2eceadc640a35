package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.TieBreaker;
import dev.fencing.proto.fencing.v1.Timings;
import dev.fencing.proto.nodemanager.v1.FencingPolicy;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class PolicyProtosTest {

    @Property(tries = 200, seed = "31337")
    void resolvedPolicyRoundTripsThroughTheWire(@ForAll Profile profile, @ForAll Mode mode,
                                                @ForAll @IntRange(min = 0, max = 1200) int expected,
                                                @ForAll @IntRange(min = 5, max = 600) int timeoutSeconds)
            throws Exception {
        FencingSpec spec = FencingSpec.DEFAULTS.withProfile(profile).withMode(mode)
                .withWatchdogTimeout(Duration.ofSeconds(timeoutSeconds))
                .withTieBreakers(List.of(TieBreakerKind.CONTROL_PLANE));
        ResolvedPolicy policy = PolicyResolver.resolve(spec, expected);
        FencingPolicy wire = FencingPolicy.parseFrom(PolicyProtos.toProto(policy).toByteArray());
        assertThat(PolicyProtos.fromProto(wire, expected)).isEqualTo(policy);
    }

    @Test
    void wireCarriesDerivedDelaysAndNanosecondPrecision() {
        TimingOverrides o = new TimingOverrides(null, null, null, null, null, null, null, null, null,
                Duration.ofMillis(1_001), 1.25, null, null, null, Duration.ofNanos(5_000_000_007L));
        ResolvedPolicy policy = PolicyResolver.resolve(FencingSpec.DEFAULTS.withTimings(o), 3);
        Timings wire = PolicyProtos.toProto(policy.timings());
        assertThat(PolicyProtos.fromProto(wire.getTStop())).isEqualTo(policy.timings().tStop());
        assertThat(PolicyProtos.fromProto(wire.getSafeToAssumeFencedDelay()))
                .isEqualTo(policy.timings().safeToAssumeFencedDelay());
        assertThat(wire.getFenceMargin().getNanos()).isEqualTo(7);
        assertThat(wire.getProfile()).isEqualTo("Auto(n=3)+overrides");
        assertThat(PolicyProtos.fromProto(wire)).isEqualTo(policy.timings());
    }

    @Test
    void noGossipLabelCrossesTheWireBothWays() {
        ResolvedPolicy none = PolicyResolver.resolve(FencingSpec.DEFAULTS.withGossipLabel(GossipLabel.NONE), 3);
        FencingPolicy wire = PolicyProtos.toProto(none);
        assertThat(wire.getNoGossipLabel()).isTrue();
        assertThat(PolicyProtos.fromProto(wire, 3).gossipLabel()).isEqualTo(GossipLabel.NONE);
        FencingPolicy labelled = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3));
        assertThat(labelled.getNoGossipLabel()).isFalse();
        assertThat(PolicyProtos.fromProto(labelled, 3).gossipLabel()).isEqualTo(GossipLabel.GROUP_NAME);
    }

    @Test
    void enumsMapOneToOne() {
        assertThat(PolicyProtos.toProto(Mode.WATCHDOG)).isEqualTo(FencingMode.FENCING_MODE_WATCHDOG);
        assertThat(PolicyProtos.toProto(Mode.NOTIFY)).isEqualTo(FencingMode.FENCING_MODE_NOTIFY);
        assertThat(PolicyProtos.toProto(TieBreakerKind.API_REACHABLE)).isEqualTo(TieBreaker.TIE_BREAKER_API_REACHABLE);
        for (QuorumLossAction a : QuorumLossAction.values()) {
            assertThat(PolicyProtos.fromProto(PolicyProtos.toProto(a))).isEqualTo(a);
        }
        for (TieBreakerKind k : TieBreakerKind.values()) {
            assertThat(PolicyProtos.fromProto(PolicyProtos.toProto(k))).isEqualTo(k);
        }
        for (Mode m : Mode.values()) {
            assertThat(PolicyProtos.fromProto(PolicyProtos.toProto(m))).isEqualTo(m);
        }
    }

    @Test
    void unspecifiedEnumsAreRejectedWithTheField() {
        FencingPolicy valid = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3));
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder()
                .setMode(FencingMode.FENCING_MODE_UNSPECIFIED).build(), 3))
                .hasMessage("FencingPolicy.mode is FENCING_MODE_UNSPECIFIED; the controller must send "
                        + "FENCING_MODE_WATCHDOG or FENCING_MODE_NOTIFY");
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder()
                .setQuorumLossAction(dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_UNSPECIFIED)
                .build(), 3))
                .hasMessageStartingWith("FencingPolicy.quorum_loss_action is QUORUM_LOSS_ACTION_UNSPECIFIED");
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder()
                .addTieBreakers(TieBreaker.TIE_BREAKER_UNSPECIFIED).build(), 3))
                .hasMessageStartingWith("FencingPolicy.tie_breakers[1] is TIE_BREAKER_UNSPECIFIED");
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder()
                .setTieBreakers(0, TieBreaker.UNRECOGNIZED).build(), 3))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPolicyBreakingTheInvariantsIsRejected() {
        FencingPolicy valid = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 4));
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder().setQuorumSize(2).build(), 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("FencingPolicy for 4 expected members breaks the policy invariants")
                .hasMessageContaining("quorumSize: quorum size 2 is not a strict majority of 4 expected members");
        Timings fastFeed = valid.getTimings().toBuilder().setFeedInterval(PolicyProtos.toProto(Duration.ofSeconds(20)))
                .build();
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder().setTimings(fastFeed).build(), 4))
                .hasMessageContaining("timings.feedInterval: feedInterval is not shorter than watchdogTimeout / 3");
        Timings zeroCap = valid.getTimings().toBuilder().setLocalHealthCap(0).build();
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder().setTimings(zeroCap).build(), 4))
                .hasMessageContaining("timings.localHealthCap");
    }

    @Test
    void aCriticalTwoSecondPolicyCrossesTheWire() {
        ResolvedPolicy policy = PolicyResolver.resolve(FencingSpec.DEFAULTS.withProfile(Profile.CRITICAL)
                .withWatchdogTimeout(Duration.ofSeconds(2)), 5);
        assertThat(PolicyProtos.fromProto(PolicyProtos.toProto(policy), 5)).isEqualTo(policy);
    }

    @Test
    void aWirePolicyWithDiskOrASubTwoSecondTimeoutIsRejected() {
        FencingPolicy valid = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3));
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder()
                .addTieBreakers(TieBreaker.TIE_BREAKER_DISK).build(), 3))
                .hasMessageContaining("tieBreakers: " + PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE);
        Timings oneSecond = valid.getTimings().toBuilder()
                .setWatchdogTimeout(PolicyProtos.toProto(Duration.ofSeconds(1)))
                .setFeedInterval(PolicyProtos.toProto(Duration.ofMillis(100))).build();
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder().setTimings(oneSecond).build(), 3))
                .hasMessageContaining("timings.watchdogTimeout");
    }

    @Test
    void theDiskArbiterTravelsOnTheWire() {
        ResolvedPolicy policy = PolicyResolver.resolve(FencingSpec.DEFAULTS.withTieBreakers(
                java.util.List.of(TieBreakerKind.DISK)).withDisk(new DiskSpec("/dev/sdb", true, Duration.ofSeconds(2))), 4);
        FencingPolicy wire = PolicyProtos.toProto(policy);
        assertThat(wire.getDisk().getDevice()).isEqualTo("/dev/sdb");
        assertThat(PolicyProtos.fromProto(wire, 4)).isEqualTo(policy);
    }

    @Test
    void missingTimingsAreRejectedWithTheField() {
        FencingPolicy valid = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3));
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.toBuilder().clearTimings().build(), 3))
                .hasMessage("FencingPolicy.timings is missing; the controller must send every timing");
        assertThatThrownBy(() -> PolicyProtos.fromProto(valid.getTimings().toBuilder().clearQuorumWindow().build()))
                .hasMessage("Timings.quorum_window is missing; the controller must send every timing");
    }
}
