package dev.fencing.agent.membership;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.memberlist.transport.Transport;
import dev.fencing.policy.NetworkCidr;
import dev.fencing.policy.Reachability;
import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One gossip member per network of the group, presented as one {@link GossipMembership}: every network is its own
 * memberlist (same name, group label and keyring; its own address), so a failure of one network is detected by that
 * network's failure detector alone. Datagrams and joins go out on the network whose CIDR holds the destination;
 * metadata, timings, keys and leaves go to every network. A member's merged state follows the reachability rule:
 * under Any it is alive while alive on any network, under All only while alive on every network (the state it has on
 * the worst network otherwise), so the JOIN/LEFT events consumers see agree with what quorum counts.
 */
public final class MultiNetworkGossip implements GossipMembership {

  /** One network's member with the CIDR that routes to it. */
  public record OnNetwork(NetworkCidr cidr, GossipMembership gossip) {}

  private final List<OnNetwork> networks;
  private final Reachability reachability;
  private volatile NetworkPlan plan;
  // network → name → that network's latest view of the member; guarded by this.
  private final Map<String, Map<String, GossipMember>> seen = new HashMap<>();

  /**
   * @param networks the per-network members, in policy order
   * @param plan where every member is on each network (its rule merges a member's states)
   */
  public MultiNetworkGossip(List<OnNetwork> networks, NetworkPlan plan) {
    if (networks.isEmpty()) {
      throw new IllegalArgumentException("a multi-network gossip needs at least one network");
    }
    this.networks = List.copyOf(networks);
    this.plan = plan;
    this.reachability = plan.reachability();
    networks.forEach(n -> seen.put(n.cidr().text(), new HashMap<>()));
  }

  /**
   * The gossip of {@code config}'s own node: one memberlist at {@code singleBind} for a group with one network,
   * else one per network this node has an address on, each bound to (and advertising) that address.
   *
   * @param transportWrapper per network name ({@link NetworkPlan#SINGLE} for one), the wrapper of its transport
   * @throws IOException when this node has an address on none of the group's networks
   */
  public static GossipMembership create(AgentConfig config, NodeMeta meta, InetSocketAddress singleBind,
      Function<String, Optional<UnaryOperator<Transport>>> transportWrapper) throws IOException {
    NetworkPlan plan = NetworkPlan.of(config);
    if (!plan.multiple()) {
      return MemberlistGossip.create(config, meta, singleBind, transportWrapper.apply(NetworkPlan.SINGLE));
    }
    List<OnNetwork> members = new ArrayList<>();
    for (NetworkCidr cidr : config.policy().networks().cidrs()) {
      Optional<InetSocketAddress> own = plan.address(config.self(), cidr.text());
      if (own.isPresent()) {
        members.add(new OnNetwork(cidr, MemberlistGossip.create(config, meta, own.get(), own.get(),
            plan.expectedOn(cidr.text()), transportWrapper.apply(cidr.text()))));
      }
    }
    if (members.isEmpty()) {
      throw new IOException("node " + config.self() + " has no address on any gossip network "
          + plan.networks() + "; give it an interface address inside one");
    }
    return new MultiNetworkGossip(members, plan);
  }

  @Override
  public void start(GossipListener listener) throws IOException {
    List<OnNetwork> started = new ArrayList<>();
    try {
      for (OnNetwork n : networks) {
        n.gossip().start(new Merging(n.cidr().text(), listener));
        started.add(n);
      }
    } catch (IOException | RuntimeException e) {
      // A network that cannot bind fails the start as one member would: release the others' sockets.
      started.forEach(n -> n.gossip().leaveAndClose(Duration.ZERO));
      throw e;
    }
  }

  @Override
  public int join(List<String> hostPorts) {
    Map<OnNetwork, List<String>> byNetwork = new LinkedHashMap<>();
    for (String hostPort : hostPorts) {
      route(hostPort).ifPresent(n -> byNetwork.computeIfAbsent(n, k -> new ArrayList<>()).add(hostPort));
    }
    int answered = 0;
    for (Map.Entry<OnNetwork, List<String>> e : byNetwork.entrySet()) {
      answered += e.getKey().gossip().join(e.getValue());
    }
    return answered;
  }

  @Override
  public List<GossipMember> members() {
    // Read each network outside this object's lock: memberlist may call back into it while holding its own.
    Map<String, List<GossipMember>> current = membersByNetwork();
    Map<String, GossipMember> merged = new LinkedHashMap<>();
    synchronized (this) {
      current.forEach((network, members) -> members.forEach(m -> seen.get(network).put(m.name(), m)));
      // Each name once (merge already looks at every network), in the order the networks first show it.
      Set<String> names = new LinkedHashSet<>();
      seen.values().forEach(onNetwork -> names.addAll(onNetwork.keySet()));
      for (String name : names) {
        merge(name).ifPresent(m -> merged.put(name, m));
      }
    }
    return List.copyOf(merged.values());
  }

  @Override
  public Map<String, List<GossipMember>> membersByNetwork() {
    Map<String, List<GossipMember>> out = new LinkedHashMap<>();
    networks.forEach(n -> out.put(n.cidr().text(), n.gossip().members()));
    return out;
  }

  @Override
  public void sendTo(InetSocketAddress address, byte[] message) {
    for (OnNetwork n : networks) {
      if (address.getAddress() != null && n.cidr().contains(address.getAddress())) {
        n.gossip().sendTo(address, message);
        return;
      }
    }
  }

  @Override
  public void updateMeta(NodeMeta meta, Duration timeout) {
    networks.forEach(n -> n.gossip().updateMeta(meta, timeout));
  }

  @Override
  public void applyTimings(ResolvedTimings timings) {
    networks.forEach(n -> n.gossip().applyTimings(timings));
  }

  @Override
  public void applyKeys(List<byte[]> keys) {
    networks.forEach(n -> n.gossip().applyKeys(keys));
  }

  /**
   * Admits only the names of {@code expected}, each network at the member's address on it in the latest plan (the
   * addresses in {@code expected} are of one network and say nothing about the others).
   */
  @Override
  public void expectMembers(ExpectedPeers expected) {
    NetworkPlan current = plan;
    for (OnNetwork n : networks) {
      Map<String, InetSocketAddress> admitted = new HashMap<>(current.expectedOn(n.cidr().text()).addresses());
      admitted.keySet().retainAll(expected.names());
      n.gossip().expectMembers(new ExpectedPeers(admitted));
    }
  }

  /** Each network admits the expected members at their addresses on it. */
  @Override
  public void expectMembers(NetworkPlan newPlan) {
    plan = newPlan;
    networks.forEach(n -> n.gossip().expectMembers(newPlan.expectedOn(n.cidr().text())));
  }

  @Override
  public GossipTraffic traffic() {
    long ps = 0;
    long pr = 0;
    long bs = 0;
    long br = 0;
    for (OnNetwork n : networks) {
      GossipTraffic t = n.gossip().traffic();
      ps += t.packetsSent();
      pr += t.packetsReceived();
      bs += t.bytesSent();
      br += t.bytesReceived();
    }
    return new GossipTraffic(ps, pr, bs, br);
  }

  @Override
  public void leaveAndClose(Duration timeout) {
    RuntimeException first = null;
    for (OnNetwork n : networks) {
      try {
        n.gossip().leaveAndClose(timeout);
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private Optional<OnNetwork> route(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
    String literal = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return networks.stream().filter(n -> n.cidr().containsLiteral(literal)).findFirst();
  }

  /** The member called {@code name} merged over the networks, or empty while All still waits for a network. */
  private Optional<GossipMember> merge(String name) {
    GossipMember best = null;
    GossipMember worst = null;
    int known = 0;
    for (OnNetwork n : networks) {
      GossipMember m = seen.get(n.cidr().text()).get(name);
      if (m == null) {
        continue;
      }
      known++;
      best = best == null || rank(m.state()) < rank(best.state()) ? m : best;
      worst = worst == null || rank(m.state()) > rank(worst.state()) ? m : worst;
    }
    if (best == null) {
      return Optional.empty();
    }
    GossipState state;
    if (reachability == Reachability.ANY) {
      state = best.state();
    } else if (known < networks.size() && worst.state() == GossipState.ALIVE) {
      // Not yet seen on every network: under All it is not reachable yet, and nothing was announced for it.
      return Optional.empty();
    } else {
      state = worst.state();
    }
    // One address whatever network the state came from, so the membership view knows the member by it; metadata is
    // the same on every network.
    InetSocketAddress canonical = plan.canonical().addresses().get(name);
    String hostPort = canonical == null || canonical.getAddress() == null ? best.hostPort()
        : canonical.getAddress().getHostAddress() + ":" + canonical.getPort();
    return Optional.of(new GossipMember(name, hostPort, best.meta(), state));
  }

  private static int rank(GossipState state) {
    return switch (state) {
      case ALIVE -> 0;
      case SUSPECT -> 1;
      case DEAD -> 2;
      case LEFT -> 3;
    };
  }

  /** Records each network's change and passes on the merged member; heartbeats go through untouched. */
  private final class Merging implements GossipListener {
    private final String network;
    private final GossipListener downstream;

    Merging(String network, GossipListener downstream) {
      this.network = network;
      this.downstream = downstream;
    }

    @Override
    public void onUserMessage(byte[] message, InetSocketAddress from, long receivedNanos) {
      downstream.onUserMessage(message, from, receivedNanos);
    }

    @Override
    public void onMemberChange(GossipMember member) {
      Optional<GossipMember> merged;
      synchronized (MultiNetworkGossip.this) {
        seen.get(network).put(member.name(), member);
        merged = merge(member.name());
      }
      merged.ifPresent(downstream::onMemberChange);
    }

    @Override
    public void onUnexpectedMember(String name, String hostPort) {
      downstream.onUnexpectedMember(name, hostPort);
    }
  }
}
