package dev.fencing.agent.quorum;

import java.util.List;
import java.util.OptionalLong;

/**
 * One expected peer as the evaluator saw it at one evaluation.
 *
 * @param name the peer's member name
 * @param confirmed its latest round trip started within the (possibly stretched) window
 * @param sinceLastConfirmedNanos age of the send time of the latest confirmed round trip, if any ever completed
 * @param sinceLastHeardNanos age of the latest heartbeat received from it, if any
 * @param networks its evidence per gossip network (empty for a group with one network); {@code confirmed} and the
 *     ages above are these combined by the group's reachability rule
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
