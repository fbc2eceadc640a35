package dev.fencing.memberlist;

import dev.fencing.memberlist.codec.AckResp;
import dev.fencing.memberlist.codec.ErrResp;
import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.codec.LimitExceededException;
import dev.fencing.memberlist.codec.MalformedMessageException;
import dev.fencing.memberlist.codec.Message;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.codec.PacketCodec;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.codec.StreamCodec;
import dev.fencing.memberlist.codec.UserMsg;
import dev.fencing.memberlist.limits.DropLog;
import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import dev.fencing.memberlist.state.Clock;
import dev.fencing.memberlist.state.ProtocolCounters;
import dev.fencing.memberlist.state.ProtocolOutput;
import dev.fencing.memberlist.state.SwimProtocol;
import dev.fencing.memberlist.state.Timers;
import dev.fencing.memberlist.transport.NioTransport;
import dev.fencing.memberlist.transport.StreamConnection;
import dev.fencing.memberlist.transport.ThreadErrors;
import dev.fencing.memberlist.transport.Transport;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running memberlist node: gossip-based membership and failure detection (SWIM with Lifeguard), wire-compatible
 * with HashiCorp memberlist. Create one with {@link #create(Config)}, {@link #join(List)} a cluster, read {@link
 * #members()}, exchange user messages, and {@link #leave(Duration)} then {@link #shutdown()}.
 *
 * <p>Thread-safe. One protocol thread runs the timers of the state machine; inbound packets are handled on the
 * transport's receive thread and inbound streams on its workers, all serialised by one lock around the {@link
 * SwimProtocol}. User messages are handed to {@link Delegate#notifyMsg} as soon as they are decoded, outside that lock.
 * Delegates and event callbacks run on these threads and must return quickly.
 */
public final class Memberlist implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Memberlist.class);

  private final Config config;
  private final Transport transport;
  private final PacketCodec packetCodec;
  private final StreamCodec streamCodec;
  private final Refusals refusals;
  // Undecodable packets and rejected streams: logged at most once per interval each (anyone can send them).
  private final DropLog droppedPackets = new DropLog(System::nanoTime);
  private final DropLog rejectedStreams = new DropLog(System::nanoTime);
  private final ProtocolCounters counters = new ProtocolCounters();
  private final ReentrantLock lock = new ReentrantLock();
  private final ScheduledThreadPoolExecutor protocolThread;
  private final ExecutorService streamWorkers;
  private final SwimProtocol protocol;
  private volatile boolean shutdown;

  private Memberlist(Config config, Transport transport, InetSocketAddress advertise, Refusals refusals) {
    this.config = config;
    this.transport = transport;
    this.refusals = refusals;
    this.packetCodec = new PacketCodec(config.packetOptions(), config.wireLimits(), refusals);
    this.streamCodec = new StreamCodec(config.packetOptions(), config.wireLimits(), refusals);
    this.protocolThread = new ScheduledThreadPoolExecutor(1, daemonThreads("memberlist-protocol-" + config.name()));
    this.protocolThread.setRemoveOnCancelPolicy(true);
    this.streamWorkers = Executors.newCachedThreadPool(daemonThreads("memberlist-stream-" + config.name()));
    this.protocol =
        new SwimProtocol(
            config,
            addressBytes(advertise.getAddress()),
            advertise.getPort(),
            Clock.system(),
            this::schedule,
            new SplittableRandom(),
            MessageCodec::encode,
            new NetworkOutput(),
            counters);
  }

  /**
   * Creates and starts a node: binds the NIO UDP+TCP transport on {@link Config#bindAddr()}:{@link Config#bindPort()}
   * (unless {@link Config#transport()} supplies one) and begins probing and gossip. The node is alone until {@link
   * #join(List)}.
   *
   * @throws IOException if the transport cannot bind
   */
  public static Memberlist create(Config config) throws IOException {
    Refusals refusals = new Refusals(config.name(), System::nanoTime);
    Transport transport = config.transport();
    if (transport == null) {
      transport =
          NioTransport.bind(
              new InetSocketAddress(InetAddress.getByName(config.bindAddr()), config.bindPort()),
              null,
              config.inboundStreamLimits(),
              refusals);
      if (config.acceptFrom() != null) {
        ((NioTransport) transport).acceptOnlyFrom(config.acceptFrom());
      }
    }
    try {
      InetSocketAddress advertise = advertiseAddress(config, transport.localAddress());
      Memberlist m = new Memberlist(config, transport, advertise, refusals);
      m.start();
      LOG.info("event=memberlist_started node={} addr={}", config.name(), m.localNode().hostPort());
      return m;
    } catch (IOException | RuntimeException e) {
      transport.close();
      throw e;
    }
  }

  private void start() throws IOException {
    lock.lock();
    try {
      protocol.start();
      transport.start(this::onPacket, this::onStream);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Public API

  /**
   * Joins a cluster by a push/pull state exchange with each of the given peers.
   *
   * @param hostPorts entries {@code host:port}, {@code host} (port = {@link Config#bindPort()}) or {@code
   *     name/host:port} (memberlist's form; the name is ignored); a host name is resolved to all its addresses
   * @return how many peers were contacted successfully (at least 1)
   * @throws IOException if none was, with every peer's error
   */
  public int join(List<String> hostPorts) throws IOException {
    requireRunning();
    int success = 0;
    List<String> errors = new ArrayList<>();
    for (String entry : hostPorts) {
      List<InetSocketAddress> addresses;
      try {
        addresses = resolve(entry);
      } catch (IOException | IllegalArgumentException e) {
        errors.add(entry + ": " + e.getMessage());
        continue;
      }
      for (InetSocketAddress address : addresses) {
        try {
          pushPullJoin(address);
          success++;
        } catch (IOException | MalformedMessageException e) {
          errors.add(address + ": " + e.getMessage());
          LOG.warn("event=join_failed node={} peer={} error=\"{}\"", config.name(), address, e.getMessage());
        }
      }
    }
    if (success == 0) {
      throw new IOException("failed to join any of " + hostPorts + ": " + String.join("; ", errors));
    }
    return success;
  }

  /**
   * Leaves gracefully: broadcasts that this node left and waits until the broadcast was gossiped to its limit (or
   * {@code timeout} passed). The node keeps answering until {@link #shutdown()}.
   *
   * @return true if the leave was fully broadcast (or nobody else is alive), false on timeout
   */
  public boolean leave(Duration timeout) {
    requireRunning();
    CompletableFuture<Void> done = new CompletableFuture<>();
    boolean wait = locked(() -> protocol.leave(() -> done.complete(null)));
    return !wait || await(done, timeout, "leave");
  }

  /** Stops the node without telling anyone (others will detect it as failed unless it left first). Idempotent. */
  public void shutdown() {
    if (shutdown) {
      return;
    }
    shutdown = true;
    locked(
        () -> {
          protocol.stop();
          return null;
        });
    transport.close();
    protocolThread.shutdownNow();
    streamWorkers.shutdownNow();
    LOG.info("event=memberlist_shutdown node={}", config.name());
  }

  /** Same as {@link #shutdown()}. */
  @Override
  public void close() {
    shutdown();
  }

  /** Alive and suspect members, including this node. */
  public List<Node> members() {
    return locked(protocol::members);
  }

  /** Every known node including dead and left ones not reaped yet ({@link Config#gossipToTheDeadTime()}). */
  public List<Node> allNodes() {
    return locked(protocol::allNodes);
  }

  /** This node as peers see it. */
  public Node localNode() {
    return locked(protocol::localNode);
  }

  /** Number of alive and suspect members, including this node. */
  public int numMembers() {
    return locked(protocol::numMembers);
  }

  /** Lifeguard's local health score: 0 is healthy, up to AwarenessMaxMultiplier − 1. */
  public int healthScore() {
    return locked(protocol::healthScore);
  }

  /** Sends a user message to {@code to} in one UDP packet (best effort; delivered to its {@link Delegate#notifyMsg}). */
  public void sendBestEffort(Node to, byte[] msg) {
    requireRunning();
    locked(
        () -> {
          protocol.sendUserPacket(to.address(), to.name(), msg);
          return null;
        });
  }

  /**
   * Sends a user message in one UDP packet to an address, whether or not gossip knows a node there (best effort).
   */
  public void sendToAddress(InetSocketAddress to, byte[] msg) {
    requireRunning();
    // Without a lambda: the agent sends its heartbeats through here, several a second.
    lock.lock();
    try {
      protocol.sendUserPacket(to, null, msg);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Sends a user message over TCP; returns once it was written.
   *
   * @throws IOException if the connection or the write failed
   */
  public void sendReliable(Node to, byte[] msg) throws IOException {
    requireRunning();
    try (StreamConnection conn = transport.openStream(to.address(), config.tcpTimeout())) {
      conn.setDeadline(config.tcpTimeout());
      request(conn, new UserMsg(msg));
    }
    counters.userMessagesSent.increment();
  }

  /**
   * Re-reads {@link Delegate#nodeMeta(int)}, bumps the incarnation and broadcasts the new alive message, waiting up
   * to {@code timeout} for the broadcast to complete.
   *
   * @return true if it was fully broadcast (or nobody else is alive), false on timeout
   */
  public boolean updateNode(Duration timeout) {
    requireRunning();
    CompletableFuture<Void> done = new CompletableFuture<>();
    boolean wait = locked(() -> protocol.updateNode(() -> done.complete(null)));
    return !wait || await(done, timeout, "update");
  }

  /**
   * Inputs refused by each resource cap since start (oversized frames, LZW bombs, excess or expired inbound
   * streams…), for a {@code memberlist_limit_refusals_total{limit=…}} metric. Streams refused by a caller-supplied
   * {@link Config#transport()} are not included.
   */
  public Map<Limit, Long> refusals() {
    return refusals.snapshot();
  }

  /** Counters for metrics. */
  public MemberlistStats stats() {
    return locked(
        () ->
            new MemberlistStats(
                counters.packetsSent.sum(),
                counters.bytesSent.sum(),
                counters.packetsReceived.sum(),
                counters.bytesReceived.sum(),
                counters.malformedPackets.sum(),
                counters.probes.sum(),
                counters.probeFailures.sum(),
                counters.indirectProbes.sum(),
                counters.tcpFallbackPings.sum(),
                counters.suspicionsRaised.sum(),
                counters.deathsDeclared.sum(),
                counters.refutations.sum(),
                counters.pushPulls.sum(),
                counters.userMessagesReceived.sum(),
                counters.userMessagesSent.sum(),
                protocol.healthScore(),
                protocol.queuedBroadcasts(),
                protocol.count(NodeState.ALIVE),
                protocol.count(NodeState.SUSPECT)));
  }

  /**
   * Applies new protocol timings to this running node without leaving the cluster: the probe, gossip and push/pull
   * timers are rescheduled on the new periods, and the next probes, suspicions and broadcasts use the new values.
   * {@link #config()} keeps the values the node started with; {@link #timings()} returns the ones in effect.
   */
  public void applyTimings(ProtocolTimings timings) {
    requireRunning();
    locked(
        () -> {
          protocol.applyTimings(timings);
          return null;
        });
    LOG.info(
        "event=timings_applied node={} probe_interval={} probe_timeout={} suspicion_mult={} gossip_interval={}"
            + " gossip_nodes={} retransmit_mult={} push_pull_interval={}",
        config.name(), timings.probeInterval(), timings.probeTimeout(), timings.suspicionMult(),
        timings.gossipInterval(), timings.gossipNodes(), timings.retransmitMult(), timings.pushPullInterval());
  }

  /** The protocol timings in effect (those of {@link #config()} until {@link #applyTimings} changes them). */
  public ProtocolTimings timings() {
    return locked(protocol::timings);
  }

  /** The keyring in use (install/use/remove keys at runtime), or null without encryption. */
  public Keyring keyring() {
    return config.keyring();
  }

  /** The configuration this node runs with. */
  public Config config() {
    return config;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Runtime plumbing

  private void requireRunning() {
    if (shutdown) {
      throw new IllegalStateException("memberlist " + config.name() + " is shut down");
    }
  }

  private <T> T locked(Supplier<T> action) {
    lock.lock();
    try {
      return action.get();
    } finally {
      lock.unlock();
    }
  }

  private Timers.Timer schedule(long delayNanos, Runnable task) {
    if (protocolThread.isShutdown()) {
      return () -> {};
    }
    ScheduledFuture<?> f =
        protocolThread.schedule(new ProtocolTask(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    return new FutureTimer(f);
  }

  /**
   * A timer task on the protocol thread: runs under the lock unless the protocol stopped; a RuntimeException is
   * logged, an Error reaches the thread's uncaught-exception handler (the agent exits) instead of staying in the
   * future. A class rather than lambdas: timers are scheduled several times a second, and a captured lambda is a slow
   * allocation through a method handle without C2.
   */
  private final class ProtocolTask implements Runnable {
    private final Runnable task;

    ProtocolTask(Runnable task) {
      this.task = task;
    }

    @Override
    public void run() {
      try {
        lock.lock();
        try {
          if (!protocol.stopped()) {
            task.run();
          }
        } catch (RuntimeException e) {
          LOG.error("event=protocol_task_failed node={} error=\"{}\"", config.name(), e.toString(), e);
        } finally {
          lock.unlock();
        }
      } catch (Error e) {
        throw ThreadErrors.report(e);
      }
    }
  }

  /** Cancels a scheduled timer task that has not started. */
  private record FutureTimer(ScheduledFuture<?> future) implements Timers.Timer {
    @Override
    public void cancel() {
      future.cancel(false);
    }
  }

  private boolean await(CompletableFuture<Void> done, Duration timeout, String what) {
    try {
      done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      LOG.warn("event={}_broadcast_timeout node={} timeout={}", what, config.name(), timeout);
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      return false;
    }
  }

  private void onPacket(byte[] packet, InetSocketAddress from, long receivedNanos) {
    counters.packetsReceived.increment();
    counters.bytesReceived.add(packet.length);
    List<Message> messages;
    try {
      messages = packetCodec.decode(packet);
    } catch (LimitExceededException e) {
      // already counted and logged (rate-limited) by the codec: a flood must not become a log flood
      counters.malformedPackets.increment();
      LOG.debug("event=packet_dropped node={} from={} reason=\"{}\"", config.name(), from, e.getMessage());
      return;
    } catch (MalformedMessageException e) {
      counters.malformedPackets.increment();
      DropLog.Line line = droppedPackets.dropped();
      if (line != null) {
        LOG.warn("event=packet_dropped node={} from={} reason=\"{}\" dropped_total={} not_logged={}", config.name(),
            from, e.getMessage(), line.total(), line.notLogged());
      }
      return;
    }
    for (Message m : messages) {
      if (m instanceof UserMsg u) {
        // Heartbeats ride on user messages: hand them over without waiting for the protocol lock.
        protocol.deliverUserMessage(u.payload(), from);
        continue;
      }
      lock.lock();
      try {
        protocol.handleMessage(m, from);
      } catch (RuntimeException e) {
        LOG.error("event=packet_handler_failed node={} from={} type={} error=\"{}\"", config.name(), from, m.type(), e, e);
      } finally {
        lock.unlock();
      }
    }
  }

  private void onStream(StreamConnection conn) {
    try (conn) {
      conn.setDeadline(config.tcpTimeout());
      Message request;
      try {
        request = streamCodec.readInbound(conn.input(), conn.frameBudget());
      } catch (LimitExceededException e) {
        // counted and logged (rate-limited) by the codec; no reply: the peer may still be sending the rest
        counters.malformedPackets.increment();
        LOG.debug("event=stream_rejected node={} from={} reason=\"{}\"", config.name(), conn.remoteAddress(), e.getMessage());
        return;
      } catch (MalformedMessageException e) {
        counters.malformedPackets.increment();
        DropLog.Line line = rejectedStreams.dropped();
        if (line != null) {
          LOG.warn("event=stream_rejected node={} from={} reason=\"{}\" rejected_total={} not_logged={}", config.name(),
              conn.remoteAddress(), e.getMessage(), line.total(), line.notLogged());
        }
        reply(conn, new ErrResp(e.getMessage()));
        return;
      }
      conn.markEstablished(); // read and authenticated: a newcomer can no longer take this stream's slot
      if (request instanceof Ping p) {
        if (p.node() == null || p.node().isEmpty() || p.node().equals(config.name())) {
          reply(conn, new AckResp(p.seqNo(), null));
        }
      } else if (request instanceof PushPull pp) {
        PushPull answer = locked(() -> protocol.handlePushPull(pp));
        reply(conn, answer);
      } else if (request instanceof UserMsg u) {
        protocol.deliverUserMessage(u.payload(), conn.remoteAddress());
      } else {
        reply(conn, new ErrResp("unsupported stream message type " + request.type()));
      }
    } catch (IOException e) {
      LOG.debug("event=stream_failed node={} error=\"{}\"", config.name(), e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("event=stream_handler_failed node={} error=\"{}\"", config.name(), e.toString(), e);
    }
  }

  private void reply(StreamConnection conn, Message m) throws IOException {
    OutputStream out = conn.output();
    streamCodec.write(out, m, config.enableCompression());
    out.flush();
  }

  /** A dialer's request: the label header (if any), then the message. */
  private void request(StreamConnection conn, Message m) throws IOException {
    streamCodec.writeLabelHeader(conn.output());
    reply(conn, m);
  }

  private void pushPullJoin(InetSocketAddress peer) throws IOException, MalformedMessageException {
    PushPull request = locked(() -> protocol.localState(true));
    counters.pushPulls.increment();
    PushPull reply = exchangePushPull(peer, request);
    String error = locked(() -> protocol.mergeRemoteState(reply));
    if (error != null) {
      throw new IOException(error);
    }
  }

  private PushPull exchangePushPull(InetSocketAddress peer, PushPull request)
      throws IOException, MalformedMessageException {
    try (StreamConnection conn = transport.openStream(peer, config.tcpTimeout())) {
      conn.setDeadline(config.tcpTimeout());
      request(conn, request);
      Message answer = streamCodec.read(conn.input());
      if (answer instanceof PushPull pp) {
        return pp;
      }
      if (answer instanceof ErrResp err) {
        throw new IOException("remote error: " + err.error());
      }
      throw new IOException("unexpected push/pull reply type " + answer.type());
    }
  }

  /** The protocol's way out: packets go straight to the transport, streams to worker threads. */
  private final class NetworkOutput implements ProtocolOutput {
    @Override
    public void sendPacket(InetSocketAddress to, List<byte[]> messages, boolean crc) {
      byte[] packet = packetCodec.encode(messages, crc, config.enableCompression());
      counters.packetsSent.increment();
      counters.bytesSent.add(packet.length);
      transport.sendPacket(to, packet);
    }

    @Override
    public void pushPull(InetSocketAddress to, PushPull request) {
      submit(
          () -> {
            try {
              PushPull reply = exchangePushPull(to, request);
              String error = locked(() -> protocol.mergeRemoteState(reply));
              if (error != null) {
                LOG.warn("event=push_pull_rejected node={} peer={} reason=\"{}\"", config.name(), to, error);
              }
            } catch (IOException | MalformedMessageException e) {
              LOG.warn("event=push_pull_failed node={} peer={} error=\"{}\"", config.name(), to, e.getMessage());
            }
          });
    }

    @Override
    public void streamPing(InetSocketAddress to, Ping ping, long timeoutNanos) {
      submit(
          () -> {
            Duration timeout = Duration.ofNanos(timeoutNanos);
            try (StreamConnection conn = transport.openStream(to, timeout)) {
              conn.setDeadline(timeout);
              request(conn, ping);
              Message answer = streamCodec.read(conn.input());
              if (answer instanceof AckResp ack && ack.seqNo() == ping.seqNo()) {
                locked(
                    () -> {
                      protocol.streamPingResult(ping.seqNo(), true);
                      return null;
                    });
              }
            } catch (IOException | MalformedMessageException e) {
              LOG.debug("event=tcp_ping_failed node={} peer={} error=\"{}\"", config.name(), to, e.getMessage());
            }
          });
    }

    private void submit(Runnable task) {
      if (!shutdown) {
        try {
          streamWorkers.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          LOG.debug("event=stream_task_rejected node={} reason=shutdown", config.name());
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Addresses

  private List<InetSocketAddress> resolve(String entry) throws IOException {
    String hostPort = entry.contains("/") ? entry.substring(entry.indexOf('/') + 1) : entry;
    String host = hostPort;
    int port = config.bindPort();
    if (hostPort.startsWith("[")) {
      int close = hostPort.indexOf(']');
      if (close < 0) {
        throw new IllegalArgumentException("missing ']' in " + entry);
      }
      host = hostPort.substring(1, close);
      if (hostPort.length() > close + 1) {
        port = parsePort(hostPort.substring(close + 2), entry);
      }
    } else if (hostPort.indexOf(':') >= 0 && hostPort.indexOf(':') == hostPort.lastIndexOf(':')) {
      host = hostPort.substring(0, hostPort.indexOf(':'));
      port = parsePort(hostPort.substring(hostPort.indexOf(':') + 1), entry);
    }
    List<InetSocketAddress> out = new ArrayList<>();
    for (InetAddress a : InetAddress.getAllByName(host)) {
      out.add(new InetSocketAddress(a, port));
    }
    return out;
  }

  private static int parsePort(String s, String entry) {
    try {
      int p = Integer.parseInt(s);
      if (p < 1 || p > 65535) {
        throw new IllegalArgumentException("port out of range in " + entry);
      }
      return p;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad port in " + entry + " (expected host:port)");
    }
  }

  private static InetSocketAddress advertiseAddress(Config config, InetSocketAddress bound) throws IOException {
    InetAddress ip =
        config.advertiseAddr() != null ? InetAddress.getByName(config.advertiseAddr()) : bound.getAddress();
    if (ip.isAnyLocalAddress()) {
      ip = privateAddress();
    }
    int port = config.advertisePort() != 0 ? config.advertisePort() : bound.getPort();
    return new InetSocketAddress(ip, port);
  }

  /** Like memberlist's GetPrivateIP: the first site-local IPv4 address, else any non-loopback IPv4, else loopback. */
  private static InetAddress privateAddress() throws SocketException {
    InetAddress fallback = InetAddress.getLoopbackAddress();
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (InetAddress a : Collections.list(nic.getInetAddresses())) {
        if (a instanceof Inet4Address) {
          if (a.isSiteLocalAddress()) {
            return a;
          }
          fallback = a;
        }
      }
    }
    return fallback;
  }

  private static byte[] addressBytes(InetAddress ip) {
    return ip.getAddress();
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
