package dev.fencing.agent.membership;

import dev.fencing.agent.config.ExpectedMember;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The members gossip may admit: each expected name with its configured gossip address, resolved once per config.
 * A gossip node counts only when its name is expected <em>and</em> it is at that name's address; anything else (an
 * unknown name, an expected name at another address) is dropped before it reaches the node table, the local API or
 * the quorum loop, so every per-peer structure stays bounded by the group size.
 *
 * @param addresses expected name → its gossip address
 */
public record ExpectedPeers(Map<String, InetSocketAddress> addresses) {

  /** Admits nobody (before a config is known). */
  public static final ExpectedPeers NONE = new ExpectedPeers(Map.of());

  public ExpectedPeers {
    addresses = Map.copyOf(addresses);
  }

  /** The expected members' gossip addresses (resolved here: no DNS lookup for IP literals). */
  public static ExpectedPeers of(Collection<ExpectedMember> members) {
    Map<String, InetSocketAddress> out = new TreeMap<>();
    for (ExpectedMember m : members) {
      out.put(m.name(), m.socketAddress());
    }
    return new ExpectedPeers(out);
  }

  /** True when {@code name} is expected and {@code address} is its configured gossip address. */
  public boolean admits(String name, InetSocketAddress address) {
    InetSocketAddress expected = addresses.get(name);
    return expected != null && expected.equals(address);
  }

  /** True when {@code name} is expected at {@code hostPort} (memberlist's {@code ip:port} form). */
  public boolean admits(String name, String hostPort) {
    InetSocketAddress expected = addresses.get(name);
    return expected != null && expected.getAddress() != null
        && (expected.getAddress().getHostAddress() + ":" + expected.getPort()).equals(hostPort);
  }

  /** The expected names. */
  public Set<String> names() {
    return addresses.keySet();
  }
}
