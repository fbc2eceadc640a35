package dev.fencing.agent.metrics;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /healthz} and {@code GET /readyz} for the kubelet's probes on one address (the node's loopback: the
 * agent shares the host's network, so no pod reaches it), answered as {@link MetricsHttpServer} answers them: 200
 * "ok" or 503 with the reason. One thread blocked in {@code accept} (no timer, no selector waking it while idle:
 * an idle agent pays one parked thread), one connection at a time, each given {@value #READ_TIMEOUT_MILLIS} ms to send
 * its request line and headers (at most {@value #MAX_REQUEST_BYTES} bytes) and closed after the answer. Only the
 * node's own processes can connect, which can stop the agent anyway.
 */
public final class ProbeListener implements AutoCloseable {

  /** How long one connection may take to send its request. */
  static final int READ_TIMEOUT_MILLIS = 2_000;
  /** Longest request head read; anything longer is answered 400. */
  static final int MAX_REQUEST_BYTES = 4_096;

  private static final Logger LOG = LoggerFactory.getLogger(ProbeListener.class);

  private final InetAddress address;
  private final int requestedPort;
  private final MetricsHttpServer.Probe liveness;
  private final MetricsHttpServer.Probe readiness;
  private ServerSocket socket;
  private Thread thread;

  /**
   * @param address the address to listen on (the loopback address in the DaemonSet)
   * @param port TCP port; 0 picks a free one (see {@link #port()})
   */
  public ProbeListener(InetAddress address, int port, MetricsHttpServer.Probe liveness,
      MetricsHttpServer.Probe readiness) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("probe port must be 0..65535, got " + port);
    }
    this.address = Objects.requireNonNull(address, "address");
    this.requestedPort = port;
    this.liveness = Objects.requireNonNull(liveness, "liveness");
    this.readiness = Objects.requireNonNull(readiness, "readiness");
  }

  /** Binds and starts answering. @throws IOException naming the address and port when it cannot bind */
  public synchronized void start() throws IOException {
    if (socket != null) {
      throw new IllegalStateException("probe listener already started on port " + port());
    }
    ServerSocket s = new ServerSocket();
    try {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(address, requestedPort), 16);
    } catch (IOException e) {
      s.close();
      throw new IOException("cannot listen for probes on " + address.getHostAddress() + ":" + requestedPort + ": "
          + e.getMessage() + " (choose another probe port)", e);
    }
    socket = s;
    thread = new Thread(() -> serve(s), "probe-listener");
    thread.setDaemon(true);
    thread.start();
    LOG.info("event=probe_http_started address={} port={}", address.getHostAddress(), s.getLocalPort());
  }

  /** The bound port, or -1 when not started. */
  public synchronized int port() {
    return socket == null ? -1 : socket.getLocalPort();
  }

  @Override
  public synchronized void close() {
    if (socket == null) {
      return;
    }
    try {
      socket.close();
    } catch (IOException e) {
      LOG.debug("event=probe_http_close_failed error=\"{}\"", e.toString());
    }
    socket = null;
  }

  private void serve(ServerSocket s) {
    while (!s.isClosed()) {
      try (Socket c = s.accept()) {
        c.setSoTimeout(READ_TIMEOUT_MILLIS);
        answer(c);
      } catch (SocketException e) {
        if (s.isClosed()) {
          return;
        }
        LOG.debug("event=probe_connection_failed error=\"{}\"", e.toString());
      } catch (IOException | RuntimeException e) {
        // one bad connection (a timeout, a reset) must not end the listener
        LOG.debug("event=probe_connection_failed error=\"{}\"", e.toString());
      }
    }
  }

  private void answer(Socket c) throws IOException {
    String head = readHead(new java.io.BufferedInputStream(c.getInputStream(), 512));
    OutputStream out = c.getOutputStream();
    if (head == null) {
      respond(out, 400, "Bad Request", "request too long or incomplete\n", false);
      return;
    }
    String[] line = head.substring(0, head.indexOf('\r') < 0 ? head.length() : head.indexOf('\r')).split(" ");
    if (line.length != 3 || !line[2].startsWith("HTTP/1.")) {
      respond(out, 400, "Bad Request", "not an HTTP/1 request\n", false);
      return;
    }
    boolean head0 = line[0].equals("HEAD");
    if (!line[0].equals("GET") && !head0) {
      respond(out, 405, "Method Not Allowed", "method " + line[0] + " not allowed\n", false);
      return;
    }
    String path = line[1].contains("?") ? line[1].substring(0, line[1].indexOf('?')) : line[1];
    MetricsHttpServer.Probe probe = switch (path) {
      case "/healthz" -> liveness;
      case "/readyz" -> readiness;
      default -> null;
    };
    if (probe == null) {
      respond(out, 404, "Not Found", "not found: try /healthz or /readyz\n", head0);
      return;
    }
    MetricsHttpServer.ProbeAnswer answer = MetricsHttpServer.ProbeAnswer.of(probe,
        probe == liveness ? "unhealthy" : "not ready");
    respond(out, answer.status(), answer.status() == 200 ? "OK" : "Service Unavailable", answer.body(), head0);
  }

  /** The request line and headers up to the blank line, or null when longer than the limit or cut off. */
  private static String readHead(InputStream in) throws IOException {
    byte[] buf = new byte[MAX_REQUEST_BYTES];
    int n = 0;
    while (n < buf.length) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      buf[n++] = (byte) b;
      if (n >= 4 && buf[n - 4] == '\r' && buf[n - 3] == '\n' && buf[n - 2] == '\r' && buf[n - 1] == '\n') {
        return new String(buf, 0, n, StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  private static void respond(OutputStream out, int status, String reason, String body, boolean headOnly)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    String headers = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain; charset=utf-8\r\n"
        + "Content-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n";
    out.write(headers.getBytes(StandardCharsets.ISO_8859_1));
    if (!headOnly) {
      out.write(bytes);
    }
    out.flush();
  }
}
