package dev.fencing.agent.membership;

/**
 * Gossip traffic counters since start.
 *
 * @param packetsSent datagrams sent
 * @param packetsReceived datagrams received
 * @param bytesSent bytes sent (datagrams)
 * @param bytesReceived bytes received (datagrams)
 */
public record GossipTraffic(long packetsSent, long packetsReceived, long bytesSent, long bytesReceived) {

  public static final GossipTraffic NONE = new GossipTraffic(0, 0, 0, 0);
}
