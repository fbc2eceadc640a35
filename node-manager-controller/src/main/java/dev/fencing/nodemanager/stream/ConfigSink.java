package dev.fencing.nodemanager.stream;

import dev.fencing.proto.nodemanager.v1.ControllerMessage;

/** One agent's outgoing stream as the distributor sees it. Implementations never block. */
public interface ConfigSink {

    /** The node the agent runs on. */
    String node();

    /**
     * Queues a message. Returns false when the sink is closed (the agent went away or its queue overflowed and the
     * stream was ended so the agent resyncs); the distributor then drops the subscription.
     */
    boolean send(ControllerMessage message);

    /** Ends the stream with a reason; the agent reconnects. */
    void close(io.grpc.Status status);
}
