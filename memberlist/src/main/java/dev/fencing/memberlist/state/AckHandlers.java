package dev.fencing.memberlist.state;

import java.util.HashMap;
import java.util.Map;

/**
 * Outstanding pings by sequence number: what to do on the ack, on each nack, and when the wait is over. An ack
 * completes the entry; nacks only count; the timeout fires once if no ack came.
 */
final class AckHandlers {
  private final Timers timers;
  private final Map<Long, Entry> pending = new HashMap<>();

  private record Entry(Runnable onAck, Runnable onNack, Timers.Timer timeout) {}

  AckHandlers(Timers timers) {
    this.timers = timers;
  }

  /**
   * @param onNack may be null (nacks are then ignored)
   */
  void register(long seq, long timeoutNanos, Runnable onAck, Runnable onNack, Runnable onTimeout) {
    Timers.Timer t =
        timers.schedule(
            timeoutNanos,
            () -> {
              if (pending.remove(seq) != null) {
                onTimeout.run();
              }
            });
    pending.put(seq, new Entry(onAck, onNack, t));
  }

  void ack(long seq) {
    Entry e = pending.remove(seq);
    if (e != null) {
      e.timeout.cancel();
      e.onAck.run();
    }
  }

  void nack(long seq) {
    Entry e = pending.get(seq);
    if (e != null && e.onNack != null) {
      e.onNack.run();
    }
  }

  /** Forgets every outstanding ping without running anything. */
  void clear() {
    pending.values().forEach(e -> e.timeout.cancel());
    pending.clear();
  }
}
