package dev.fencing.nodemanager.grpc.auth;

import io.grpc.Status;
import java.util.HashMap;
import java.util.Map;

/**
 * How many TokenReviews of uncached tokens run at once: at most {@link #MAX_IN_FLIGHT} in all, and at most
 * {@link #PER_PEER} for one remote address. Beyond either, a call is refused {@code UNAVAILABLE} at once and the agent
 * retries with its backoff. Thread-safe; holds an entry only for an address with a review in flight.
 */
final class ReviewBudget {

    /**
     * TokenReviews in flight at once. Refusals are cached only briefly (a token may become valid), so without a bound
     * every call with a made-up token, from anyone who reaches the port, held a gRPC thread in a blocking review: 2000
     * calls on one connection made 2000 threads.
     */
    static final int MAX_IN_FLIGHT = 32;
    /**
     * TokenReviews in flight for one remote address. With the global bound alone, one pod that kept 32 made-up tokens
     * in review took every slot, and agents reconnecting (cache expiry, token rotation, failover) were refused for as
     * long as it kept on. An agent comes from its node's address and holds one stream; a follower replica relays all
     * its agents' hellos from its own address after a leader change, hence a quarter of the bound, not one or two.
     */
    static final int PER_PEER = 8;

    private final Map<String, Integer> byPeer = new HashMap<>();
    private int inFlight;

    /**
     * Takes a slot for a review asked for by {@code peer}; {@link #release} it when the review is done.
     *
     * @throws AgentAuthException UNAVAILABLE when the replica or that address already has its reviews in flight
     */
    synchronized void acquire(String peer) throws AgentAuthException {
        if (inFlight >= MAX_IN_FLIGHT) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("too many token reviews in progress ("
                    + MAX_IN_FLIGHT + "); retry"));
        }
        int ofPeer = byPeer.getOrDefault(peer, 0);
        if (ofPeer >= PER_PEER) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("too many token reviews in progress "
                    + "from this address (" + PER_PEER + "); retry"));
        }
        byPeer.put(peer, ofPeer + 1);
        inFlight++;
    }

    /** Gives back a slot {@link #acquire} took for {@code peer}. */
    synchronized void release(String peer) {
        inFlight--;
        byPeer.computeIfPresent(peer, (p, n) -> n > 1 ? n - 1 : null);
    }
}
