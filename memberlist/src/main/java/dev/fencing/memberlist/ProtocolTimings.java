package dev.fencing.memberlist;

import java.time.Duration;
import java.util.Objects;

/**
 * The protocol timings a running {@link Memberlist} can change without leaving the cluster ({@link
 * Memberlist#applyTimings}): the probe, gossip and push/pull periods and the SWIM / Lifeguard multipliers. An
 * application that derives them from the cluster size (more members, slower probes) applies them live, so a member
 * joining or leaving never makes every node leave and rejoin.
 *
 * @param probeInterval ProbeInterval: one failure-detection probe per period
 * @param probeTimeout ProbeTimeout: how long a direct ping waits for its ack
 * @param suspicionMult SuspicionMult: the suspicion timeout's multiplier
 * @param suspicionMaxTimeoutMult SuspicionMaxTimeoutMult: Lifeguard's upper bound on the suspicion timeout
 * @param gossipInterval GossipInterval: one gossip round per period; zero = no gossip ticker
 * @param gossipNodes GossipNodes: peers per gossip round
 * @param retransmitMult RetransmitMult: how often a broadcast is piggybacked
 * @param pushPullInterval PushPullInterval: one full state exchange per period; zero = none
 */
public record ProtocolTimings(
    Duration probeInterval,
    Duration probeTimeout,
    int suspicionMult,
    int suspicionMaxTimeoutMult,
    Duration gossipInterval,
    int gossipNodes,
    int retransmitMult,
    Duration pushPullInterval) {

  /** Validates like {@link Config.Builder#build()}: positive probe times, multipliers >= 1, no negative period. */
  public ProtocolTimings {
    requirePositive(probeInterval, "probeInterval");
    requirePositive(probeTimeout, "probeTimeout");
    requireNotNegative(gossipInterval, "gossipInterval");
    requireNotNegative(pushPullInterval, "pushPullInterval");
    if (suspicionMult < 1 || suspicionMaxTimeoutMult < 1 || retransmitMult < 1) {
      throw new IllegalArgumentException("suspicionMult, suspicionMaxTimeoutMult and retransmitMult must be >= 1");
    }
    if (gossipNodes < 0) {
      throw new IllegalArgumentException("gossipNodes must be >= 0, was " + gossipNodes);
    }
  }

  /** The timings {@code config} starts with. */
  public static ProtocolTimings of(Config config) {
    return new ProtocolTimings(config.probeInterval(), config.probeTimeout(), config.suspicionMult(),
        config.suspicionMaxTimeoutMult(), config.gossipInterval(), config.gossipNodes(), config.retransmitMult(),
        config.pushPullInterval());
  }

  /** {@code builder} with these timings set (to build a configuration that starts with them). */
  public Config.Builder applyTo(Config.Builder builder) {
    return builder.probeInterval(probeInterval).probeTimeout(probeTimeout).suspicionMult(suspicionMult)
        .suspicionMaxTimeoutMult(suspicionMaxTimeoutMult).gossipInterval(gossipInterval).gossipNodes(gossipNodes)
        .retransmitMult(retransmitMult).pushPullInterval(pushPullInterval);
  }

  private static void requirePositive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(what + " must be > 0, was " + d);
    }
  }

  private static void requireNotNegative(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative()) {
      throw new IllegalArgumentException(what + " must be >= 0, was " + d);
    }
  }
}
