package dev.fencing.policy;

import java.time.Duration;

/**
 * {@code spec.fencing.timings}: explicit overrides of the profile's timings. Every component is nullable; null means
 * "not overridden", and the value comes from the profile (or is derived from other effective values, see
 * {@link PolicyResolver}).
 *
 * @param probeInterval           memberlist probe period
 * @param probeTimeout            memberlist probe (ack) timeout; must be below probeInterval
 * @param suspicionMult           memberlist suspicion multiplier (Lifeguard alpha)
 * @param suspicionMaxTimeoutMult memberlist maximum suspicion multiplier (Lifeguard beta)
 * @param gossipInterval          memberlist gossip period
 * @param gossipNodes             memberlist gossip fan-out
 * @param retransmitMult          memberlist broadcast retransmission multiplier
 * @param pushPullInterval        memberlist full state sync period
 * @param heartbeatInterval       quorum heartbeat period; must be below quorumWindow
 * @param quorumWindow            a peer counts towards quorum while its latest round trip is younger than this
 * @param localHealthCap          the quorum window may stretch by local lag up to window × cap; in [1.0, 4.0]
 * @param evaluationTick          how often quorum is evaluated; at most heartbeatInterval
 * @param feedInterval            watchdog feed period; below watchdog timeout / 3
 * @param armingDelay             quorum must be held this long before arming; at least quorumWindow
 * @param fenceMargin             safety margin added to the safe-to-assume-fenced delay
 */
public record TimingOverrides(
        Duration probeInterval,
        Duration probeTimeout,
        Integer suspicionMult,
        Integer suspicionMaxTimeoutMult,
        Duration gossipInterval,
        Integer gossipNodes,
        Integer retransmitMult,
        Duration pushPullInterval,
        Duration heartbeatInterval,
        Duration quorumWindow,
        Double localHealthCap,
        Duration evaluationTick,
        Duration feedInterval,
        Duration armingDelay,
        Duration fenceMargin) {

    /** Nothing overridden. */
    public static final TimingOverrides NONE =
            new TimingOverrides(null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                    null);

    /** True when at least one timing is overridden. */
    public boolean any() {
        return !equals(NONE);
    }
}
