package dev.fencing.agent.apiserver;

import dev.fencing.agent.quorum.MonotonicClock;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes the API server's {@code /readyz} on its own thread, never on the quorum or feeder thread: every probe
 * interval while the tie-breaker asks (and for a while after), each with a short timeout, keeping the latest result.
 * Probing only on demand keeps a large group from polling the API server while no tie is near.
 */
public final class ReadyzProber implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ReadyzProber.class);

  /** After the last ask, keep probing this many intervals: a tie often comes back. */
  static final int KEEP_PROBING_INTERVALS = 30;
  /** Longest sleep while no probe is wanted; {@link #request} and {@link #close} wake the thread at once anyway. */
  private static final long IDLE_PARK_NANOS = 30_000_000_000L;

  /**
   * One probe's outcome.
   *
   * @param completedAtNanos when it finished (this node's monotonic clock)
   * @param status the HTTP status, or -1 when there was no HTTP answer
   * @param detail what happened, for status and logs ("HTTP 200", "timeout after 500ms", "TLS: …")
   */
  public record Result(long completedAtNanos, int status, String detail) {
    /** Only a 200 from /readyz counts. */
    public boolean ready() {
      return status == 200;
    }
  }

  private record Target(ApiServerEndpoint endpoint, HttpClient client, Duration interval, Duration timeout) {}

  private final MonotonicClock clock;
  private final String logContext;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Target target;
  private volatile Optional<String> configProblem = Optional.of("no API server endpoint configured");
  private volatile long wantedUntilNanos;
  private volatile boolean wanted;
  private volatile Optional<Result> latest = Optional.empty();
  private volatile Thread thread;

  /**
   * @param clock this node's monotonic clock (results are aged on it)
   * @param logContext {@code node=…} prefix for log lines
   */
  public ReadyzProber(MonotonicClock clock, String logContext) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.logContext = Objects.requireNonNull(logContext, "logContext");
  }

  /** Starts the probe thread (idle until asked). */
  public void start() {
    Thread t = new Thread(this::run, "fencing-readyz-probe");
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  /**
   * Sets (or clears) the endpoint; probes every {@code interval} with a timeout of {@code timeout}. A CA that cannot
   * be read or parsed is a reported condition ({@link #problem()}), never an exception.
   */
  public void configure(Optional<ApiServerEndpoint> endpoint, Duration interval, Duration timeout) {
    Target old = target;
    if (endpoint.isEmpty()) {
      target = null;
      configProblem = Optional.of("no API server endpoint configured");
      latest = Optional.empty();
      return;
    }
    if (old != null && old.endpoint().equals(endpoint.get()) && old.interval().equals(interval)
        && old.timeout().equals(timeout)) {
      return;
    }
    try {
      HttpClient client = HttpClient.newBuilder().sslContext(trusting(endpoint.get())).connectTimeout(timeout)
          .followRedirects(HttpClient.Redirect.NEVER).build();
      target = new Target(endpoint.get(), client, interval, timeout);
      configProblem = Optional.empty();
      latest = Optional.empty();
      LOG.info("{} event=readyz_probe_configured url={} ca={} interval={} timeout={}", logContext,
          endpoint.get().readyz(), endpoint.get().caPem().isPresent() ? "inline" : endpoint.get().caFile(), interval,
          timeout);
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      target = null;
      latest = Optional.empty();
      configProblem = Optional.of("cannot use the CA for " + endpoint.get().url() + ": " + e.getMessage());
      LOG.error("{} event=readyz_probe_unusable url={} error=\"{}\"", logContext, endpoint.get().url(),
          e.getMessage());
    }
  }

  /** The tie-breaker wants fresh results from now on; never blocks. */
  public void request(long nowNanos) {
    Target t = target;
    long keep = t == null ? 0 : t.interval().toNanos() * KEEP_PROBING_INTERVALS;
    wantedUntilNanos = nowNanos + keep;
    if (!wanted) {
      wanted = true;
      Thread th = thread;
      if (th != null) {
        LockSupport.unpark(th);
      }
    }
  }

  /** The latest probe result, if any since the endpoint was (re)configured. */
  public Optional<Result> latest() {
    return latest;
  }

  /** Why no probe can run (no endpoint, unusable CA); empty when probes can run. */
  public Optional<String> problem() {
    return configProblem;
  }

  /** How long a result counts: one probe interval plus the probe timeout (when configured). */
  public Optional<Duration> freshFor() {
    Target t = target;
    return t == null ? Optional.empty() : Optional.of(t.interval().plus(t.timeout()));
  }

  /** The probe timeout for a probe interval: the interval, but at least 500 ms (a TLS handshake) and at most 2 s. */
  public static Duration timeoutFor(Duration interval) {
    Duration min = Duration.ofMillis(500);
    Duration max = Duration.ofSeconds(2);
    return interval.compareTo(min) < 0 ? min : interval.compareTo(max) > 0 ? max : interval;
  }

  /** Runs one probe now on the calling thread (the probe thread, or a test). */
  public Optional<Result> probeOnce() {
    Target t = target;
    if (t == null) {
      return Optional.empty();
    }
    Result r = probe(t);
    latest = Optional.of(r);
    return latest;
  }

  private void run() {
    while (!closed.get()) {
      long now = clock.nanoTime();
      Target t = target;
      if (t == null || !wanted || now - wantedUntilNanos >= 0) {
        wanted = false;
        // request() sets the deadline before it looks at wanted: one that ran since the check above left a deadline
        // in the future, and its wakeup must not be lost to the line above.
        if (t != null && clock.nanoTime() - wantedUntilNanos < 0) {
          wanted = true;
          continue;
        }
        LockSupport.parkNanos(this, IDLE_PARK_NANOS);
        continue;
      }
      probeOnce();
      long elapsed = clock.nanoTime() - now;
      LockSupport.parkNanos(this, Math.max(1, t.interval().toNanos() - elapsed));
    }
  }

  private Result probe(Target t) {
    HttpRequest request = HttpRequest.newBuilder(t.endpoint().readyz()).timeout(t.timeout()).GET().build();
    Result result;
    try {
      HttpResponse<Void> response = t.client().send(request, HttpResponse.BodyHandlers.discarding());
      result = new Result(clock.nanoTime(), response.statusCode(), "HTTP " + response.statusCode());
    } catch (java.net.http.HttpTimeoutException e) {
      result = new Result(clock.nanoTime(), -1, "timeout after " + t.timeout().toMillis() + "ms");
    } catch (IOException e) {
      result = new Result(clock.nanoTime(), -1, "unreachable: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      result = new Result(clock.nanoTime(), -1, "interrupted");
    }
    Optional<Result> previous = latest;
    if (previous.isEmpty() || previous.get().ready() != result.ready()) {
      LOG.info("{} event=readyz_probe url={} ready={} detail=\"{}\"", logContext, t.endpoint().readyz(),
          result.ready(), result.detail());
    }
    return result;
  }

  private static SSLContext trusting(ApiServerEndpoint endpoint) throws IOException, GeneralSecurityException {
    String pem = endpoint.caPem().isPresent() ? endpoint.caPem().get()
        : Files.readString(endpoint.caFile(), StandardCharsets.US_ASCII);
    Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509")
        .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    if (certs.isEmpty()) {
      throw new GeneralSecurityException("no certificate in the CA bundle");
    }
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    int i = 0;
    for (Certificate c : certs) {
      trust.setCertificateEntry("ca-" + i++, c);
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);
    return ssl;
  }

  @Override
  public void close() {
    closed.set(true);
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }
}
