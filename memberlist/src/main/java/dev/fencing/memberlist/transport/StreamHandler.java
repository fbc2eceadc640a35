package dev.fencing.memberlist.transport;

/** Receives inbound streams; called on a worker thread, may block; must close the connection when done. */
@FunctionalInterface
public interface StreamHandler {
  void onStream(StreamConnection connection);
}
