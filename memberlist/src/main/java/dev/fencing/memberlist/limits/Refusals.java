package dev.fencing.memberlist.limits;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
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
  private static final long NEVER = Long.MIN_VALUE;

  private final LongSupplier nanoTime;
  private final String node;
  private final AtomicLongArray counts = new AtomicLongArray(Limit.values().length);
  private final AtomicLongArray lastLogged = new AtomicLongArray(Limit.values().length);
  private final AtomicLongArray loggedCounts = new AtomicLongArray(Limit.values().length);
  private final AtomicLong logLines = new AtomicLong();

  /**
   * @param node this node's name, for the log lines
   * @param nanoTime monotonic clock in nanoseconds ({@code System::nanoTime} outside tests)
   */
  public Refusals(String node, LongSupplier nanoTime) {
    this.node = node;
    this.nanoTime = nanoTime;
    for (int i = 0; i < lastLogged.length(); i++) {
      lastLogged.set(i, NEVER);
    }
  }

  /** Counts one refusal by {@code limit} and logs it unless a line about this cap was written recently. */
  public void refused(Limit limit, String reason) {
    int i = limit.ordinal();
    long total = counts.incrementAndGet(i);
    long now = nanoTime.getAsLong();
    long last = lastLogged.get(i);
    if (last != NEVER && now - last < LOG_INTERVAL.toNanos()) {
      return;
    }
    if (!lastLogged.compareAndSet(i, last, now)) {
      return;
    }
    long hidden = total - 1 - loggedCounts.getAndSet(i, total);
    logLines.incrementAndGet();
    LOG.warn(
        "event=limit_exceeded node={} limit={} refused_total={} not_logged={} reason=\"{}\"",
        node,
        limit.configField(),
        total,
        Math.max(0, hidden),
        reason);
  }

  /** Refusals by {@code limit} since start. */
  public long count(Limit limit) {
    return counts.get(limit.ordinal());
  }

  /** Refusals per cap since start (every cap present, zero when never hit). */
  public Map<Limit, Long> snapshot() {
    Map<Limit, Long> out = new EnumMap<>(Limit.class);
    for (Limit l : Limit.values()) {
      out.put(l, counts.get(l.ordinal()));
    }
    return out;
  }

  /** Warning lines written since start (all caps together). */
  public long logLines() {
    return logLines.get();
  }
}
