package dev.fencing.agent.quorum;

/**
 * This node's monotonic clock in nanoseconds. Values are comparable only within one process (one boot id); they are
 * never compared across nodes. Injected everywhere so that quorum, arming and feeding run on a fake clock in tests.
 */
@FunctionalInterface
public interface MonotonicClock {

  /** Current monotonic time in nanoseconds (arbitrary origin). */
  long nanoTime();

  /** The JVM's monotonic clock. */
  static MonotonicClock system() {
    return System::nanoTime;
  }
}
