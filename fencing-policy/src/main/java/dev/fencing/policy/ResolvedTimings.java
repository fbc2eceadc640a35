package dev.fencing.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * Every timing an agent runs with, after profile, Auto and overrides are resolved. Built by {@link PolicyResolver}
 * (always valid) or {@link PolicyProtos#fromProto(dev.fencing.proto.fencing.v1.Timings)}.
 *
 * @param profile                 where the values came from, e.g. {@code "Medium"}, {@code "Auto(n=5)"}, with
 *                                {@code "+overrides"} appended when any timing was overridden
 * @param probeInterval           memberlist probe period
 * @param probeTimeout            memberlist probe (ack) timeout
 * @param suspicionMult           memberlist suspicion multiplier
 * @param suspicionMaxTimeoutMult memberlist maximum suspicion multiplier
 * @param gossipInterval          memberlist gossip period
 * @param gossipNodes             memberlist gossip fan-out
 * @param retransmitMult          memberlist retransmission multiplier
 * @param pushPullInterval        memberlist full state sync period
 * @param heartbeatInterval       quorum heartbeat period
 * @param quorumWindow            round-trip freshness window for quorum
 * @param localHealthCap          maximum stretch factor of the quorum window
 * @param evaluationTick          quorum evaluation period
 * @param feedInterval            watchdog feed period
 * @param watchdogTimeout         watchdog device timeout
 * @param armingDelay             quorum held continuously this long before arming
 * @param fenceMargin             margin added to the safe-to-assume-fenced delay
 */
public record ResolvedTimings(
        String profile,
        Duration probeInterval,
        Duration probeTimeout,
        int suspicionMult,
        int suspicionMaxTimeoutMult,
        Duration gossipInterval,
        int gossipNodes,
        int retransmitMult,
        Duration pushPullInterval,
        Duration heartbeatInterval,
        Duration quorumWindow,
        double localHealthCap,
        Duration evaluationTick,
        Duration feedInterval,
        Duration watchdogTimeout,
        Duration armingDelay,
        Duration fenceMargin) {

    /** Rejects missing values. */
    public ResolvedTimings {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(probeInterval, "probeInterval");
        Objects.requireNonNull(probeTimeout, "probeTimeout");
        Objects.requireNonNull(gossipInterval, "gossipInterval");
        Objects.requireNonNull(pushPullInterval, "pushPullInterval");
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        Objects.requireNonNull(quorumWindow, "quorumWindow");
        Objects.requireNonNull(evaluationTick, "evaluationTick");
        Objects.requireNonNull(feedInterval, "feedInterval");
        Objects.requireNonNull(watchdogTimeout, "watchdogTimeout");
        Objects.requireNonNull(armingDelay, "armingDelay");
        Objects.requireNonNull(fenceMargin, "fenceMargin");
    }

    /**
     * The hard bound on how long a node cut off from the majority keeps feeding after the send time of its last
     * heartbeat a majority member received: {@code quorumWindow × localHealthCap + evaluationTick}, rounded up to
     * the nanosecond.
     */
    public Duration tStop() {
        long stretchedNanos = (long) Math.ceil(quorumWindow.toNanos() * localHealthCap);
        return Duration.ofNanos(stretchedNanos).plus(evaluationTick);
    }

    /**
     * How long after {@code lastContact(X)} node X may be treated as powered off:
     * {@code tStop + watchdogTimeout + fenceMargin}.
     */
    public Duration safeToAssumeFencedDelay() {
        return tStop().plus(watchdogTimeout).plus(fenceMargin);
    }

    /**
     * The memberlist suspicion timeout this node would use in a cluster of {@code n} members:
     * {@code suspicionMult × max(1, log10(n)) × probeInterval} (memberlist's suspicionTimeout).
     */
    public Duration suspicionTimeout(int n) {
        return SuspicionFormula.timeout(suspicionMult, n, probeInterval);
    }
}
