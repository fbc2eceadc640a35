package dev.fencing.memberlist.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NioTransportTest {
  private static final InetSocketAddress LOOPBACK_ANY_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

  private NioTransport a;
  private NioTransport b;

  @AfterEach
  void closeAll() {
    if (a != null) {
      a.close();
    }
    if (b != null) {
      b.close();
    }
  }

  private static void hangUp(StreamConnection c) {
    try {
      c.close();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private record Received(byte[] packet, InetSocketAddress from, long nanos) {}

  @Test
  void packetsTravelBothWaysOnOnePortWithReceiveTimestamps() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    b = NioTransport.bind(LOOPBACK_ANY_PORT);
    BlockingQueue<Received> atB = new LinkedBlockingQueue<>();
    BlockingQueue<Received> atA = new LinkedBlockingQueue<>();
    a.start((p, from, t) -> atA.add(new Received(p, from, t)), NioTransportTest::hangUp);
    b.start((p, from, t) -> atB.add(new Received(p, from, t)), NioTransportTest::hangUp);
    assertThat(a.localAddress().getPort()).isEqualTo(a.boundAddress().getPort()).isPositive();

    long before = System.nanoTime();
    assertThat(a.sendPacket(b.localAddress(), new byte[] {1, 2, 3})).isTrue();
    Received r = atB.poll(5, TimeUnit.SECONDS);
    assertThat(r).isNotNull();
    assertThat(r.packet()).containsExactly(1, 2, 3);
    assertThat(r.from()).isEqualTo(a.localAddress());
    assertThat(r.nanos()).isBetween(before, System.nanoTime());

    assertThat(b.sendPacket(r.from(), new byte[1400])).isTrue();
    assertThat(atA.poll(5, TimeUnit.SECONDS).packet()).hasSize(1400);
    assertThat(a.stats().packetsSent()).isEqualTo(1);
    assertThat(a.stats().packetBytesSent()).isEqualTo(3);
    assertThat(a.stats().packetsReceived()).isEqualTo(1);
    assertThat(a.stats().packetBytesReceived()).isEqualTo(1400);
  }

  /**
   * With a source filter (the fencing agent: its expected members' addresses), datagrams from any other address are
   * dropped unread and counted: no decryption, no handler. Streams are not filtered: a dialer's source address is
   * whatever its kernel picks (memberlist dials without binding).
   */
  @Test
  void packetsFromAddressesTheFilterRefusesAreDroppedUnread() throws Exception {
    InetAddress member = InetAddress.getByName("127.0.0.2");
    InetAddress stranger = InetAddress.getByName("127.0.0.3");
    b = NioTransport.bind(LOOPBACK_ANY_PORT);
    b.acceptOnlyFrom(member::equals);
    BlockingQueue<Received> atB = new LinkedBlockingQueue<>();
    java.util.concurrent.atomic.AtomicInteger streams = new java.util.concurrent.atomic.AtomicInteger();
    b.start((p, from, t) -> atB.add(new Received(p, from, t)), c -> {
      streams.incrementAndGet();
      hangUp(c);
    });
    try (java.net.DatagramSocket fromStranger = new java.net.DatagramSocket(new InetSocketAddress(stranger, 0));
        java.net.DatagramSocket fromMember = new java.net.DatagramSocket(new InetSocketAddress(member, 0))) {
      for (int i = 0; i < 50; i++) {
        fromStranger.send(new java.net.DatagramPacket(new byte[1400], 1400, b.localAddress()));
      }
      fromMember.send(new java.net.DatagramPacket(new byte[] {7}, 1, b.localAddress()));
    }
    Received r = atB.poll(5, TimeUnit.SECONDS);
    assertThat(r.packet()).containsExactly(7);
    assertThat(r.from().getAddress()).isEqualTo(member);
    assertThat(atB.poll(200, TimeUnit.MILLISECONDS)).as("nothing from the stranger").isNull();
    assertThat(b.packetsFromStrangers()).isEqualTo(50);

    try (java.net.Socket s = new java.net.Socket()) {
      s.bind(new InetSocketAddress(stranger, 0));
      s.connect(b.localAddress(), 2000);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> streams.get() == 1);
  }

  @Test
  void sendPacketNeverThrowsOnNetworkErrors() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    assertThat(a.sendPacket(InetSocketAddress.createUnresolved("no-such-host.invalid", 7946), new byte[] {1}))
        .isFalse();
    assertThat(a.sendPacket(a.localAddress(), new byte[70_000])).isFalse();
    a.close();
    assertThat(a.sendPacket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 9), new byte[] {1})).isFalse();
    assertThat(a.stats().packetSendErrors()).isEqualTo(3);
    a.close();
  }

  @Test
  void streamsCarryARequestAndAReplyOnTheSamePort() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    b = NioTransport.bind(LOOPBACK_ANY_PORT);
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    b.start(
        (p, f, t) -> {},
        conn -> {
          try (conn) {
            conn.setDeadline(Duration.ofSeconds(5));
            byte[] request = conn.input().readNBytes(4);
            conn.output().write(new byte[] {request[3], request[2], request[1], request[0]});
            conn.output().flush();
          } catch (IOException e) {
            throw new AssertionError(e);
          }
        });
    try (StreamConnection c = a.openStream(b.localAddress(), Duration.ofSeconds(2))) {
      c.setDeadline(Duration.ofSeconds(5));
      c.output().write(new byte[] {1, 2, 3, 4});
      c.output().flush();
      assertThat(c.input().readNBytes(4)).containsExactly(4, 3, 2, 1);
      assertThat(c.input().read()).isEqualTo(-1);
      assertThat(c.remoteAddress()).isEqualTo(b.localAddress());
    }
    assertThat(a.stats().streamsOpened()).isEqualTo(1);
    assertThat(a.stats().streamBytesSent()).isEqualTo(4);
    assertThat(a.stats().streamBytesReceived()).isEqualTo(4);
    await().atMost(Duration.ofSeconds(5)).until(() -> b.stats().streamsAccepted() == 1);
  }

  @Test
  void idleStreamWorkersExitSoonAfterTheirStream() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    b = NioTransport.bind(LOOPBACK_ANY_PORT);
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    b.start((p, f, t) -> {}, NioTransportTest::hangUp);
    for (int i = 0; i < 3; i++) {
      try (StreamConnection c = a.openStream(b.localAddress(), Duration.ofSeconds(2))) {
        c.setDeadline(Duration.ofSeconds(5));
        assertThat(c.input().read()).isEqualTo(-1);
      }
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> b.stats().streamsAccepted() == 3);
    String workerPrefix = "memberlist-";
    String workerSuffix = "-" + b.boundAddress().getPort() + "-stream-";
    // Parked workers would stay for the keep-alive: with 30 s this waits in vain.
    await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .noneMatch(n -> n.startsWith(workerPrefix) && n.contains(workerSuffix)));
  }

  @Test
  void deadlineFailsABlockedRead() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    b = NioTransport.bind(LOOPBACK_ANY_PORT);
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    BlockingQueue<StreamConnection> held = new LinkedBlockingQueue<>();
    b.start((p, f, t) -> {}, held::add);
    StreamConnection c = a.openStream(b.localAddress(), Duration.ofSeconds(2));
    c.setDeadline(Duration.ofMillis(200));
    long start = System.nanoTime();
    InputStream in = c.input();
    assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("deadline");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    assertThatThrownBy(() -> c.setDeadline(Duration.ofSeconds(1))).isInstanceOf(IOException.class);
    held.take().close();
  }

  @Test
  void dialingAClosedPortFailsWithIoException() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    // A port that is bound but not listening refuses connections, and holding it for the whole dial keeps
    // it from being re-bound by another process or picked as the dial's own ephemeral source port (a
    // freed port could be either, and a self-connect would succeed).
    try (Socket holder = new Socket()) {
      holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      InetSocketAddress nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), holder.getLocalPort());
      assertThatThrownBy(() -> a.openStream(nobody, Duration.ofSeconds(1)))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("cannot connect");
    }
  }

  @Test
  void aTakenPortIsReportedAndCloseIsIdempotent() throws Exception {
    a = NioTransport.bind(LOOPBACK_ANY_PORT);
    assertThatThrownBy(() -> NioTransport.bind(a.boundAddress()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("cannot bind");
    a.start((p, f, t) -> {}, NioTransportTest::hangUp);
    a.close();
    a.close();
    assertThatThrownBy(() -> a.openStream(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1), Duration.ofSeconds(1)))
        .isInstanceOf(IOException.class);
  }
}
