package dev.fencing.memberlist.state;

/**
 * A message to be gossiped a limited number of times. Broadcasts about the same {@code node} replace each other: a newer
 * alive/suspect/dead about a node makes the older one pointless.
 *
 * @param node the node the message is about; invalidation key
 * @param message the encoded message (type byte first)
 * @param finished called once when the broadcast was transmitted up to the limit or invalidated (may be null)
 */
public record Broadcast(String node, byte[] message, Runnable finished) {
  void finish() {
    if (finished != null) {
      finished.run();
    }
  }
}
