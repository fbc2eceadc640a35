package dev.fencing.memberlist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.codec.WireLimits;
import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import dev.fencing.memberlist.transport.NioTransport;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The resource-limit fields of {@link Config} and their effect on a running node. */
class ResourceLimitsTest {
  @Test
  void configDefaultsAreTheCodecAndTransportDefaults() {
    Config c = Config.defaultLan();
    assertThat(c.wireLimits()).isEqualTo(WireLimits.defaults());
    assertThat(c.maxInboundStreams()).isEqualTo(16);
    assertThat(c.inboundStreamLimits().streamDeadline()).isEqualTo(c.tcpTimeout());
    Config tuned = c.toBuilder().maxStreamMessageBytes(4096).maxInboundStreams(3).build();
    assertThat(tuned.wireLimits().maxStreamMessageBytes()).isEqualTo(4096);
    assertThat(tuned.toBuilder().build().inboundStreamLimits().maxInboundStreams()).isEqualTo(3);
    assertThatThrownBy(() -> c.toBuilder().maxDecompressedBytes(0).build()).hasMessageContaining("maxDecompressedBytes");
    assertThatThrownBy(() -> c.toBuilder().maxInboundStreams(-1).build()).hasMessageContaining("maxInboundStreams");
  }

  @Test
  void aNodeRefusesA20MiBFrameAndKeepsServingItsPeers() throws Exception {
    Keyring keys = new Keyring(new byte[16]);
    Config base = Config.defaultLocal().toBuilder().bindAddr("127.0.0.1").bindPort(0).keyring(keys).build();
    try (Memberlist a = Memberlist.create(base.toBuilder().name("a").build());
        Memberlist b = Memberlist.create(base.toBuilder().name("b").build())) {
      Node self = a.localNode();
      try (Socket s = new Socket(self.address().getAddress(), self.address().getPort())) {
        OutputStream out = s.getOutputStream();
        out.write(new byte[] {10, 0x01, 0x40, 0x00, 0x00}); // [encrypt][20 MiB], and then a trickle
        out.write(new byte[64 << 10]);
        out.flush();
        s.setSoTimeout(5000);
        assertThat(s.getInputStream().read()).isEqualTo(-1);
      } catch (IOException reset) {
        // a reset is as good as an orderly close: the node hung up
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> a.refusals().get(Limit.STREAM_MESSAGE_BYTES) == 1L);
      assertThat(b.join(List.of(self.hostPort()))).isEqualTo(1);
      await().atMost(Duration.ofSeconds(10)).until(() -> a.members().size() == 2);
    }
  }

  /**
   * Sixteen connections that send nothing (all a host without the key needs) hold every inbound stream slot of a
   * node, and each would stay up to tcpTimeout: a member still joins, because its connection replaces the oldest of
   * them, and its push/pull, once read and authenticated, keeps its slot.
   */
  @Test
  void aMemberJoinsANodeWhoseStreamSlotsAreAllHeldByIdleStrangers() throws Exception {
    Config base = Config.defaultLocal().toBuilder().bindAddr("127.0.0.1").bindPort(0)
        .keyring(new Keyring(new byte[16])).tcpTimeout(Duration.ofSeconds(30)).build();
    NioTransport transport = NioTransport.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null,
        base.inboundStreamLimits(), new Refusals("a", System::nanoTime));
    List<Socket> strangers = new ArrayList<>();
    try (Memberlist a = Memberlist.create(base.toBuilder().name("a").transport(transport).build());
        Memberlist b = Memberlist.create(base.toBuilder().name("b").build())) {
      for (int i = 0; i < base.maxInboundStreams(); i++) {
        strangers.add(new Socket(transport.localAddress().getAddress(), transport.localAddress().getPort()));
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> transport.stats().streamsAccepted() == 16);

      assertThat(b.join(List.of(a.localNode().hostPort()))).isEqualTo(1);
      await().atMost(Duration.ofSeconds(10)).until(() -> a.members().size() == 2 && b.members().size() == 2);
      assertThat(transport.stats().streamsEvicted()).isPositive();
      assertThat(transport.stats().streamsRejected()).isZero();
    } finally {
      for (Socket s : strangers) {
        s.close();
      }
    }
  }

  /**
   * Datagrams that do not decode (here: random bytes at a node with a keyring) are dropped and counted each, but
   * logged at most once per interval: a warning per packet, written on the receive thread, slowed it until the
   * kernel dropped the quorum heartbeats it also receives.
   */
  @Test
  void junkDatagramsAreCountedEachButLoggedOncePerInterval() throws Exception {
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Memberlist.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> captured =
        new ch.qos.logback.core.read.ListAppender<>();
    captured.start();
    logger.addAppender(captured);
    Keyring keys = new Keyring(new byte[16]);
    Config config = Config.defaultLocal().toBuilder().bindAddr("127.0.0.1").bindPort(0).keyring(keys).name("a")
        .build();
    try (Memberlist a = Memberlist.create(config);
        java.net.DatagramSocket sender = new java.net.DatagramSocket()) {
      java.util.Random random = new java.util.Random(7);
      for (int i = 0; i < 2000; i++) {
        byte[] junk = new byte[60];
        random.nextBytes(junk);
        sender.send(new java.net.DatagramPacket(junk, junk.length, a.localNode().address()));
        if (i % 200 == 199) {
          Thread.sleep(5); // do not outrun the socket buffer: every datagram should arrive
        }
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().malformedPackets() >= 1000);
      long dropped = a.stats().malformedPackets();
      List<String> lines = captured.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
          .filter(m -> m.startsWith("event=packet_dropped")).toList();
      assertThat(lines).as("%d datagrams dropped", dropped).hasSize(1);
      assertThat(lines.get(0)).contains("dropped_total=1 not_logged=0");
    } finally {
      logger.detachAppender(captured);
    }
  }

  /**
   * Sixteen streams without the key each send all but the last byte of a sealed frame just under the 1 MiB cap, as
   * if to release the last bytes together: before the frame budget each held its frame (and would have decrypted
   * into a second 1 MiB buffer), 16 frames and 16 plaintexts at once. Now the frames share {@code
   * maxInboundFrameBytes} (4 MiB): each that does not fit closes the stream holding the oldest reservation, so at most
   * four strangers hold a frame, and a member's push/pull, arriving meanwhile, still finds room and joins.
   */
  @Test
  void keylessMiBFramesShareTheFrameBudgetAndAMemberStillJoins() throws Exception {
    Config base = Config.defaultLocal().toBuilder().bindAddr("127.0.0.1").bindPort(0)
        .keyring(new Keyring(new byte[16])).tcpTimeout(Duration.ofSeconds(30)).build();
    Refusals refusals = new Refusals("a", System::nanoTime);
    NioTransport transport = NioTransport.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null,
        base.inboundStreamLimits(), refusals);
    int len = (1 << 20) - 64;
    byte[] frame = new byte[5 + len];
    frame[0] = 10;
    java.nio.ByteBuffer.wrap(frame, 1, 4).putInt(len);
    new java.util.SplittableRandom(20261124L).nextBytes(frame);
    frame[0] = 10;
    java.nio.ByteBuffer.wrap(frame, 1, 4).putInt(len);
    frame[5] = 1; // encryption version 1; the rest never authenticates
    List<Socket> strangers = new ArrayList<>();
    try (Memberlist a = Memberlist.create(base.toBuilder().name("a").transport(transport).build());
        Memberlist b = Memberlist.create(base.toBuilder().name("b").build())) {
      for (int i = 0; i < base.maxInboundStreams(); i++) {
        Socket s = new Socket(transport.localAddress().getAddress(), transport.localAddress().getPort());
        strangers.add(s);
        try {
          s.getOutputStream().write(frame, 0, frame.length - 1);
        } catch (IOException closedByNode) {
          // evicted while still sending: what the budget is for
        }
      }
      await().atMost(Duration.ofSeconds(10))
          .until(() -> strangers.stream().filter(ResourceLimitsTest::closedByPeer).count() >= 12);

      assertThat(b.join(List.of(a.localNode().hostPort()))).isEqualTo(1);
      await().atMost(Duration.ofSeconds(10)).until(() -> a.members().size() == 2 && b.members().size() == 2);
      assertThat(transport.inboundFrameBytesPeak()).isLessThanOrEqualTo(base.maxInboundFrameBytes());
      assertThat(refusals.count(Limit.INBOUND_FRAME_BYTES)).isGreaterThanOrEqualTo(12);
    } finally {
      for (Socket s : strangers) {
        s.close();
      }
    }
  }

  /** True once the peer has closed {@code s} (end of stream or reset); waits at most 50 ms for news. */
  private static boolean closedByPeer(Socket s) {
    try {
      s.setSoTimeout(50);
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }
}
