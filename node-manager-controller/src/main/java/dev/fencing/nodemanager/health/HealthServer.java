package dev.fencing.nodemanager.health;

import com.sun.net.httpserver.HttpExchange;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * /healthz (liveness), /readyz (readiness), /metrics (the Prometheus client's exposition of the registry: text format,
 * OpenMetrics or protobuf by the scraper's Accept header) and, once {@link #groupViews} is set,
 * /debug/groups/&lt;name&gt; (a group's view as JSON) on the Prometheus client's {@link HTTPServer}. The client also
 * answers /-/healthy with 200 while the process serves HTTP at all.
 *
 * <p>Requests run on at most {@value #THREADS} threads that end after {@value #IDLE_SECONDS} idle seconds.
 */
public final class HealthServer implements AutoCloseable {

    /** Request threads. */
    public static final int THREADS = 2;
    /** Seconds an idle request thread lives. */
    public static final int IDLE_SECONDS = 30;

    /** A NodeGroup name: a DNS subdomain. */
    private static final Pattern GROUP_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final String GROUPS_PATH = "/debug/groups/";
    private static final String TEXT = "text/plain; charset=utf-8";

    private final int requestedPort;
    private final BooleanSupplier healthy;
    private final BooleanSupplier ready;
    private final PrometheusMeterRegistry registry;
    private Function<String, Optional<String>> groupViews;
    private HTTPServer server;
    private ThreadPoolExecutor executor;

    /**
     * @param port     TCP port (0 = any)
     * @param healthy  liveness: informers watching, event sources healthy
     * @param ready    readiness: operator started, caches synced, AgentControl listening
     * @param registry scraped on /metrics
     */
    public HealthServer(int port, BooleanSupplier healthy, BooleanSupplier ready, PrometheusMeterRegistry registry) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("health port must be 0..65535, got " + port);
        }
        this.requestedPort = port;
        this.healthy = Objects.requireNonNull(healthy, "healthy");
        this.ready = Objects.requireNonNull(ready, "ready");
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Serves GET /debug/groups/&lt;name&gt;: 200 with {@code view}'s JSON, 404 when it knows no such group, 400 for a
     * name that cannot be a NodeGroup's, 405 for another method. Call before {@link #start()}.
     *
     * @param view the JSON view of a group, empty when the group is unknown
     */
    public synchronized HealthServer groupViews(Function<String, Optional<String>> view) {
        if (server != null) {
            throw new IllegalStateException("groupViews must be set before start()");
        }
        this.groupViews = Objects.requireNonNull(view, "view");
        return this;
    }

    /**
     * Binds and starts serving.
     *
     * @throws IOException if the port cannot be bound (the message names it)
     */
    public synchronized HealthServer start() throws IOException {
        if (server != null) {
            throw new IllegalStateException("health server already started on port " + port());
        }
        executor = new ThreadPoolExecutor(THREADS, THREADS, IDLE_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "health-http");
                    t.setDaemon(true);
                    return t;
                });
        executor.allowCoreThreadTimeOut(true);
        try {
            // /metrics is the client's; every other path reaches the default handler below.
            server = HTTPServer.builder()
                    .port(requestedPort)
                    .registry(registry.getPrometheusRegistry())
                    .executorService(executor)
                    .defaultHandler(this::route)
                    .buildAndStart();
        } catch (IOException | RuntimeException e) {
            executor.shutdownNow();
            executor = null;
            throw new IOException("cannot listen for health and metrics on port " + requestedPort + ": "
                    + e.getMessage(), e);
        }
        return this;
    }

    /** The bound port, or -1 when not started. */
    public synchronized int port() {
        return server == null ? -1 : server.getPort();
    }

    private void route(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (path.equals("/healthz")) {
            boolean ok = healthy.getAsBoolean();
            respond(ex, ok ? 200 : 503, ok ? "ok\n" : "unhealthy\n", TEXT);
        } else if (path.equals("/readyz")) {
            boolean ok = ready.getAsBoolean();
            respond(ex, ok ? 200 : 503, ok ? "ready\n" : "not ready\n", TEXT);
        } else if (groupViews != null && path.startsWith(GROUPS_PATH)) {
            group(ex, path.substring(GROUPS_PATH.length()));
        } else {
            respond(ex, 404, "not found: try /healthz, /readyz, /metrics or " + GROUPS_PATH + "<name>\n", TEXT);
        }
    }

    private void group(HttpExchange ex, String name) throws IOException {
        if (!"GET".equals(ex.getRequestMethod())) {
            respond(ex, 405, "only GET\n", TEXT);
            return;
        }
        if (!GROUP_NAME.matcher(name).matches()) {
            respond(ex, 400, "not a NodeGroup name: expected " + GROUPS_PATH + "<name>\n", TEXT);
            return;
        }
        Optional<String> json = groupViews.apply(name);
        if (json.isEmpty()) {
            respond(ex, 404, "no NodeGroup " + name + " in this replica's cache\n", TEXT);
        } else {
            respond(ex, 200, json.get(), "application/json");
        }
    }

    private static void respond(HttpExchange ex, int code, String body, String type) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** Stops serving; idempotent. */
    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        server.close();
        executor.shutdownNow();
        server = null;
    }
}
