package dev.fencing.agent.quorum;

import java.util.OptionalLong;

/**
 * One expected peer as the evaluator saw it at one evaluation.
 *
 * @param name the peer's member name
 * @param confirmed its latest round trip started within the (possibly stretched) window
 * @param sinceLastConfirmedNanos age of the send time of the latest confirmed round trip, if any ever completed
 * @param sinceLastHeardNanos age of the latest heartbeat received from it, if any
 */
public record PeerQuorumView(
    String name, boolean confirmed, OptionalLong sinceLastConfirmedNanos, OptionalLong sinceLastHeardNanos) {}
