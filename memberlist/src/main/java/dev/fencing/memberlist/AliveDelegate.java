package dev.fencing.memberlist;

/** Filters alive messages about other nodes, e.g. to keep foreign clusters out. */
@FunctionalInterface
public interface AliveDelegate {
  /** @return false to ignore this alive message */
  boolean notifyAlive(Node peer);
}
