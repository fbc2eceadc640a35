package dev.fencing.agent.runtime;

import dev.fencing.memberlist.transport.PacketHandler;
import dev.fencing.memberlist.transport.StreamConnection;
import dev.fencing.memberlist.transport.StreamHandler;
import dev.fencing.memberlist.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Directed packet drops between loopback ports, applied in a transport wrapper around each agent's real UDP/TCP
 * transport: a partition without root or nftables.
 */
final class NetworkCut {

  private record Link(int from, int to) {}

  private final Set<Link> cut = ConcurrentHashMap.newKeySet();

  /** Drops everything from {@code from} to {@code to}. */
  void cutOneWay(int from, int to) {
    cut.add(new Link(from, to));
  }

  /** Drops everything between {@code a} and {@code b}. */
  void cutBothWays(int a, int b) {
    cutOneWay(a, b);
    cutOneWay(b, a);
  }

  void healAll() {
    cut.clear();
  }

  boolean blocked(int from, int to) {
    return cut.contains(new Link(from, to));
  }

  /** Wraps a node's transport; its own port is the transport's local port. */
  Transport wrap(Transport real) {
    int self = real.localAddress().getPort();
    return new Transport() {
      @Override
      public void start(PacketHandler packets, StreamHandler streams) throws IOException {
        real.start((packet, from, receivedNanos) -> {
          if (!blocked(from.getPort(), self)) {
            packets.onPacket(packet, from, receivedNanos);
          }
        }, streams);
      }

      @Override
      public InetSocketAddress localAddress() {
        return real.localAddress();
      }

      @Override
      public boolean sendPacket(InetSocketAddress to, byte[] packet) {
        if (blocked(self, to.getPort())) {
          return true;
        }
        return real.sendPacket(to, packet);
      }

      @Override
      public StreamConnection openStream(InetSocketAddress to, Duration timeout) throws IOException {
        if (blocked(self, to.getPort()) || blocked(to.getPort(), self)) {
          throw new IOException("partitioned from " + to + " (test network cut)");
        }
        return real.openStream(to, timeout);
      }

      @Override
      public void close() {
        real.close();
      }
    };
  }
}
