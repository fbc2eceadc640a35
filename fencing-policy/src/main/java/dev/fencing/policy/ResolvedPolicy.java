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
 * @param disk             the shared-disk arbiter, when the group has one
 */
public record ResolvedPolicy(
        Mode mode,
        QuorumLossAction quorumLossAction,
        int expected,
        int quorumSize,
        List<TieBreakerKind> tieBreakers,
        ResolvedTimings timings,
        Optional<ResolvedDisk> disk) {

    /** Rejects missing values and copies the list. */
    public ResolvedPolicy {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(quorumLossAction, "quorumLossAction");
        tieBreakers = List.copyOf(tieBreakers);
        Objects.requireNonNull(timings, "timings");
        Objects.requireNonNull(disk, "disk");
    }

    /** A policy without a shared disk. */
    public ResolvedPolicy(Mode mode, QuorumLossAction quorumLossAction, int expected, int quorumSize,
            List<TieBreakerKind> tieBreakers, ResolvedTimings timings) {
        this(mode, quorumLossAction, expected, quorumSize, tieBreakers, timings, Optional.empty());
    }
}
