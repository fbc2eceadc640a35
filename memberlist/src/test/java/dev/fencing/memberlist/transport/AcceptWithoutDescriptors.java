package dev.fencing.memberlist.transport;

import dev.fencing.memberlist.limits.Refusals;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Child JVM of {@link NioTransportFailureTest}: a transport in a process with no file descriptor left, so every
 * accept fails at once with EMFILE. Driven over stdin/stdout, one step per line the parent sends:
 * <ol>
 *   <li>prints {@code port=}; the parent connects once, and the connection is accepted with descriptors to spare
 *       (so every class the accept path needs is loaded: with no descriptor left, a class file could not be opened);
 *   <li>takes every free descriptor and prints {@code exhausted=}. A blocked accept holds the descriptor number it
 *       will return, so the parent's next connection is still accepted; the accept after it fails;
 *   <li>measures the accept thread's CPU time over two seconds, frees the descriptors, waits until the parent's third
 *       connection (queued meanwhile) is accepted and prints {@code accept_cpu_ms=… accepted=…}.
 * </ol>
 * Accepted connections are left open (the handler keeps them), so none frees a descriptor before the end.
 */
public final class AcceptWithoutDescriptors {

  private AcceptWithoutDescriptors() {}

  public static void main(String[] args) throws Exception {
    LoggerFactory.getLogger(AcceptWithoutDescriptors.class).warn("event=preload a={} b={} c={}", 1, 2, 3);
    new FailureBackoff().failed(0);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    NioTransport transport = NioTransport.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null,
        new InboundStreamLimits(16, Duration.ofMinutes(1)), new Refusals("child", System::nanoTime));
    transport.start((packet, from, now) -> {}, connection -> {});
    Thread accept = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().endsWith("-accept"))
        .findFirst().orElseThrow();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("port=" + transport.boundAddress().getPort());

    in.readLine(); // the parent's first connection
    awaitAccepted(transport, 1);
    List<FileInputStream> held = new ArrayList<>();
    try {
      while (held.size() < 100_000) {
        held.add(new FileInputStream("/dev/null"));
      }
    } catch (IOException e) {
      // EMFILE: no descriptor left
    }
    System.out.println("exhausted=" + held.size());

    in.readLine(); // the parent's second and third connections
    awaitAccepted(transport, 2);
    long cpuBefore = threads.getThreadCpuTime(accept.getId());
    Thread.sleep(2_000);
    long cpuNanos = threads.getThreadCpuTime(accept.getId()) - cpuBefore;
    for (FileInputStream f : held) {
      f.close();
    }
    awaitAccepted(transport, 3);
    System.out.println("accept_cpu_ms=" + cpuNanos / 1_000_000 + " accepted=" + transport.stats().streamsAccepted());
    transport.close();
  }

  private static void awaitAccepted(NioTransport transport, long count) throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (transport.stats().streamsAccepted() < count && System.nanoTime() - deadline < 0) {
      Thread.sleep(10);
    }
  }
}
