package dev.fencing.agent.membership;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Delegate;
import dev.fencing.memberlist.EventDelegate;
import dev.fencing.memberlist.Memberlist;
import dev.fencing.memberlist.MemberlistStats;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.transport.NioTransport;
import dev.fencing.memberlist.transport.Transport;
import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link GossipMembership} on the Java memberlist: one cluster per group (gossip label = group name, so two groups
 * sharing a network never merge), timings from the resolved policy, the group keyring when configured (memberlist
 * then seals every packet with AES-GCM, which authenticates heartbeats too), node metadata = {@link NodeMeta}.
 */
public final class MemberlistGossip implements GossipMembership {

  private static final Logger LOG = LoggerFactory.getLogger(MemberlistGossip.class);

  /** A join or stream that does not answer within this long fails (memberlist's LAN default is 10 s). */
  static final Duration TCP_TIMEOUT = Duration.ofSeconds(3);

  private final Config config;
  private final String self;
  private final Optional<UnaryOperator<Transport>> transportWrapper;
  private volatile NodeMeta meta;
  private volatile GossipListener listener;
  private volatile Memberlist memberlist;

  private MemberlistGossip(Config config, String self, NodeMeta meta,
      Optional<UnaryOperator<Transport>> transportWrapper) {
    this.config = config;
    this.self = self;
    this.meta = meta;
    this.transportWrapper = transportWrapper;
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
    ResolvedTimings t = agent.policy().timings();
    Config.Builder builder = Config.defaultLan().toBuilder()
        .name(agent.self())
        .bindAddr(bind.getAddress().getHostAddress())
        .bindPort(bind.getPort())
        .advertiseAddr(me.host())
        .advertisePort(me.port())
        .label(agent.group())
        .tcpTimeout(TCP_TIMEOUT)
        .probeInterval(t.probeInterval())
        .probeTimeout(t.probeTimeout())
        .suspicionMult(t.suspicionMult())
        .suspicionMaxTimeoutMult(t.suspicionMaxTimeoutMult())
        .gossipInterval(t.gossipInterval())
        .gossipNodes(t.gossipNodes())
        .retransmitMult(t.retransmitMult())
        .pushPullInterval(t.pushPullInterval());
    if (!agent.gossipKeys().isEmpty()) {
      List<byte[]> keys = agent.gossipKeys();
      builder.keyring(new Keyring(keys.get(0), keys.subList(1, keys.size()).toArray(new byte[0][])));
    }
    return new MemberlistGossip(builder.build(), agent.self(), initialMeta, transportWrapper);
  }

  @Override
  public void start(GossipListener gossipListener) throws IOException {
    this.listener = gossipListener;
    Config.Builder builder = config.toBuilder().delegate(new MetaAndMessages()).events(new Events());
    if (transportWrapper.isPresent()) {
      Transport real = NioTransport.bind(new InetSocketAddress(InetAddress.getByName(config.bindAddr()),
          config.bindPort()), new InetSocketAddress(InetAddress.getByName(config.advertiseAddr()),
          config.advertisePort()));
      builder.transport(transportWrapper.get().apply(real));
    }
    memberlist = Memberlist.create(builder.build());
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
      LOG.debug("node={} group={} event=join_failed peers={} error=\"{}\"", self, config.label(), hostPorts,
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
      LOG.debug("node={} group={} event=foreign_meta peer={} error=\"{}\"", self, config.label(), node.name(),
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
        LOG.error("node={} group={} event=meta_too_large bytes={} limit={}", self, config.label(), encoded.length,
            limit);
        return new NodeMeta(java.util.Map.of(), meta.isolated()).encode();
      }
      return encoded;
    }

    @Override
    public void notifyMsg(byte[] msg) {
      GossipListener l = listener;
      if (l != null) {
        l.onUserMessage(msg, System.nanoTime());
      }
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
