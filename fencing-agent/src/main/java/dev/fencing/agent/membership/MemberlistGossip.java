package dev.fencing.agent.membership;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.memberlist.AliveDelegate;
import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Delegate;
import dev.fencing.memberlist.EventDelegate;
import dev.fencing.memberlist.Memberlist;
import dev.fencing.memberlist.MemberlistStats;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.ProtocolTimings;
import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.transport.NioTransport;
import dev.fencing.memberlist.transport.Transport;
import dev.fencing.policy.GossipLabel;
import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link GossipMembership} on the Java memberlist: one cluster per group (gossip label = group name, so two groups
 * sharing a network never merge), timings from the resolved policy, the group keyring when configured (memberlist
 * then seals every packet with AES-GCM, which authenticates heartbeats too), node metadata = {@link NodeMeta}.
 *
 * <p>Timings and keys change on the running member ({@link #applyTimings}, {@link #applyKeys}), never by leaving and
 * rejoining. Only {@link ExpectedPeers expected} names at their configured addresses enter memberlist's node table:
 * the {@link AliveDelegate} vetoes every other alive message, whether it came in a packet or a push/pull merge.
 */
public final class MemberlistGossip implements GossipMembership {

  private static final Logger LOG = LoggerFactory.getLogger(MemberlistGossip.class);

  /** A join or stream that does not answer within this long fails (memberlist's LAN default is 10 s). */
  static final Duration TCP_TIMEOUT = Duration.ofSeconds(3);

  private final Config config;
  private final String self;
  /** The group, for logs (the label is empty when the group gossips without one). */
  private final String group;
  private final Optional<UnaryOperator<Transport>> transportWrapper;
  private final Optional<Keyring> keyring;
  private volatile ProtocolTimings timings;
  private volatile ExpectedPeers expected;
  // The expected members' IPs: the transport reads datagrams from these only (see sourceAllowed).
  private volatile java.util.Set<InetAddress> sources;
  private volatile NodeMeta meta;
  private volatile GossipListener listener;
  private volatile Memberlist memberlist;

  private MemberlistGossip(Config config, String self, String group, NodeMeta meta,
      Optional<UnaryOperator<Transport>> transportWrapper, ExpectedPeers expected) {
    this.config = config;
    this.self = self;
    this.group = group;
    this.meta = meta;
    this.transportWrapper = transportWrapper;
    this.keyring = Optional.ofNullable(config.keyring());
    this.timings = ProtocolTimings.of(config);
    this.expected = expected;
    this.sources = sources(expected);
  }

  // Null (any source) while some expected address is a name that did not resolve: its member must not go unheard.
  private static java.util.Set<InetAddress> sources(ExpectedPeers peers) {
    java.util.Set<InetAddress> out = new java.util.HashSet<>();
    for (InetSocketAddress a : peers.addresses().values()) {
      if (a.getAddress() == null) {
        return null;
      }
      out.add(a.getAddress());
    }
    return java.util.Set.copyOf(out);
  }

  /**
   * Whether the transport reads a datagram from {@code source} at all: only from an expected member's
   * address. Anything else (a host on the node network without the key) would otherwise cost the receive thread an
   * AES-GCM attempt per key for each datagram, and that thread also takes the quorum heartbeats: a flood of garbage
   * at a fraction of a gigabit could starve them and cost armed nodes their quorum. Members are only admitted at
   * these addresses anyway ({@link AdmitExpected}), and heartbeats only from them.
   */
  boolean sourceAllowed(InetAddress source) {
    java.util.Set<InetAddress> allowed = sources;
    return allowed == null || allowed.contains(source);
  }

  /**
   * A gossip member for {@code agent}'s own node.
   *
   * @param bind the address to bind (UDP and TCP); the configured address is advertised
   * @param transportWrapper wraps the real transport (tests drop packets there to cut a node off)
   */
  public static MemberlistGossip create(AgentConfig agent, NodeMeta initialMeta, InetSocketAddress bind,
      Optional<UnaryOperator<Transport>> transportWrapper) {
    ExpectedMember me = agent.selfMember();
    return create(agent, initialMeta, bind, new InetSocketAddress(me.host(), me.port()),
        ExpectedPeers.of(agent.members()), transportWrapper);
  }

  /**
   * A gossip member for {@code agent}'s own node on one network of several: same name, label and keyring as on the
   * others, its own address there, and only the expected members at their addresses on that network.
   *
   * @param advertise this node's address on that network
   * @param expected the members this network admits
   */
  public static MemberlistGossip create(AgentConfig agent, NodeMeta initialMeta, InetSocketAddress bind,
      InetSocketAddress advertise, ExpectedPeers expected, Optional<UnaryOperator<Transport>> transportWrapper) {
    return new MemberlistGossip(config(agent, bind, advertise), agent.self(), agent.group(), initialMeta,
        transportWrapper, expected);
  }

  /** {@link #config(AgentConfig, InetSocketAddress, InetSocketAddress)} advertising the configured address. */
  static Config config(AgentConfig agent, InetSocketAddress bind) {
    ExpectedMember me = agent.selfMember();
    return config(agent, bind, new InetSocketAddress(me.host(), me.port()));
  }

  /**
   * The memberlist configuration of {@code agent}'s node: LAN defaults with the policy's timings, the gossip keys,
   * and the group name as label unless the group's {@code gossipLabel} is None (peers without label support).
   */
  static Config config(AgentConfig agent, InetSocketAddress bind, InetSocketAddress advertise) {
    Config.Builder builder = protocolTimings(agent.policy().timings()).applyTo(Config.defaultLan().toBuilder()
        .name(agent.self())
        .bindAddr(bind.getAddress().getHostAddress())
        .bindPort(bind.getPort())
        .advertiseAddr(advertise.getHostString())
        .advertisePort(advertise.getPort())
        .label(agent.policy().gossipLabel() == GossipLabel.NONE ? "" : agent.group())
        .tcpTimeout(TCP_TIMEOUT));
    if (!agent.gossipKeys().isEmpty()) {
      List<byte[]> keys = agent.gossipKeys();
      builder.keyring(new Keyring(keys.get(0), keys.subList(1, keys.size()).toArray(new byte[0][])));
    }
    return builder.build();
  }

  /** memberlist's share of the resolved timings. */
  static ProtocolTimings protocolTimings(ResolvedTimings t) {
    return new ProtocolTimings(t.probeInterval(), t.probeTimeout(), t.suspicionMult(), t.suspicionMaxTimeoutMult(),
        t.gossipInterval(), t.gossipNodes(), t.retransmitMult(), t.pushPullInterval());
  }

  @Override
  public void start(GossipListener gossipListener) throws IOException {
    this.listener = gossipListener;
    ProtocolTimings startWith = timings;
    Config.Builder builder = startWith.applyTo(config.toBuilder()).delegate(new MetaAndMessages())
        .events(new Events()).aliveDelegate(new AdmitExpected()).acceptFrom(this::sourceAllowed);
    if (transportWrapper.isPresent()) {
      NioTransport real = NioTransport.bind(new InetSocketAddress(InetAddress.getByName(config.bindAddr()),
          config.bindPort()), new InetSocketAddress(InetAddress.getByName(config.advertiseAddr()),
          config.advertisePort()));
      real.acceptOnlyFrom(this::sourceAllowed);
      builder.transport(transportWrapper.get().apply(real));
    }
    Memberlist m = Memberlist.create(builder.build());
    memberlist = m;
    // Timings applied while memberlist was being created must not be lost.
    ProtocolTimings latest = timings;
    if (!latest.equals(startWith)) {
      m.applyTimings(latest);
    }
  }

  @Override
  public void applyTimings(ResolvedTimings resolved) {
    ProtocolTimings next = protocolTimings(resolved);
    timings = next;
    Memberlist m = memberlist;
    if (m != null && !m.timings().equals(next)) {
      m.applyTimings(next);
    }
  }

  @Override
  public void applyKeys(List<byte[]> keys) {
    if (keyring.isEmpty() || keys.isEmpty()) {
      throw new IllegalStateException("gossip runs " + (keyring.isEmpty() ? "unencrypted" : "encrypted")
          + ": switching between plaintext and encrypted gossip needs a restart");
    }
    Keyring ring = keyring.get();
    // Go memberlist's order: install every new key, then switch the primary, then remove what is no longer listed,
    // so at no instant does this node refuse a key a peer may still encrypt with.
    keys.forEach(ring::install);
    ring.use(keys.get(0));
    for (byte[] installed : ring.keys()) {
      if (keys.stream().noneMatch(k -> Arrays.equals(k, installed))) {
        ring.remove(installed);
      }
    }
  }

  @Override
  public void expectMembers(ExpectedPeers peers) {
    sources = sources(peers);
    expected = peers;
  }

  @Override
  public int join(List<String> hostPorts) {
    Memberlist m = memberlist;
    if (m == null || hostPorts.isEmpty()) {
      return 0;
    }
    try {
      return m.join(hostPorts);
    } catch (IOException e) {
      LOG.debug("node={} group={} event=join_failed peers={} error=\"{}\"", self, group, hostPorts,
          e.getMessage());
      return 0;
    }
  }

  @Override
  public List<GossipMember> members() {
    Memberlist m = memberlist;
    if (m == null) {
      return List.of();
    }
    List<GossipMember> out = new ArrayList<>();
    for (Node n : m.allNodes()) {
      out.add(toMember(n));
    }
    return out;
  }

  @Override
  public void sendTo(InetSocketAddress address, byte[] message) {
    Memberlist m = memberlist;
    if (m != null) {
      m.sendToAddress(address, message);
    }
  }

  @Override
  public void updateMeta(NodeMeta newMeta, Duration timeout) {
    meta = newMeta;
    Memberlist m = memberlist;
    if (m != null) {
      m.updateNode(timeout);
    }
  }

  @Override
  public GossipTraffic traffic() {
    Memberlist m = memberlist;
    if (m == null) {
      return GossipTraffic.NONE;
    }
    MemberlistStats s = m.stats();
    return new GossipTraffic(s.packetsSent(), s.packetsReceived(), s.bytesSent(), s.bytesReceived());
  }

  @Override
  public void leaveAndClose(Duration timeout) {
    Memberlist m = memberlist;
    if (m == null) {
      return;
    }
    try {
      m.leave(timeout);
    } finally {
      m.shutdown();
    }
  }

  private GossipMember toMember(Node node) {
    NodeMeta decoded;
    try {
      decoded = NodeMeta.decode(node.meta());
    } catch (IllegalArgumentException e) {
      LOG.debug("node={} group={} event=foreign_meta peer={} error=\"{}\"", self, group, node.name(),
          e.getMessage());
      decoded = NodeMeta.EMPTY;
    }
    GossipState state = switch (node.state()) {
      case ALIVE -> GossipState.ALIVE;
      case SUSPECT -> GossipState.SUSPECT;
      case DEAD -> GossipState.DEAD;
      case LEFT -> GossipState.LEFT;
    };
    return new GossipMember(node.name(), node.hostPort(), decoded, state);
  }

  private final class MetaAndMessages implements Delegate {
    @Override
    public byte[] nodeMeta(int limit) {
      byte[] encoded = meta.encode();
      if (encoded.length > limit) {
        LOG.error("node={} group={} event=meta_too_large bytes={} limit={}", self, group, encoded.length,
            limit);
        return new NodeMeta(java.util.Map.of(), meta.isolated()).encode();
      }
      return encoded;
    }

    @Override
    public void notifyMsg(byte[] msg, InetSocketAddress from) {
      GossipListener l = listener;
      if (l != null) {
        l.onUserMessage(msg, from, System.nanoTime());
      }
    }
  }

  /** memberlist's NotifyAlive: only expected names at their configured addresses enter the node table. */
  private final class AdmitExpected implements AliveDelegate {
    @Override
    public boolean notifyAlive(Node peer) {
      if (expected.admits(peer.name(), peer.address())) {
        return true;
      }
      GossipListener l = listener;
      if (l != null) {
        l.onUnexpectedMember(peer.name(), peer.hostPort());
      }
      return false;
    }
  }

  private final class Events implements EventDelegate {
    @Override
    public void notifyJoin(Node node) {
      deliver(node);
    }

    @Override
    public void notifyLeave(Node node) {
      deliver(node);
    }

    @Override
    public void notifyUpdate(Node node) {
      deliver(node);
    }

    private void deliver(Node node) {
      GossipListener l = listener;
      if (l != null) {
        l.onMemberChange(toMember(node));
      }
    }
  }
}
