package dev.fencing.agent.runtime;

import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link Error} in one of the agent's loops (quorum, feeder, heartbeat sender, gossip receive) does: it ends
 * the process. The JVM is halted, not exited, so no shutdown hook runs: nothing disarms the watchdog and nothing
 * keeps feeding it. While armed the watchdog then resets the node — SBD's rule, a dead fencing daemon is a fenced
 * node — and while disarmed the pod is restarted. A half-dead agent (a loop gone, the rest still answering) is never
 * left running.
 */
public final class FatalErrors {

  private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);

  /** Exit status after an Error in an agent loop (EX_SOFTWARE). {@code -XX:+ExitOnOutOfMemoryError} exits with 3. */
  public static final int EXIT_CODE = 70;

  /** Receives an Error that reached one of the agent's loops; production halts the JVM, tests record it. */
  @FunctionalInterface
  public interface Handler {
    /**
     * @param thread the thread whose loop failed
     * @param error what was thrown
     */
    void onFatal(String thread, Error error);
  }

  private FatalErrors() {}

  /** Logs one line (with the stack, best effort) and halts the JVM with {@link #EXIT_CODE}. */
  public static Handler haltProcess() {
    return (thread, error) -> {
      try {
        LOG.error("event=fatal_error thread={} error=\"{}\" action=halt exit_code={} effect=\"armed: the watchdog"
            + " resets this node; disarmed: the pod restarts\"", thread, error, EXIT_CODE, error);
      } catch (Throwable logging) {
        // Out of memory may fail the log line too; halting matters more than the line.
      } finally {
        Runtime.getRuntime().halt(EXIT_CODE);
      }
    };
  }

  /**
   * The default uncaught-exception handler of the agent's process: an Error that kills any thread (memberlist's
   * receive threads catch only RuntimeExceptions) goes to {@code handler}; other throwables are logged.
   */
  public static Thread.UncaughtExceptionHandler uncaught(Handler handler) {
    Objects.requireNonNull(handler, "handler");
    return (thread, throwable) -> {
      if (throwable instanceof Error error) {
        handler.onFatal(thread.getName(), error);
      } else {
        LOG.error("event=thread_died thread={} error=\"{}\"", thread.getName(), throwable, throwable);
      }
    };
  }

  /**
   * Runs {@code loop}; an Error ends it and goes to {@code handler} (which halts in production). Not rethrown: a
   * scheduled task's Error would vanish into its Future anyway, and the handler is the one place that decides.
   */
  static Runnable guarded(Handler handler, Runnable loop) {
    return () -> {
      try {
        loop.run();
      } catch (Error e) {
        handler.onFatal(Thread.currentThread().getName(), e);
      }
    };
  }
}
