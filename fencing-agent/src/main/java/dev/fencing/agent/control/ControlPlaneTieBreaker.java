package dev.fencing.agent.control;

import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The {@code ControlPlane} tie-breaker: on an exact half split the agent asks the controller's leader, which grants
 * the tie to exactly one side as a lease. Non-blocking: every evaluation sends a (renewal) request and the verdict
 * is decided from answers already received. The evaluator also {@linkplain #prepare prepares} it ahead of a likely
 * tie (the confirmations that will remain are exactly half while the window still holds a majority), so the first
 * tied evaluation already finds the grant; without that, the first tied evaluation could only say "waiting for an
 * answer", which under {@code Fence} stops feeding for good on the side that was about to be granted.
 *
 * <ul>
 *   <li>WIN while {@code now < sendTime(request) + valid_for} for a granted request of the same side, on this
 *       agent's monotonic clock (counting from the send time, never from receipt, so delay only shortens the
 *       lease);</li>
 *   <li>LOSE when the latest answer for this side says the tie is held by the other side;</li>
 *   <li>NO_ANSWER otherwise (not connected, no answer yet, "not leader", "waiting out a previous grant"): with no
 *       other tie-breaker this side does not hold quorum, i.e. it fences.</li>
 * </ul>
 */
public final class ControlPlaneTieBreaker implements TieBreaker {

    /**
     * Prefix of {@link TieBreakGrant#getReason()} when the tie is held by the other side; the controller uses the
     * same spelling.
     */
    public static final String HELD_BY_OTHER_SIDE_PREFIX = "granted to the side holding ";

    private static final int MAX_PENDING = 64;
    private static final long PENDING_TTL_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Predicate<TieBreakRequest> sender;
    private final ConfigIdentity identity;
    private final Map<Long, Pending> pending = new LinkedHashMap<>();
    private long nextRequestId = 1;
    private Lease lease;
    private Refusal refusal;

    /** Where the requests go: returns false when they cannot be sent now (not connected). */
    interface ConfigIdentity {
        String epoch();

        long revision();
    }

    ControlPlaneTieBreaker(Predicate<TieBreakRequest> sender, ConfigIdentity identity) {
        this.sender = sender;
        this.identity = identity;
    }

    @Override
    public String name() {
        return "ControlPlane";
    }

    @Override
    public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        List<String> sideList = List.copyOf(side);
        boolean sent = request(sideList, nowNanos);
        synchronized (this) {
            if (lease != null && lease.side.equals(sideList) && nowNanos - lease.expiresAtNanos < 0) {
                long leftMs = TimeUnit.NANOSECONDS.toMillis(lease.expiresAtNanos - nowNanos);
                return TieBreakVerdict.winUntil("ControlPlane: granted, " + leftMs + "ms left", lease.expiresAtNanos);
            }
            if (refusal != null && refusal.side.equals(sideList)) {
                if (refusal.reason.startsWith(HELD_BY_OTHER_SIDE_PREFIX)) {
                    return TieBreakVerdict.lose("ControlPlane: " + refusal.reason);
                }
                return TieBreakVerdict.noAnswer("ControlPlane: not granted: " + refusal.reason);
            }
            return TieBreakVerdict.noAnswer(sent ? "ControlPlane: waiting for an answer"
                    : "ControlPlane: controller not connected");
        }
    }

    /**
     * A tie is likely soon with this side: ask (or renew) now, so that the answer is in hand when the tie comes. A
     * grant for this side is then honoured by {@link #evaluate} for the same side only, still counted from this
     * request's send time.
     */
    @Override
    public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
        request(List.copyOf(side), nowNanos);
    }

    /** Sends one request for {@code side}; false when it could not be sent (not connected). Never blocks. */
    private boolean request(List<String> sideList, long nowNanos) {
        TieBreakRequest request;
        synchronized (this) {
            expirePending(nowNanos);
            long id = nextRequestId++;
            request = TieBreakRequest.newBuilder()
                    .setRequestId(id)
                    .addAllSide(sideList)
                    .setEpoch(identity.epoch())
                    .setRevision(identity.revision())
                    .build();
            pending.put(id, new Pending(nowNanos, sideList));
        }
        boolean sent = sender.test(request);
        if (!sent) {
            synchronized (this) {
                pending.remove(request.getRequestId());
            }
        }
        return sent;
    }

    /** An answer from the controller; answers to unknown or expired requests are ignored. */
    synchronized void onGrant(TieBreakGrant grant) {
        Pending request = pending.remove(grant.getRequestId());
        if (request == null) {
            return;
        }
        // Answers to older requests lose against newer ones only for refusals; a grant always extends the lease.
        if (grant.getGranted()) {
            Duration validFor = Duration.ofSeconds(grant.getValidFor().getSeconds(), grant.getValidFor().getNanos());
            long expires = request.sendNanos + validFor.toNanos();
            if (lease == null || !lease.side.equals(request.side) || expires - lease.expiresAtNanos > 0) {
                lease = new Lease(request.side, expires);
            }
            refusal = null;
        } else {
            refusal = new Refusal(request.side, grant.getReason());
        }
    }

    private void expirePending(long nowNanos) {
        Iterator<Map.Entry<Long, Pending>> it = pending.entrySet().iterator();
        while (it.hasNext()) {
            Pending p = it.next().getValue();
            if (pending.size() > MAX_PENDING || nowNanos - p.sendNanos > PENDING_TTL_NANOS) {
                it.remove();
            } else {
                break;
            }
        }
    }

    private record Pending(long sendNanos, List<String> side) {}

    private record Lease(List<String> side, long expiresAtNanos) {}

    private record Refusal(List<String> side, String reason) {}
}
