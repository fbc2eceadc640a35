package dev.fencing.memberlist.transport;

/**
 * Keeps {@link Error}s visible on executors that would otherwise keep them: a task scheduled on a {@link
 * java.util.concurrent.ScheduledExecutorService} runs inside a future that stores whatever it throws, so an
 * OutOfMemoryError in a deadline task would vanish. The wrapper hands the Error to the running thread's uncaught
 * exception handler (which in the agent ends the process) and rethrows it.
 */
public final class ThreadErrors {
  private ThreadErrors() {}

  /** {@code task}, reporting any {@link Error} it throws to the current thread's uncaught exception handler. */
  public static Runnable reported(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (Error e) {
        throw report(e);
      }
    };
  }

  /** Hands {@code e} to the current thread's uncaught-exception handler; returns it for the caller to rethrow. */
  public static Error report(Error e) {
    Thread t = Thread.currentThread();
    t.getUncaughtExceptionHandler().uncaughtException(t, e);
    return e;
  }
}
