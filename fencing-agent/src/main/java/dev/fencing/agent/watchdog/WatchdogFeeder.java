package dev.fencing.agent.watchdog;

import dev.fencing.agent.quorum.MonotonicClock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only code between a quorum decision and a keepalive (ARCHITECTURE §5: the feed is isolated). The quorum loop
 * publishes a "feed until" deadline on this node's monotonic clock ({@link #allowUntil}); a dedicated feeder thread,
 * running {@link #run} and nothing else, feeds every feed interval while {@code now < deadline} and feeding is
 * allowed. A stalled or blocked quorum loop therefore stops the feed at the last deadline it published — the
 * verdict's {@code heldUntil} — and never later; a slow gossip lock or disk cannot delay a feed the verdict allows.
 *
 * <p>Every device operation (open, keepalive, magic close, close without magic) runs under one lock, so the device is
 * touched by one thread at a time; {@link #stopThen} withdraws the permission before it takes the lock, so no
 * keepalive follows a close. The deadline may move back (a later verdict, a shorter lease): the latest one counts.
 */
public final class WatchdogFeeder {

  private static final Logger LOG = LoggerFactory.getLogger(WatchdogFeeder.class);

  /** Longest sleep while nothing is allowed; a new permission wakes the feeder at once anyway. */
  private static final long IDLE_PARK_NANOS = 1_000_000_000L;

  /** A device operation run under the device lock. */
  @FunctionalInterface
  interface DeviceAction<T> {
    T run(WatchdogDevice device) throws WatchdogException;
  }

  private final WatchdogDevice device;
  private final MonotonicClock clock;
  private final String logContext;
  private final Object deviceLock = new Object();

  private volatile boolean allowed;
  private volatile long feedUntilNanos;
  private volatile long feedIntervalNanos = Long.MAX_VALUE;
  private volatile Thread feederThread;
  // Written under deviceLock, read by status snapshots on the quorum thread.
  private volatile boolean lastFeedKnown;
  private volatile long lastFeedNanos;
  private volatile long feedsTotal;
  private volatile Optional<String> keepaliveFailure = Optional.empty();
  private volatile long openFailures;
  // The wake handshake (see run and allowUntil): permissions published, when the parked feeder will next look.
  private volatile long permissions;
  private volatile long plannedWakeNanos;
  private volatile long permissionWakeups;

  /**
   * @param device the watchdog device
   * @param clock this node's monotonic clock, the same one the quorum loop computes deadlines on
   * @param logContext {@code node=… group=…} prefix for log lines
   */
  public WatchdogFeeder(WatchdogDevice device, MonotonicClock clock, String logContext) {
    this.device = Objects.requireNonNull(device, "device");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.logContext = Objects.requireNonNull(logContext, "logContext");
  }

  /** The device, for calls that do not drive it (name, nowayout, ioctl support). */
  public WatchdogDevice device() {
    return device;
  }

  /**
   * The feeder thread's body: feeds while allowed and before the deadline, sleeping in between, until
   * {@code running} turns false. Errors propagate (the caller ends the process); a RuntimeException from a device
   * is a failed keepalive, logged once per distinct message.
   */
  public void run(BooleanSupplier running) {
    feederThread = Thread.currentThread();
    try {
      while (running.getAsBoolean()) {
        long seen = permissions;
        long sleep;
        long wakeAt;
        synchronized (deviceLock) {
          long now = clock.nanoTime();
          sleep = Math.max(1, step(now));
          wakeAt = now + sleep;
        }
        // Published before the permission count is read again; allowUntil counts its permission before it reads
        // this (all volatile, so totally ordered): either this thread sees the new permission and steps again, or
        // allowUntil sees when this thread will look next and wakes it if that is too late.
        plannedWakeNanos = wakeAt;
        if (permissions != seen) {
          continue;
        }
        LockSupport.parkNanos(this, sleep);
      }
    } finally {
      feederThread = null;
    }
  }

  /** Wakes the feeder thread (to stop, or because the permission changed). */
  public void wake() {
    Thread t = feederThread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /**
   * One step of the feeder: a keepalive if allowed, before the deadline, and due.
   *
   * @return nanoseconds until the next step is useful
   */
  public long feedIfDue() {
    synchronized (deviceLock) {
      // Read under the lock: time spent waiting for it must count against the deadline.
      return step(clock.nanoTime());
    }
  }

  /** {@link #feedIfDue} at {@code now}, read under the device lock (held by the caller). */
  private long step(long now) {
    long until = feedUntilNanos;
    long interval = feedIntervalNanos;
    if (!allowed || now - until >= 0) {
      return IDLE_PARK_NANOS;
    }
    long due = lastFeedKnown ? lastFeedNanos + interval : now;
    if (now - due < 0) {
      return Math.min(due - now, until - now);
    }
    try {
      device.keepalive();
      lastFeedNanos = now;
      lastFeedKnown = true;
      feedsTotal++;
      if (keepaliveFailure.isPresent()) {
        keepaliveFailure = Optional.empty();
        LOG.info("{} event=keepalive_recovered device={}", logContext, device.name());
      }
    } catch (WatchdogException | RuntimeException e) {
      String message = String.valueOf(e.getMessage());
      if (!keepaliveFailure.equals(Optional.of(message))) {
        LOG.error("{} event=keepalive_failed device={} detail=\"{}\"", logContext, device.name(), message);
      }
      keepaliveFailure = Optional.of(message);
      // Retry soon, not at once: a failing device must not turn this thread into a busy loop.
      return Math.min(interval, 100_000_000L);
    }
    return interval;
  }

  /**
   * Quorum thread: allows feeding every {@code feedInterval} until {@code feedUntilNanos} (exclusive); replaces the
   * previous deadline.
   */
  void allowUntil(long feedUntilNanos, Duration feedInterval) {
    long interval = feedInterval.toNanos();
    this.feedIntervalNanos = interval;
    this.feedUntilNanos = feedUntilNanos;
    allowed = true;
    permissions = permissions + 1; // only the quorum thread writes it
    // Woken only when it would look later than the next feed this permission allows (after a pause, or with a
    // shorter interval). The quorum loop moves the deadline on at every tick; a feeder asleep until its next feed
    // needs no word of that, and waking it ten times a second was most of its cost.
    long due = lastFeedNanos + interval;
    if (!lastFeedKnown || plannedWakeNanos - due > 0) {
      permissionWakeups++;
      wake();
    }
  }

  /** When the feeder thread will next look (monotonic nanoseconds), as it last planned; for tests. */
  long plannedWakeNanos() {
    return plannedWakeNanos;
  }

  /** How many permissions woke the feeder thread; for tests. */
  long permissionWakeups() {
    return permissionWakeups;
  }

  /** Quorum thread: no keepalive from now on (fencing). */
  void stop() {
    allowed = false;
  }

  /** Quorum thread: stops feeding, then runs {@code action} on the device with no keepalive in flight. */
  <T> T stopThen(DeviceAction<T> action) throws WatchdogException {
    allowed = false;
    synchronized (deviceLock) {
      return action.run(device);
    }
  }

  /** Quorum thread: opens the device; the open counts as a feed at {@code nowNanos}. Feeding is not yet allowed. */
  Duration open(Duration timeout, long nowNanos) throws WatchdogException {
    allowed = false;
    synchronized (deviceLock) {
      Duration actual;
      try {
        actual = device.open(timeout);
      } catch (WatchdogException e) {
        openFailures++;
        throw e;
      }
      lastFeedNanos = nowNanos;
      lastFeedKnown = true;
      feedsTotal++;
      keepaliveFailure = Optional.empty();
      return actual;
    }
  }

  /** Monotonic time of the latest open or keepalive. */
  public OptionalLong lastFeedNanos() {
    return lastFeedKnown ? OptionalLong.of(lastFeedNanos) : OptionalLong.empty();
  }

  /** Opens and keepalives since start. */
  public long feedsTotal() {
    return feedsTotal;
  }

  /** Failed opens since start. */
  public long openFailures() {
    return openFailures;
  }

  /** The latest keepalive failure, until a keepalive succeeds again. */
  public Optional<String> keepaliveFailure() {
    return keepaliveFailure;
  }

  /** The current deadline (exclusive) while feeding is allowed. */
  public OptionalLong feedUntilNanos() {
    return allowed ? OptionalLong.of(feedUntilNanos) : OptionalLong.empty();
  }
}
