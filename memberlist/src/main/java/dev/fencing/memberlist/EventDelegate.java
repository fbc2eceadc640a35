package dev.fencing.memberlist;

/**
 * Membership change notifications, called in the order the changes happen on the protocol thread. Implementations
 * must return quickly and must not call back into blocking {@link Memberlist} methods (join, leave).
 */
public interface EventDelegate {
  /** A node became alive (new, or back from dead/left). */
  default void notifyJoin(Node node) {}

  /** A node was declared dead or left gracefully ({@link Node#state()} tells which). */
  default void notifyLeave(Node node) {}

  /** An alive node changed its metadata. */
  default void notifyUpdate(Node node) {}
}
