package dev.fencing.memberlist.state;

/** Monotonic time source for the protocol; the real runtime uses {@link System#nanoTime()}, the simulator virtual time. */
@FunctionalInterface
public interface Clock {
  /** Monotonic nanoseconds; only differences are meaningful. */
  long nanos();

  /** The JVM's monotonic clock. */
  static Clock system() {
    return System::nanoTime;
  }
}
