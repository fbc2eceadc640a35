package dev.fencing.memberlist.transport;

/**
 * Cumulative traffic counters of a transport since it was bound, for metrics ({@code memberlist_*}) and
 * benchmarks. Packet bytes are UDP payload bytes; stream bytes count both directions of every connection.
 *
 * @param packetsSent datagrams handed to the network
 * @param packetBytesSent their payload bytes
 * @param packetSendErrors datagrams that could not be sent (network error, unresolved address, closed)
 * @param packetsReceived datagrams received
 * @param packetBytesReceived their payload bytes
 * @param streamsOpened outbound connections established
 * @param streamsAccepted inbound connections accepted and handed to the stream handler
 * @param streamsRejected inbound connections closed at their accept: every slot was held by a stream past its first
 *     message
 * @param streamsEvicted inbound connections closed to make room for a newer one before their first message was read
 * @param streamBytesSent bytes written on all connections
 * @param streamBytesReceived bytes read on all connections
 */
public record TransportStats(
    long packetsSent,
    long packetBytesSent,
    long packetSendErrors,
    long packetsReceived,
    long packetBytesReceived,
    long streamsOpened,
    long streamsAccepted,
    long streamsRejected,
    long streamsEvicted,
    long streamBytesSent,
    long streamBytesReceived) {}
