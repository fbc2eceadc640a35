package dev.fencing.nodemanager.grpc;

import dev.fencing.nodemanager.stream.ConfigSink;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent's outgoing stream: a bounded queue drained only while gRPC flow control says the transport is ready.
 * Enqueueing never blocks; an agent that cannot keep up overflows its queue and has its stream ended with
 * RESOURCE_EXHAUSTED, after which it reconnects and resyncs with a full config — so a slow or dead agent costs the
 * others nothing.
 */
final class AgentStream implements ConfigSink {

    private static final Logger LOG = LoggerFactory.getLogger(AgentStream.class);

    private final ServerCallStreamObserver<ControllerMessage> out;
    private final int capacity;
    private final long maxBytes;
    private final StreamStats stats;
    private long queuedBytes;
    private final ArrayDeque<ControllerMessage> queue = new ArrayDeque<>();
    private volatile String node = "";
    private boolean closed;

    private volatile Runnable onServerClose;

    AgentStream(ServerCallStreamObserver<ControllerMessage> out, int capacity, long maxBytes, StreamStats stats) {
        this.out = out;
        this.capacity = capacity;
        this.maxBytes = maxBytes;
        this.stats = stats;
    }

    void identify(String nodeName) {
        this.node = nodeName;
    }

    /**
     * Runs {@code ended} (off this stream's lock, on whatever executor it uses) when the server itself closes the
     * stream (an overflow, fencing switched off): gRPC then calls neither the cancel handler nor the inbound
     * onError/onCompleted, and without it the connection's clean-up (the node no longer counted as connected, the
     * subscription and, on a follower, the upstream to the leader) never ran.
     */
    void onServerClose(Runnable ended) {
        this.onServerClose = ended;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public synchronized boolean send(ControllerMessage message) {
        if (closed) {
            return false;
        }
        if (queue.size() >= capacity) {
            stats.overflows.incrementAndGet();
            LOG.warn("event=stream_overflow node={} queued={} action=\"stream ended; the agent resyncs\"", node,
                    queue.size());
            closeLocked(Status.RESOURCE_EXHAUSTED.withDescription("controller stream queue of " + capacity
                    + " messages overflowed; reconnect to resync"));
            return false;
        }
        int size = message.getSerializedSize();
        if (!queue.isEmpty() && queuedBytes + size > maxBytes) {
            stats.overflows.incrementAndGet();
            LOG.warn("event=stream_overflow node={} queued_bytes={} limit_bytes={} action=\"stream ended; the agent"
                    + " resyncs\"", node, queuedBytes, maxBytes);
            closeLocked(Status.RESOURCE_EXHAUSTED.withDescription("controller stream queue of " + maxBytes
                    + " bytes overflowed (the agent does not read fast enough); reconnect to resync"));
            return false;
        }
        queue.addLast(message);
        queuedBytes += size;
        stats.queued.incrementAndGet();
        drainLocked();
        return true;
    }

    /** Flow control said ready: send what is queued. */
    synchronized void drain() {
        drainLocked();
    }

    @Override
    public synchronized void close(Status status) {
        closeLocked(status);
    }

    /** The agent went away (cancel) or finished. */
    synchronized void cancelled() {
        if (!closed) {
            closed = true;
        stats.open.decrementAndGet();
            stats.queued.addAndGet(-queue.size());
            queue.clear();
            queuedBytes = 0;
        }
    }

    /** Completes the stream normally (the agent half-closed). */
    synchronized void complete() {
        if (!closed) {
            closed = true;
        stats.open.decrementAndGet();
            stats.queued.addAndGet(-queue.size());
            queue.clear();
            queuedBytes = 0;
            try {
                out.onCompleted();
            } catch (IllegalStateException e) {
                LOG.debug("event=complete_after_cancel node={}", node);
            }
        }
    }

    synchronized int queued() {
        return queue.size();
    }

    private void drainLocked() {
        try {
            while (!closed && !queue.isEmpty() && out.isReady()) {
                ControllerMessage m = queue.pollFirst();
                stats.queued.decrementAndGet();
                queuedBytes -= m.getSerializedSize();
                stats.bytesSent.addAndGet(m.getSerializedSize());
                stats.messagesSent.incrementAndGet();
                out.onNext(m);
            }
        } catch (RuntimeException e) {
            // The call was cancelled under us: the agent is gone.
            LOG.debug("event=send_failed node={} error=\"{}\"", node, e.toString());
            cancelled();
        }
    }

    private void closeLocked(Status status) {
        if (closed) {
            return;
        }
        closed = true;
        stats.open.decrementAndGet();
        stats.queued.addAndGet(-queue.size());
        queue.clear();
        queuedBytes = 0;
        try {
            out.onError(status.asRuntimeException());
        } catch (IllegalStateException e) {
            LOG.debug("event=close_after_cancel node={}", node);
        }
        Runnable ended = onServerClose;
        if (ended != null) {
            ended.run();
        }
    }

    /** Counters shared by all streams of one server. */
    static final class StreamStats {
        final AtomicLong queued = new AtomicLong();
        final AtomicLong bytesSent = new AtomicLong();
        final AtomicLong messagesSent = new AtomicLong();
        final AtomicLong overflows = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();
    }
}
