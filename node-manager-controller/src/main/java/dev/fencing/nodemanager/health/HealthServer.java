package dev.fencing.nodemanager.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * /healthz (liveness), /readyz (readiness), /metrics (Prometheus) and, once {@link #groupViews} is set,
 * /debug/groups/&lt;name&gt; (a group's view as JSON) on the JDK HTTP server.
 */
public final class HealthServer implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "health-http");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param port     TCP port (0 = any)
     * @param healthy  liveness: informers watching, event sources healthy
     * @param ready    readiness: operator started, caches synced, AgentControl listening
     * @param registry scraped on /metrics
     */
    public HealthServer(int port, BooleanSupplier healthy, BooleanSupplier ready, PrometheusMeterRegistry registry)
            throws IOException {
        server = HttpServer.create(new InetSocketAddress(port), 16);
        server.createContext("/healthz", ex -> respond(ex, healthy.getAsBoolean() ? 200 : 503,
                healthy.getAsBoolean() ? "ok\n" : "unhealthy\n", "text/plain"));
        server.createContext("/readyz", ex -> respond(ex, ready.getAsBoolean() ? 200 : 503,
                ready.getAsBoolean() ? "ready\n" : "not ready\n", "text/plain"));
        server.createContext("/metrics", ex -> respond(ex, 200, registry.scrape(),
                "text/plain; version=0.0.4; charset=utf-8"));
        server.setExecutor(executor);
    }

    /** A NodeGroup name: a DNS subdomain. */
    private static final Pattern GROUP_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final String GROUPS_PATH = "/debug/groups/";

    /**
     * Serves GET /debug/groups/&lt;name&gt;: 200 with {@code view}'s JSON, 404 when it knows no such group, 400 for a
     * name that cannot be a NodeGroup's, 405 for another method.
     *
     * @param view the JSON view of a group, empty when the group is unknown
     */
    public HealthServer groupViews(Function<String, Optional<String>> view) {
        server.createContext(GROUPS_PATH, ex -> {
            if (!"GET".equals(ex.getRequestMethod())) {
                respond(ex, 405, "only GET\n", "text/plain");
                return;
            }
            String name = ex.getRequestURI().getPath().substring(GROUPS_PATH.length());
            if (!GROUP_NAME.matcher(name).matches()) {
                respond(ex, 400, "not a NodeGroup name: expected " + GROUPS_PATH + "<name>\n", "text/plain");
                return;
            }
            Optional<String> json = view.apply(name);
            if (json.isEmpty()) {
                respond(ex, 404, "no NodeGroup " + name + " in this replica's cache\n", "text/plain");
            } else {
                respond(ex, 200, json.get(), "application/json");
            }
        });
        return this;
    }

    /** Starts serving. */
    public HealthServer start() {
        server.start();
        return this;
    }

    /** The bound port. */
    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, int code, String body, String type) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", type);
        ex.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
