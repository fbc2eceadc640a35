package dev.fencing.kubetest;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets the test JVM reach an API server that listens inside a network namespace: a TCP listener on 127.0.0.1 whose
 * connections are spliced onto a Unix socket that {@code socat} serves inside the namespace (Unix sockets live in
 * the file system, not in a network namespace). TLS passes through untouched. At most {@value #MAX_CONNECTIONS}
 * connections at once; more are closed at accept.
 */
final class LoopbackRelay implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LoopbackRelay.class);
    static final int MAX_CONNECTIONS = 64;
    private static final int BUFFER = 64 * 1024;

    private final ServerSocketChannel server;
    private final Path socket;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger open = new AtomicInteger();
    private final Set<SocketChannel> channels = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;

    private LoopbackRelay(ServerSocketChannel server, Path socket) {
        this.server = server;
        this.socket = socket;
        this.acceptor = new Thread(this::acceptLoop, "kube-relay-accept");
        this.acceptor.setDaemon(true);
    }

    static LoopbackRelay start(Path unixSocket) {
        try {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            LoopbackRelay relay = new LoopbackRelay(server, unixSocket);
            relay.acceptor.start();
            return relay;
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on loopback for the API relay: " + e.getMessage(), e);
        }
    }

    int port() {
        return ((InetSocketAddress) server.socket().getLocalSocketAddress()).getPort();
    }

    private void acceptLoop() {
        while (!closed.get()) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed.get()) {
                    LOG.warn("event=relay-accept-failed reason=\"{}\"", e.getMessage());
                }
                return;
            }
            if (open.incrementAndGet() > MAX_CONNECTIONS) {
                open.decrementAndGet();
                closeQuietly(client);
                LOG.warn("event=relay-connection-refused reason=\"more than {} open\"", MAX_CONNECTIONS);
                continue;
            }
            SocketChannel upstream;
            try {
                upstream = SocketChannel.open(StandardProtocolFamily.UNIX);
                upstream.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException e) {
                open.decrementAndGet();
                closeQuietly(client);
                LOG.warn("event=relay-upstream-failed socket={} reason=\"{}\"", socket, e.getMessage());
                continue;
            }
            channels.add(client);
            channels.add(upstream);
            AtomicInteger halves = new AtomicInteger(2);
            Runnable done = () -> {
                if (halves.decrementAndGet() == 0) {
                    closeQuietly(client);
                    closeQuietly(upstream);
                    channels.remove(client);
                    channels.remove(upstream);
                    open.decrementAndGet();
                }
            };
            pump(client, upstream, done, "up");
            pump(upstream, client, done, "down");
        }
    }

    private void pump(SocketChannel from, SocketChannel to, Runnable done, String direction) {
        Thread thread = new Thread(() -> {
            ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
            try {
                while (from.read(buffer) >= 0) {
                    buffer.flip();
                    while (buffer.hasRemaining()) {
                        to.write(buffer);
                    }
                    buffer.clear();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                // the other side went away: close both (below)
                closeQuietly(from);
                closeQuietly(to);
            } finally {
                done.run();
            }
        }, "kube-relay-" + direction);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing to do
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        channels.forEach(LoopbackRelay::closeQuietly);
    }
}
