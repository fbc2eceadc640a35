package dev.fencing.nodemanager.storm;

import dev.fencing.policy.StormLimits;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One fencing group as the storm guard counts it, read from the cluster (informer caches), so that a new leader
 * counts what the previous one started.
 *
 * @param group         NodeGroup name
 * @param limits        the group's {@code spec.fencing.storm}
 * @param members       its expected members
 * @param healthy       the members that are healthy: Node Ready and no fencing in progress
 * @param fencing       the members with a fencing in progress visible in the cluster: the out-of-service taint this
 *                      controller added, a Node being deleted, a running power fence
 * @param stormRecorded the NodeGroup's status says {@code FencingStormLimit=True} for a limit after which the
 *                      cooldown runs (read by a new leader that has no memory of when the storm held)
 * @param specValid     false: the group's spec is invalid. Nothing in it is admitted, but its members and the
 *                      fencings in progress there (their taints and records outlive the bad edit) still count
 *                      towards the cluster-wide limits
 */
public record GroupCensus(String group, StormLimits limits, Set<String> members, Set<String> healthy,
                          Set<String> fencing, boolean stormRecorded, boolean specValid) {

    /** Copies the sets (sorted, for stable messages). */
    public GroupCensus {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(limits, "limits");
        members = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(members));
        healthy = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(healthy));
        fencing = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(fencing));
    }
}
