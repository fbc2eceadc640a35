package dev.fencing.nodemanager.grpc;

/**
 * How much one controller replica spends on AgentControl streams, so a flood of connections or a stalled agent
 * cannot exhaust its memory.
 *
 * @param maxStreams     concurrent agent streams this replica serves; one more is refused with RESOURCE_EXHAUSTED
 * @param maxQueuedBytes serialized bytes queued for one agent and not yet taken by the transport; a stream over it
 *                       is ended with RESOURCE_EXHAUSTED (the agent reconnects and resyncs with a full config)
 */
public record StreamLimits(int maxStreams, long maxQueuedBytes) {

    /** 5000 streams (a 1000-node group's agents five times over), 4 MiB per stream (about 70 full configs). */
    public static final StreamLimits DEFAULTS = new StreamLimits(5000, 4L * 1024 * 1024);

    /** Validates. */
    public StreamLimits {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("--max-agent-streams must be positive, got " + maxStreams);
        }
        if (maxQueuedBytes < 1024) {
            throw new IllegalArgumentException("--stream-queue-bytes must be at least 1024 (one full config of a"
                    + " small group), got " + maxQueuedBytes);
        }
    }
}
