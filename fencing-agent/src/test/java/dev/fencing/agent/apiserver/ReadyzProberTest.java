package dev.fencing.agent.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.fencing.agent.quorum.TieBreakVerdict;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** APIReachable against a local HTTPS /readyz (JDK HttpsServer on loopback, keytool-generated certificates). */
class ReadyzProberTest {

  private static final long MS = 1_000_000L;
  private static final TreeSet<String> SIDE = new TreeSet<>(List.of("node-a"));
  private static final TreeSet<String> EXPECTED = new TreeSet<>(List.of("node-a", "node-b"));

  @TempDir Path dir;
  @TempDir static Path keys;
  private static KeyStore serverKeys;
  private static KeyStore otherKeys;

  private final AtomicLong now = new AtomicLong(1_000 * MS);
  private final AtomicInteger status = new AtomicInteger(200);
  private final CountDownLatch hang = new CountDownLatch(1);
  private volatile boolean hanging;
  private HttpsServer server;
  private String serverCaPem;
  private ReadyzProber prober;

  @org.junit.jupiter.api.BeforeAll
  static void generateKeys() throws Exception {
    serverKeys = generateKeyStore("server");
    otherKeys = generateKeyStore("other");
  }

  @BeforeEach
  void startServer() throws Exception {
    serverCaPem = pem(serverKeys);
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(serverKeys, "changeit".toCharArray());
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf.getKeyManagers(), null, null);
    server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(ssl));
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/readyz", exchange -> {
      if (hanging) {
        try {
          hang.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      exchange.sendResponseHeaders(status.get(), -1);
      exchange.close();
    });
    server.start();
    prober = new ReadyzProber(now::get, "node=node-a");
  }

  @AfterEach
  void stop() {
    hang.countDown();
    prober.close();
    server.stop(0);
  }

  private ApiServerEndpoint endpoint(String caPem) {
    return new ApiServerEndpoint(URI.create("https://127.0.0.1:" + server.getAddress().getPort()),
        Optional.of(caPem), ApiServerEndpoint.SERVICE_ACCOUNT_CA);
  }

  private TieBreakVerdict evaluate() {
    return new ApiReachableTieBreaker(prober).evaluate(SIDE, EXPECTED, now.get());
  }

  @Test
  void aFreshHttp200GrantsTheTieUntilTheResultIsTooOld() {
    // A 10 s timeout: the probe does a fresh TLS handshake, which a loaded machine can stretch past 2 s.
    prober.configure(Optional.of(endpoint(serverCaPem)), Duration.ofSeconds(1), Duration.ofSeconds(10));
    assertThat(prober.probeOnce()).get().extracting(ReadyzProber.Result::status).isEqualTo(200);
    long probedAt = now.get();

    TieBreakVerdict win = evaluate();
    assertThat(win.outcome()).isEqualTo(TieBreakVerdict.Outcome.WIN);
    // Fresh for one interval plus the timeout: 1 s + 10 s.
    assertThat(win.winValidUntilNanos()).hasValue(probedAt + 11_000 * MS);

    now.addAndGet(11_000 * MS + 1);
    TieBreakVerdict stale = evaluate();
    assertThat(stale.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(stale.reason()).contains("old");
  }

  @Test
  void anHttp500IsNoAnswer() {
    status.set(500);
    prober.configure(Optional.of(endpoint(serverCaPem)), Duration.ofSeconds(1), Duration.ofSeconds(10));
    prober.probeOnce();
    TieBreakVerdict verdict = evaluate();
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(verdict.reason()).isEqualTo("APIReachable: /readyz HTTP 500");
  }

  @Test
  void aProbeThatTimesOutIsNoAnswer() {
    hanging = true;
    prober.configure(Optional.of(endpoint(serverCaPem)), Duration.ofSeconds(1), Duration.ofMillis(300));
    assertThat(prober.probeOnce()).get().extracting(ReadyzProber.Result::status).isEqualTo(-1);
    TieBreakVerdict verdict = evaluate();
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(verdict.reason()).contains("timeout");
  }

  @Test
  void aServerSignedByAnotherCaIsNoAnswer() throws Exception {
    String otherCa = pem(otherKeys);
    prober.configure(Optional.of(endpoint(otherCa)), Duration.ofSeconds(1), Duration.ofSeconds(10));
    assertThat(prober.probeOnce()).get().satisfies(r -> {
      assertThat(r.ready()).isFalse();
      assertThat(r.detail()).startsWith("unreachable");
    });
    assertThat(evaluate().outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
  }

  @Test
  void withoutAnEndpointOrWithAnUnreadableCaThereIsNoAnswer() {
    assertThat(evaluate().reason()).isEqualTo("APIReachable: no API server endpoint configured");
    prober.configure(Optional.of(new ApiServerEndpoint(URI.create("https://127.0.0.1:1"), Optional.empty(),
        dir.resolve("missing-ca.crt"))), Duration.ofSeconds(1), Duration.ofSeconds(2));
    TieBreakVerdict verdict = evaluate();
    assertThat(verdict.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    assertThat(verdict.reason()).contains("cannot use the CA");
  }

  @Test
  void theProbeThreadProbesOnlyOnceAskedAndTheTieIsThenGranted() {
    ReadyzProber live = new ReadyzProber(System::nanoTime, "node=node-a");
    try {
      live.configure(Optional.of(endpoint(serverCaPem)), Duration.ofMillis(200), Duration.ofSeconds(10));
      live.start();
      ApiReachableTieBreaker tieBreaker = new ApiReachableTieBreaker(live);
      assertThat(live.latest()).as("idle until a tie is near").isEmpty();
      tieBreaker.prepare(SIDE, EXPECTED, System.nanoTime());
      await().atMost(Duration.ofSeconds(20)).until(() -> tieBreaker.evaluate(SIDE, EXPECTED, System.nanoTime())
          .outcome() == TieBreakVerdict.Outcome.WIN);
    } finally {
      live.close();
    }
  }

  @Test
  void theControllersProbeConfigUsesItsCaOrElseTheServiceAccountCa() {
    var probe = dev.fencing.proto.nodemanager.v1.ApiServerProbe.newBuilder().setUrl("https://10.96.0.1:443/")
        .build();
    ApiServerEndpoint endpoint = ApiServerEndpoint.fromProto(true, probe).orElseThrow();
    assertThat(endpoint.readyz()).isEqualTo(URI.create("https://10.96.0.1:443/readyz"));
    assertThat(endpoint.caPem()).isEmpty();
    assertThat(endpoint.caFile()).isEqualTo(ApiServerEndpoint.SERVICE_ACCOUNT_CA);
    assertThat(ApiServerEndpoint.fromProto(false, probe)).isEmpty();
  }

  /** A self-signed EC certificate for 127.0.0.1 in a PKCS12 key store, made by the JDK's keytool. */
  private static KeyStore generateKeyStore(String name) throws Exception {
    Path file = keys.resolve(name + ".p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC",
        "-groupname", "secp256r1", "-dname", "CN=" + name, "-ext", "san=ip:127.0.0.1", "-validity", "2",
        "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass", "changeit", "-keypass", "changeit")
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isZero();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      ks.load(in, "changeit".toCharArray());
    }
    return ks;
  }

  private static String pem(KeyStore ks) throws Exception {
    String alias = ks.aliases().nextElement();
    return "-----BEGIN CERTIFICATE-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(ks.getCertificate(alias).getEncoded())
        + "\n-----END CERTIFICATE-----\n";
  }
}
