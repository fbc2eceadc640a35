package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.state.Clock;
import dev.fencing.memberlist.state.Timers;
import java.util.PriorityQueue;

/**
 * The simulator's clock and event queue: time advances only by running the next scheduled event, so a run is a pure
 * function of the seed. Events at the same instant run in scheduling order.
 */
public final class VirtualTime implements Clock, Timers {
  private final PriorityQueue<Event> queue = new PriorityQueue<>();
  private long now;
  private long sequence;
  private long eventsRun;

  private static final class Event implements Comparable<Event>, Timers.Timer {
    final long at;
    final long seq;
    final Runnable task;
    boolean cancelled;

    Event(long at, long seq, Runnable task) {
      this.at = at;
      this.seq = seq;
      this.task = task;
    }

    @Override
    public int compareTo(Event o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }

    @Override
    public void cancel() {
      cancelled = true;
    }
  }

  @Override
  public long nanos() {
    return now;
  }

  @Override
  public Timers.Timer schedule(long delayNanos, Runnable task) {
    Event e = new Event(now + Math.max(0, delayNanos), sequence++, task);
    queue.add(e);
    return e;
  }

  /** Runs every event due up to {@code untilNanos} and leaves the clock there. */
  public void runUntil(long untilNanos) {
    while (!queue.isEmpty() && queue.peek().at <= untilNanos) {
      Event e = queue.poll();
      now = e.at;
      if (!e.cancelled) {
        eventsRun++;
        e.task.run();
      }
    }
    now = Math.max(now, untilNanos);
  }

  /** Events executed so far (a measure of simulation work). */
  public long eventsRun() {
    return eventsRun;
  }
}
