package dev.fencing.agent.runtime;

import java.util.Objects;

/**
 * Decides when to send an AgentReport: whenever anything the controller acts on changed (armed, fencing, quorum,
 * isolated, disarm reasons, confirmed peers, config revision), and at least every {@code everyNanos} so the
 * controller's last-contact estimates stay fresh.
 */
final class ReportThrottle {

  private record Key(boolean armed, boolean fencing, boolean held, boolean isolated, Object reasons,
      Object confirmed, long revision, String condition) {}

  private final long everyNanos;
  private Key last;
  private long lastSentNanos;

  ReportThrottle(long everyNanos) {
    this.everyNanos = everyNanos;
  }

  boolean shouldSend(AgentSnapshot s, long nowNanos) {
    Key key = new Key(s.watchdog().armed(), s.watchdog().fencingInProgress(), s.quorumHeld(), s.isolated(),
        s.watchdog().disarmReasons(), s.verdict().map(v -> v.side()).orElse(null),
        s.config().map(c -> c.revision()).orElse(-1L), s.watchdog().condition());
    if (last == null || !Objects.equals(key, last) || nowNanos - lastSentNanos >= everyNanos) {
      last = key;
      lastSentNanos = nowNanos;
      return true;
    }
    return false;
  }
}
