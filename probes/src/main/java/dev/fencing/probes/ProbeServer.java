package dev.fencing.probes;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /healthz} (liveness) and {@code GET /readyz} (readiness) for the kubelet: 200 "ok", or 503 with the
 * reason ({@link ProbeAnswer}); {@code HEAD} too; 404, 405 and 400 for anything else.
 *
 * <p>Made so that no client can keep the probes from being answered, which would get the process restarted: one
 * thread serves every connection without blocking on any of them (a selector), each connection gets
 * {@value #TIMEOUT_MILLIS} ms from its accept to send its request head (at most {@value #MAX_REQUEST_BYTES} bytes)
 * and read the answer, and at most {@value #MAX_CONNECTIONS} are open: one more closes the oldest, which has the least
 * time left. A silent or slow client therefore costs a file descriptor for two seconds, and a kubelet's probe, which
 * sends its request at once, is answered in the same round of the selector. Idle, the thread waits in the selector
 * with no timer: no wakeups while nobody connects.
 *
 * <p>Dropped connections (timed out, over the cap) are counted and logged once a minute at most, at WARN: a client
 * that does this is not a kubelet.
 */
public final class ProbeServer implements AutoCloseable {

    /** From accept to the last byte of the answer. */
    public static final int TIMEOUT_MILLIS = 2_000;
    /** Longest request head read; anything longer is answered 400. */
    public static final int MAX_REQUEST_BYTES = 4_096;
    /** Open connections at most; one more closes the oldest. */
    public static final int MAX_CONNECTIONS = 64;
    /** Connections accepted per round of the selector, so a flood of connects cannot starve the reads. */
    private static final int ACCEPTS_PER_ROUND = MAX_CONNECTIONS;
    /** Connections the kernel queues until accepted: a burst beyond it would wait for SYN retries. */
    private static final int BACKLOG = 256;
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private static final Logger LOG = LoggerFactory.getLogger(ProbeServer.class);

    private final InetAddress address;
    private final int requestedPort;
    private final Probe liveness;
    private final Probe readiness;
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final LinkedHashSet<Connection> open = new LinkedHashSet<>();
    private ServerSocketChannel channel;
    private Selector selector;
    private Thread thread;
    private int boundPort = -1;
    private volatile boolean closing;
    private long lastWarnNanos;
    private long droppedAtLastWarn;

    /**
     * @param address   the address to listen on; null for every address of the host (or pod)
     * @param port      TCP port; 0 picks a free one (see {@link #port()})
     * @param liveness  answers {@code /healthz}
     * @param readiness answers {@code /readyz}
     */
    public ProbeServer(InetAddress address, int port, Probe liveness, Probe readiness) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("probe port must be 0..65535, got " + port);
        }
        this.address = address;
        this.requestedPort = port;
        this.liveness = Objects.requireNonNull(liveness, "liveness");
        this.readiness = Objects.requireNonNull(readiness, "readiness");
    }

    /** Binds and starts answering. @throws IOException naming the address and port when it cannot bind */
    public synchronized void start() throws IOException {
        if (thread != null) {
            throw new IllegalStateException("probe server already started on port " + boundPort);
        }
        ServerSocketChannel ch = ServerSocketChannel.open();
        Selector sel = null;
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(new InetSocketAddress(address, requestedPort), BACKLOG);
            ch.configureBlocking(false);
            sel = Selector.open();
            ch.register(sel, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw new IOException("cannot listen for probes on " + where() + ":" + requestedPort + ": "
                    + e.getMessage() + " (choose another probe port)", e);
        }
        channel = ch;
        selector = sel;
        boundPort = ((InetSocketAddress) ch.getLocalAddress()).getPort();
        lastWarnNanos = System.nanoTime() - WARN_EVERY_NANOS; // the first drop is logged at once
        thread = new Thread(this::serve, "probe-http");
        thread.setDaemon(true);
        thread.start();
        LOG.info("event=probe_http_started address={} port={}", where(), boundPort);
    }

    private String where() {
        return address == null ? "*" : address.getHostAddress();
    }

    /** The bound port, or -1 when not started or closed. */
    public synchronized int port() {
        return boundPort;
    }

    /** Requests answered (any status) since the start. */
    public long answered() {
        return answered.get();
    }

    /** Connections closed unanswered because they timed out or were the oldest over the cap, since the start. */
    public long dropped() {
        return dropped.get();
    }

    /** Stops answering and frees the port before it returns (waiting up to five seconds for the thread). */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (thread == null || closing) {
                return;
            }
            closing = true;
            selector.wakeup();
            t = thread;
        }
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            boundPort = -1;
        }
    }

    private void serve() {
        try {
            while (!closing) {
                Connection oldest = open.isEmpty() ? null : open.iterator().next();
                long wait = 0; // no connection: wait for one, however long
                if (oldest != null) {
                    wait = Math.max(1, TimeUnit.NANOSECONDS.toMillis(oldest.deadline - System.nanoTime()) + 1);
                }
                selector.select(wait);
                if (closing) {
                    break;
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() == channel) {
                        accept();
                    } else {
                        serve((Connection) key.attachment(), key);
                    }
                }
                expire(System.nanoTime());
            }
        } catch (IOException | RuntimeException e) {
            // The probes stop answering: the kubelet restarts the process, which is what a broken listener needs.
            LOG.error("event=probe_http_failed error=\"{}\"", e.toString(), e);
        } finally {
            for (Connection c : open) {
                closeQuietly(c.channel);
            }
            open.clear();
            closeQuietly(channel);
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("event=probe_http_close_failed error=\"{}\"", e.toString());
            }
            LOG.info("event=probe_http_stopped port={}", boundPort);
        }
    }

    private void accept() throws IOException {
        for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
            SocketChannel s = channel.accept();
            if (s == null) {
                return;
            }
            if (open.size() >= MAX_CONNECTIONS) {
                drop(open.iterator().next(), "the oldest of more than " + MAX_CONNECTIONS + " open connections");
            }
            try {
                s.configureBlocking(false);
                Connection c = new Connection(s, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS));
                c.key = s.register(selector, SelectionKey.OP_READ, c);
                open.add(c);
            } catch (IOException e) {
                closeQuietly(s);
                LOG.debug("event=probe_connection_failed error=\"{}\"", e.toString());
            }
        }
    }

    private void serve(Connection c, SelectionKey key) {
        try {
            if (key.isReadable()) {
                read(c);
            } else if (key.isWritable()) {
                write(c);
            }
        } catch (IOException | RuntimeException e) {
            // one bad connection (a reset, a broken pipe) never ends the server
            LOG.debug("event=probe_connection_failed error=\"{}\"", e.toString());
            forget(c);
        }
    }

    private void read(Connection c) throws IOException {
        int n = c.channel.read(c.in);
        int end = c.headEnd();
        if (end >= 0) {
            answer(c, new String(c.in.array(), 0, end, StandardCharsets.ISO_8859_1));
        } else if (!c.in.hasRemaining()) {
            reply(c, 400, "Bad Request", "request head longer than " + MAX_REQUEST_BYTES + " bytes\n", false);
        } else if (n < 0) {
            forget(c); // closed before it finished its request: a port check, nothing to answer
        }
    }

    private void answer(Connection c, String head) throws IOException {
        int eol = head.indexOf('\r');
        String[] line = (eol < 0 ? head : head.substring(0, eol)).split(" ", -1);
        if (line.length != 3 || !line[2].startsWith("HTTP/1.")) {
            reply(c, 400, "Bad Request", "not an HTTP/1 request\n", false);
            return;
        }
        boolean headOnly = line[0].equals("HEAD");
        if (!line[0].equals("GET") && !headOnly) {
            reply(c, 405, "Method Not Allowed", "method " + line[0] + " not allowed\n", false);
            return;
        }
        int query = line[1].indexOf('?');
        String path = query < 0 ? line[1] : line[1].substring(0, query);
        Probe probe = switch (path) {
            case "/healthz" -> liveness;
            case "/readyz" -> readiness;
            default -> null;
        };
        if (probe == null) {
            reply(c, 404, "Not Found", "not found: try /healthz or /readyz\n", headOnly);
            return;
        }
        ProbeAnswer a = ProbeAnswer.of(probe, probe == liveness ? "unhealthy" : "not ready");
        reply(c, a.status(), a.status() == 200 ? "OK" : "Service Unavailable", a.body(), headOnly);
    }

    private void reply(Connection c, int status, String reason, String body, boolean headOnly) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String headers = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n";
        byte[] h = headers.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer out = ByteBuffer.allocate(h.length + (headOnly ? 0 : bytes.length)).put(h);
        if (!headOnly) {
            out.put(bytes);
        }
        c.out = out.flip();
        answered.incrementAndGet();
        c.key.interestOps(SelectionKey.OP_WRITE);
        write(c);
    }

    private void write(Connection c) throws IOException {
        c.channel.write(c.out);
        if (!c.out.hasRemaining()) {
            forget(c);
        }
    }

    /** Closes connections whose time is up, oldest first (the set is in accept order, so in deadline order). */
    private void expire(long now) {
        while (!open.isEmpty()) {
            Connection oldest = open.iterator().next();
            if (oldest.deadline - now > 0) {
                break;
            }
            drop(oldest, "no complete request and answer within " + TIMEOUT_MILLIS + " ms");
        }
        long d = dropped.get();
        if (d > droppedAtLastWarn && now - lastWarnNanos >= WARN_EVERY_NANOS) {
            LOG.warn("event=probe_connections_dropped count={} total={} detail=\"clients that hold connections to the"
                    + " probe port without a request; the kubelet's probes are still answered\"",
                    d - droppedAtLastWarn, d);
            droppedAtLastWarn = d;
            lastWarnNanos = now;
        }
    }

    private void drop(Connection c, String why) {
        dropped.incrementAndGet();
        LOG.debug("event=probe_connection_dropped reason=\"{}\"", why);
        forget(c);
    }

    private void forget(Connection c) {
        open.remove(c);
        if (c.key != null) {
            c.key.cancel();
        }
        closeQuietly(c.channel);
    }

    private static void closeQuietly(java.nio.channels.Channel ch) {
        if (ch == null) {
            return;
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("event=probe_connection_close_failed error=\"{}\"", e.toString());
        }
    }

    private static final class Connection {
        final SocketChannel channel;
        final long deadline;
        final ByteBuffer in = ByteBuffer.allocate(MAX_REQUEST_BYTES);
        ByteBuffer out;
        SelectionKey key;
        private int scanned;

        Connection(SocketChannel channel, long deadline) {
            this.channel = channel;
            this.deadline = deadline;
        }

        /** The length of the head up to and with its blank line, or -1 while it has not all arrived. */
        int headEnd() {
            byte[] b = in.array();
            int limit = in.position();
            for (int i = Math.max(3, scanned); i < limit; i++) {
                if (b[i - 3] == '\r' && b[i - 2] == '\n' && b[i - 1] == '\r' && b[i] == '\n') {
                    return i + 1;
                }
            }
            scanned = Math.max(3, limit);
            return -1;
        }
    }
}
