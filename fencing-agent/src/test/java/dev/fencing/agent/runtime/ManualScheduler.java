package dev.fencing.agent.runtime;

import dev.fencing.memberlist.state.Timers;
import dev.fencing.memberlist.sim.VirtualTime;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A single-threaded {@link ScheduledExecutorService} on memberlist's simulated clock ({@link VirtualTime}), for
 * tests: nothing runs until the test calls {@link #runDue} or {@link #advance}, and then on the test's thread, in
 * due-time order (submission order for equal times). Periodic scheduling is not supported (the code under test
 * reschedules itself).
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

  private final class Task implements ScheduledFuture<Object> {
    final long dueNanos;
    Timers.Timer timer;
    boolean cancelled;
    boolean done;

    Task(long dueNanos) {
      this.dueNanos = dueNanos;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(dueNanos - time.nanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (done) {
        return false;
      }
      timer.cancel();
      live.remove(this);
      cancelled = true;
      done = true;
      return true;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done;
    }

    @Override
    public Object get() throws ExecutionException {
      if (!done) {
        throw new IllegalStateException("not run yet: advance the ManualScheduler");
      }
      return null;
    }

    @Override
    public Object get(long timeout, TimeUnit unit) throws ExecutionException {
      return get();
    }
  }

  private final VirtualTime time = new VirtualTime();
  private final Set<Task> live = new LinkedHashSet<>();
  private boolean shutdown;

  /** The fake clock this scheduler runs on (nanoseconds). */
  long nanoTime() {
    return time.nanos();
  }

  /** Runs every task due now, including those they schedule for now. */
  void runDue() {
    time.runUntil(time.nanos());
  }

  /** Moves the clock forward by {@code nanos}, running tasks at their due times on the way. */
  void advance(long nanos) {
    time.runUntil(time.nanos() + nanos);
  }

  /** Tasks waiting to run. */
  int pending() {
    return live.size();
  }

  private Task add(long delayNanos, Runnable body) {
    if (shutdown) {
      throw new RejectedExecutionException("shut down");
    }
    Task t = new Task(time.nanos() + Math.max(0, delayNanos));
    t.timer = time.schedule(delayNanos, () -> {
      live.remove(t);
      t.done = true;
      body.run();
    });
    live.add(t);
    return t;
  }

  @Override
  public void execute(Runnable command) {
    add(0, command);
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return add(unit.toNanos(delay), command);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException("not needed by the code under test");
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException("not needed by the code under test");
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException("not needed by the code under test");
  }

  @Override
  public void shutdown() {
    shutdown = true;
  }

  @Override
  public List<Runnable> shutdownNow() {
    shutdown = true;
    for (Task t : List.copyOf(live)) {
      t.cancel(false);
    }
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  @Override
  public boolean isTerminated() {
    return shutdown;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return shutdown;
  }
}
