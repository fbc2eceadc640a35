package dev.fencing.agent.membership;

/** Callbacks from the gossip layer, on its threads; implementations hand work over and return quickly. */
public interface GossipListener {

  /** A user message arrived; {@code receivedNanos} is the monotonic receive time. */
  void onUserMessage(byte[] message, long receivedNanos);

  /** A member became alive, changed its metadata, or was declared dead or left ({@link GossipMember#state()}). */
  void onMemberChange(GossipMember member);
}
