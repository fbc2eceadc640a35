package dev.fencing.agent.metrics;

import com.sun.net.httpserver.HttpExchange;
import dev.fencing.probes.Probe;
import dev.fencing.probes.ProbeAnswer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /metrics} (the Prometheus client's exposition of a {@link PrometheusMeterRegistry}: text format, OpenMetrics
 * or protobuf by the scraper's Accept header, gzip on request), {@code /healthz} (liveness) and {@code /readyz}
 * (readiness) on the Prometheus client's {@link HTTPServer}. Each probe answers 200 "ok" or 503 with a one-line reason
 * (see {@link AgentHealth} for what the agent asks). The client also answers {@code /-/healthy} with 200 while the
 * process serves HTTP at all; the kubelet probes use {@code /healthz} and {@code /readyz}.
 *
 * <p>Requests run on at most {@value #THREADS} threads with a short queue; when both are full a new connection is
 * closed at once, so a scraping storm cannot take memory or threads from the agent's safety work. The JDK server
 * reads a request's headers on its request thread, so clients that open connections and send nothing hold those
 * threads (up to the server's request time limit) and the listener answers nobody else meanwhile; the accepting
 * thread itself never serves a request, so it is never held. A listener on the whole network is therefore no place
 * for the kubelet's probes: a {@link ProbeServer} serves them on the loopback address, which only the node's own
 * processes reach (the agent runs with the host's network). Idle request threads end after {@value #IDLE_SECONDS}
 * seconds, so an agent nobody scrapes keeps no request thread.
 */
public final class MetricsHttpServer implements AutoCloseable {

  /** Request threads. */
  public static final int THREADS = 2;

  /** Seconds an idle request thread lives. */
  public static final int IDLE_SECONDS = 30;

  /**
   * The JDK server's period for checking request and response time limits (the Prometheus client sets them to 60 s
   * and 600 s), in ms: every 5 s instead of every second, so that an idle agent's timer thread wakes a fifth as often;
   * a limit then holds to within 5 s. The JDK reads it once, when the JVM's first HTTP server starts; a value given
   * on the command line is kept.
   */
  static final String TIMER_MILLIS_PROPERTY = "sun.net.httpserver.timerMillis";

  /** {@link #TIMER_MILLIS_PROPERTY}'s value unless set. */
  static final String TIMER_MILLIS = "5000";

  private static final Logger LOG = LoggerFactory.getLogger(MetricsHttpServer.class);
  private static final int QUEUE = 16;

  private final int requestedPort;
  private final PrometheusMeterRegistry registry;
  private final Probe liveness;
  private final Probe readiness;
  private HTTPServer server;
  private ThreadPoolExecutor executor;

  /**
   * @param port TCP port on all interfaces; 0 picks a free one (see {@link #port()})
   * @param registry scraped on every {@code GET /metrics}
   * @param liveness answers {@code /healthz}
   * @param readiness answers {@code /readyz}
   */
  public MetricsHttpServer(int port, PrometheusMeterRegistry registry, Probe liveness, Probe readiness) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("metrics port must be 0..65535, got " + port);
    }
    this.requestedPort = port;
    this.registry = Objects.requireNonNull(registry, "registry");
    this.liveness = Objects.requireNonNull(liveness, "liveness");
    this.readiness = Objects.requireNonNull(readiness, "readiness");
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
    if (System.getProperty(TIMER_MILLIS_PROPERTY) == null) {
      System.setProperty(TIMER_MILLIS_PROPERTY, TIMER_MILLIS);
    }
    AtomicInteger threads = new AtomicInteger();
    executor = new ThreadPoolExecutor(THREADS, THREADS, IDLE_SECONDS, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(QUEUE), r -> {
          Thread t = new Thread(r, "metrics-http-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    executor.allowCoreThreadTimeOut(true);
    try {
      // /metrics is the client's; every other path reaches the default handler, which serves the probes.
      server = HTTPServer.builder()
          .port(requestedPort)
          .registry(registry.getPrometheusRegistry())
          .executorService(executor)
          .defaultHandler(this::route)
          .buildAndStart();
    } catch (IOException | RuntimeException e) {
      executor.shutdownNow();
      executor = null;
      throw new IOException("cannot listen for metrics on port " + requestedPort + ": " + e.getMessage()
          + " (choose another metrics port)", e);
    }
    LOG.info("event=metrics_http_started port={}", port());
  }

  /** The bound port (the ephemeral one when constructed with 0), or -1 when not started. */
  public synchronized int port() {
    return server == null ? -1 : server.getPort();
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
    LOG.info("event=metrics_http_stopped");
  }

  private void route(HttpExchange exchange) throws IOException {
    switch (exchange.getRequestURI().getPath()) {
      case "/healthz" -> probe(exchange, liveness, "unhealthy");
      case "/readyz" -> probe(exchange, readiness, "not ready");
      default -> respond(exchange, 404, "text/plain; charset=utf-8", "not found: try /metrics, /healthz or /readyz\n");
    }
  }

  private static void probe(HttpExchange exchange, Probe probe, String failed) throws IOException {
    if (!allowed(exchange)) {
      return;
    }
    ProbeAnswer answer = ProbeAnswer.of(probe, failed);
    respond(exchange, answer.status(), "text/plain; charset=utf-8", answer.body());
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
