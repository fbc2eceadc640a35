package dev.fencing.policy;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code spec.fencing} means for a group of a given size now.
 *
 * @param mode             Watchdog or Notify
 * @param quorumLossAction Fence, Exclude or Wait
 * @param expected         expected members (the quorum denominator), this node included
 * @param quorumSize       votes needed to hold quorum
 * @param tieBreakers      asked in order on an exact half split
 * @param timings          every resolved timing
 * @param gossipLabel      whether gossip carries the group name as memberlist label (GroupName) or none (None)
 * @param networks         the gossip networks and the reachability rule
 * @param disk             the shared-disk arbiter, when the group has one
 */
public record ResolvedPolicy(
        Mode mode,
        QuorumLossAction quorumLossAction,
        int expected,
        int quorumSize,
        List<TieBreakerKind> tieBreakers,
        ResolvedTimings timings,
        GossipLabel gossipLabel,
        GossipNetworks networks,
        Optional<ResolvedDisk> disk) {

    /** Rejects missing values and copies the list. */
    public ResolvedPolicy {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(quorumLossAction, "quorumLossAction");
        tieBreakers = List.copyOf(tieBreakers);
        Objects.requireNonNull(timings, "timings");
        Objects.requireNonNull(gossipLabel, "gossipLabel");
        Objects.requireNonNull(networks, "networks");
        Objects.requireNonNull(disk, "disk");
    }

    /** A policy whose gossip is labelled with the group name (the default), on the gossip address alone, without a
     * shared disk. */
    public ResolvedPolicy(Mode mode, QuorumLossAction quorumLossAction, int expected, int quorumSize,
            List<TieBreakerKind> tieBreakers, ResolvedTimings timings) {
        this(mode, quorumLossAction, expected, quorumSize, tieBreakers, timings, FencingSpec.DEFAULT_GOSSIP_LABEL,
                GossipNetworks.SINGLE, Optional.empty());
    }
}
