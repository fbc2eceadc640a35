package dev.fencing.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@code spec.fencing} of a NodeGroup (or the {@code fencing:} block of a standalone agent file), as written by the
 * user. Every component is nullable and then takes the documented default:
 *
 * <table>
 * <caption>defaults</caption>
 * <tr><th>component</th><th>default</th></tr>
 * <tr><td>mode</td><td>{@link #DEFAULT_MODE} (Watchdog, as Deckhouse)</td></tr>
 * <tr><td>watchdogTimeout</td><td>{@link #DEFAULT_WATCHDOG_TIMEOUT} (60s, as Deckhouse)</td></tr>
 * <tr><td>quorumLossAction</td><td>Fence in mode Watchdog, Wait in mode Notify</td></tr>
 * <tr><td>profile</td><td>{@link #DEFAULT_PROFILE} (Auto)</td></tr>
 * <tr><td>quorumSize</td><td>null = Auto = floor(expected/2)+1</td></tr>
 * <tr><td>tieBreakers</td><td>{@link #DEFAULT_TIE_BREAKERS} ([ControlPlane])</td></tr>
 * <tr><td>timings</td><td>{@link TimingOverrides#NONE}</td></tr>
 * <tr><td>storm</td><td>{@link StormLimits#DEFAULTS} (minHealthy 50%, maxConcurrent 1, cooldown 10m)</td></tr>
 * <tr><td>afterFence</td><td>{@link AfterFence#AUTO}</td></tr>
 * <tr><td>gossipLabel</td><td>{@link #DEFAULT_GOSSIP_LABEL} (GroupName)</td></tr>
 * <tr><td>networks</td><td>{@link GossipNetworks#SINGLE} (the gossip address only, rule Any)</td></tr>
 * </table>
 *
 * <p>The tie-breaker list keeps null entries so that validation can report them by index.
 *
 * @param mode             Watchdog or Notify
 * @param watchdogTimeout  the watchdog device timeout, whole seconds
 * @param quorumLossAction Fence, Exclude or Wait
 * @param profile          Auto or a fixed profile
 * @param quorumSize       explicit votes needed for quorum; null = Auto
 * @param tieBreakers      asked in order on an exact half split; an empty list means "never break a tie"
 * @param timings          overrides of the profile
 * @param gossipLabel      GroupName (the gossip label is the group name) or None (no label)
 * @param storm            storm limits (controller only)
 * @param afterFence       what the controller does with a fenced node (controller only)
 * @param networks         the gossip networks and the reachability rule
 * @param disk             the shared-disk arbiter; null = none
 */
public record FencingSpec(
        Mode mode,
        Duration watchdogTimeout,
        QuorumLossAction quorumLossAction,
        Profile profile,
        Integer quorumSize,
        List<TieBreakerKind> tieBreakers,
        TimingOverrides timings,
        GossipLabel gossipLabel,
        StormLimits storm,
        AfterFence afterFence,
        GossipNetworks networks,
        DiskSpec disk) {

    /** Default mode, as Deckhouse's NodeGroup. */
    public static final Mode DEFAULT_MODE = Mode.WATCHDOG;
    /** Default watchdog timeout, as Deckhouse's NodeGroup. */
    public static final Duration DEFAULT_WATCHDOG_TIMEOUT = Duration.ofSeconds(60);
    /** Default profile. */
    public static final Profile DEFAULT_PROFILE = Profile.AUTO;
    /** Default tie-breakers: only the controller may grant an even split, so at most one side survives it. */
    public static final List<TieBreakerKind> DEFAULT_TIE_BREAKERS = List.of(TieBreakerKind.CONTROL_PLANE);
    /** Default gossip label: the group name. */
    public static final GossipLabel DEFAULT_GOSSIP_LABEL = GossipLabel.GROUP_NAME;
    /** Everything at its default. */
    public static final FencingSpec DEFAULTS = new Builder().build();

    /** Copies the tie-breaker list (null entries are kept for validation to report). */
    public FencingSpec {
        if (tieBreakers != null) {
            tieBreakers = Collections.unmodifiableList(new ArrayList<>(tieBreakers));
        }
    }

    /** A spec of the first seven components; every later one at its default. */
    public FencingSpec(Mode mode, Duration watchdogTimeout, QuorumLossAction quorumLossAction, Profile profile,
            Integer quorumSize, List<TieBreakerKind> tieBreakers, TimingOverrides timings) {
        this(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers, timings, null, null, null, null, null);
    }

    /** A builder with every component absent (= its default). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this spec's components. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** The gossip label in effect. */
    public GossipLabel effectiveGossipLabel() {
        return gossipLabel != null ? gossipLabel : DEFAULT_GOSSIP_LABEL;
    }

    /** The mode in effect. */
    public Mode effectiveMode() {
        return mode != null ? mode : DEFAULT_MODE;
    }

    /** The watchdog timeout in effect. */
    public Duration effectiveWatchdogTimeout() {
        return watchdogTimeout != null ? watchdogTimeout : DEFAULT_WATCHDOG_TIMEOUT;
    }

    /** The quorum-loss action in effect: explicit, else Fence in Watchdog mode and Wait in Notify mode. */
    public QuorumLossAction effectiveQuorumLossAction() {
        if (quorumLossAction != null) {
            return quorumLossAction;
        }
        return effectiveMode() == Mode.WATCHDOG ? QuorumLossAction.FENCE : QuorumLossAction.WAIT;
    }

    /** The profile in effect. */
    public Profile effectiveProfile() {
        return profile != null ? profile : DEFAULT_PROFILE;
    }

    /** The tie-breakers in effect. */
    public List<TieBreakerKind> effectiveTieBreakers() {
        return tieBreakers != null ? tieBreakers : DEFAULT_TIE_BREAKERS;
    }

    /** The storm limits in effect. */
    public StormLimits effectiveStorm() {
        return storm != null ? storm : StormLimits.DEFAULTS;
    }

    /** The afterFence setting in effect (before resolving Auto against the nodeType). */
    public AfterFence effectiveAfterFence() {
        return afterFence != null ? afterFence : AfterFence.AUTO;
    }

    /** The gossip networks in effect. */
    public GossipNetworks effectiveNetworks() {
        return networks != null ? networks : GossipNetworks.SINGLE;
    }

    /** The timing overrides in effect. */
    public TimingOverrides effectiveTimings() {
        return timings != null ? timings : TimingOverrides.NONE;
    }

    /** A copy with another mode. */
    public FencingSpec withMode(Mode newMode) {
        return toBuilder().mode(newMode).build();
    }

    /** A copy with another watchdog timeout. */
    public FencingSpec withWatchdogTimeout(Duration newTimeout) {
        return toBuilder().watchdogTimeout(newTimeout).build();
    }

    /** A copy with another quorum-loss action. */
    public FencingSpec withQuorumLossAction(QuorumLossAction newAction) {
        return toBuilder().quorumLossAction(newAction).build();
    }

    /** A copy with another profile. */
    public FencingSpec withProfile(Profile newProfile) {
        return toBuilder().profile(newProfile).build();
    }

    /** A copy with another explicit quorum size (null = Auto). */
    public FencingSpec withQuorumSize(Integer newSize) {
        return toBuilder().quorumSize(newSize).build();
    }

    /** A copy with other tie-breakers. */
    public FencingSpec withTieBreakers(List<TieBreakerKind> newTieBreakers) {
        return toBuilder().tieBreakers(newTieBreakers).build();
    }

    /** A copy with another gossip label (null = the default). */
    public FencingSpec withGossipLabel(GossipLabel newGossipLabel) {
        return toBuilder().gossipLabel(newGossipLabel).build();
    }

    /** A copy with other timing overrides. */
    public FencingSpec withTimings(TimingOverrides newTimings) {
        return toBuilder().timings(newTimings).build();
    }

    /** A copy with other storm limits. */
    public FencingSpec withStorm(StormLimits newStorm) {
        return toBuilder().storm(newStorm).build();
    }

    /** A copy with other gossip networks (null = the gossip address only). */
    public FencingSpec withNetworks(GossipNetworks newNetworks) {
        return toBuilder().networks(newNetworks).build();
    }

    /** A copy with another shared-disk arbiter (null = none). */
    public FencingSpec withDisk(DiskSpec newDisk) {
        return toBuilder().disk(newDisk).build();
    }

    /** A copy with another afterFence. */
    public FencingSpec withAfterFence(AfterFence newAfterFence) {
        return toBuilder().afterFence(newAfterFence).build();
    }

    /**
     * Builds a spec component by component (absent = default), so adding a component changes one place instead of
     * every copy method.
     */
    public static final class Builder {
        private Mode mode;
        private Duration watchdogTimeout;
        private QuorumLossAction quorumLossAction;
        private Profile profile;
        private Integer quorumSize;
        private List<TieBreakerKind> tieBreakers;
        private TimingOverrides timings;
        private GossipLabel gossipLabel;
        private StormLimits storm;
        private AfterFence afterFence;
        private GossipNetworks networks;
        private DiskSpec disk;

        private Builder() {
        }

        private Builder(FencingSpec spec) {
            mode = spec.mode;
            watchdogTimeout = spec.watchdogTimeout;
            quorumLossAction = spec.quorumLossAction;
            profile = spec.profile;
            quorumSize = spec.quorumSize;
            tieBreakers = spec.tieBreakers;
            timings = spec.timings;
            gossipLabel = spec.gossipLabel;
            storm = spec.storm;
            afterFence = spec.afterFence;
            networks = spec.networks;
            disk = spec.disk;
        }

        /** Sets {@code mode}. */
        public Builder mode(Mode value) {
            mode = value;
            return this;
        }

        /** Sets {@code watchdogTimeout}. */
        public Builder watchdogTimeout(Duration value) {
            watchdogTimeout = value;
            return this;
        }

        /** Sets {@code quorumLossAction}. */
        public Builder quorumLossAction(QuorumLossAction value) {
            quorumLossAction = value;
            return this;
        }

        /** Sets {@code profile}. */
        public Builder profile(Profile value) {
            profile = value;
            return this;
        }

        /** Sets {@code quorumSize} (null = Auto). */
        public Builder quorumSize(Integer value) {
            quorumSize = value;
            return this;
        }

        /** Sets {@code tieBreakers}. */
        public Builder tieBreakers(List<TieBreakerKind> value) {
            tieBreakers = value;
            return this;
        }

        /** Sets {@code timings}. */
        public Builder timings(TimingOverrides value) {
            timings = value;
            return this;
        }

        /** Sets {@code gossipLabel}. */
        public Builder gossipLabel(GossipLabel value) {
            gossipLabel = value;
            return this;
        }

        /** Sets {@code storm}. */
        public Builder storm(StormLimits value) {
            storm = value;
            return this;
        }

        /** Sets {@code afterFence}. */
        public Builder afterFence(AfterFence value) {
            afterFence = value;
            return this;
        }

        /** Sets {@code networks}. */
        public Builder networks(GossipNetworks value) {
            networks = value;
            return this;
        }

        /** Sets {@code disk}. */
        public Builder disk(DiskSpec value) {
            disk = value;
            return this;
        }

        /** The spec. */
        public FencingSpec build() {
            return new FencingSpec(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers, timings,
                    gossipLabel, storm, afterFence, networks, disk);
        }
    }
}
