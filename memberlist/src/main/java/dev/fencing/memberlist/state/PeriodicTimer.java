package dev.fencing.memberlist.state;

/**
 * A task repeated every period after an initial delay (memberlist staggers its tickers randomly). A task with nothing
 * to do may {@linkplain #sleep() sleep} its timer: no tick runs until {@link #wake()}, and the first one after it falls
 * on the timer's own grid (a whole number of periods after the last tick), exactly when it would have run anyway.
 */
final class PeriodicTimer {
  private final Timers timers;
  private final Clock clock;
  private final long periodNanos;
  private final Runnable task;
  // Built once: a method reference captured at every tick is a slow allocation through a method handle without C2.
  private final Runnable tickTask = this::tick;
  private Timers.Timer next;
  private boolean cancelled;
  private boolean sleeping;
  private long lastTickNanos;

  private PeriodicTimer(Timers timers, Clock clock, long periodNanos, Runnable task) {
    this.timers = timers;
    this.clock = clock;
    this.periodNanos = periodNanos;
    this.task = task;
  }

  /**
   * @param clock the clock {@code timers} counts its delays on
   */
  static PeriodicTimer start(Timers timers, Clock clock, long initialDelayNanos, long periodNanos,
      Runnable task) {
    PeriodicTimer t = new PeriodicTimer(timers, clock, periodNanos, task);
    // As if the last tick had been one period before the first.
    t.lastTickNanos = clock.nanos() + initialDelayNanos - periodNanos;
    t.next = timers.schedule(initialDelayNanos, t.tickTask);
    return t;
  }

  private void tick() {
    if (cancelled || sleeping) {
      return;
    }
    lastTickNanos = clock.nanos();
    next = timers.schedule(periodNanos, tickTask);
    task.run();
  }

  /** From the task: no more ticks until {@link #wake()}. */
  void sleep() {
    sleeping = true;
    next.cancel();
  }

  /** Ticks again, the next one at the first point of the timer's grid after now; nothing when not asleep. */
  void wake() {
    if (!sleeping || cancelled) {
      return;
    }
    sleeping = false;
    long sinceLast = clock.nanos() - lastTickNanos;
    long delay = sinceLast < 0 ? -sinceLast : periodNanos - sinceLast % periodNanos;
    next = timers.schedule(delay, tickTask);
  }

  /** True between {@link #sleep()} and {@link #wake()}. */
  boolean sleeping() {
    return sleeping;
  }

  void cancel() {
    cancelled = true;
    next.cancel();
  }
}
