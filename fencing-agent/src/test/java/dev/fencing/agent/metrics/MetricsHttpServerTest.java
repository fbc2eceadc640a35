package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.probes.EndpointServer;
import dev.fencing.probes.Probe;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MetricsHttpServerTest {

  private static final Probe OK = Optional::empty;
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final HttpClient http = HttpClient.newHttpClient();
  private EndpointServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
    return http.send(request(method, path).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String method, String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
  }

  @Test
  void metricsServesThePrometheusTextOfTheRegistry() throws Exception {
    Counter.builder("fencing.watchdog.feeds").register(registry).increment(3);
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();

    HttpResponse<String> response = send("GET", "/metrics");

    assertThat(server.port()).isPositive();
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue(PROMETHEUS_TEXT);
    assertThat(response.body()).contains("# TYPE fencing_watchdog_feeds_total counter")
        .contains("fencing_watchdog_feeds_total 3.0");
  }

  @Test
  void metricsAnswersOpenMetricsWhenTheScraperAsksForIt() throws Exception {
    Counter.builder("fencing.watchdog.feeds").register(registry).increment();
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();

    HttpResponse<String> response = http.send(request("GET", "/metrics")
        .header("Accept", "application/openmetrics-text; version=1.0.0").build(), HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/openmetrics-text"));
    assertThat(response.body()).contains("fencing_watchdog_feeds_total 1.0").endsWith("# EOF\n");
  }

  @Test
  void healthzIsOkOr503WithTheReasonFollowingTheLivenessProbe() throws Exception {
    AtomicReference<Optional<String>> live = new AtomicReference<>(Optional.empty());
    server = MetricsHttpServer.create(0, registry, live::get, () -> Optional.of("no config"));
    server.start();

    HttpResponse<String> ok = send("GET", "/healthz");
    live.set(Optional.of("quorum loop stuck"));
    HttpResponse<String> bad = send("GET", "/healthz");

    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("ok\n");
    assertThat(bad.statusCode()).isEqualTo(503);
    assertThat(bad.body()).isEqualTo("unhealthy: quorum loop stuck\n");
  }

  @Test
  void readyzIsOkOr503WithTheReasonFollowingTheReadinessProbe() throws Exception {
    AtomicReference<Optional<String>> ready = new AtomicReference<>(Optional.of("quorum not held"));
    server = MetricsHttpServer.create(0, registry, OK, ready::get);
    server.start();

    HttpResponse<String> bad = send("GET", "/readyz");
    ready.set(Optional.empty());
    HttpResponse<String> ok = send("GET", "/readyz");

    assertThat(bad.statusCode()).isEqualTo(503);
    assertThat(bad.body()).isEqualTo("not ready: quorum not held\n");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("ok\n");
    assertThat(send("GET", "/healthz").statusCode()).as("liveness is a separate probe").isEqualTo(200);
  }

  @Test
  void aThrowingProbeAnswers503InsteadOfFailingTheRequest() throws Exception {
    server = MetricsHttpServer.create(0, registry, () -> {
      throw new IllegalStateException("boom");
    }, OK);
    server.start();

    HttpResponse<String> response = send("GET", "/healthz");

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body()).contains("probe failed").contains("boom");
  }

  @Test
  void unknownPathsAndMethodsAreAnsweredWithoutServing() throws Exception {
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();

    assertThat(send("GET", "/nope").statusCode()).isEqualTo(404);
    assertThat(send("GET", "/").statusCode()).as("no landing page").isEqualTo(404);
    HttpResponse<String> post = send("POST", "/readyz");
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
    assertThat(send("HEAD", "/healthz").statusCode()).isEqualTo(200);
  }

  @Test
  void busyPortFailsWithAMessageNamingIt() throws Exception {
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();
    EndpointServer second = MetricsHttpServer.create(server.port(), registry, OK, OK);

    assertThatThrownBy(second::start).isInstanceOf(IOException.class)
        .hasMessageContaining("port " + server.port()).hasMessageContaining("choose another metrics port");
    assertThatThrownBy(() -> MetricsHttpServer.create(70000, registry, OK, OK))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void closedServerNoLongerListens() throws Exception {
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();
    int port = server.port();
    server.close();

    assertThat(server.port()).isEqualTo(-1);
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build();
    assertThatThrownBy(() -> http.send(request, HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(IOException.class);
  }

  @Test
  void metricsAreGzippedWhenTheScraperAcceptsItAndHeadSendsNoBody() throws Exception {
    Counter.builder("fencing.watchdog.feeds").register(registry).increment(2);
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();

    HttpResponse<byte[]> zipped = http.send(request("GET", "/metrics").header("Accept-Encoding", "gzip").build(),
        HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> head = http.send(request("HEAD", "/metrics").build(), HttpResponse.BodyHandlers.ofByteArray());

    assertThat(zipped.statusCode()).isEqualTo(200);
    assertThat(zipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
    try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(zipped.body()))) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains("fencing_watchdog_feeds_total 2.0");
    }
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(head.headers().firstValueAsLong("Content-Length").orElse(0))
        .isEqualTo(send("GET", "/metrics").body().getBytes(StandardCharsets.UTF_8).length);
    assertThat(send("GET", "/-/healthy").body()).isEqualTo("ok\n");
  }

  /**
   * A hundred clients that connect and send half a request, and a hundred that send nothing: a scrape that follows
   * is still answered at once (before, two of them held the JDK server's request threads and nobody was answered),
   * and the holders are closed by the cap or by their timeout.
   */
  @Test
  void clientsHoldingConnectionsNeverKeepAScrapeFromBeingAnswered() throws Exception {
    Counter.builder("fencing.watchdog.feeds").register(registry).increment();
    server = MetricsHttpServer.create(0, registry, OK, OK);
    server.start();
    List<Socket> holders = new ArrayList<>();
    try {
      for (int i = 0; i < 200; i++) {
        Socket s = new Socket("127.0.0.1", server.port());
        if (i % 2 == 0) {
          s.getOutputStream().write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
        }
        holders.add(s);
      }

      assertThat(rawGet(server.port(), "/metrics")).startsWith("HTTP/1.1 200 ");
      assertThat(rawGet(server.port(), "/healthz")).startsWith("HTTP/1.1 200 ");
      assertThat(server.dropped()).as("the cap closed the oldest holders")
          .isGreaterThanOrEqualTo(200 + 1 - MetricsHttpServer.MAX_CONNECTIONS);
    } finally {
      for (Socket s : holders) {
        s.close();
      }
    }
  }

  /** One GET over a raw socket; the status line and headers, or "" when the server closed without answering. */
  static String rawGet(int port, String path) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      s.setSoTimeout(2000);
      OutputStream out = s.getOutputStream();
      out.write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[256];
      int n;
      try {
        n = in.read(buf);
      } catch (SocketTimeoutException e) {
        throw new AssertionError("no answer within 2 s: the listener is held", e);
      } catch (IOException reset) {
        return "";
      }
      return n < 0 ? "" : new String(buf, 0, n, StandardCharsets.US_ASCII);
    }
  }
}
