package dev.fencing.agent.metrics;

import dev.fencing.probes.EndpointServer;
import dev.fencing.probes.Probe;
import dev.fencing.probes.ProbeServer;
import dev.fencing.probes.PrometheusEndpoint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;

/**
 * {@code /metrics} (the Prometheus client's exposition of a {@link PrometheusMeterRegistry}: text format, OpenMetrics
 * or protobuf by the scraper's Accept header, gzip on request), {@code /healthz} (liveness), {@code /readyz}
 * (readiness) and {@code /-/healthy} (200 while the listener serves at all) on every address, served by an
 * {@link EndpointServer}: one thread, no blocking on any client, each connection bounded to {@value #TIMEOUT_SECONDS}
 * s and {@value #MAX_CONNECTIONS} open at once. A client that opens connections and sends nothing (or does not read
 * its answer) therefore never keeps a scrape from being answered, and a scraping storm costs one thread's time, never
 * threads or memory the agent's safety work needs. Each probe answers 200 "ok" or 503 with a one-line reason (see
 * {@link AgentHealth} for what the agent asks); the kubelet asks the loopback {@link ProbeServer} instead, which only
 * the node's own processes reach (the agent runs with the host's network).
 */
public final class MetricsHttpServer {

  /** From accept to the last byte of the answer: Prometheus' default scrape timeout. */
  public static final int TIMEOUT_SECONDS = 10;

  /** Open connections at most; one more closes the oldest that has not sent its request. */
  public static final int MAX_CONNECTIONS = 32;

  private MetricsHttpServer() {}

  /**
   * The metrics listener, not started.
   *
   * @param port TCP port on all interfaces; 0 picks a free one (see {@link EndpointServer#port()})
   * @param registry scraped on every {@code GET /metrics}
   * @param liveness answers {@code /healthz}
   * @param readiness answers {@code /readyz}
   */
  public static EndpointServer create(int port, PrometheusMeterRegistry registry, Probe liveness, Probe readiness) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("metrics port must be 0..65535, got " + port);
    }
    return PrometheusEndpoint.metricsAndProbes(EndpointServer.builder("metrics")
        .port(port)
        .timeout(Duration.ofSeconds(TIMEOUT_SECONDS))
        .maxConnections(MAX_CONNECTIONS), registry.getPrometheusRegistry(), liveness, readiness)
        .build();
  }
}
