package dev.fencing.memberlist.state;

import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushPull;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Everything the protocol sends. Called with the protocol lock held; implementations must not block for long and
 * perform stream exchanges asynchronously, reporting back through {@link SwimProtocol#mergeRemoteState} and {@link
 * SwimProtocol#streamPingResult}.
 */
public interface ProtocolOutput {
  /**
   * Sends one UDP packet: a single encoded message, or a compound of several.
   *
   * @param crc whether to prefix a CRC (only for peers that speak protocol 5)
   */
  void sendPacket(InetSocketAddress to, List<byte[]> messages, boolean crc);

  /** Starts a push/pull exchange; the reply goes to {@link SwimProtocol#mergeRemoteState(PushPull)}. */
  void pushPull(InetSocketAddress to, PushPull request);

  /**
   * Starts the TCP fallback ping; the outcome goes to {@link SwimProtocol#streamPingResult(long, boolean)} before
   * {@code timeoutNanos} elapse or not at all.
   */
  void streamPing(InetSocketAddress to, Ping ping, long timeoutNanos);
}
