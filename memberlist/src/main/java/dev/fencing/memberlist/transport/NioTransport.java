package dev.fencing.memberlist.transport;

import dev.fencing.memberlist.limits.DropLog;
import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import java.io.IOException;
import java.net.BindException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * memberlist's network transport: one UDP socket and one TCP listener on the same port, like Go memberlist's
 * NetTransport. Datagrams are received on a dedicated thread and stamped with {@link System#nanoTime()} on
 * arrival; inbound connections are handed to stream workers.
 *
 * <p>Inbound streams are bounded by {@link InboundStreamLimits}: at most {@code maxInboundStreams} are open at once,
 * and each is closed when its deadline, counted from the accept, passes, however slowly it trickles bytes. When all
 * slots are held, a new connection takes the slot of the oldest stream whose first message has not been read yet
 * ({@link StreamConnection#markEstablished}), which is closed; only when every stream has delivered its first message
 * is the new connection closed right after its accept, before a buffer is allocated for it. So connections that send
 * nothing, or nothing that decrypts, cannot keep a member from a slot for longer than it takes to open one more.
 * Deadlines are enforced by closing the connection, which fails any blocked read or write with an IOException.
 * Encrypted frames of first messages share {@link InboundStreamLimits#maxInboundFrameBytes()} ({@link
 * InboundFrameBudget}): a frame that does not fit closes the stream holding the oldest reservation, and is refused if
 * no room frees in time. Evictions, refusals and expiries are counted and logged in {@link Refusals}.
 *
 * <p>Bad input reaches the handlers, whose {@link RuntimeException}s are logged and survived; an {@link Error}
 * (OutOfMemoryError, StackOverflowError) is never caught here: it ends the receiving thread through its uncaught
 * exception handler, which in the agent ends the process.
 */
public final class NioTransport implements Transport {
  /** Largest datagram read (memberlist's {@code udpPacketBufSize}). */
  public static final int UDP_PACKET_BUFFER_SIZE = 65536;
  /** Requested UDP receive buffer (memberlist's {@code udpRecvBufSize}). */
  public static final int UDP_RECEIVE_BUFFER_SIZE = 2 * 1024 * 1024;
  /** Connections the kernel queues before {@link #start} or while the accept thread is busy. */
  static final int ACCEPT_BACKLOG = 128;

  private static final Logger LOG = LoggerFactory.getLogger(NioTransport.class);
  private static final int EPHEMERAL_BIND_ATTEMPTS = 16;
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final DatagramChannel udp;
  private final ServerSocketChannel tcp;
  private final InetSocketAddress bound;
  private final InetSocketAddress advertised;
  private final String name;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Set<NioStreamConnection> open = ConcurrentHashMap.newKeySet();
  /** Inbound streams whose first message has not been read, oldest accept first: the ones a newcomer may evict. */
  private final Queue<NioStreamConnection> awaitingFirstMessage = new ConcurrentLinkedQueue<>();
  private final InboundStreamLimits limits;
  private final Refusals refusals;
  private final Semaphore inboundPermits;
  private final InboundFrameBudget frameBudget;
  private final ScheduledExecutorService deadlines;
  private final ThreadPoolExecutor workers;

  /**
   * How long an idle stream worker lives. Below the core size the pool starts a thread per stream even when others
   * idle, so a long keep-alive leaves one parked thread (stack and all) per recent push/pull; a thread costs less to
   * start than to keep for a push/pull interval.
   */
  static final java.time.Duration STREAM_WORKER_IDLE = java.time.Duration.ofSeconds(1);
  private Thread udpThread;
  private Thread acceptThread;

  // One per loop thread: the pause and log rate after failed receives and accepts.
  private final FailureBackoff receiveFailures = new FailureBackoff();
  private final FailureBackoff acceptFailures = new FailureBackoff();
  private final AtomicLong packetsSent = new AtomicLong();
  private final AtomicLong packetBytesSent = new AtomicLong();
  private final AtomicLong packetSendErrors = new AtomicLong();
  private final AtomicLong packetsReceived = new AtomicLong();
  private final AtomicLong packetBytesReceived = new AtomicLong();
  private final AtomicLong streamsOpened = new AtomicLong();
  private final AtomicLong streamsAccepted = new AtomicLong();
  private final AtomicLong streamsRejected = new AtomicLong();
  private final AtomicLong streamsEvicted = new AtomicLong();
  private final DropLog strangers = new DropLog(System::nanoTime);
  private volatile java.util.function.Predicate<InetAddress> acceptFrom = a -> true;
  final AtomicLong streamBytesSent = new AtomicLong();
  final AtomicLong streamBytesReceived = new AtomicLong();

  private NioTransport(
      DatagramChannel udp,
      ServerSocketChannel tcp,
      InetSocketAddress advertise,
      InboundStreamLimits limits,
      Refusals refusals)
      throws IOException {
    this.udp = udp;
    this.tcp = tcp;
    this.bound = (InetSocketAddress) tcp.getLocalAddress();
    this.advertised = advertise != null ? advertise : advertisable(bound);
    this.name = "memberlist-" + INSTANCES.incrementAndGet() + "-" + bound.getPort();
    this.limits = limits;
    this.refusals = refusals;
    this.inboundPermits = new Semaphore(limits.maxInboundStreams());
    this.frameBudget = new InboundFrameBudget(limits.maxInboundFrameBytes(),
        InboundStreamLimits.FRAME_BUDGET_WAIT.toNanos(), System::nanoTime, this::evictForFrame);
    ScheduledThreadPoolExecutor deadlineThread = new ScheduledThreadPoolExecutor(1, daemon(name + "-deadline"));
    // every inbound stream schedules a deadline and most cancel it: drop cancelled ones now, not when they are due
    deadlineThread.setRemoveOnCancelPolicy(true);
    this.deadlines = deadlineThread;
    // the permits bound the open streams; the queue only holds a stream whose worker is still finishing the last
    this.workers =
        new ThreadPoolExecutor(
            limits.maxInboundStreams(),
            limits.maxInboundStreams(),
            STREAM_WORKER_IDLE.toMillis(),
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            daemon(name + "-stream"));
    this.workers.allowCoreThreadTimeOut(true);
  }

  /** Binds UDP and TCP on {@code bind} (port 0 = a free port common to both), advertising the bound address. */
  public static NioTransport bind(InetSocketAddress bind) throws IOException {
    return bind(bind, null);
  }

  /** As {@link #bind(InetSocketAddress, InetSocketAddress, InboundStreamLimits, Refusals)} with default limits. */
  public static NioTransport bind(InetSocketAddress bind, InetSocketAddress advertise) throws IOException {
    return bind(bind, advertise, InboundStreamLimits.defaults(), new Refusals("", System::nanoTime));
  }

  /**
   * Binds UDP and TCP on {@code bind}. With port 0, TCP takes an ephemeral port first and UDP then binds the same
   * number, retrying with a new port if it is taken.
   *
   * @param advertise the address peers should use (NAT, wildcard bind), or null to derive it from the bind address
   * @param limits caps on inbound streams
   * @param refusals where refused and expired inbound streams are counted and logged
   * @throws IOException if the port cannot be bound for both protocols
   */
  public static NioTransport bind(
      InetSocketAddress bind, InetSocketAddress advertise, InboundStreamLimits limits, Refusals refusals)
      throws IOException {
    int attempts = bind.getPort() == 0 ? EPHEMERAL_BIND_ATTEMPTS : 1;
    IOException last = null;
    for (int i = 0; i < attempts; i++) {
      ServerSocketChannel tcp = ServerSocketChannel.open();
      DatagramChannel udp = null;
      try {
        tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        tcp.bind(bind, ACCEPT_BACKLOG);
        int port = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
        udp = DatagramChannel.open();
        udp.bind(new InetSocketAddress(bind.getAddress(), port));
        setReceiveBuffer(udp);
        return new NioTransport(udp, tcp, advertise, limits, refusals);
      } catch (IOException e) {
        last = e;
        tcp.close();
        if (udp != null) {
          udp.close();
        }
        if (!(e instanceof BindException) || bind.getPort() != 0) {
          break;
        }
      }
    }
    throw new IOException("cannot bind UDP and TCP on " + bind + ": " + (last == null ? "" : last.getMessage()), last);
  }

  private static void setReceiveBuffer(DatagramChannel udp) {
    for (int size = UDP_RECEIVE_BUFFER_SIZE; size >= 64 * 1024; size /= 2) {
      try {
        udp.setOption(StandardSocketOptions.SO_RCVBUF, size);
        return;
      } catch (IOException | IllegalArgumentException e) {
        LOG.debug("event=udp_rcvbuf_rejected size={} reason=\"{}\"", size, e.getMessage());
      }
    }
  }

  /** For a wildcard bind, the first site-local IPv4 address of this host (as memberlist does), else loopback. */
  private static InetSocketAddress advertisable(InetSocketAddress bound) throws SocketException {
    if (!bound.getAddress().isAnyLocalAddress()) {
      return bound;
    }
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (InetAddress a : Collections.list(nic.getInetAddresses())) {
        if (a instanceof Inet4Address && a.isSiteLocalAddress()) {
          return new InetSocketAddress(a, bound.getPort());
        }
      }
    }
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), bound.getPort());
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public void start(PacketHandler packets, StreamHandler streams) {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("transport " + name + " already started");
    }
    udpThread = new Thread(() -> receivePackets(packets), name + "-udp");
    udpThread.setDaemon(true);
    acceptThread = new Thread(() -> acceptStreams(streams), name + "-accept");
    acceptThread.setDaemon(true);
    udpThread.start();
    acceptThread.start();
    LOG.info("event=transport_started bind={} advertise={}", bound, advertised);
  }

  private void receivePackets(PacketHandler handler) {
    ByteBuffer buf = ByteBuffer.allocateDirect(UDP_PACKET_BUFFER_SIZE);
    // One packet per call: this loop never returns, so its own bytecode runs in the interpreter until the JVM
    // replaces it on the stack (by default after 60 000 rounds with C1 only: hours at an idle group's packet rate),
    // while receiveOne is compiled after a few hundred packets.
    while (!closed.get() && receiveOne(handler, buf)) {
      // next packet
    }
  }

  /** Receives one packet into {@code buf} and hands it over; false once the channel is closed. */
  private boolean receiveOne(PacketHandler handler, ByteBuffer buf) {
    InetSocketAddress from;
    try {
      buf.clear();
      from = (InetSocketAddress) udp.receive(buf);
    } catch (ClosedChannelException e) {
      return false;
    } catch (IOException e) {
      afterFailure(receiveFailures, "udp_receive_failed", e);
      return true;
    }
    receiveFailures.succeeded();
    if (!acceptFrom.test(from.getAddress())) {
      strangerDropped(from);
      return true;
    }
    long now = System.nanoTime();
    buf.flip();
    byte[] packet = new byte[buf.remaining()];
    buf.get(packet);
    packetsReceived.incrementAndGet();
    packetBytesReceived.addAndGet(packet.length);
    if (packet.length == 0) {
      return true;
    }
    try {
      handler.onPacket(packet, from, now);
    } catch (RuntimeException e) {
      LOG.error("event=packet_handler_failed from={} bytes={}", from, packet.length, e);
    }
    return true;
  }

  private void acceptStreams(StreamHandler handler) {
    while (!closed.get()) {
      SocketChannel ch;
      try {
        ch = tcp.accept();
      } catch (ClosedChannelException e) {
        break;
      } catch (IOException e) {
        // e.g. EMFILE: the connection stays queued and the next accept fails at once.
        afterFailure(acceptFailures, "tcp_accept_failed", e);
        continue;
      }
      acceptFailures.succeeded();
      if (!inboundPermits.tryAcquire() && !evictOldestAwaitingFirstMessage(ch)) {
        streamsRejected.incrementAndGet();
        refusals.refused(
            Limit.INBOUND_STREAMS,
            "closed a connection from " + remoteOf(ch) + ": " + limits.maxInboundStreams()
                + " inbound streams open, each past its first message");
        closeQuietly(ch);
        continue;
      }
      NioStreamConnection conn;
      try {
        conn = register(ch, System.nanoTime() + limits.streamDeadline().toNanos());
      } catch (IOException e) {
        LOG.debug("event=tcp_accept_setup_failed reason=\"{}\"", e.getMessage());
        inboundPermits.release();
        closeQuietly(ch);
        continue;
      }
      try {
        workers.execute(() -> serve(handler, conn));
        streamsAccepted.incrementAndGet();
      } catch (RejectedExecutionException e) {
        LOG.debug("event=stream_dropped from={} reason=\"transport closing\"", conn.remoteAddress());
        conn.close();
      }
    }
  }

  /**
   * Closes the oldest inbound stream still without a complete first message and passes its slot to {@code newcomer},
   * so that connections that send nothing cannot keep members out (a member's request arrives at once).
   *
   * @return false if every inbound stream has delivered its first message: they keep their slots
   */
  private boolean evictOldestAwaitingFirstMessage(SocketChannel newcomer) {
    NioStreamConnection oldest;
    while ((oldest = awaitingFirstMessage.poll()) != null) {
      // a stream established or closed since it was queued keeps or has given back its own slot: skip it
      if (oldest.giveUpSlot()) {
        streamsEvicted.incrementAndGet();
        refusals.refused(
            Limit.INBOUND_STREAMS,
            "closed the connection from " + oldest.remoteAddress() + ", still without a complete message, to make"
                + " room for " + remoteOf(newcomer) + ": " + limits.maxInboundStreams() + " inbound streams open");
        oldest.close();
        return true;
      }
    }
    return false;
  }

  /**
   * Reads datagrams only from sources {@code filter} accepts; the rest is dropped before any decryption or decoding
   * (counted in {@link #packetsFromStrangers()}, logged at most once per
   * {@link dev.fencing.memberlist.limits.Refusals#LOG_INTERVAL}). May be replaced at any time (the expected members
   * change). Datagrams only: a datagram leaves from the sender's bound address, a TCP connection from whatever source
   * address the sender's kernel picks for the route (memberlist dials without binding), so streams keep their own
   * limits ({@link InboundStreamLimits}).
   */
  public void acceptOnlyFrom(java.util.function.Predicate<InetAddress> filter) {
    this.acceptFrom = java.util.Objects.requireNonNull(filter, "filter");
  }

  /** Datagrams dropped unread: their source is no address {@link #acceptOnlyFrom} accepts. */
  public long packetsFromStrangers() {
    return strangers.total();
  }

  private void strangerDropped(InetSocketAddress from) {
    DropLog.Line line = strangers.dropped();
    if (line != null) {
      LOG.warn("event=gossip_from_stranger from={} dropped_total={} not_logged={} reason=\"not an expected member's"
          + " address: dropped unread\"", from, line.total(), line.notLogged());
    }
  }

  /**
   * A receive or accept failed (not by a close): logs it as {@code event} when {@code backoff} says so, then pauses
   * for as long as it says.
   */
  private void afterFailure(FailureBackoff backoff, String event, IOException e) {
    if (closed.get()) {
      return;
    }
    FailureBackoff.Step step = backoff.failed(System.nanoTime());
    if (step.log()) {
      LOG.warn("event={} reason=\"{}\" retry_in_ms={} failures_not_logged={}", event, e.getMessage(),
          step.pauseNanos() / 1_000_000, step.unlogged());
    }
    pause(step.pauseNanos());
  }

  /** Waits {@code nanos} after a failed receive or accept, or until {@link #close} (which unparks the loops). */
  private void pause(long nanos) {
    long until = System.nanoTime() + nanos;
    long left;
    while (!closed.get() && !Thread.currentThread().isInterrupted() && (left = until - System.nanoTime()) > 0) {
      LockSupport.parkNanos(this, left);
    }
  }

  private static String remoteOf(SocketChannel ch) {
    try {
      return String.valueOf(ch.getRemoteAddress());
    } catch (IOException e) {
      return "?";
    }
  }

  /** Room for an encrypted first-message frame of {@code conn}, see {@link InboundFrameBudget#reserve}. */
  boolean reserveFrame(NioStreamConnection conn, int bytes) {
    return frameBudget.reserve(conn, bytes);
  }

  void releaseFrame(NioStreamConnection conn, int bytes) {
    frameBudget.release(conn, bytes);
  }

  private void evictForFrame(NioStreamConnection victim, NioStreamConnection newcomer) {
    streamsEvicted.incrementAndGet();
    refusals.refused(
        Limit.INBOUND_FRAME_BYTES,
        "closed the connection from " + victim.remoteAddress() + ", still reading its first frame, to make room for"
            + " a frame from " + newcomer.remoteAddress() + ": " + frameBudget.inUse() + " of "
            + limits.maxInboundFrameBytes() + " bytes of inbound frames held");
    victim.close();
  }

  /** Bytes of encrypted inbound frames held now (reserved from their header until decoded). */
  public long inboundFrameBytes() {
    return frameBudget.inUse();
  }

  /** The most bytes of encrypted inbound frames held at once since bind. */
  public long inboundFrameBytesPeak() {
    return frameBudget.peak();
  }

  /** An inbound stream closed: its slot is free again. */
  void inboundClosed() {
    inboundPermits.release();
  }

  /** An inbound stream delivered its first message: it keeps its slot until it closes. */
  void inboundEstablished(NioStreamConnection conn) {
    awaitingFirstMessage.remove(conn);
  }

  /** An inbound stream's deadline passed before it finished. */
  void inboundExpired(InetSocketAddress remote) {
    refusals.refused(
        Limit.STREAM_DEADLINE,
        "closed a connection from " + remote + " still open " + limits.streamDeadline().toMillis() + " ms after accept");
  }

  private void serve(StreamHandler handler, NioStreamConnection conn) {
    try {
      handler.onStream(conn);
    } catch (RuntimeException e) {
      LOG.error("event=stream_handler_failed from={}", conn.remoteAddress(), e);
      conn.close();
    }
  }

  /**
   * @param hardDeadlineNanos for an inbound stream, the {@link System#nanoTime()} at which it is closed whatever its
   *     handler asks; {@link NioStreamConnection#NO_DEADLINE} for an outbound one
   */
  private NioStreamConnection register(SocketChannel ch, long hardDeadlineNanos) throws IOException {
    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    NioStreamConnection conn = new NioStreamConnection(ch, this, hardDeadlineNanos);
    open.add(conn);
    if (hardDeadlineNanos != NioStreamConnection.NO_DEADLINE) {
      awaitingFirstMessage.add(conn);
    }
    if (closed.get()) {
      conn.close();
      throw new ClosedChannelException();
    }
    conn.armHardDeadline();
    return conn;
  }

  void unregister(NioStreamConnection conn) {
    open.remove(conn);
    awaitingFirstMessage.remove(conn);
  }

  ScheduledExecutorService deadlines() {
    return deadlines;
  }

  @Override
  public InetSocketAddress localAddress() {
    return advertised;
  }

  /** The address actually bound (may be a wildcard). */
  public InetSocketAddress boundAddress() {
    return bound;
  }

  @Override
  public boolean sendPacket(InetSocketAddress to, byte[] packet) {
    if (closed.get()) {
      packetSendErrors.incrementAndGet();
      return false;
    }
    try {
      int n = udp.send(ByteBuffer.wrap(packet), to);
      if (n == packet.length) {
        packetsSent.incrementAndGet();
        packetBytesSent.addAndGet(n);
        return true;
      }
      packetSendErrors.incrementAndGet();
      LOG.debug("event=udp_send_dropped to={} bytes={} reason=\"no buffer space\"", to, packet.length);
      return false;
    } catch (IOException | RuntimeException e) {
      // unresolved or unsupported addresses surface as unchecked exceptions from the channel; all are send failures
      packetSendErrors.incrementAndGet();
      LOG.debug("event=udp_send_failed to={} bytes={} reason=\"{}\"", to, packet.length, e.toString());
      return false;
    }
  }

  @Override
  public StreamConnection openStream(InetSocketAddress to, Duration timeout) throws IOException {
    if (closed.get()) {
      throw new ClosedChannelException();
    }
    if (to.isUnresolved()) {
      throw new IOException("cannot dial unresolved address " + to);
    }
    SocketChannel ch = SocketChannel.open();
    try {
      ch.socket().connect(to, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
      NioStreamConnection conn = register(ch, NioStreamConnection.NO_DEADLINE);
      streamsOpened.incrementAndGet();
      return conn;
    } catch (IOException e) {
      closeQuietly(ch);
      throw new IOException("cannot connect to " + to + ": " + e.getMessage(), e);
    }
  }

  /** Traffic counters since bind. */
  public TransportStats stats() {
    return new TransportStats(
        packetsSent.get(),
        packetBytesSent.get(),
        packetSendErrors.get(),
        packetsReceived.get(),
        packetBytesReceived.get(),
        streamsOpened.get(),
        streamsAccepted.get(),
        streamsRejected.get(),
        streamsEvicted.get(),
        streamBytesSent.get(),
        streamBytesReceived.get());
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    closeQuietly(udp);
    closeQuietly(tcp);
    for (NioStreamConnection c : open) {
      c.close();
    }
    workers.shutdownNow();
    deadlines.shutdownNow();
    for (Thread t : new Thread[] {udpThread, acceptThread}) {
      if (t != null) {
        LockSupport.unpark(t); // a loop pausing after a failure
      }
    }
    for (Thread t : new Thread[] {udpThread, acceptThread}) {
      if (t != null) {
        try {
          t.join(2000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    LOG.info("event=transport_closed bind={}", bound);
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      LOG.debug("event=close_failed reason=\"{}\"", e.getMessage());
    }
  }
}
