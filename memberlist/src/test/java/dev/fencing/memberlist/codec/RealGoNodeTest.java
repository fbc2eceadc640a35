package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.memberlist.transport.NioTransport;
import dev.fencing.memberlist.transport.StreamConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A minimal Java peer built from our codecs and {@link NioTransport} talks to a real Go memberlist 0.2.2 node over
 * loopback UDP and TCP: push/pull join both ways, Go's probes answered, our UDP, compound and TCP pings acked, user
 * messages delivered to Go's delegate, graceful leave seen by Go; in the clear and encrypted (versions 1 and 0).
 */
class RealGoNodeTest {
  private static final byte[] LO = {127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  private static final byte[] KEY = Hex.bytes("8f3c0e1a5b7d9f21436587a9cbedf0112233445566778899aabbccddeeff0011");
  private static final Duration WAIT = Duration.ofSeconds(15);

  @Test
  void javaPeerInteroperatesWithARealGoNode() throws Exception {
    exercise(PacketOptions.plain(), null);
  }

  @Test
  void javaPeerInteroperatesWithARealGoNodeWhenEncrypted() throws Exception {
    exercise(new PacketOptions(new Keyring(KEY), "", true, true), Hex.of(KEY));
  }

  private static void exercise(PacketOptions options, String keyHex) throws Exception {
    Process go = keyHex == null ? GoPeer.start("serve") : GoPeer.start("serve", keyHex);
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(go.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l = r.readLine(); l != null; l = r.readLine()) {
          lines.add(l);
        }
      } catch (IOException e) {
        lines.add("reader-failed " + e.getMessage());
      }
    });
    reader.setDaemon(true);
    reader.start();
    OutputStream goStdin = go.getOutputStream();
    PacketCodec packets = new PacketCodec(options);
    StreamCodec streams = new StreamCodec(options);
    Queue<String> errors = new ConcurrentLinkedQueue<>();
    Map<Long, CompletableFuture<AckResp>> acks = new ConcurrentHashMap<>();
    AtomicInteger pingsAnswered = new AtomicInteger();
    try (NioTransport t = NioTransport.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      int goPort = Integer.parseInt(awaitLine(lines, "ready ").substring(6));
      InetSocketAddress goAddr = new InetSocketAddress(InetAddress.getLoopbackAddress(), goPort);
      int port = t.localAddress().getPort();
      byte[] meta = "java-meta".getBytes(StandardCharsets.UTF_8);
      PushNodeState self = new PushNodeState("java1", LO, port, meta, 1, 0, VSN);
      byte[] javaState = "java-state".getBytes(StandardCharsets.UTF_8);
      t.start(
          (pkt, from, nanos) -> {
            try {
              for (Message m : packets.decode(pkt)) {
                if (m instanceof Ping p) {
                  InetSocketAddress to =
                      p.sourceAddr() != null && p.sourcePort() != 0
                          ? new InetSocketAddress(InetAddress.getByAddress(p.sourceAddr()), p.sourcePort())
                          : from;
                  t.sendPacket(to, packets.encode(new AckResp(p.seqNo(), null), true, false));
                  pingsAnswered.incrementAndGet();
                } else if (m instanceof AckResp a) {
                  acks.computeIfAbsent(a.seqNo(), k -> new CompletableFuture<>()).complete(a);
                }
              }
            } catch (MalformedMessageException | IOException e) {
              errors.add("packet: " + e);
            }
          },
          conn -> {
            try (conn) {
              conn.setDeadline(Duration.ofSeconds(5));
              Message m = streams.readInbound(conn.input());
              if (m instanceof PushPull pp) {
                streams.write(conn.output(), new PushPull(pp.join(), List.of(self), javaState), true);
              } else if (m instanceof Ping p) {
                streams.write(conn.output(), new AckResp(p.seqNo(), null), false);
              }
            } catch (MalformedMessageException | IOException e) {
              errors.add("stream: " + e);
            }
          });

      // join: our push/pull over TCP, Go's state back
      try (StreamConnection c = t.openStream(goAddr, Duration.ofSeconds(5))) {
        c.setDeadline(Duration.ofSeconds(5));
        streams.writeLabelHeader(c.output());
        streams.write(c.output(), new PushPull(true, List.of(self), javaState), true);
        PushPull reply = (PushPull) streams.read(c.input());
        assertThat(reply.join()).isTrue();
        assertThat(reply.userState()).asString().isEqualTo("go-state");
        PushNodeState goNode = reply.nodes().stream().filter(n -> n.name().equals("go1")).findFirst().orElseThrow();
        assertThat(goNode.port()).isEqualTo(goPort);
        assertThat(goNode.addr()).containsExactly(LO);
        assertThat(goNode.state()).isZero();
        assertThat(goNode.vsn()).containsExactly(VSN);
      }
      awaitLine(lines, "join java1 127.0.0.1:" + port + " " + Hex.of(meta));
      awaitLine(lines, "state " + Hex.of(javaState) + " true");

      // Go probes us over UDP and we answer: it keeps us alive
      await().atMost(WAIT).until(() -> pingsAnswered.get() >= 3);
      goStdin.write("members\n".getBytes(StandardCharsets.UTF_8));
      goStdin.flush();
      assertThat(awaitLine(lines, "members ")).contains("go1:0").contains("java1:0");

      // our UDP ping, acked to SourceAddr:SourcePort
      CompletableFuture<AckResp> udpAck = acks.computeIfAbsent(77L, k -> new CompletableFuture<>());
      t.sendPacket(goAddr, packets.encode(new Ping(77, "go1", LO, port, "java1"), true, true));
      assertThat(udpAck.get(WAIT.toSeconds(), TimeUnit.SECONDS).seqNo()).isEqualTo(77);

      // a compound (ping + user message), compressed and CRC'd; encrypted runs use legacy encryption version 0 here
      PacketCodec compoundCodec =
          options.keyring() == null
              ? packets
              : new PacketCodec(new PacketOptions(options.keyring(), "", true, true, Keyring.VERSION_0));
      CompletableFuture<AckResp> compoundAck = acks.computeIfAbsent(79L, k -> new CompletableFuture<>());
      byte[] inCompound = "hello-compound".getBytes(StandardCharsets.UTF_8);
      t.sendPacket(
          goAddr,
          compoundCodec.encode(
              List.of(
                  MessageCodec.encode(new Ping(79, "go1", LO, port, "java1")),
                  MessageCodec.encode(new UserMsg(inCompound))),
              true,
              true));
      assertThat(compoundAck.get(WAIT.toSeconds(), TimeUnit.SECONDS).seqNo()).isEqualTo(79);
      awaitLine(lines, "msg " + Hex.of(inCompound));

      // our TCP fallback ping
      try (StreamConnection c = t.openStream(goAddr, Duration.ofSeconds(5))) {
        c.setDeadline(Duration.ofSeconds(5));
        streams.writeLabelHeader(c.output());
        streams.write(c.output(), new Ping(78, "go1", null, 0, null), false);
        assertThat(((AckResp) streams.read(c.input())).seqNo()).isEqualTo(78);
      }

      // user messages: best effort over UDP, reliable over TCP
      byte[] udpMsg = "hello-udp".getBytes(StandardCharsets.UTF_8);
      t.sendPacket(goAddr, packets.encode(new UserMsg(udpMsg), true, false));
      awaitLine(lines, "msg " + Hex.of(udpMsg));
      byte[] tcpMsg = "hello-tcp".getBytes(StandardCharsets.UTF_8);
      try (StreamConnection c = t.openStream(goAddr, Duration.ofSeconds(5))) {
        c.setDeadline(Duration.ofSeconds(5));
        streams.writeLabelHeader(c.output());
        streams.write(c.output(), new UserMsg(tcpMsg), true);
      }
      awaitLine(lines, "msg " + Hex.of(tcpMsg));

      // graceful leave: dead about ourselves from ourselves
      t.sendPacket(goAddr, packets.encode(new Dead(1, "java1", "java1"), true, true));
      awaitLine(lines, "leave java1");

      assertThat(errors).isEmpty();
      assertThat(packets.droppedCompoundParts()).isZero();
      assertThat(t.stats().packetsReceived()).isGreaterThanOrEqualTo(6);
    } finally {
      goStdin.close();
      if (!go.waitFor(5, TimeUnit.SECONDS)) {
        go.destroyForcibly();
      }
    }
  }

  private static String awaitLine(BlockingQueue<String> lines, String prefix) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    StringBuilder seen = new StringBuilder();
    while (System.nanoTime() < deadline) {
      String l = lines.poll(100, TimeUnit.MILLISECONDS);
      if (l == null) {
        continue;
      }
      if (l.startsWith(prefix)) {
        return l;
      }
      seen.append("\n  ").append(l);
    }
    throw new AssertionError("Go node never printed \"" + prefix + "…\"; it printed:" + seen);
  }
}
