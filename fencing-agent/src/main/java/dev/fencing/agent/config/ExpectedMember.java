package dev.fencing.agent.config;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One expected member of the group.
 *
 * @param name member name (the Kubernetes node name)
 * @param host host or IP its gossip listens on
 * @param port its gossip port (UDP and TCP)
 * @param addresses the node's addresses per network, served to local consumers
 * @param gossipAddresses per gossip network of the group's policy: CIDR → its gossip {@code host:port} there (a
 *     network missing here falls back to {@link #gossipAddress()} when that lies inside it)
 */
public record ExpectedMember(String name, String host, int port, Map<String, String> addresses,
    Map<String, String> gossipAddresses) {

  public ExpectedMember {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(host, "host");
    addresses = java.util.Collections.unmodifiableMap(new TreeMap<>(addresses));
    gossipAddresses = java.util.Collections.unmodifiableMap(new TreeMap<>(gossipAddresses));
  }

  /** A member gossiping on its gossip address alone. */
  public ExpectedMember(String name, String host, int port, Map<String, String> addresses) {
    this(name, host, port, addresses, Map.of());
  }

  /** A copy with these per-network gossip addresses (CIDR → {@code host:port}). */
  public ExpectedMember withGossipAddresses(Map<String, String> perNetwork) {
    return new ExpectedMember(name, host, port, addresses, perNetwork);
  }

  /** {@code host:port}, with brackets around an IPv6 host. */
  public String gossipAddress() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  /** The gossip address, resolved (no DNS lookup for IP literals). */
  public InetSocketAddress socketAddress() {
    return new InetSocketAddress(host, port);
  }

  /**
   * Parses {@code host:port} or {@code [v6]:port}.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static ExpectedMember parse(String name, String hostPort, Map<String, String> addresses) {
    HostPort parsed = HostPort.parse(hostPort, true);
    return new ExpectedMember(name, parsed.host(), parsed.port(), addresses == null ? Map.of() : addresses);
  }
}
