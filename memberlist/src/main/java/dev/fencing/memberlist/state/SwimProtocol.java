package dev.fencing.memberlist.state;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Delegate;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.ProtocolTimings;
import dev.fencing.memberlist.codec.AckResp;
import dev.fencing.memberlist.codec.Alive;
import dev.fencing.memberlist.codec.Dead;
import dev.fencing.memberlist.codec.ErrResp;
import dev.fencing.memberlist.codec.IndirectPingReq;
import dev.fencing.memberlist.codec.Message;
import dev.fencing.memberlist.codec.NackResp;
import dev.fencing.memberlist.codec.PacketCodec;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushNodeState;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.codec.Suspect;
import dev.fencing.memberlist.codec.UserMsg;
import dev.fencing.memberlist.limits.DropLog;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * memberlist's SWIM + Lifeguard protocol as a sans-IO state machine: it reads time only from {@link Clock}, waits
 * only through {@link Timers} callbacks, sends only through {@link ProtocolOutput} and never blocks. It is not
 * thread-safe; the runtime serialises every call (the real runtime with a lock, the simulator by construction).
 */
public final class SwimProtocol {
  /** Bytes for a compound message's type byte and part count. */
  public static final int COMPOUND_HEADER_OVERHEAD = 2;

  /** Bytes for one compound part's length. */
  public static final int COMPOUND_OVERHEAD = 2;

  /** Bytes for a packet user message's type byte. */
  public static final int USER_MSG_OVERHEAD = 1;

  /** Compound parts per sent packet; see {@link PacketCodec#MAX_SENT_COMPOUND_PARTS} for why not 255. */
  private static final int MAX_COMPOUND_PARTS = PacketCodec.MAX_SENT_COMPOUND_PARTS;
  private static final int PUSH_PULL_SCALE_THRESHOLD = 32;
  private static final Logger LOG = LoggerFactory.getLogger(SwimProtocol.class);

  private final Config config;
  private final String selfName;
  private final byte[] selfAddr;
  private final int selfPort;
  private final Clock clock;
  private final java.util.concurrent.ConcurrentMap<String, DropLog> noisyEvents =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final Timers timers;
  private final RandomGenerator random;
  private final MessageEncoder encoder;
  private final ProtocolOutput output;
  private final ProtocolCounters counters;
  private final NodeTable nodes;
  private final Awareness awareness;
  private final TransmitLimitedQueue broadcasts;
  private final Map<String, Suspicion> suspicions = new HashMap<>();
  private final AckHandlers ackHandlers;
  private final Runnable reapAndShuffle = this::reapAndShuffle;
  // The delegate may hand out broadcasts at any time (it overrides getBroadcasts): gossip must tick to ask it.
  private final boolean delegateBroadcasts;
  private final GossipTargets gossipTargets = new GossipTargets();
  private ProtocolTimings timings;
  private long probeIntervalNanos;
  private long probeTimeoutNanos;
  private PeriodicTimer probeTicker;
  private PeriodicTimer gossipTicker;
  private final int packetOverhead;
  // Starts anywhere in the uint32 range (Go starts at 0): an ack captured from an earlier run of this node, sent
  // again, then matches none of this run's probes. Not from {@code random}, whose draws a seeded simulation replays.
  private long sequenceNumber = java.util.concurrent.ThreadLocalRandom.current().nextLong(1L << 32);
  private long incarnation;
  private boolean leaving;
  private boolean stopped;
  private Probe probe;
  private Timers.Timer pushPullTimer;

  /**
   * @param selfAddr the advertised IP (4 or 16 bytes)
   * @param selfPort the advertised port
   */
  public SwimProtocol(
      Config config,
      byte[] selfAddr,
      int selfPort,
      Clock clock,
      Timers timers,
      RandomGenerator random,
      MessageEncoder encoder,
      ProtocolOutput output,
      ProtocolCounters counters) {
    this.config = config;
    this.selfName = config.name();
    this.selfAddr = selfAddr.clone();
    this.selfPort = selfPort;
    this.clock = clock;
    this.timers = timers;
    this.random = random;
    this.encoder = encoder;
    this.output = output;
    this.counters = counters;
    this.nodes = new NodeTable(random);
    this.ackHandlers = new AckHandlers(timers);
    this.awareness = new Awareness(config.awarenessMaxMultiplier());
    this.broadcasts = new TransmitLimitedQueue(config.retransmitMult(), nodes::size);
    this.timings = ProtocolTimings.of(config);
    this.probeIntervalNanos = timings.probeInterval().toNanos();
    this.probeTimeoutNanos = timings.probeTimeout().toNanos();
    this.packetOverhead = new PacketCodec(config.packetOptions()).overhead();
    this.delegateBroadcasts = handsOutBroadcasts(config.delegate());
  }

  /** Whether {@code d} overrides {@link Delegate#getBroadcasts} (the default hands out nothing). */
  static boolean handsOutBroadcasts(Delegate d) {
    if (d == null) {
      return false;
    }
    try {
      return d.getClass().getMethod("getBroadcasts", int.class, int.class).getDeclaringClass() != Delegate.class;
    } catch (NoSuchMethodException | SecurityException e) {
      return true;
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Lifecycle

  /** Announces the local node (incarnation 1, not yet gossiped to anyone) and starts probing, gossip and push/pull. */
  public void start() {
    Alive self =
        new Alive(nextIncarnation(), selfName, selfAddr, selfPort, localMeta(), config.vsn());
    aliveNode(self, null, true);
    startTimers();
  }

  private void startTimers() {
    probeTicker = startTicker(probeIntervalNanos, this::probeTick);
    if (!timings.gossipInterval().isZero()) {
      gossipTicker = startTicker(timings.gossipInterval().toNanos(), this::gossip);
    }
    if (!timings.pushPullInterval().isZero()) {
      schedulePushPull(true);
    }
  }

  private void cancelTimers() {
    if (probeTicker != null) {
      probeTicker.cancel();
      probeTicker = null;
    }
    if (gossipTicker != null) {
      gossipTicker.cancel();
      gossipTicker = null;
    }
    if (pushPullTimer != null) {
      pushPullTimer.cancel();
      pushPullTimer = null;
    }
  }

  /**
   * Switches to new protocol timings without leaving the cluster: the periodic timers are cancelled and started
   * again on the new periods (with a fresh random stagger within each period, as at start), RetransmitMult applies
   * to the next broadcast selection, and the next probe and suspicion use the new probe and suspicion values. A probe
   * or suspicion already running finishes on the values it started with, so no timer is cut short or stretched.
   */
  public void applyTimings(ProtocolTimings newTimings) {
    if (newTimings.equals(timings)) {
      return;
    }
    timings = newTimings;
    probeIntervalNanos = newTimings.probeInterval().toNanos();
    probeTimeoutNanos = newTimings.probeTimeout().toNanos();
    broadcasts.setRetransmitMult(newTimings.retransmitMult());
    if (!stopped) {
      cancelTimers();
      startTimers();
    }
  }

  /** The timings in effect. */
  public ProtocolTimings timings() {
    return timings;
  }

  /** Stops every timer; later input is ignored. */
  public void stop() {
    stopped = true;
    cancelTimers();
    suspicions.values().forEach(Suspicion::cancel);
    suspicions.clear();
    ackHandlers.clear();
  }

  public boolean stopped() {
    return stopped;
  }

  private PeriodicTimer startTicker(long periodNanos, Runnable task) {
    // A random stagger, so that nodes started together do not probe and gossip in lockstep.
    return PeriodicTimer.start(timers, clock, random.nextLong(periodNanos), periodNanos, task);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Queries

  public String name() {
    return selfName;
  }

  /** Alive and suspect members, including the local node (memberlist's Members). */
  public List<Node> members() {
    List<Node> out = new ArrayList<>();
    for (NodeRecord n : nodes.all()) {
      if (!n.state().deadOrLeft()) {
        out.add(n.toNode());
      }
    }
    return out;
  }

  /** Every known node including dead and left ones not yet reaped. */
  public List<Node> allNodes() {
    List<Node> out = new ArrayList<>(nodes.size());
    nodes.all().forEach(n -> out.add(n.toNode()));
    return out;
  }

  /** The local node. */
  public Node localNode() {
    return nodes.get(selfName).toNode();
  }

  /** A known node by name, or null. */
  public Node node(String name) {
    NodeRecord r = nodes.get(name);
    return r == null ? null : r.toNode();
  }

  /** Number of alive and suspect members including the local node. */
  public int numMembers() {
    return nodes.size() - nodes.count(NodeState.DEAD) - nodes.count(NodeState.LEFT);
  }

  /** Estimated cluster size used by the formulas: every node in the table (dead ones until they are reaped). */
  public int estimatedNodes() {
    return nodes.size();
  }

  public int healthScore() {
    return awareness.healthScore();
  }

  /** True while the gossip ticker sleeps because nothing is queued (tests). */
  boolean gossipAsleep() {
    return gossipTicker != null && gossipTicker.sleeping();
  }

  public int queuedBroadcasts() {
    return broadcasts.numQueued();
  }

  public int count(NodeState state) {
    return nodes.count(state);
  }

  /** True while some other node is alive, i.e. a leave or update broadcast has someone to reach. */
  public boolean anyAlive() {
    for (NodeRecord n : nodes.all()) {
      if (!n.name().equals(selfName) && n.state() == NodeState.ALIVE) {
        return true;
      }
    }
    return false;
  }

  /** Whether a CRC should be added to packets for this address's node (it speaks protocol 5). */
  public boolean wantsCrc(String nodeName) {
    NodeRecord r = nodes.get(nodeName);
    return r != null && r.pMax() >= 5;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Inbound packets

  /**
   * Handles one message that arrived in a packet (compound and compressed wrappers already removed).
   *
   * @param from the UDP source address
   */
  public void handleMessage(Message message, InetSocketAddress from) {
    if (stopped) {
      return;
    }
    if (message instanceof Ping p) {
      handlePing(p, from);
    } else if (message instanceof IndirectPingReq r) {
      handleIndirectPing(r, from);
    } else if (message instanceof AckResp a) {
      handleAck(a);
    } else if (message instanceof NackResp n) {
      handleNack(n);
    } else if (message instanceof Alive a) {
      aliveNode(a, null, false);
    } else if (message instanceof Suspect s) {
      suspectNode(s);
    } else if (message instanceof Dead d) {
      deadNode(d, null);
    } else if (message instanceof UserMsg u) {
      deliverUserMessage(u.payload(), from);
    } else {
      warnLimited("unexpected_message", "type={} transport=packet from={}", message.type(), from);
    }
  }

  /**
   * A warning that one message can cause (a peer's bad or hostile message, a refutation), so a member that sends
   * such messages at line rate could otherwise write a line per message, synchronously and under the protocol's lock:
   * at most one line per event per {@link DropLog}'s interval, with how many there were ({@code count}) and how many
   * that interval hid ({@code not_logged}). The first of each is logged at once.
   */
  private void warnLimited(String event, String format, Object... args) {
    logLimited(false, event, format, args);
  }

  private void logLimited(boolean error, String event, String format, Object... args) {
    DropLog.Line line = noisyEvents.computeIfAbsent(event, e -> new DropLog(clock::nanos)).dropped();
    if (line != null) {
      Object[] all = Arrays.copyOf(args, args.length + 2);
      all[args.length] = line.total();
      all[args.length + 1] = line.notLogged();
      String message = "event=" + event + " " + format + " count={} not_logged={}";
      if (error) {
        LOG.error(message, all);
      } else {
        LOG.warn(message, all);
      }
    }
  }

  /** Hands a user message that came from {@code from} to the delegate. */
  public void deliverUserMessage(byte[] payload, InetSocketAddress from) {
    counters.userMessagesReceived.increment();
    Delegate d = config.delegate();
    if (d != null) {
      d.notifyMsg(payload, from);
    }
  }

  private void handlePing(Ping p, InetSocketAddress from) {
    if (p.node() != null && !p.node().isEmpty() && !p.node().equals(selfName)) {
      warnLimited("ping_for_other_node", "target={} from={}", p.node(), from);
      return;
    }
    sendWithPiggyback(replyAddress(p.sourceAddr(), p.sourcePort(), from), new AckResp(p.seqNo(), null));
  }

  private void handleIndirectPing(IndirectPingReq req, InetSocketAddress from) {
    if (req.target() == null || (req.target().length != 4 && req.target().length != 16) || req.port() == 0) {
      warnLimited("indirect_ping_ignored", "from={} reason=\"invalid target address\"", from);
      return;
    }
    InetSocketAddress requester = replyAddress(req.sourceAddr(), req.sourcePort(), from);
    long localSeq = nextSequence();
    Ping ping = new Ping(localSeq, req.node(), selfAddr, selfPort, selfName);
    ackHandlers.register(
        localSeq,
        probeTimeoutNanos,
        () -> sendWithPiggyback(requester, new AckResp(req.seqNo(), null)),
        null,
        () -> {
          if (req.nack()) {
            sendWithPiggyback(requester, new NackResp(req.seqNo()));
          }
        });
    sendWithPiggyback(NodeRecord.toSocketAddress(req.target(), req.port()), ping);
  }

  private static InetSocketAddress replyAddress(byte[] addr, int port, InetSocketAddress from) {
    if (addr != null && addr.length > 0 && port > 0) {
      return NodeRecord.toSocketAddress(addr, port);
    }
    return from;
  }

  private void handleAck(AckResp ack) {
    ackHandlers.ack(ack.seqNo());
  }

  private void handleNack(NackResp nack) {
    ackHandlers.nack(nack.seqNo());
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Probing (SWIM failure detection with Lifeguard's awareness)

  private void probeTick() {
    if (probe != null) {
      // memberlist's ticker drops ticks while a probe is running: a slow (aware) node probes less often.
      return;
    }
    NodeRecord target = nodes.nextProbeTarget(selfName, reapAndShuffle);
    if (target != null) {
      probeNode(target);
    }
  }

  /** The probe round's wrap: reap the long dead, reshuffle (built once: probeTick runs every probe interval). */
  private void reapAndShuffle() {
    nodes.reapAndShuffle(clock.nanos(), gossipToTheDeadNanos(), this::reaped);
  }

  private void reaped(NodeRecord node) {
    Suspicion s = suspicions.remove(node.name());
    if (s != null) {
      s.cancel();
    }
    LOG.debug("event=reap node={} state={}", node.name(), node.state());
  }

  /** One probe of one node: direct ping, then indirect pings and a TCP ping, then suspicion. */
  private final class Probe {
    final NodeRecord target;
    /**
     * The target's incarnation when the probe started, which a failure accuses (as memberlist): a refutation heard
     * during the probe is newer proof of life and voids it.
     */
    final long incarnation;
    final long seq;
    int expectedNacks;
    int nacks;
    boolean streamAcked;
    boolean done;
    Timers.Timer directTimeout;

    Probe(NodeRecord target, long seq) {
      this.target = target;
      this.incarnation = target.incarnation();
      this.seq = seq;
    }

    void acked() {
      if (done) {
        return;
      }
      finish(-1);
    }

    void directTimeout() {
      if (done || stopped) {
        return;
      }
      List<NodeRecord> relays =
          nodes.randomNodes(
              config.indirectChecks(),
              n -> n.state() == NodeState.ALIVE && !n.name().equals(selfName) && n != target);
      for (NodeRecord relay : relays) {
        boolean nack = relay.pMax() >= 4;
        if (nack) {
          expectedNacks++;
        }
        counters.indirectProbes.increment();
        sendWithPiggyback(
            relay.address(),
            new IndirectPingReq(
                seq, target.addr(), target.port(), target.name(), nack, selfAddr, selfPort, selfName));
      }
      if (!config.disableTcpPings() && target.pMax() >= 3) {
        counters.tcpFallbackPings.increment();
        long remaining = awareness.scaleTimeout(probeIntervalNanos) - probeTimeoutNanos;
        output.streamPing(
            target.address(),
            new Ping(seq, target.name(), selfAddr, selfPort, selfName),
            Math.max(remaining, 1));
      }
    }

    void deadline() {
      if (done || stopped) {
        return;
      }
      if (streamAcked) {
        LOG.warn(
            "event=probe_udp_failed_tcp_ok node={} msg=\"reachable over TCP but UDP probes failed, network may be"
                + " misconfigured\"",
            target.name());
        finish(-1);
        return;
      }
      int delta;
      if (expectedNacks > 0) {
        delta = Math.max(0, expectedNacks - nacks);
      } else {
        delta = 1;
      }
      finish(delta);
      counters.probeFailures.increment();
      // Accused at the incarnation the probe started with: a refutation heard meanwhile voids the accusation.
      boolean accused = target.incarnation() <= incarnation;
      LOG.info("event=probe_failed node={} suspect={} incarnation={}", target.name(), accused, incarnation);
      suspectNode(new Suspect(incarnation, target.name(), selfName));
    }

    private void finish(int awarenessDelta) {
      done = true;
      directTimeout.cancel();
      awareness.applyDelta(awarenessDelta);
      if (probe == this) {
        probe = null;
      }
    }
  }

  private void probeNode(NodeRecord target) {
    counters.probes.increment();
    long seq = nextSequence();
    long scaledInterval = awareness.scaleTimeout(probeIntervalNanos);
    Probe p = new Probe(target, seq);
    probe = p;
    ackHandlers.register(seq, scaledInterval, p::acked, () -> p.nacks++, p::deadline);
    // The direct wait is deliberately not scaled by awareness (memberlist: it would not help UDP).
    p.directTimeout = timers.schedule(probeTimeoutNanos, p::directTimeout);
    Ping ping = new Ping(seq, target.name(), selfAddr, selfPort, selfName);
    if (target.state() == NodeState.ALIVE) {
      sendWithPiggyback(target.address(), ping);
    } else {
      // Lifeguard's buddy system: tell a suspected node directly so that it can refute before the timer expires.
      List<byte[]> parts =
          List.of(
              encoder.encode(ping),
              encoder.encode(new Suspect(target.incarnation(), target.name(), selfName)));
      send(target.address(), parts, target.pMax() >= 5);
    }
  }

  /** The outcome of a TCP fallback ping started through {@link ProtocolOutput#streamPing}. */
  public void streamPingResult(long seqNo, boolean acked) {
    if (probe != null && probe.seq == seqNo && acked) {
      probe.streamAcked = true;
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Gossip

  private void gossip() {
    if (broadcasts.numQueued() == 0 && !delegateBroadcasts) {
      // Nothing to send: memberlist's round would pick targets and send nothing. The ticker sleeps until a broadcast
      // is queued (an idle node's protocol thread wakes for probes, not five times a second for nothing).
      gossipTicker.sleep();
      return;
    }
    gossipTargets.now = clock.nanos();
    gossipTargets.deadWindow = gossipToTheDeadNanos();
    List<NodeRecord> targets = nodes.randomNodes(timings.gossipNodes(), gossipTargets);
    int bytesAvail = config.udpBufferSize() - COMPOUND_HEADER_OVERHEAD - packetOverhead;
    for (NodeRecord target : targets) {
      List<byte[]> msgs = getBroadcasts(COMPOUND_OVERHEAD, bytesAvail);
      if (msgs.isEmpty()) {
        return;
      }
      send(target.address(), msgs, target.pMax() >= 5);
    }
  }

  /**
   * Who a gossip round may pick: others alive or suspect, or dead for less than the gossip-to-the-dead window. One
   * instance whose clock reading each round sets (the protocol thread's, under the lock), not a lambda per round.
   */
  private final class GossipTargets implements java.util.function.Predicate<NodeRecord> {
    long now;
    long deadWindow;

    @Override
    public boolean test(NodeRecord n) {
      if (n.name().equals(selfName)) {
        return false;
      }
      return switch (n.state()) {
        case ALIVE, SUSPECT -> true;
        case DEAD -> now - n.stateChangeNanos() <= deadWindow;
        case LEFT -> false;
      };
    }
  }

  private List<byte[]> getBroadcasts(int overhead, int limit) {
    List<byte[]> msgs = broadcasts.getBroadcasts(overhead, limit);
    Delegate d = config.delegate();
    if (d == null) {
      return msgs;
    }
    int used = 0;
    for (byte[] m : msgs) {
      used += m.length + overhead;
    }
    int avail = limit - used;
    if (avail <= overhead + USER_MSG_OVERHEAD) {
      return msgs;
    }
    List<byte[]> user = d.getBroadcasts(overhead + USER_MSG_OVERHEAD, avail);
    if (user == null || user.isEmpty()) {
      return msgs;
    }
    List<byte[]> all = new ArrayList<>(msgs);
    for (byte[] u : user) {
      all.add(encoder.encode(new UserMsg(u)));
    }
    return all;
  }

  private void sendWithPiggyback(InetSocketAddress to, Message message) {
    byte[] encoded = encoder.encode(message);
    int avail = config.udpBufferSize() - encoded.length - COMPOUND_HEADER_OVERHEAD - packetOverhead;
    List<byte[]> extra = getBroadcasts(COMPOUND_OVERHEAD, avail);
    if (extra.isEmpty()) {
      send(to, List.of(encoded), false);
      return;
    }
    List<byte[]> parts = new ArrayList<>(extra.size() + 1);
    parts.add(encoded);
    parts.addAll(extra);
    send(to, parts, false);
  }

  private void send(InetSocketAddress to, List<byte[]> parts, boolean crc) {
    for (int i = 0; i < parts.size(); i += MAX_COMPOUND_PARTS) {
      output.sendPacket(to, parts.subList(i, Math.min(parts.size(), i + MAX_COMPOUND_PARTS)), crc);
    }
  }

  private void broadcast(String node, Message message, Runnable finished) {
    broadcasts.queueBroadcast(new Broadcast(node, encoder.encode(message), finished));
    if (gossipTicker != null) {
      gossipTicker.wake();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Push/pull

  private void schedulePushPull(boolean first) {
    // Re-scaled every period: the interval grows with the cluster (pushPullScale).
    long interval = pushPullScale(timings.pushPullInterval().toNanos(), nodes.size());
    long delay = first ? random.nextLong(interval) : interval;
    pushPullTimer =
        timers.schedule(
            delay,
            () -> {
              if (stopped) {
                return;
              }
              schedulePushPull(false);
              pushPullWithRandomPeer();
            });
  }

  private void pushPullWithRandomPeer() {
    List<NodeRecord> peer =
        nodes.randomNodes(1, n -> n.state() == NodeState.ALIVE && !n.name().equals(selfName));
    if (!peer.isEmpty()) {
      counters.pushPulls.increment();
      output.pushPull(peer.get(0).address(), localState(false));
    }
  }

  /** {@code interval} up to 32 nodes, then one more interval per doubling (memberlist's pushPullScale). */
  public static long pushPullScale(long intervalNanos, int n) {
    if (n <= PUSH_PULL_SCALE_THRESHOLD) {
      return intervalNanos;
    }
    double multiplier =
        Math.ceil(Math.log(n) / Math.log(2) - Math.log(PUSH_PULL_SCALE_THRESHOLD) / Math.log(2)) + 1.0;
    return (long) multiplier * intervalNanos;
  }

  /** This node's full state for a push/pull exchange. */
  public PushPull localState(boolean join) {
    List<PushNodeState> states = new ArrayList<>(nodes.size());
    nodes.all().forEach(n -> states.add(n.toPushNodeState()));
    byte[] user = new byte[0];
    Delegate d = config.delegate();
    if (d != null) {
      byte[] s = d.localState(join);
      user = s == null ? new byte[0] : s;
    }
    return new PushPull(join, states, user);
  }

  /** Answers a push/pull request: the local state (taken before merging), then merges the remote state. */
  public PushPull handlePushPull(PushPull remote) {
    counters.pushPulls.increment();
    PushPull reply = localState(remote.join());
    String error = mergeRemoteState(remote);
    if (error != null) {
      warnLimited("push_pull_rejected", "reason=\"{}\"", error);
    }
    return reply;
  }

  /**
   * Merges a remote node's push/pull state: protocol versions are checked, the merge delegate may veto a join,
   * then every entry is applied, remote deaths being downgraded to local suspicions.
   *
   * @return null on success, or why the state was rejected
   */
  public String mergeRemoteState(PushPull remote) {
    if (stopped) {
      return "memberlist is shut down";
    }
    String versionError = ProtocolVersions.verify(remote.nodes(), nodes.all());
    if (versionError != null) {
      return versionError;
    }
    if (remote.join() && config.mergeDelegate() != null) {
      List<Node> peers = new ArrayList<>();
      for (PushNodeState s : remote.nodes()) {
        if (s.name() == null) {
          continue;
        }
        peers.add(
            new NodeRecord(s.name(), s.addr(), s.port(), s.meta(), s.vsn(), NodeState.fromWire(s.state()), 0)
                .toNode());
      }
      String veto = config.mergeDelegate().notifyMerge(peers);
      if (veto != null) {
        return "merge refused: " + veto;
      }
    }
    for (PushNodeState s : remote.nodes()) {
      switch (NodeState.fromWire(s.state())) {
        case ALIVE -> aliveNode(new Alive(s.incarnation(), s.name(), s.addr(), s.port(), s.meta(), s.vsn()), null, false);
        case LEFT -> deadNode(new Dead(s.incarnation(), s.name(), s.name()), null);
        // A remote death is only a rumour here: suspect it locally so that the node gets the chance to refute.
        case DEAD, SUSPECT -> suspectNode(new Suspect(s.incarnation(), s.name(), selfName));
      }
    }
    Delegate d = config.delegate();
    if (d != null && remote.userState() != null && remote.userState().length > 0) {
      d.mergeRemoteState(remote.userState(), remote.join());
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // State transitions: alive, suspect, dead

  private void aliveNode(Alive a, Runnable notify, boolean bootstrap) {
    if (a.node() == null || a.node().isEmpty() || a.addr() == null || (a.addr().length != 4 && a.addr().length != 16)) {
      warnLimited("alive_ignored", "node={} reason=\"missing name or invalid address\"", a.node());
      return;
    }
    boolean isLocal = a.node().equals(selfName);
    if (leaving && isLocal) {
      return;
    }
    byte[] vsn = a.vsn();
    if (vsn != null && vsn.length >= 3) {
      int pMin = vsn[0] & 0xff;
      int pMax = vsn[1] & 0xff;
      if (pMin == 0 || pMax == 0 || pMin > pMax) {
        warnLimited("alive_ignored", "node={} reason=\"invalid protocol versions {}..{}\"", a.node(), pMin, pMax);
        return;
      }
    }
    if (!isLocal && config.aliveDelegate() != null) {
      Node peer =
          new NodeRecord(a.node(), a.addr(), a.port(), a.meta(), a.vsn(), NodeState.ALIVE, 0).toNode();
      if (!config.aliveDelegate().notifyAlive(peer)) {
        LOG.debug("event=alive_vetoed node={}", a.node());
        return;
      }
    }
    long now = clock.nanos();
    NodeRecord state = nodes.get(a.node());
    boolean updatesNode = false;
    if (state == null) {
      // A new node starts as dead at incarnation 0 so that the normal update path below makes it alive.
      state = new NodeRecord(a.node(), a.addr(), a.port(), a.meta(), a.vsn(), NodeState.DEAD, now);
      nodes.insert(state);
    } else if (!Arrays.equals(state.addr(), a.addr()) || state.port() != a.port()) {
      boolean canReclaim =
          !config.deadNodeReclaimTime().isZero()
              && state.state() == NodeState.DEAD
              && now - state.stateChangeNanos() > config.deadNodeReclaimTime().toNanos();
      if (state.state() == NodeState.LEFT || canReclaim) {
        LOG.info("event=node_readdressed node={} addr={}", a.node(), NodeRecord.toSocketAddress(a.addr(), a.port()));
        state.setAddress(a.addr(), a.port());
        updatesNode = true;
      } else {
        logLimited(
            true,
            "address_conflict",
            "node={} mine={} theirs={} state={}",
            a.node(),
            state.address(),
            NodeRecord.toSocketAddress(a.addr(), a.port()),
            state.state());
        if (config.conflictDelegate() != null) {
          Node other = new NodeRecord(a.node(), a.addr(), a.port(), a.meta(), a.vsn(), NodeState.ALIVE, 0).toNode();
          config.conflictDelegate().notifyConflict(state.toNode(), other);
        }
        return;
      }
    }
    if (a.incarnation() <= state.incarnation() && !isLocal && !updatesNode) {
      return;
    }
    if (a.incarnation() < state.incarnation() && isLocal) {
      return;
    }
    Suspicion s = suspicions.remove(a.node());
    if (s != null) {
      s.cancel();
    }
    NodeState oldState = state.state();
    byte[] oldMeta = state.meta();
    if (!bootstrap && isLocal) {
      byte[] meta = a.meta() == null ? new byte[0] : a.meta();
      if (a.incarnation() == state.incarnation()
          && Arrays.equals(meta, state.meta())
          && Arrays.equals(a.vsn(), state.vsn())) {
        return;
      }
      refute(state, a.incarnation());
      warnLimited("refute", "reason=alive_about_self incarnation={}", a.incarnation());
    } else {
      broadcast(a.node(), a, notify);
      state.setVsn(a.vsn());
      state.setIncarnation(a.incarnation());
      state.setMeta(a.meta());
      if (state.state() != NodeState.ALIVE) {
        state.setState(NodeState.ALIVE, now);
      }
    }
    if (config.events() != null) {
      if (oldState.deadOrLeft() && state.state() == NodeState.ALIVE) {
        config.events().notifyJoin(state.toNode());
      } else if (!Arrays.equals(oldMeta, state.meta())) {
        config.events().notifyUpdate(state.toNode());
      }
    }
  }

  private void suspectNode(Suspect s) {
    if (s.node() == null || s.from() == null) {
      return;
    }
    NodeRecord state = nodes.get(s.node());
    if (state == null || s.incarnation() < state.incarnation()) {
      return;
    }
    Suspicion existing = suspicions.get(s.node());
    if (existing != null) {
      if (existing.confirm(s.from())) {
        broadcast(s.node(), s, null);
      }
      return;
    }
    if (state.state() != NodeState.ALIVE) {
      return;
    }
    if (s.node().equals(selfName)) {
      refute(state, s.incarnation());
      warnLimited("refute", "reason=suspected accuser={} incarnation={}", s.from(), s.incarnation());
      return;
    }
    broadcast(s.node(), s, null);
    counters.suspicionsRaised.increment();
    long now = clock.nanos();
    state.setIncarnation(s.incarnation());
    state.setState(NodeState.SUSPECT, now);
    long changeTime = now;
    int n = nodes.size();
    int k = Suspicion.confirmationsWanted(timings.suspicionMult(), n);
    long min = Suspicion.minTimeoutNanos(timings.suspicionMult(), n, probeIntervalNanos);
    long max = config.lifeguardSuspicion() ? timings.suspicionMaxTimeoutMult() * min : min;
    if (!config.lifeguardSuspicion()) {
      k = 0;
    }
    LOG.info("event=suspect node={} accuser={} incarnation={}", s.node(), s.from(), s.incarnation());
    NodeRecord suspected = state;
    suspicions.put(
        s.node(),
        new Suspicion(
            clock,
            timers,
            s.from(),
            k,
            min,
            max,
            confirmations -> {
              if (stopped) {
                return;
              }
              if (suspected.state() == NodeState.SUSPECT && suspected.stateChangeNanos() == changeTime) {
                counters.deathsDeclared.increment();
                LOG.info(
                    "event=suspect_timeout node={} confirmations={} declare=dead", suspected.name(), confirmations);
                deadNode(new Dead(suspected.incarnation(), suspected.name(), selfName), null);
              }
            }));
  }

  private void deadNode(Dead d, Runnable notify) {
    if (d.node() == null || d.from() == null) {
      return;
    }
    NodeRecord state = nodes.get(d.node());
    if (state == null || d.incarnation() < state.incarnation()) {
      return;
    }
    Suspicion s = suspicions.remove(d.node());
    if (s != null) {
      s.cancel();
    }
    if (state.state().deadOrLeft()) {
      return;
    }
    if (d.node().equals(selfName) && !leaving) {
      refute(state, d.incarnation());
      warnLimited("refute", "reason=declared_dead accuser={} incarnation={}", d.from(), d.incarnation());
      return;
    }
    broadcast(d.node(), d, notify);
    state.setIncarnation(d.incarnation());
    NodeState newState = d.node().equals(d.from()) ? NodeState.LEFT : NodeState.DEAD;
    state.setState(newState, clock.nanos());
    LOG.info("event={} node={} from={}", newState == NodeState.LEFT ? "left" : "dead", d.node(), d.from());
    if (config.events() != null) {
      config.events().notifyLeave(state.toNode());
    }
  }

  private void refute(NodeRecord me, long accusedIncarnation) {
    long inc = nextIncarnation();
    if (accusedIncarnation >= inc) {
      // uint32 on the wire: at the maximum it wraps as in Go (refutation then cannot win; memberlist issue #311/#359)
      incarnation = (accusedIncarnation + 1) & 0xffffffffL;
      inc = incarnation;
    }
    me.setIncarnation(inc);
    counters.refutations.increment();
    // Having to refute means others could not hear us in time: Lifeguard counts it against our own health.
    awareness.applyDelta(1);
    broadcast(selfName, new Alive(inc, selfName, selfAddr, selfPort, me.meta(), me.vsn()), null);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Local node changes

  /**
   * Starts a graceful leave: broadcasts {@code dead{From: self}}.
   *
   * @param finished run when the leave broadcast was fully transmitted (or replaced)
   * @return true if some other node is alive, i.e. waiting for {@code finished} makes sense
   */
  public boolean leave(Runnable finished) {
    if (leaving) {
      finished.run();
      return false;
    }
    leaving = true;
    NodeRecord self = nodes.get(selfName);
    deadNode(new Dead(self.incarnation(), selfName, selfName), finished);
    return anyAlive();
  }

  public boolean leaving() {
    return leaving;
  }

  /**
   * Re-reads the node metadata from the delegate, bumps the incarnation and broadcasts the new alive message.
   *
   * @param finished run when that broadcast was fully transmitted (or replaced)
   * @return true if some other node is alive
   */
  public boolean updateNode(Runnable finished) {
    NodeRecord self = nodes.get(selfName);
    Alive a = new Alive(nextIncarnation(), selfName, selfAddr, selfPort, localMeta(), self.vsn());
    aliveNode(a, finished, true);
    return anyAlive();
  }

  /** Queues an application-independent user message to {@code to} as its own packet (best effort, no piggyback). */
  public void sendUserPacket(InetSocketAddress to, String nodeName, byte[] payload) {
    counters.userMessagesSent.increment();
    send(to, List.of(encoder.encode(new UserMsg(payload))), nodeName != null && wantsCrc(nodeName));
  }

  private byte[] localMeta() {
    Delegate d = config.delegate();
    if (d == null) {
      return new byte[0];
    }
    byte[] meta = d.nodeMeta(Config.META_MAX_SIZE);
    if (meta == null) {
      return new byte[0];
    }
    if (meta.length > Config.META_MAX_SIZE) {
      throw new IllegalStateException(
          "node meta is " + meta.length + " bytes, memberlist allows at most " + Config.META_MAX_SIZE);
    }
    return meta;
  }

  private long nextSequence() {
    sequenceNumber = (sequenceNumber + 1) & 0xffffffffL;
    return sequenceNumber;
  }

  private long nextIncarnation() {
    incarnation = (incarnation + 1) & 0xffffffffL;
    return incarnation;
  }

  private long gossipToTheDeadNanos() {
    return config.gossipToTheDeadTime().toNanos();
  }
}
