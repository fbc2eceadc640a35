package dev.fencing.agent.quorum;

import java.util.OptionalLong;

/**
 * A peer's round-trip evidence on one gossip network at one evaluation.
 *
 * @param network the network's CIDR as configured
 * @param confirmed its latest round trip on this network started within the (possibly stretched) window
 * @param sinceLastConfirmedNanos age of that round trip's send time, if any ever completed on this network
 * @param sinceLastHeardNanos age of the latest heartbeat received from it on this network, if any
 */
public record NetworkEvidence(String network, boolean confirmed, OptionalLong sinceLastConfirmedNanos,
    OptionalLong sinceLastHeardNanos) {}
