package dev.fencing.nodemanager.escalation;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives {@code fence_kdump_send} datagrams on a UDP port ({@code --kdump-port}, 7410 like the ClusterLabs
 * default) and records valid ones by source address in {@link KdumpSightings}. A valid message whose source is no
 * Node's address (a NAT or a Service between the dumping node and this replica replaced it, so it can never count
 * for its node) is counted and logged at most once a minute with its source, as is anything that is not a message;
 * nothing a datagram says can stop the listener.
 */
public final class KdumpListener implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KdumpListener.class);
    private static final long INVALID_LOG_INTERVAL_NANOS = 60_000_000_000L;

    private final DatagramSocket socket;
    private final KdumpSightings sightings;
    private final InstantSource clock;
    private final Thread thread;
    private final Predicate<InetAddress> nodeAddress;
    private final AtomicLong valid = new AtomicLong();
    private final AtomicLong unmatched = new AtomicLong();
    private final AtomicLong invalid = new AtomicLong();
    private long lastInvalidLog = System.nanoTime() - INVALID_LOG_INTERVAL_NANOS;
    private long lastUnmatchedLog = System.nanoTime() - INVALID_LOG_INTERVAL_NANOS;

    private KdumpListener(DatagramSocket socket, KdumpSightings sightings, InstantSource clock,
                          Predicate<InetAddress> nodeAddress) {
        this.socket = socket;
        this.sightings = sightings;
        this.clock = clock;
        this.nodeAddress = nodeAddress;
        this.thread = new Thread(this::receive, "kdump-listener");
        this.thread.setDaemon(true);
    }

    /**
     * Binds {@code address:port} (port 0: any, for tests) and starts receiving.
     *
     * @param nodeAddress whether an address is one of a Node's {@code status.addresses}
     */
    public static KdumpListener start(InetAddress address, int port, KdumpSightings sightings, InstantSource clock,
                                      Predicate<InetAddress> nodeAddress) throws SocketException {
        KdumpListener l = new KdumpListener(new DatagramSocket(new InetSocketAddress(address, port)), sightings,
                clock, nodeAddress);
        l.thread.start();
        LOG.info("event=kdump_listener_started port={}", l.port());
        return l;
    }

    /** The bound port. */
    public int port() {
        return socket.getLocalPort();
    }

    /** Valid messages received (from a Node's address or not). */
    public long validMessages() {
        return valid.get();
    }

    /** Valid messages whose source was no Node's address when they arrived. */
    public long unmatchedMessages() {
        return unmatched.get();
    }

    /** Datagrams that were not fence_kdump messages. */
    public long invalidMessages() {
        return invalid.get();
    }

    private void receive() {
        byte[] buf = new byte[64];
        DatagramPacket packet = new DatagramPacket(buf, buf.length);
        while (!socket.isClosed()) {
            try {
                packet.setLength(buf.length);
                socket.receive(packet);
            } catch (IOException e) {
                if (!socket.isClosed()) {
                    LOG.warn("event=kdump_receive_failed error=\"{}\"", e.getMessage());
                }
                continue;
            }
            if (KdumpMessage.valid(packet.getData(), packet.getLength())) {
                valid.incrementAndGet();
                sightings.record(packet.getAddress(), clock.instant());
                LOG.debug("event=kdump_message source={}", packet.getAddress().getHostAddress());
                if (!nodeAddress.test(packet.getAddress())) {
                    unmatched.incrementAndGet();
                    long nowNanos = System.nanoTime();
                    if (nowNanos - lastUnmatchedLog >= INVALID_LOG_INTERVAL_NANOS) {
                        lastUnmatchedLog = nowNanos;
                        LOG.warn("event=kdump_message_unmatched source={} unmatched_total={} detail=\"no Node has this"
                                + " address, so the message counts for no node: a NAT or a Service between the dumping"
                                + " node and this replica replaced the sender's address; send to the controllers' node"
                                + " addresses (chart controller.powerFencing.kdump.hostPort)\"",
                                packet.getAddress().getHostAddress(), unmatched.get());
                    }
                }
            } else {
                invalid.incrementAndGet();
                long nowNanos = System.nanoTime();
                if (nowNanos - lastInvalidLog >= INVALID_LOG_INTERVAL_NANOS) {
                    lastInvalidLog = nowNanos;
                    LOG.warn("event=kdump_message_invalid source={} length={} invalid_total={}",
                            packet.getAddress().getHostAddress(), packet.getLength(), invalid.get());
                }
            }
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
