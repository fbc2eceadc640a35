package dev.fencing.agent.config;

import dev.fencing.policy.NetworkCidr;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * This node's address on each gossip network: the address of a local interface inside the network's CIDR, bound at
 * the node's gossip port (the same port on every network, so one firewall rule per port covers them all). A config
 * from the controller names only the node's InternalIP; the agent finds the rest here and reports them
 * ({@code AgentReport.network_addresses}) so the controller can tell the peers.
 */
public final class LocalNetworkAddresses {

  private LocalNetworkAddresses() {}

  /**
   * {@code config} with this node's {@code gossipAddresses} completed for every network it has none on: an address
   * {@code lookup} finds inside the network, at the node's gossip port. Networks already configured (a standalone
   * file names them) and networks holding the gossip address are left as they are.
   */
  public static AgentConfig complete(AgentConfig config, Function<NetworkCidr, Optional<InetAddress>> lookup) {
    Optional<ExpectedMember> selfMember = config.member(config.self());
    if (selfMember.isEmpty() || !config.policy().networks().multiple()) {
      return config;
    }
    ExpectedMember self = selfMember.get();
    Map<String, String> perNetwork = new TreeMap<>(self.gossipAddresses());
    for (NetworkCidr cidr : config.policy().networks().cidrs()) {
      if (perNetwork.containsKey(cidr.text()) || cidr.containsLiteral(self.host())) {
        continue;
      }
      lookup.apply(cidr).ifPresent(ip -> {
        String host = ip.getHostAddress();
        perNetwork.put(cidr.text(), (host.contains(":") ? "[" + host + "]" : host) + ":" + self.port());
      });
    }
    if (perNetwork.equals(self.gossipAddresses())) {
      return config;
    }
    List<ExpectedMember> members = new ArrayList<>();
    for (ExpectedMember m : config.members()) {
      members.add(m.name().equals(config.self()) ? m.withGossipAddresses(perNetwork) : m);
    }
    return new AgentConfig(config.group(), config.self(), members, config.policy(), config.gossipKeys(),
        config.maintenance(), config.beingRemoved(), config.source(), config.epoch(), config.revision(),
        config.keyringRevision());
  }

  /** The first address of an up interface inside {@code cidr} (interfaces in the kernel's order), if any. */
  public static Optional<InetAddress> fromInterfaces(NetworkCidr cidr) {
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp()) {
          continue;
        }
        for (InetAddress address : Collections.list(nic.getInetAddresses())) {
          if (cidr.contains(address)) {
            return Optional.of(address);
          }
        }
      }
    } catch (SocketException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }
}
