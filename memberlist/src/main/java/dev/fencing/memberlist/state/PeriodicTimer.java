package dev.fencing.memberlist.state;

/** A task repeated every period after an initial delay (memberlist staggers its tickers randomly). */
final class PeriodicTimer {
  private final Timers timers;
  private final long periodNanos;
  private final Runnable task;
  // Built once: a method reference captured at every tick is a slow allocation through a method handle without C2.
  private final Runnable tickTask = this::tick;
  private Timers.Timer next;
  private boolean cancelled;

  private PeriodicTimer(Timers timers, long periodNanos, Runnable task) {
    this.timers = timers;
    this.periodNanos = periodNanos;
    this.task = task;
  }

  static PeriodicTimer start(Timers timers, long initialDelayNanos, long periodNanos, Runnable task) {
    PeriodicTimer t = new PeriodicTimer(timers, periodNanos, task);
    t.next = timers.schedule(initialDelayNanos, t.tickTask);
    return t;
  }

  private void tick() {
    if (cancelled) {
      return;
    }
    next = timers.schedule(periodNanos, tickTask);
    task.run();
  }

  void cancel() {
    cancelled = true;
    next.cancel();
  }
}
