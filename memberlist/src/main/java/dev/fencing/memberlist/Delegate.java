package dev.fencing.memberlist;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * The application's hooks into gossip: metadata, user messages, piggybacked broadcasts and push/pull state. Called on
 * memberlist's threads; implementations must be thread-safe and return quickly. Every method has a do-nothing default.
 */
public interface Delegate {
  /** Metadata for the local node's alive message, at most {@code limit} bytes (512). */
  default byte[] nodeMeta(int limit) {
    return new byte[0];
  }

  /** A user message (best-effort or reliable) arrived. The array is owned by the callee. */
  default void notifyMsg(byte[] msg) {}

  /**
   * A user message arrived from {@code from}: the UDP source address of a packet, or the remote address of a TCP
   * stream (an ephemeral port). The default hands it to {@link #notifyMsg(byte[])}; implement this one when the sender's
   * address matters (e.g. to accept a message only from the address of the node it names).
   */
  default void notifyMsg(byte[] msg, InetSocketAddress from) {
    notifyMsg(msg);
  }

  /**
   * Application broadcasts to piggyback on gossip; each costs {@code overhead} bytes of framing plus its length and the
   * total must not exceed {@code limit}.
   */
  default List<byte[]> getBroadcasts(int overhead, int limit) {
    return List.of();
  }

  /** Application state sent in a push/pull exchange; {@code join} is true for the exchange of a join. */
  default byte[] localState(boolean join) {
    return new byte[0];
  }

  /** Application state received in a push/pull exchange. */
  default void mergeRemoteState(byte[] buf, boolean join) {}
}
