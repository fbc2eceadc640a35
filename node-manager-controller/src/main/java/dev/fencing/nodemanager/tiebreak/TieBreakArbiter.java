package dev.fencing.nodemanager.tiebreak;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
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
 *
 * <p>Every grant still valid is remembered, not only the latest: a side is granted only if it shares a member with
 * each of them, so any two sides holding valid grants intersect and two disjoint halves never both hold the tie.
 * (Remembering only the latest let an overlapping side hand the tie across: {@code {2,4,5}} granted, then the mixed
 * side {@code {1,2,5}} — asked while old round trips across the cut were still in the window — renewed over it, then
 * {@code {0,1,3}} overlapping that, while {@code {2,4,5}} still held its lease.)
 *
 * <p>Honest leadership: with leader election, a grant is given only while this replica saw a renewal of its own
 * election Lease within the renew deadline, on the monotonic clock ({@link #leaseRenewed}). JOSDK learns it lost the
 * Lease only on its next renew attempt, so a leader paused (SIGSTOP, a long GC, a frozen VM) for longer than the
 * Lease would otherwise still grant after it resumes, while another replica already leads and may grant the other
 * side. The renew deadline is shorter than the Lease duration another candidate waits before taking over.
 */
public final class TieBreakArbiter {

    /** Reason prefix for refusals because the other side holds the tie; agents treat it as LOSE. */
    public static final String HELD_BY_OTHER_SIDE_PREFIX = "granted to the side holding ";

    private final LongSupplier nanoClock;
    private final Duration maxLease;
    private final Duration leadershipSlack;
    private final Duration renewDeadline;
    /** Per group: every grant that may still be valid, by side. */
    private final Map<String, Map<SortedSet<String>, Long>> grants = new HashMap<>();
    /** Per group: ties newly granted, over this replica's life (a metric; never reset on leadership changes). */
    private final Map<String, Long> newGrants = new HashMap<>();
    private boolean leader;
    private long grantsAllowedFromNanos;
    private boolean renewalSeen;
    private long lastRenewalNanos;

    /**
     * An arbiter that leads without an election Lease (leader election off: this is the only replica).
     *
     * @param nanoClock       monotonic clock
     * @param maxLease        the longest lease ever granted
     * @param leadershipSlack how long a deposed leader may still act (leader election lease duration)
     */
    public TieBreakArbiter(LongSupplier nanoClock, Duration maxLease, Duration leadershipSlack) {
        this(nanoClock, maxLease, leadershipSlack, null);
    }

    /**
     * @param nanoClock       monotonic clock
     * @param maxLease        the longest lease ever granted
     * @param leadershipSlack how long a deposed leader may still act (leader election lease duration)
     * @param renewDeadline   with leader election: grant only within this long after a renewal of this replica's
     *                        election Lease (see {@link #leaseRenewed}); null without leader election
     */
    public TieBreakArbiter(LongSupplier nanoClock, Duration maxLease, Duration leadershipSlack,
                           Duration renewDeadline) {
        this.nanoClock = nanoClock;
        this.maxLease = maxLease;
        this.leadershipSlack = leadershipSlack;
        this.renewDeadline = renewDeadline;
    }

    /**
     * This replica's election Lease was renewed (or acquired) by this replica at {@code renewedAtNanos} on the
     * monotonic clock (an estimate that is never later than the renewal was sent).
     */
    public synchronized void leaseRenewed(long renewedAtNanos) {
        if (!renewalSeen || renewedAtNanos - lastRenewalNanos > 0) {
            lastRenewalNanos = renewedAtNanos;
            renewalSeen = true;
        }
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
        renewalSeen = false;
        grants.clear();
    }

    /** True while leading. */
    public synchronized boolean leading() {
        return leader;
    }

    /**
     * While this leader still waits out the grants a previous leader may have made (after {@link #startedLeading}),
     * how long it still waits; empty once it may grant (or while it does not lead: nothing waits for it then).
     */
    public synchronized Optional<Duration> grantsWaitFor() {
        long left = grantsAllowedFromNanos - nanoClock.getAsLong();
        return leader && left > 0 ? Optional.of(Duration.ofNanos(left)) : Optional.empty();
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
        Optional<String> doubt = renewalDoubt(now);
        if (doubt.isPresent()) {
            return TieBreakDecision.refuse(doubt.get());
        }
        if (now - grantsAllowedFromNanos < 0) {
            return TieBreakDecision.refuse("waiting out a previous grant ("
                    + TimeUnit.NANOSECONDS.toMillis(grantsAllowedFromNanos - now) + "ms left)");
        }
        Map<SortedSet<String>, Long> valid = grants.computeIfAbsent(group, g -> new HashMap<>());
        valid.values().removeIf(expiresAt -> now - expiresAt >= 0);
        for (SortedSet<String> held : valid.keySet()) {
            if (disjoint(held, side)) {
                return TieBreakDecision.refuse(HELD_BY_OTHER_SIDE_PREFIX + held.first());
            }
        }
        Duration granted = lease.compareTo(maxLease) > 0 ? maxLease : lease;
        TreeSet<String> key = new TreeSet<>(side);
        boolean renewal = valid.containsKey(key) || !valid.isEmpty();
        valid.merge(key, now + granted.toNanos(), Math::max);
        if (!renewal) {
            newGrants.merge(group, 1L, Long::sum);
        }
        return new TieBreakDecision(true, granted, renewal ? "renewed" : "granted");
    }

    /**
     * Why this replica must not act as leader right now, or empty when it may: it does not lead, or (with leader
     * election) it saw no renewal of its election Lease within the renew deadline. The same honest-leadership rule
     * as the grants, for other leader-only actions that must not run twice (power fencing asks it right before each
     * create, claim and stage start).
     */
    public synchronized Optional<String> leadershipDoubt() {
        return leader ? renewalDoubt(nanoClock.getAsLong()) : Optional.of("not leader");
    }

    private Optional<String> renewalDoubt(long now) {
        if (renewDeadline == null) {
            return Optional.empty();
        }
        if (!renewalSeen) {
            return Optional.of("leader Lease renewal not seen yet");
        }
        if (now - lastRenewalNanos > renewDeadline.toNanos()) {
            return Optional.of("leader Lease last renewed "
                    + TimeUnit.NANOSECONDS.toMillis(now - lastRenewalNanos) + "ms ago, beyond the renew deadline "
                    + renewDeadline.toMillis() + "ms: this replica may no longer lead");
        }
        return Optional.empty();
    }

    /**
     * Ties this replica newly granted to a side of {@code group} while no grant of the group was valid; renewals
     * (the holder asking again, or an overlapping side while a grant is valid) are not counted, so each count is
     * one tie broken. Monotonic over the replica's life.
     */
    public synchronized long newGrants(String group) {
        return newGrants.getOrDefault(group, 0L);
    }

    private static boolean disjoint(Set<String> a, Set<String> b) {
        for (String x : b) {
            if (a.contains(x)) {
                return false;
            }
        }
        return true;
    }

}
