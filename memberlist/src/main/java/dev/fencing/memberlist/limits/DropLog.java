package dev.fencing.memberlist.limits;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Decides which dropped inputs of one kind (one cap of {@link Refusals}; undecodable packets; rejected streams: a
 * wrong key or label, bad framing) get a log line: at most one per {@link Refusals#LOG_INTERVAL}, carrying how many were dropped in all and how many
 * the quiet period hid. Anyone on the node network can send such input at line rate, and a warning per packet,
 * written synchronously on the receive thread, slowed that thread until the kernel dropped the quorum heartbeats it
 * also receives. Thread-safe.
 */
public final class DropLog {

  private static final long NEVER = Long.MIN_VALUE;

  private final LongSupplier nanoTime;
  private final long intervalNanos;
  private final AtomicLong total = new AtomicLong();
  private final AtomicLong lastLogged = new AtomicLong(NEVER);
  private final AtomicLong loggedTotal = new AtomicLong();
  private final AtomicLong logLines = new AtomicLong();

  /** @param nanoTime monotonic clock in nanoseconds ({@code System::nanoTime} outside tests) */
  public DropLog(LongSupplier nanoTime) {
    this(nanoTime, Refusals.LOG_INTERVAL);
  }

  DropLog(LongSupplier nanoTime, Duration interval) {
    this.nanoTime = nanoTime;
    this.intervalNanos = interval.toNanos();
  }

  /** What to log about a drop: the drops so far and how many were not logged since the last line. */
  public record Line(long total, long notLogged) {
  }

  /** Counts one drop; a line to log when none was logged within the interval, else null. */
  public Line dropped() {
    long t = total.incrementAndGet();
    long now = nanoTime.getAsLong();
    long last = lastLogged.get();
    if (last != NEVER && now - last < intervalNanos) {
      return null;
    }
    if (!lastLogged.compareAndSet(last, now)) {
      return null;
    }
    long hidden = t - 1 - loggedTotal.getAndSet(t);
    logLines.incrementAndGet();
    return new Line(t, Math.max(0, hidden));
  }

  /** Drops since start. */
  public long total() {
    return total.get();
  }

  /** Lines handed out since start. */
  public long logLines() {
    return logLines.get();
  }
}
