package dev.fencing.nodemanager.health;

import dev.fencing.probes.EndpointServer;
import dev.fencing.probes.EndpointServer.Response;
import dev.fencing.probes.Probe;
import dev.fencing.probes.PrometheusEndpoint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * /healthz (liveness), /readyz (readiness), /metrics (the Prometheus client's exposition of the registry: text format,
 * OpenMetrics or protobuf by the scraper's Accept header, gzip on request), /-/healthy (200 while the listener serves
 * at all) and, once {@link #groupViews} is set, /debug/groups/&lt;name&gt; (a group's view as JSON), served by an
 * {@link EndpointServer}: one thread that no client can hold, each connection bounded to {@value #TIMEOUT_SECONDS} s
 * and {@value #MAX_CONNECTIONS} open at once. The probes answer 200 "ok" or 503 with the reason, as on the probe port.
 */
public final class HealthServer implements AutoCloseable {

    /** From accept to the last byte of the answer: Prometheus' default scrape timeout. */
    public static final int TIMEOUT_SECONDS = 10;
    /** Open connections at most; one more closes the oldest that has not sent its request. */
    public static final int MAX_CONNECTIONS = 64;

    /** A NodeGroup name: a DNS subdomain. */
    private static final Pattern GROUP_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final String GROUPS_PATH = "/debug/groups/";

    private final int requestedPort;
    private final Probe liveness;
    private final Probe readiness;
    private final PrometheusMeterRegistry registry;
    private Function<String, Optional<String>> groupViews;
    private EndpointServer server;

    /**
     * @param port      TCP port (0 = any)
     * @param liveness  informers watching, event sources healthy: empty, or why not
     * @param readiness operator started, caches synced, AgentControl listening: empty, or why not
     * @param registry  scraped on /metrics
     */
    public HealthServer(int port, Probe liveness, Probe readiness, PrometheusMeterRegistry registry) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("health port must be 0..65535, got " + port);
        }
        this.requestedPort = port;
        this.liveness = Objects.requireNonNull(liveness, "liveness");
        this.readiness = Objects.requireNonNull(readiness, "readiness");
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
            throw new IllegalStateException("health server already started on port " + server.port());
        }
        EndpointServer.Builder b = PrometheusEndpoint.metricsAndProbes(EndpointServer.builder("health")
                .port(requestedPort)
                .timeout(Duration.ofSeconds(TIMEOUT_SECONDS))
                .maxConnections(MAX_CONNECTIONS), registry.getPrometheusRegistry(), liveness, readiness);
        if (groupViews != null) {
            Function<String, Optional<String>> views = groupViews;
            b.prefix(GROUPS_PATH, request -> group(views, request.path().substring(GROUPS_PATH.length())));
        }
        EndpointServer s = b.build();
        s.start();
        server = s;
        return this;
    }

    /** The bound port, or -1 when not started or closed. */
    public synchronized int port() {
        return server == null ? -1 : server.port();
    }

    private static Response group(Function<String, Optional<String>> views, String name) {
        if (!GROUP_NAME.matcher(name).matches()) {
            return Response.text(400, "not a NodeGroup name: expected " + GROUPS_PATH + "<name>\n");
        }
        return views.apply(name)
                .map(json -> Response.of(200, "application/json", json.getBytes(StandardCharsets.UTF_8)))
                .orElseGet(() -> Response.text(404, "no NodeGroup " + name + " in this replica's cache\n"));
    }

    /** Stops serving; idempotent. */
    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        server.close();
        server = null;
    }
}
