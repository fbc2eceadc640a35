package dev.fencing.nodemanager.tiebreak;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The {@code ControlPlane} tie-breaker's decision logic (qnetd-like), per group: on an exact half split the leader
 * grants the tie to exactly one side as a lease and renews it only for that side while it keeps asking. Pure apart
 * from the injected monotonic clock; callers serialise access (methods are synchronized).
 *
 * <p>Safety across leaders: a lease granted by a previous leader is invisible to a new one, so after becoming leader
 * (and after process start) nothing is granted until {@code maxLease + leadershipSlack} has passed — the longest a
 * previous grant can still be believed by an agent, plus the time an old leader may still think it leads. The agent
 * counts the lease from its own send time, which is before the controller's receive time, so the agent's lease always
 * ends before the controller's.
 */
public final class TieBreakArbiter {

    /** Reason prefix for refusals because the other side holds the tie; agents treat it as LOSE. */
    public static final String HELD_BY_OTHER_SIDE_PREFIX = "granted to the side holding ";

    private final LongSupplier nanoClock;
    private final Duration maxLease;
    private final Duration leadershipSlack;
    private final Map<String, Grant> grants = new HashMap<>();
    private boolean leader;
    private long grantsAllowedFromNanos;

    /**
     * @param nanoClock       monotonic clock
     * @param maxLease        the longest lease ever granted
     * @param leadershipSlack how long a deposed leader may still act (leader election lease duration)
     */
    public TieBreakArbiter(LongSupplier nanoClock, Duration maxLease, Duration leadershipSlack) {
        this.nanoClock = nanoClock;
        this.maxLease = maxLease;
        this.leadershipSlack = leadershipSlack;
    }

    /** This replica became leader: forget nothing it could not see, wait out any previous grant. */
    public synchronized void startedLeading() {
        leader = true;
        grants.clear();
        grantsAllowedFromNanos = nanoClock.getAsLong() + maxLease.plus(leadershipSlack).toNanos();
    }

    /** This replica lost leadership: it grants nothing more. */
    public synchronized void stoppedLeading() {
        leader = false;
        grants.clear();
    }

    /** True while leading. */
    public synchronized boolean leading() {
        return leader;
    }

    /**
     * Decides one request.
     *
     * @param group     the requester's group
     * @param requester the requesting node
     * @param side      the confirmed members on the requester's side, requester included
     * @param expected  the group's expected members as this controller knows them
     * @param lease     the lease to grant (capped at maxLease)
     */
    public synchronized TieBreakDecision decide(String group, String requester, Set<String> side,
                                                Set<String> expected, Duration lease) {
        if (!leader) {
            return TieBreakDecision.refuse("not leader");
        }
        if (!side.contains(requester)) {
            return TieBreakDecision.refuse("side does not include the requesting node " + requester);
        }
        if (!expected.containsAll(side) || side.size() * 2 != expected.size()) {
            return TieBreakDecision.refuse("side of " + side.size() + " is not exactly half of the " + expected.size()
                    + " expected members the controller knows");
        }
        long now = nanoClock.getAsLong();
        if (now - grantsAllowedFromNanos < 0) {
            return TieBreakDecision.refuse("waiting out a previous grant ("
                    + TimeUnit.NANOSECONDS.toMillis(grantsAllowedFromNanos - now) + "ms left)");
        }
        Grant current = grants.get(group);
        if (current != null && now - current.expiresAtNanos < 0 && disjoint(current.side, side)) {
            return TieBreakDecision.refuse(HELD_BY_OTHER_SIDE_PREFIX + current.side.first());
        }
        Duration granted = lease.compareTo(maxLease) > 0 ? maxLease : lease;
        grants.put(group, new Grant(new TreeSet<>(side), now + granted.toNanos()));
        return new TieBreakDecision(true, granted, current != null && !disjoint(current.side, side)
                && now - current.expiresAtNanos < 0 ? "renewed" : "granted");
    }

    private static boolean disjoint(Set<String> a, Set<String> b) {
        for (String x : b) {
            if (a.contains(x)) {
                return false;
            }
        }
        return true;
    }

    private record Grant(SortedSet<String> side, long expiresAtNanos) {}
}
