package dev.fencing.memberlist.transport;

import java.net.InetSocketAddress;

/** Receives inbound datagrams; must not block for long (it runs on the transport's receive thread). */
@FunctionalInterface
public interface PacketHandler {
  /**
   * @param packet the datagram's bytes (owned by the handler)
   * @param from the sender's address
   * @param receivedNanos monotonic receive time ({@code System.nanoTime()} or the simulator's clock)
   */
  void onPacket(byte[] packet, InetSocketAddress from, long receivedNanos);
}
