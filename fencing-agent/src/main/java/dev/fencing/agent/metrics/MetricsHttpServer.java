package dev.fencing.agent.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /metrics} (Prometheus text exposition of a {@link PrometheusMeterRegistry}) and {@code /healthz} (200 "ok"
 * or 503 with the reason) on the JDK HTTP server.
 *
 * <p>Requests run on at most {@value #THREADS} threads with a short queue; when both are full the accepting thread
 * serves the request itself, which slows accepting instead of growing memory, so a scraping storm cannot take
 * resources from the agent's safety work.
 */
public final class MetricsHttpServer implements AutoCloseable {

  /** Request threads. */
  public static final int THREADS = 2;

  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  private static final Logger LOG = LoggerFactory.getLogger(MetricsHttpServer.class);
  private static final int QUEUE = 16;

  private final int requestedPort;
  private final PrometheusMeterRegistry registry;
  private final BooleanSupplier healthy;
  private final Supplier<String> unhealthyReason;
  private HttpServer server;
  private ThreadPoolExecutor executor;

  /**
   * @param port TCP port on all interfaces; 0 picks a free one (see {@link #port()})
   * @param registry scraped on every {@code GET /metrics}
   * @param healthy answers {@code /healthz}
   */
  public MetricsHttpServer(int port, PrometheusMeterRegistry registry, BooleanSupplier healthy) {
    this(port, registry, healthy, () -> "not healthy");
  }

  /**
   * @param port TCP port on all interfaces; 0 picks a free one (see {@link #port()})
   * @param registry scraped on every {@code GET /metrics}
   * @param healthy answers {@code /healthz}
   * @param unhealthyReason asked only when {@code healthy} is false; its answer is the 503 body
   */
  public MetricsHttpServer(
      int port, PrometheusMeterRegistry registry, BooleanSupplier healthy, Supplier<String> unhealthyReason) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("metrics port must be 0..65535, got " + port);
    }
    this.requestedPort = port;
    this.registry = Objects.requireNonNull(registry, "registry");
    this.healthy = Objects.requireNonNull(healthy, "healthy");
    this.unhealthyReason = Objects.requireNonNull(unhealthyReason, "unhealthyReason");
  }

  /**
   * Binds and starts serving.
   *
   * @throws IOException if the port cannot be bound (the message names it)
   */
  public synchronized void start() throws IOException {
    if (server != null) {
      throw new IllegalStateException("metrics server already started on port " + port());
    }
    HttpServer http;
    try {
      http = HttpServer.create(new InetSocketAddress(requestedPort), 16);
    } catch (IOException e) {
      throw new IOException("cannot listen for metrics on port " + requestedPort + ": " + e.getMessage()
          + " (choose another metrics port)", e);
    }
    AtomicInteger threads = new AtomicInteger();
    executor = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE), r -> {
      Thread t = new Thread(r, "metrics-http-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    }, new ThreadPoolExecutor.CallerRunsPolicy());
    http.setExecutor(executor);
    http.createContext("/metrics", this::metrics);
    http.createContext("/healthz", this::healthz);
    http.createContext("/", exchange -> respond(exchange, 404, "text/plain; charset=utf-8",
        "not found: try /metrics or /healthz\n"));
    http.start();
    server = http;
    LOG.info("event=metrics_http_started port={}", port());
  }

  /** The bound port (the ephemeral one when constructed with 0), or -1 when not started. */
  public synchronized int port() {
    return server == null ? -1 : server.getAddress().getPort();
  }

  /** Stops serving; idempotent. */
  @Override
  public synchronized void close() {
    if (server == null) {
      return;
    }
    server.stop(0);
    executor.shutdownNow();
    server = null;
    LOG.info("event=metrics_http_stopped");
  }

  private void metrics(HttpExchange exchange) throws IOException {
    if (!allowed(exchange)) {
      return;
    }
    String body;
    try {
      body = registry.scrape();
    } catch (RuntimeException e) {
      LOG.warn("event=metrics_scrape_failed error={}", String.valueOf(e));
      respond(exchange, 500, "text/plain; charset=utf-8", "scrape failed: " + e.getMessage() + "\n");
      return;
    }
    respond(exchange, 200, PROMETHEUS_TEXT, body);
  }

  private void healthz(HttpExchange exchange) throws IOException {
    if (!allowed(exchange)) {
      return;
    }
    boolean ok;
    String reason;
    try {
      ok = healthy.getAsBoolean();
      reason = ok ? "" : unhealthyReason.get();
    } catch (RuntimeException e) {
      ok = false;
      reason = "health check failed: " + e;
    }
    if (ok) {
      respond(exchange, 200, "text/plain; charset=utf-8", "ok\n");
    } else {
      respond(exchange, 503, "text/plain; charset=utf-8", "unhealthy: " + reason + "\n");
    }
  }

  private static boolean allowed(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    if (method.equals("GET") || method.equals("HEAD")) {
      return true;
    }
    exchange.getResponseHeaders().set("Allow", "GET, HEAD");
    respond(exchange, 405, "text/plain; charset=utf-8", "method " + method + " not allowed\n");
    return false;
  }

  private static void respond(HttpExchange exchange, int status, String contentType, String body)
      throws IOException {
    try (exchange) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", contentType);
      boolean head = exchange.getRequestMethod().equals("HEAD");
      exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(bytes);
        }
      }
    }
  }
}
