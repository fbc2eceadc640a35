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
 */
public record ExpectedMember(String name, String host, int port, Map<String, String> addresses) {

  public ExpectedMember {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(host, "host");
    addresses = java.util.Collections.unmodifiableMap(new TreeMap<>(addresses));
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
    if (hostPort == null || hostPort.isBlank()) {
      throw new IllegalArgumentException("address is missing; write it as host:port, e.g. 10.0.0.5:7946");
    }
    String host;
    String port;
    if (hostPort.startsWith("[")) {
      int end = hostPort.indexOf("]:");
      if (end < 0) {
        throw new IllegalArgumentException("address '" + hostPort + "' is not [ipv6]:port");
      }
      host = hostPort.substring(1, end);
      port = hostPort.substring(end + 2);
    } else {
      int colon = hostPort.lastIndexOf(':');
      if (colon <= 0 || hostPort.indexOf(':') != colon) {
        throw new IllegalArgumentException("address '" + hostPort + "' is not host:port (IPv6 as [addr]:port)");
      }
      host = hostPort.substring(0, colon);
      port = hostPort.substring(colon + 1);
    }
    int portNumber;
    try {
      portNumber = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("address '" + hostPort + "' has port '" + port + "', not a number");
    }
    if (portNumber < 1 || portNumber > 65535) {
      throw new IllegalArgumentException("address '" + hostPort + "' has port " + portNumber
          + ", outside 1..65535");
    }
    return new ExpectedMember(name, host, portNumber, addresses == null ? Map.of() : addresses);
  }
}
