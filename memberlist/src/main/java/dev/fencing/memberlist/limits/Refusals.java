package dev.fencing.memberlist.limits;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts input refused by each {@link Limit} and logs it: one warning line per cap at most once per {@link
 * #LOG_INTERVAL}, carrying the total and how many refusals the quiet period hid, so a flood of hostile frames costs
 * a handful of log lines, not one per frame. Thread-safe; one instance is shared by a node's codecs and transport.
 */
public final class Refusals {
  /** Shortest time between two log lines about the same cap. */
  public static final Duration LOG_INTERVAL = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(Refusals.class);

  private final String node;
  // One rate-limited count per cap.
  private final Map<Limit, DropLog> logs = new EnumMap<>(Limit.class);

  /**
   * @param node this node's name, for the log lines
   * @param nanoTime monotonic clock in nanoseconds ({@code System::nanoTime} outside tests)
   */
  public Refusals(String node, LongSupplier nanoTime) {
    this.node = node;
    for (Limit l : Limit.values()) {
      logs.put(l, new DropLog(nanoTime, LOG_INTERVAL));
    }
  }

  /** Counts one refusal by {@code limit} and logs it unless a line about this cap was written recently. */
  public void refused(Limit limit, String reason) {
    DropLog.Line line = logs.get(limit).dropped();
    if (line == null) {
      return;
    }
    LOG.warn(
        "event=limit_exceeded node={} limit={} refused_total={} not_logged={} reason=\"{}\"",
        node,
        limit.configField(),
        line.total(),
        line.notLogged(),
        reason);
  }

  /** Refusals by {@code limit} since start. */
  public long count(Limit limit) {
    return logs.get(limit).total();
  }

  /** Refusals per cap since start (every cap present, zero when never hit). */
  public Map<Limit, Long> snapshot() {
    Map<Limit, Long> out = new EnumMap<>(Limit.class);
    for (Limit l : Limit.values()) {
      out.put(l, count(l));
    }
    return out;
  }

  /** Warning lines written since start (all caps together). */
  public long logLines() {
    return logs.values().stream().mapToLong(DropLog::logLines).sum();
  }
}
