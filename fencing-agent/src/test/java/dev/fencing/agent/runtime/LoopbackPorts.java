package dev.fencing.agent.runtime;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports for gossip, which needs the same number on UDP and TCP. */
final class LoopbackPorts {

  private LoopbackPorts() {}

  static int free() throws IOException {
    for (int attempt = 0; attempt < 20; attempt++) {
      try (ServerSocket tcp = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = tcp.getLocalPort();
        try (DatagramSocket udp = new DatagramSocket(port, InetAddress.getLoopbackAddress())) {
          return port;
        } catch (IOException busy) {
          // The UDP side of this number is taken: try another.
        }
      }
    }
    throw new IOException("no free loopback port with both TCP and UDP available");
  }

  /**
   * {@code n} distinct free ports: each {@link #free()} closes its probe sockets, so the kernel may hand the same
   * number out again (a group with two members on one address is refused).
   */
  static java.util.List<Integer> distinct(int n) throws IOException {
    java.util.Set<Integer> ports = new java.util.LinkedHashSet<>();
    for (int attempt = 0; attempt < 20 * n && ports.size() < n; attempt++) {
      ports.add(free());
    }
    if (ports.size() < n) {
      throw new IOException("no " + n + " distinct free loopback ports with both TCP and UDP available");
    }
    return java.util.List.copyOf(ports);
  }
}
