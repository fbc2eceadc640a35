package dev.fencing.agent.quorum;

import java.util.List;
import java.util.OptionalLong;

/**
 * One expected peer as the evaluator saw it at one evaluation.
 *
 * @param name the peer's member name
 * @param confirmed its freshest evidence (a round trip, or in a relayed group possibly a chain of round trips
 *     through overlay neighbours) started within the (possibly stretched) window
 * @param sinceLastConfirmedNanos age of that evidence: the send time of the latest confirmed round trip, or the
 *     relayed evidence instant ({@link QuorumEvaluator#evidenceAgeNanos}); empty if there never was any
 * @param sinceLastHeardNanos age of the latest heartbeat received from it directly, if any. In a relayed group
 *     (more than {@link Overlay#DIRECT_MAX} members), for a peer not confirmed: the age of the latest heartbeat
 *     received from <em>any</em> peer not confirmed. A node cut off with its overlay neighbours may have held
 *     evidence up to the last heartbeat that crossed the cut, not only up to its own last heartbeat we heard, so
 *     only this bound keeps {@code lastContact(X)} — and the safe-to-assume-fenced instant built on it — late
 *     enough.
 * @param networks its evidence per gossip network (empty for a group with one network); {@code confirmed} and the
 *     ages above are these combined by the group's reachability rule (such a group never relays evidence)
 */
public record PeerQuorumView(String name, boolean confirmed, OptionalLong sinceLastConfirmedNanos,
    OptionalLong sinceLastHeardNanos, List<NetworkEvidence> networks) {

  public PeerQuorumView {
    networks = List.copyOf(networks);
  }

  /** A peer of a group with one network. */
  public PeerQuorumView(String name, boolean confirmed, OptionalLong sinceLastConfirmedNanos,
      OptionalLong sinceLastHeardNanos) {
    this(name, confirmed, sinceLastConfirmedNanos, sinceLastHeardNanos, List.of());
  }
}
