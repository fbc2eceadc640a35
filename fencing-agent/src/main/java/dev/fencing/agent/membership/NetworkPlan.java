package dev.fencing.agent.membership;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.config.HostPort;
import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.NetworkCidr;
import dev.fencing.policy.Reachability;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Where every expected member gossips on each network of the group, resolved once per config. A group without
 * {@code networks} has one network, {@link #SINGLE} (""), at each member's gossip address: exactly the behaviour
 * before networks existed. With networks, a member's address on network N is its {@code gossipAddresses[N]}, else
 * its gossip address when that lies inside N, else it has none there (no heartbeats go to it on N, and the quorum
 * evaluator judges it on the networks it has an address on). An address outside its network is refused and listed
 * in {@link #refused()}.
 *
 * @param networks     the network names in policy order ({@code [""]} for a single network)
 * @param reachability how per-network round trips combine
 * @param addresses    network → member → its gossip address there
 * @param refused      "member network address" of every configured address outside its network
 */
public record NetworkPlan(List<String> networks, Reachability reachability,
    Map<String, Map<String, InetSocketAddress>> addresses, List<String> refused) {

  /** The name of the only network of a group without {@code networks}. */
  public static final String SINGLE = "";
  /** No members (before a config is known): nothing is admitted, nothing is sent. */
  public static final NetworkPlan NONE = new NetworkPlan(List.of(SINGLE), Reachability.ANY, Map.of(SINGLE, Map.of()),
      List.of());

  public NetworkPlan {
    networks = List.copyOf(networks);
    Map<String, Map<String, InetSocketAddress>> copy = new LinkedHashMap<>();
    addresses.forEach((n, m) -> copy.put(n, Collections.unmodifiableMap(new TreeMap<>(m))));
    addresses = Collections.unmodifiableMap(copy);
    refused = List.copyOf(refused);
  }

  /** The plan of {@code config}. */
  public static NetworkPlan of(AgentConfig config) {
    GossipNetworks gossipNetworks = config.policy().networks();
    Map<String, Map<String, InetSocketAddress>> out = new LinkedHashMap<>();
    List<String> refused = new ArrayList<>();
    if (!gossipNetworks.multiple()) {
      Map<String, InetSocketAddress> single = new TreeMap<>();
      config.members().forEach(m -> single.put(m.name(), m.socketAddress()));
      out.put(SINGLE, single);
      return new NetworkPlan(List.of(SINGLE), gossipNetworks.reachability(), out, refused);
    }
    for (NetworkCidr cidr : gossipNetworks.cidrs()) {
      Map<String, InetSocketAddress> onNetwork = new TreeMap<>();
      for (ExpectedMember m : config.members()) {
        addressOn(m, cidr, refused).ifPresent(a -> onNetwork.put(m.name(), a));
      }
      out.put(cidr.text(), onNetwork);
    }
    return new NetworkPlan(gossipNetworks.texts(), gossipNetworks.reachability(), out, refused);
  }

  private static Optional<InetSocketAddress> addressOn(ExpectedMember m, NetworkCidr cidr, List<String> refused) {
    String configured = m.gossipAddresses().get(cidr.text());
    if (configured != null) {
      try {
        HostPort hp = HostPort.parse(configured, true);
        if (cidr.containsLiteral(hp.host())) {
          return Optional.of(new InetSocketAddress(hp.host(), hp.port()));
        }
      } catch (IllegalArgumentException e) {
        // Reported below like any other address that is not inside its network.
      }
      refused.add(m.name() + " " + cidr.text() + " " + configured);
      return Optional.empty();
    }
    if (cidr.containsLiteral(m.host())) {
      return Optional.of(m.socketAddress());
    }
    return Optional.empty();
  }

  /** True when the group gossips on listed networks. */
  public boolean multiple() {
    return !networks.equals(List.of(SINGLE));
  }

  /** {@code member}'s gossip address on {@code network}, if it has one there. */
  public Optional<InetSocketAddress> address(String member, String network) {
    Map<String, InetSocketAddress> onNetwork = addresses.get(network);
    return onNetwork == null ? Optional.empty() : Optional.ofNullable(onNetwork.get(member));
  }

  /** The network on which {@code from} is {@code member}'s configured address, if any (§9: only that counts). */
  public Optional<String> networkOf(String member, InetSocketAddress from) {
    for (String network : networks) {
      InetSocketAddress expected = addresses.get(network).get(member);
      if (expected != null && expected.equals(from)) {
        return Optional.of(network);
      }
    }
    return Optional.empty();
  }

  /** Per member, the networks it has an address on, in policy order. */
  public Map<String, java.util.Set<String>> networksByMember() {
    Map<String, java.util.Set<String>> out = new TreeMap<>();
    for (String network : networks) {
      addresses.get(network).keySet().forEach(m -> out.computeIfAbsent(m, k -> new java.util.LinkedHashSet<>())
          .add(network));
    }
    return out;
  }

  /**
   * Each member at one address, the same for every network: its address on the first network (policy order) it has
   * one on. Merged gossip members carry it, and the membership view admits them at it.
   */
  public ExpectedPeers canonical() {
    Map<String, InetSocketAddress> out = new TreeMap<>();
    for (String network : networks) {
      addresses.get(network).forEach(out::putIfAbsent);
    }
    return new ExpectedPeers(out);
  }

  /** The members gossip on {@code network} may admit: each at its address there. */
  public ExpectedPeers expectedOn(String network) {
    return new ExpectedPeers(addresses.getOrDefault(network, Map.of()));
  }
}
