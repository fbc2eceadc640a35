package dev.fencing.memberlist;

/**
 * Counters since start, for metrics ({@code memberlist_*}). All values are monotonic except {@link #healthScore()},
 * {@link #queuedBroadcasts()} and the member counts.
 *
 * @param packetsSent UDP packets handed to the transport
 * @param bytesSent bytes of those packets
 * @param packetsReceived UDP packets received
 * @param bytesReceived bytes of those packets
 * @param malformedPackets packets or streams that failed to decode (dropped)
 * @param probes failure-detection probes started
 * @param probeFailures probes that ended with no ack (the target became suspect)
 * @param indirectProbes indirect ping requests sent
 * @param tcpFallbackPings TCP fallback pings started
 * @param suspicionsRaised nodes this node began to suspect (own probes, gossip or merges)
 * @param deathsDeclared nodes this node declared dead when their suspicion expired
 * @param refutations accusations about this node that it refuted
 * @param pushPulls push/pull exchanges (initiated and answered)
 * @param userMessagesReceived user messages delivered to the delegate
 * @param userMessagesSent user messages sent
 * @param healthScore Lifeguard's local health score (0 = healthy)
 * @param queuedBroadcasts gossip broadcasts waiting
 * @param aliveMembers alive members including this node
 * @param suspectMembers suspect members
 */
public record MemberlistStats(
    long packetsSent,
    long bytesSent,
    long packetsReceived,
    long bytesReceived,
    long malformedPackets,
    long probes,
    long probeFailures,
    long indirectProbes,
    long tcpFallbackPings,
    long suspicionsRaised,
    long deathsDeclared,
    long refutations,
    long pushPulls,
    long userMessagesReceived,
    long userMessagesSent,
    int healthScore,
    int queuedBroadcasts,
    int aliveMembers,
    int suspectMembers) {}
