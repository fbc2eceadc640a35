package dev.fencing.agent.config;

/**
 * A {@code host:port} (or {@code [v6]:port}) as written in configs and flags.
 *
 * @param host host name or IP literal, without brackets
 * @param port 1..65535, or 0 when the port was optional and omitted
 */
public record HostPort(String host, int port) {

  /**
   * Parses {@code host:port}, {@code [v6]:port}, and — when {@code portRequired} is false — a bare host or
   * {@code [v6]}.
   *
   * @throws IllegalArgumentException saying what is wrong and how to write it
   */
  public static HostPort parse(String value, boolean portRequired) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("address is missing; write it as host:port, e.g. 10.0.0.5:7946");
    }
    String host;
    String port;
    if (value.startsWith("[")) {
      int end = value.indexOf(']');
      if (end < 0 || (end + 1 < value.length() && value.charAt(end + 1) != ':')) {
        throw new IllegalArgumentException("address '" + value + "' is not [ipv6]:port");
      }
      host = value.substring(1, end);
      port = end + 1 < value.length() ? value.substring(end + 2) : null;
    } else {
      int colon = value.lastIndexOf(':');
      if (colon >= 0 && value.indexOf(':') != colon) {
        throw new IllegalArgumentException("address '" + value + "' is not host:port (IPv6 as [addr]:port)");
      }
      host = colon < 0 ? value : value.substring(0, colon);
      port = colon < 0 ? null : value.substring(colon + 1);
    }
    if (host.isEmpty()) {
      throw new IllegalArgumentException("address '" + value + "' has no host");
    }
    if (port == null) {
      if (portRequired) {
        throw new IllegalArgumentException("address '" + value + "' is not host:port (IPv6 as [addr]:port)");
      }
      return new HostPort(host, 0);
    }
    int number;
    try {
      number = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("address '" + value + "' has port '" + port + "', not a number");
    }
    if (number < 1 || number > 65535) {
      throw new IllegalArgumentException("address '" + value + "' has port " + number + ", outside 1..65535");
    }
    return new HostPort(host, number);
  }
}
