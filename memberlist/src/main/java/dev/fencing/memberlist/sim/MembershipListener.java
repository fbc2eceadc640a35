package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Node;

/** Observes every membership event at every simulated node, with the virtual time it happened. */
@FunctionalInterface
public interface MembershipListener {
  /** What an {@link dev.fencing.memberlist.EventDelegate} was told. */
  enum Kind {
    JOIN,
    LEAVE,
    UPDATE
  }

  void onEvent(SimNode observer, Node subject, Kind kind, long nanos);
}
