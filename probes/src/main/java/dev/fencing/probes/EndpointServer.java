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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1 server for {@code GET} and {@code HEAD} endpoints (probes, {@code /metrics}, a debug view) that no
 * client can hold: one thread serves every connection without blocking on any of them (a selector), each connection
 * gets {@link Builder#timeout} from its accept to send its request head (at most {@value #MAX_REQUEST_BYTES} bytes)
 * and read the answer, and at most {@link Builder#maxConnections} are open: one more closes the oldest connection
 * that has not sent its request yet (or, when every one is being answered, the oldest). A silent or slow client
 * therefore costs a file descriptor until its time is up, and a client that sends its request at once (the kubelet,
 * Prometheus) is answered in the same round of the selector. Idle, the thread waits in the selector with no timer: no
 * wakeups while nobody connects.
 *
 * <p>Endpoints run on that thread, one request at a time, so they must answer from memory (a registry scrape, a
 * cached view), never wait on I/O or a lock another thread holds for long. An endpoint that throws is answered 500.
 * Every answer closes its connection ({@code Connection: close}); 404 names the paths there are, 405 another method,
 * 400 a request head that is not HTTP/1 or is too long.
 *
 * <p>Dropped connections (timed out, over the cap) are counted and logged once a minute at most, at WARN
 * ({@code event=http_connections_dropped server=<name>}): a client that does this is not a kubelet nor a scraper.
 */
public final class EndpointServer implements AutoCloseable {

    /** Longest request head read; anything longer is answered 400. */
    public static final int MAX_REQUEST_BYTES = 4_096;
    /** Connections the kernel queues until accepted: a burst beyond it would wait for SYN retries. */
    private static final int BACKLOG = 256;
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final Logger LOG = LoggerFactory.getLogger(EndpointServer.class);

    /** One request, as far as an endpoint needs it. */
    public record Request(String method, String path, String query, Map<String, List<String>> headers) {

        public Request {
            headers = Map.copyOf(headers);
        }

        /** Every value of a header, in order; {@code name} in any case. */
        public List<String> headers(String name) {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
        }

        /** The first value of a header, or null. */
        public String header(String name) {
            List<String> values = headers(name);
            return values.isEmpty() ? null : values.get(0);
        }

        /** True for {@code HEAD}: the answer carries the headers only. */
        public boolean headOnly() {
            return method.equals("HEAD");
        }
    }

    /**
     * An answer: status, headers besides {@code Content-Length} and {@code Connection} (which the server sets), body.
     */
    public record Response(int status, Map<String, String> headers, byte[] body) {

        public Response {
            headers = new LinkedHashMap<>(headers);
            Objects.requireNonNull(body, "body");
        }

        /** A {@code text/plain} answer. */
        public static Response text(int status, String body) {
            return new Response(status, Map.of("Content-Type", "text/plain; charset=utf-8"),
                    body.getBytes(StandardCharsets.UTF_8));
        }

        /** An answer with one content type. */
        public static Response of(int status, String contentType, byte[] body) {
            return new Response(status, Map.of("Content-Type", contentType), body);
        }
    }

    /** Answers one request. */
    @FunctionalInterface
    public interface Endpoint {

        /** The answer to {@code request}; may throw, which the server answers 500. */
        Response answer(Request request) throws Exception;
    }

    private final String name;
    private final InetAddress address;
    private final int requestedPort;
    private final long timeoutNanos;
    private final int maxConnections;
    private final Map<String, Endpoint> exact;
    private final Map<String, Endpoint> prefixes;
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

    private EndpointServer(Builder b) {
        this.name = b.name;
        this.address = b.address;
        this.requestedPort = b.port;
        this.timeoutNanos = b.timeout.toNanos();
        this.maxConnections = b.maxConnections;
        this.exact = Map.copyOf(b.exact);
        this.prefixes = Map.copyOf(b.prefixes);
    }

    /**
     * A server named {@code name} (in its thread's name, its log lines and its errors, e.g. "probe" or "metrics").
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** Binds and starts answering. @throws IOException naming the address and port when it cannot bind */
    public synchronized void start() throws IOException {
        if (thread != null) {
            throw new IllegalStateException(name + " server already started on port " + boundPort);
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
            throw new IOException("cannot listen for " + name + " requests on " + where() + " port " + requestedPort + ": "
                    + e.getMessage() + " (choose another " + name + " port)", e);
        }
        channel = ch;
        selector = sel;
        boundPort = ((InetSocketAddress) ch.getLocalAddress()).getPort();
        lastWarnNanos = System.nanoTime() - WARN_EVERY_NANOS; // the first drop is logged at once
        thread = new Thread(this::serve, name + "-http");
        thread.setDaemon(true);
        thread.start();
        LOG.info("event=http_started server={} address={} port={}", name, where(), boundPort);
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

    /** Connections closed unanswered because they timed out or were closed over the cap, since the start. */
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
            // The server stops answering; where it serves probes, the kubelet restarts the process, which is what a
            // broken listener needs.
            LOG.error("event=http_failed server={} error=\"{}\"", name, e.toString(), e);
        } finally {
            for (Connection c : open) {
                closeQuietly(c.channel);
            }
            open.clear();
            closeQuietly(channel);
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("event=http_close_failed server={} error=\"{}\"", name, e.toString());
            }
            LOG.info("event=http_stopped server={} port={}", name, boundPort);
        }
    }

    private void accept() throws IOException {
        for (int i = 0; i < maxConnections; i++) { // a bounded round, so a flood of connects cannot starve the reads
            SocketChannel s = channel.accept();
            if (s == null) {
                return;
            }
            if (open.size() >= maxConnections) {
                drop(victim(), "over the cap of " + maxConnections + " open connections");
            }
            try {
                s.configureBlocking(false);
                Connection c = new Connection(s, System.nanoTime() + timeoutNanos);
                c.key = s.register(selector, SelectionKey.OP_READ, c);
                open.add(c);
            } catch (IOException e) {
                closeQuietly(s);
                LOG.debug("event=http_connection_failed server={} error=\"{}\"", name, e.toString());
            }
        }
    }

    /** The oldest connection still without a complete request, else the oldest: the one a new connection replaces. */
    private Connection victim() {
        for (Connection c : open) {
            if (c.out == null) {
                return c;
            }
        }
        return open.iterator().next();
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
            LOG.debug("event=http_connection_failed server={} error=\"{}\"", name, e.toString());
            forget(c);
        }
    }

    private void read(Connection c) throws IOException {
        int n = c.channel.read(c.in);
        int end = c.headEnd();
        if (end >= 0) {
            reply(c, answer(new String(c.in.array(), 0, end, StandardCharsets.ISO_8859_1)));
        } else if (!c.in.hasRemaining()) {
            reply(c, new Parsed(false, Response.text(400, "request head longer than " + MAX_REQUEST_BYTES
                    + " bytes\n")));
        } else if (n < 0) {
            forget(c); // closed before it finished its request: a port check, nothing to answer
        }
    }

    private record Parsed(boolean headOnly, Response response) {}

    private Parsed answer(String head) {
        String[] lines = head.split("\r\n");
        String[] line = lines[0].split(" ", -1);
        if (line.length != 3 || !line[2].startsWith("HTTP/1.")) {
            return new Parsed(false, Response.text(400, "not an HTTP/1 request\n"));
        }
        String method = line[0];
        boolean headOnly = method.equals("HEAD");
        if (!method.equals("GET") && !headOnly) {
            return new Parsed(false, new Response(405, Map.of("Content-Type", "text/plain; charset=utf-8",
                    "Allow", "GET, HEAD"), ("method " + method + " not allowed\n").getBytes(StandardCharsets.UTF_8)));
        }
        int q = line[1].indexOf('?');
        String path = q < 0 ? line[1] : line[1].substring(0, q);
        String query = q < 0 ? "" : line[1].substring(q + 1);
        Endpoint endpoint = endpoint(path);
        if (endpoint == null) {
            return new Parsed(headOnly, Response.text(404, "not found: try " + paths() + "\n"));
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        k -> new ArrayList<>()).add(lines[i].substring(colon + 1).trim());
            }
        }
        try {
            Response r = endpoint.answer(new Request(method, path, query, headers));
            return new Parsed(headOnly, Objects.requireNonNull(r, "the endpoint answered null"));
        } catch (Exception e) {
            LOG.warn("event=http_endpoint_failed server={} path={} error=\"{}\"", name, path, e.toString());
            return new Parsed(headOnly, Response.text(500, "failed: " + e + "\n"));
        }
    }

    private Endpoint endpoint(String path) {
        Endpoint e = exact.get(path);
        if (e != null) {
            return e;
        }
        for (Map.Entry<String, Endpoint> p : prefixes.entrySet()) {
            if (path.startsWith(p.getKey())) {
                return p.getValue();
            }
        }
        return null;
    }

    private String paths() {
        List<String> all = new ArrayList<>(exact.keySet());
        prefixes.keySet().forEach(p -> all.add(p + "<name>"));
        all.sort(null);
        return String.join(", ", all);
    }

    private void reply(Connection c, Parsed p) throws IOException {
        Response r = p.response();
        StringBuilder h = new StringBuilder("HTTP/1.1 ").append(r.status()).append(' ').append(reason(r.status()))
                .append("\r\n");
        r.headers().forEach((k, v) -> h.append(k).append(": ").append(v).append("\r\n"));
        h.append("Content-Length: ").append(r.body().length).append("\r\nConnection: close\r\n\r\n");
        byte[] head = h.toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer out = ByteBuffer.allocate(head.length + (p.headOnly() ? 0 : r.body().length)).put(head);
        if (!p.headOnly()) {
            out.put(r.body());
        }
        c.out = out.flip();
        answered.incrementAndGet();
        c.key.interestOps(SelectionKey.OP_WRITE);
        write(c);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> "Status " + status;
        };
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
            drop(oldest, "no complete request and answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms");
        }
        long d = dropped.get();
        if (d > droppedAtLastWarn && now - lastWarnNanos >= WARN_EVERY_NANOS) {
            LOG.warn("event=http_connections_dropped server={} port={} count={} total={} detail=\"clients that hold"
                    + " connections without a request or do not read the answer; others are still answered\"",
                    name, boundPort, d - droppedAtLastWarn, d);
            droppedAtLastWarn = d;
            lastWarnNanos = now;
        }
    }

    private void drop(Connection c, String why) {
        dropped.incrementAndGet();
        LOG.debug("event=http_connection_dropped server={} reason=\"{}\"", name, why);
        forget(c);
    }

    private void forget(Connection c) {
        open.remove(c);
        if (c.key != null) {
            c.key.cancel();
        }
        closeQuietly(c.channel);
    }

    private void closeQuietly(java.nio.channels.Channel ch) {
        if (ch == null) {
            return;
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("event=http_connection_close_failed server={} error=\"{}\"", name, e.toString());
        }
    }

    /** What to serve, where, and the limits. */
    public static final class Builder {
        private final String name;
        private InetAddress address;
        private int port;
        private Duration timeout = Duration.ofSeconds(2);
        private int maxConnections = 64;
        private final Map<String, Endpoint> exact = new LinkedHashMap<>();
        private final Map<String, Endpoint> prefixes = new LinkedHashMap<>();

        private Builder(String name) {
            if (name == null || !name.matches("[a-z][a-z0-9-]*")) {
                throw new IllegalArgumentException("a server name is lower-case letters, digits and '-', got "
                        + name);
            }
            this.name = name;
        }

        /** The address to listen on; null (the default) for every address of the host (or pod). */
        public Builder address(InetAddress value) {
            this.address = value;
            return this;
        }

        /** TCP port; 0 (the default) picks a free one. */
        public Builder port(int value) {
            if (value < 0 || value > 65535) {
                throw new IllegalArgumentException(name + " port must be 0..65535, got " + value);
            }
            this.port = value;
            return this;
        }

        /** From accept to the last byte of the answer (default 2 s). */
        public Builder timeout(Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " timeout must be positive, got " + value);
            }
            this.timeout = value;
            return this;
        }

        /** Open connections at most (default 64); one more replaces the oldest without a request. */
        public Builder maxConnections(int value) {
            if (value < 1) {
                throw new IllegalArgumentException(name + " maxConnections must be at least 1, got " + value);
            }
            this.maxConnections = value;
            return this;
        }

        /** Serves {@code path} exactly (a query string aside). */
        public Builder endpoint(String path, Endpoint endpoint) {
            if (path == null || !path.startsWith("/")) {
                throw new IllegalArgumentException("an endpoint path starts with '/', got " + path);
            }
            exact.put(path, Objects.requireNonNull(endpoint, "endpoint"));
            return this;
        }

        /** Serves every path that starts with {@code prefix} (one that ends with '/'), e.g. "/debug/groups/". */
        public Builder prefix(String prefix, Endpoint endpoint) {
            if (prefix == null || !prefix.startsWith("/") || !prefix.endsWith("/")) {
                throw new IllegalArgumentException("an endpoint prefix starts and ends with '/', got " + prefix);
            }
            prefixes.put(prefix, Objects.requireNonNull(endpoint, "endpoint"));
            return this;
        }

        /** The server, not started. */
        public EndpointServer build() {
            if (exact.isEmpty() && prefixes.isEmpty()) {
                throw new IllegalStateException(name + " server has no endpoint");
            }
            return new EndpointServer(this);
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
