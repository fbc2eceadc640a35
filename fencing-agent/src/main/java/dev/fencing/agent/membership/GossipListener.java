package dev.fencing.agent.membership;

import java.net.InetSocketAddress;

/** Callbacks from the gossip layer, on its threads; implementations hand work over and return quickly. */
public interface GossipListener {

  /**
   * A user message arrived from {@code from} (the UDP source address; a TCP stream's remote address);
   * {@code receivedNanos} is the monotonic receive time.
   */
  void onUserMessage(byte[] message, InetSocketAddress from, long receivedNanos);

  /** A member became alive, changed its metadata, or was declared dead or left ({@link GossipMember#state()}). */
  void onMemberChange(GossipMember member);

  /**
   * Gossip announced a node that is not an expected member at its configured address ({@link ExpectedPeers}); it
   * was dropped before entering the node table.
   */
  void onUnexpectedMember(String name, String hostPort);
}
