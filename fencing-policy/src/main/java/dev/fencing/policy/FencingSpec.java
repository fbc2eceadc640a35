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
        DiskSpec disk) {

    /** Default mode, as Deckhouse's NodeGroup. */
    public static final Mode DEFAULT_MODE = Mode.WATCHDOG;
    /** Default watchdog timeout, as Deckhouse's NodeGroup. */
    public static final Duration DEFAULT_WATCHDOG_TIMEOUT = Duration.ofSeconds(60);
    /** Default profile. */
    public static final Profile DEFAULT_PROFILE = Profile.AUTO;
    /** Default tie-breakers: only the controller may grant an even split, so at most one side survives it. */
    public static final List<TieBreakerKind> DEFAULT_TIE_BREAKERS = List.of(TieBreakerKind.CONTROL_PLANE);
    /** Everything at its default. */
    public static final FencingSpec DEFAULTS = new FencingSpec(null, null, null, null, null, null, null);

    /** A spec without a shared disk. */
    public FencingSpec(Mode mode, Duration watchdogTimeout, QuorumLossAction quorumLossAction, Profile profile,
            Integer quorumSize, List<TieBreakerKind> tieBreakers, TimingOverrides timings) {
        this(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers, timings, null);
    }

    /** Copies the tie-breaker list (null entries are kept for validation to report). */
    public FencingSpec {
        if (tieBreakers != null) {
            tieBreakers = Collections.unmodifiableList(new ArrayList<>(tieBreakers));
        }
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

    /** The timing overrides in effect. */
    public TimingOverrides effectiveTimings() {
        return timings != null ? timings : TimingOverrides.NONE;
    }

    /** A copy with another mode. */
    public FencingSpec withMode(Mode newMode) {
        return new FencingSpec(newMode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers,
                timings, disk);
    }

    /** A copy with another watchdog timeout. */
    public FencingSpec withWatchdogTimeout(Duration newTimeout) {
        return new FencingSpec(mode, newTimeout, quorumLossAction, profile, quorumSize, tieBreakers, timings, disk);
    }

    /** A copy with another quorum-loss action. */
    public FencingSpec withQuorumLossAction(QuorumLossAction newAction) {
        return new FencingSpec(mode, watchdogTimeout, newAction, profile, quorumSize, tieBreakers, timings, disk);
    }

    /** A copy with another profile. */
    public FencingSpec withProfile(Profile newProfile) {
        return new FencingSpec(mode, watchdogTimeout, quorumLossAction, newProfile, quorumSize, tieBreakers,
                timings, disk);
    }

    /** A copy with another explicit quorum size (null = Auto). */
    public FencingSpec withQuorumSize(Integer newSize) {
        return new FencingSpec(mode, watchdogTimeout, quorumLossAction, profile, newSize, tieBreakers, timings, disk);
    }

    /** A copy with other tie-breakers. */
    public FencingSpec withTieBreakers(List<TieBreakerKind> newTieBreakers) {
        return new FencingSpec(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, newTieBreakers,
                timings, disk);
    }

    /** A copy with another shared-disk arbiter (null = none). */
    public FencingSpec withDisk(DiskSpec newDisk) {
        return new FencingSpec(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers, timings,
                newDisk);
    }

    /** A copy with other timing overrides. */
    public FencingSpec withTimings(TimingOverrides newTimings) {
        return new FencingSpec(mode, watchdogTimeout, quorumLossAction, profile, quorumSize, tieBreakers,
                newTimings, disk);
    }
}
