package dev.fencing.memberlist.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Moves raw bytes for memberlist: datagrams (UDP in production) and one-message streams (TCP), both on one local
 * address. Framing, labels, encryption and compression are above this layer. Implementations: the NIO UDP+TCP
 * transport and the simulator's in-memory network.
 */
public interface Transport extends AutoCloseable {

  /** Starts delivering inbound packets and streams to the handlers. Called once. */
  void start(PacketHandler packets, StreamHandler streams) throws IOException;

  /** The address peers reach this node at (bound address, or the advertise address when configured). */
  InetSocketAddress localAddress();

  /**
   * Sends one datagram, best effort. Network errors are counted and logged, never thrown: a lost packet is a normal
   * event for the protocol above.
   *
   * @return false if the packet could not be handed to the network
   */
  boolean sendPacket(InetSocketAddress to, byte[] packet);

  /** Opens a stream to {@code to}, failing after {@code timeout}. */
  StreamConnection openStream(InetSocketAddress to, Duration timeout) throws IOException;

  /** Stops receiving and releases the sockets. Idempotent. */
  @Override
  void close();
}
