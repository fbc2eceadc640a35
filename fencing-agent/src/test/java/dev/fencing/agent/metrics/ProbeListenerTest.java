package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The kubelet's probe listener on loopback: the same answers as the metrics server's, out of every pod's reach. */
class ProbeListenerTest {

  private static final MetricsHttpServer.Probe OK = Optional::empty;
  private ProbeListener probes;

  @AfterEach
  void stop() {
    if (probes != null) {
      probes.close();
    }
  }

  private ProbeListener start(MetricsHttpServer.Probe liveness, MetricsHttpServer.Probe readiness) throws IOException {
    probes = new ProbeListener(InetAddress.getByName("127.0.0.1"), 0, liveness, readiness);
    probes.start();
    return probes;
  }

  private static String request(int port, String raw) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(5_000);
      s.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void healthzAndReadyzAnswerLikeTheMetricsServer() throws Exception {
    AtomicReference<Optional<String>> ready = new AtomicReference<>(Optional.of("quorum not held"));
    start(OK, ready::get);
    String live = request(probes.port(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:9653\r\nUser-Agent: kube-probe/1.31\r\n\r\n");
    assertThat(live).startsWith("HTTP/1.1 200 OK\r\n").contains("Content-Length: 3\r\n").endsWith("\r\n\r\nok\n");
    assertThat(request(probes.port(), "GET /readyz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ")
        .endsWith("not ready: quorum not held\n");
    ready.set(Optional.empty());
    assertThat(request(probes.port(), "GET /readyz?verbose HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
    assertThat(request(probes.port(), "HEAD /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ")
        .endsWith("\r\n\r\n");
    assertThat(request(probes.port(), "GET /metrics HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 404 ");
    assertThat(request(probes.port(), "POST /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 405 ");
    assertThat(request(probes.port(), "garbage\r\n\r\n")).startsWith("HTTP/1.1 400 ");
    assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\nX: " + "y".repeat(5_000) + "\r\n\r\n"))
        .startsWith("HTTP/1.1 400 ");
  }

  @Test
  void aThrowingProbeIsA503() throws Exception {
    start(() -> {
      throw new IllegalStateException("boom");
    }, OK);
    assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ")
        .contains("unhealthy: probe failed: java.lang.IllegalStateException: boom");
  }

  /**
   * Slow clients on the metrics port hold its request threads; the probes are another listener and still answer.
   * A local client that sends nothing holds the probe listener for at most its read timeout.
   */
  @Test
  void slowClientsOnTheMetricsPortDoNotReachTheProbesAndASlowLocalOneIsCutOff() throws Exception {
    MetricsHttpServer metrics = new MetricsHttpServer(0,
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), OK, OK);
    metrics.start();
    start(OK, OK);
    List<Socket> slow = new ArrayList<>();
    try {
      for (int i = 0; i < 25; i++) {
        Socket s = new Socket("127.0.0.1", metrics.port());
        s.getOutputStream().write("GET /healthz HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        slow.add(s);
      }
      assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");

      try (Socket silent = new Socket("127.0.0.1", probes.port())) {
        long before = System.nanoTime();
        assertThat(request(probes.port(), "GET /readyz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
        assertThat((System.nanoTime() - before) / 1_000_000).as("waited for the silent one's read timeout, ms")
            .isLessThan(ProbeListener.READ_TIMEOUT_MILLIS + 2_000L);
      }
    } finally {
      for (Socket s : slow) {
        s.close();
      }
      metrics.close();
    }
  }

  @Test
  void itListensOnItsAddressOnlyAndABusyPortIsNamed() throws Exception {
    start(OK, OK);
    // Every 127/8 address reaches lo; a socket bound to 127.0.0.1 alone does not answer on 127.0.0.2.
    assertThatThrownBy(() -> new Socket("127.0.0.2", probes.port()).close()).isInstanceOf(ConnectException.class);
    ProbeListener second = new ProbeListener(InetAddress.getByName("127.0.0.1"), probes.port(), OK, OK);
    assertThatThrownBy(second::start).isInstanceOf(IOException.class)
        .hasMessageContaining("cannot listen for probes on 127.0.0.1:" + probes.port());
  }

  @Test
  void aClosedListenerNoLongerAnswers() throws Exception {
    start(OK, OK);
    int port = probes.port();
    probes.close();
    assertThat(probes.port()).isEqualTo(-1);
    // The port is free again: a listener still bound would make this bind fail. (Dialling the closed port is no
    // proof: another test may bind it by then, and Linux can connect a socket to itself on a free ephemeral port.)
    try (ServerSocket again = new ServerSocket()) {
      again.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
      assertThat(again.getLocalPort()).isEqualTo(port);
    }
  }
}
