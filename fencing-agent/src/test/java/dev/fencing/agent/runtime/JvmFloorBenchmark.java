package dev.fencing.agent.runtime;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The resident set a JVM needs before any of the agent's own code or libraries: a process that uses only the JDK
 * parts an idle agent uses (a UDP socket exchanging AES-GCM-sealed packets with itself a few times a second, a Unix
 * socket listener, the JDK's HTTP server for /metrics, a scheduled tick, a file it writes as the feeder does), then
 * idles. Run it with the same launcher and flags as {@link IdleFootprintBenchmark} to see how much of the agent's
 * figure is the runtime's floor.
 *
 * <p>Arguments: {@code WORK_DIR WARMUP_S}. Prints {@code VmRSS}, {@code RssAnon}, {@code RssFile} of itself, then
 * exits. Run: {@code java @jvm.options -cp fencing-agent/target/test-classes
 * dev.fencing.agent.runtime.JvmFloorBenchmark /tmp/floor 60}.
 */
public final class JvmFloorBenchmark {

  private JvmFloorBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Path.of(args.length > 0 ? args[0] : "/tmp/jvm-floor"));
    int warmupSeconds = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    byte[] keyBytes = new byte[32];
    SecureRandom random = new SecureRandom();
    random.nextBytes(keyBytes);
    SecretKeySpec key = new SecretKeySpec(keyBytes, "AES");

    DatagramChannel udp = DatagramChannel.open();
    udp.bind(new InetSocketAddress("127.0.0.1", 0));
    Path socket = dir.resolve("floor.sock");
    Files.deleteIfExists(socket);
    ServerSocketChannel local = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    local.bind(UnixDomainSocketAddress.of(socket));
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/metrics", exchange -> {
      byte[] body = "up 1\n".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    http.start();

    Thread receiver = new Thread(() -> {
      ByteBuffer buffer = ByteBuffer.allocate(1500);
      try {
        while (true) {
          buffer.clear();
          udp.receive(buffer);
          buffer.flip();
          byte[] packet = new byte[buffer.remaining()];
          buffer.get(packet);
          Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
          cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, packet, 0, 12));
          cipher.doFinal(packet, 12, packet.length - 12);
        }
      } catch (Exception e) {
        // Closed at exit.
      }
    }, "floor-receive");
    receiver.setDaemon(true);
    receiver.start();

    Path feed = dir.resolve("feed");
    ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
    ticks.scheduleAtFixedRate(() -> {
      try {
        byte[] nonce = new byte[12];
        random.nextBytes(nonce);
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
        byte[] sealed = cipher.doFinal(new byte[120]);
        ByteBuffer packet = ByteBuffer.allocate(12 + sealed.length).put(nonce).put(sealed).flip();
        udp.send(packet, udp.getLocalAddress());
        Files.write(feed, new byte[] {'1'});
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, 0, 100, TimeUnit.MILLISECONDS);

    Thread.sleep(warmupSeconds * 1000L);
    for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
      if (line.startsWith("VmRSS:") || line.startsWith("RssAnon:") || line.startsWith("RssFile:")
          || line.startsWith("Threads:")) {
        System.out.println(line.replaceAll("\\s+", " "));
      }
    }
    ticks.shutdownNow();
    http.stop(0);
    local.close();
    udp.close();
    Files.deleteIfExists(socket);
  }
}
