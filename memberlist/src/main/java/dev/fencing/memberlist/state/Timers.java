package dev.fencing.memberlist.state;

/**
 * Schedules protocol callbacks at a future time. The protocol never sleeps: it asks for a callback and returns. The
 * real runtime runs callbacks on its protocol thread under the protocol lock; the simulator on virtual time.
 */
@FunctionalInterface
public interface Timers {
  /** Runs {@code task} once, {@code delayNanos} from now (0 or negative = as soon as possible). */
  Timer schedule(long delayNanos, Runnable task);

  /** A scheduled callback. */
  @FunctionalInterface
  interface Timer {
    /** Prevents the callback from running if it has not run yet. Idempotent. */
    void cancel();
  }
}
