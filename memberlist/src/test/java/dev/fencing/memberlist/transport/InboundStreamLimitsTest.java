package dev.fencing.memberlist.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The caps {@link NioTransport} puts on inbound streams: how many at once, and for how long each. */
class InboundStreamLimitsTest {
  private static final InetSocketAddress LOOPBACK_ANY_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

  private final Refusals refusals = new Refusals("t", System::nanoTime);
  private final List<Socket> clients = new ArrayList<>();
  private NioTransport transport;

  @AfterEach
  void closeAll() throws IOException {
    for (Socket s : clients) {
      s.close();
    }
    if (transport != null) {
      transport.close();
    }
  }

  private Socket dial() throws IOException {
    Socket s = new Socket(transport.localAddress().getAddress(), transport.localAddress().getPort());
    s.setSoTimeout(5000);
    clients.add(s);
    return s;
  }

  /** True when the server closed {@code s}: the read sees end-of-stream or a reset. */
  private static boolean closedByServer(Socket s) {
    try {
      return s.getInputStream().read() < 0;
    } catch (SocketException reset) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Sends {@code request} on {@code s} and reads one byte back: -1 when the server hung up instead. */
  private static int answerTo(Socket s, int request) {
    try {
      s.getOutputStream().write(request);
      s.getOutputStream().flush();
      return s.getInputStream().read();
    } catch (IOException hungUp) {
      return -1;
    }
  }

  @Test
  void aNewcomerEvictsTheOldestIdleStreamAndIsClosedWhenEveryStreamIsEstablished() throws Exception {
    transport = NioTransport.bind(LOOPBACK_ANY_PORT, null, new InboundStreamLimits(2, Duration.ofSeconds(30)), refusals);
    BlockingQueue<StreamConnection> served = new LinkedBlockingQueue<>();
    transport.start((p, f, t) -> {}, served::add);
    Socket first = dial();
    StreamConnection firstServed = served.poll(5, TimeUnit.SECONDS);
    dial();
    StreamConnection second = served.poll(5, TimeUnit.SECONDS);
    assertThat(firstServed).isNotNull();
    assertThat(second).isNotNull();

    // full of streams that sent nothing: the oldest makes room
    dial();
    StreamConnection third = served.poll(5, TimeUnit.SECONDS);
    assertThat(third).as("the newcomer is served").isNotNull();
    assertThat(closedByServer(first)).as("the oldest idle stream is closed").isTrue();
    assertThat(transport.stats().streamsEvicted()).isEqualTo(1);
    assertThat(refusals.count(Limit.INBOUND_STREAMS)).isEqualTo(1);

    // full of streams that delivered their first message: the newcomer is closed at once
    second.markEstablished();
    third.markEstablished();
    Socket fourth = dial();
    assertThat(closedByServer(fourth)).isTrue();
    assertThat(served).isEmpty();
    assertThat(transport.stats().streamsRejected()).isEqualTo(1);
    assertThat(transport.stats().streamsEvicted()).isEqualTo(1);
    assertThat(refusals.count(Limit.INBOUND_STREAMS)).isEqualTo(2);

    // a finished stream frees its slot
    second.close();
    dial();
    assertThat(served.poll(5, TimeUnit.SECONDS)).isNotNull();
    await().atMost(Duration.ofSeconds(5)).until(() -> transport.stats().streamsAccepted() == 4);
  }

  /**
   * Connections that send nothing (a host without the key needs nothing more) cannot keep a member from a slot: each
   * newcomer replaces the oldest of them, and the member, whose request arrives at once, is served.
   */
  @Test
  void idleStrangersCannotLockAMemberOutOfItsStreamSlots() throws Exception {
    transport =
        NioTransport.bind(LOOPBACK_ANY_PORT, null, new InboundStreamLimits(16, Duration.ofSeconds(30)), refusals);
    transport.start((p, f, t) -> {}, conn -> {
      try {
        // as Memberlist.onStream: wait for the request, and once it is in, keep the slot and answer
        int request = conn.input().read();
        if (request >= 0) {
          conn.markEstablished();
          conn.output().write(request + 1);
          conn.output().flush();
        }
      } catch (IOException closed) {
        // evicted or expired
      }
    });
    List<Socket> strangers = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      strangers.add(dial());
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> transport.stats().streamsAccepted() == 16);

    assertThat(answerTo(dial(), 41)).as("the member is answered").isEqualTo(42);
    assertThat(closedByServer(strangers.get(0))).as("the oldest stranger made room").isTrue();
    assertThat(transport.stats().streamsRejected()).isZero();
  }

  @Test
  void aTricklingConnectionIsClosedAtItsDeadlineEvenIfItsHandlerAsksForMore() throws Exception {
    transport =
        NioTransport.bind(LOOPBACK_ANY_PORT, null, new InboundStreamLimits(4, Duration.ofMillis(600)), refusals);
    AtomicReference<Long> readFor = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    transport.start(
        (p, f, t) -> {},
        conn -> {
          long start = System.nanoTime();
          try (conn) {
            conn.setDeadline(Duration.ofSeconds(60)); // cannot extend the accept-time deadline
            InputStream in = conn.input();
            while (in.read() >= 0) {
              // a slow-loris: one byte now and then, never a whole message
            }
          } catch (IOException expected) {
            // the deadline closed the connection under the blocked read
          } finally {
            readFor.set(System.nanoTime() - start);
            done.countDown();
          }
        });
    Socket loris = dial();
    OutputStream out = loris.getOutputStream();
    long start = System.nanoTime();
    // trickle a byte every 100 ms for at most 10 s; the server must hang up long before that
    while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10) && done.getCount() > 0) {
      try {
        out.write(1);
        out.flush();
      } catch (IOException closed) {
        break;
      }
      done.await(100, TimeUnit.MILLISECONDS);
    }
    assertThat(done.await(1, TimeUnit.SECONDS)).isTrue();
    assertThat(Duration.ofNanos(readFor.get())).isLessThan(Duration.ofSeconds(10));
    await().atMost(Duration.ofSeconds(5)).until(() -> refusals.count(Limit.STREAM_DEADLINE) == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> closedByServer(loris));
  }

  @Test
  void anErrorInAPacketHandlerReachesTheThreadsUncaughtExceptionHandler() throws Exception {
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    BlockingQueue<Throwable> uncaught = new LinkedBlockingQueue<>();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
    try {
      transport = NioTransport.bind(LOOPBACK_ANY_PORT);
      transport.start(
          (p, f, t) -> {
            throw new StackOverflowError("from the packet handler");
          },
          c -> {});
      try (java.net.DatagramSocket s = new java.net.DatagramSocket()) {
        byte[] one = {1};
        s.send(new java.net.DatagramPacket(one, 1, transport.localAddress()));
      }
      assertThat(uncaught.poll(5, TimeUnit.SECONDS)).isInstanceOf(StackOverflowError.class);
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
  }

  @Test
  void anErrorInADeadlineTaskIsReportedNotKeptInItsFuture() throws Exception {
    BlockingQueue<Throwable> uncaught = new LinkedBlockingQueue<>();
    Runnable task = ThreadErrors.reported(() -> {
      throw new OutOfMemoryError("in a deadline");
    });
    java.util.concurrent.ScheduledExecutorService executor =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "deadline-test");
          t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
          return t;
        });
    try {
      executor.schedule(task, 0, TimeUnit.MILLISECONDS);
      assertThat(uncaught.poll(5, TimeUnit.SECONDS)).isInstanceOf(OutOfMemoryError.class);
    } finally {
      executor.shutdownNow();
    }
  }
}
