package dev.fencing.memberlist;

/** Told when a node name is claimed from a second address while the first is still a member. */
@FunctionalInterface
public interface ConflictDelegate {
  void notifyConflict(Node existing, Node other);
}
