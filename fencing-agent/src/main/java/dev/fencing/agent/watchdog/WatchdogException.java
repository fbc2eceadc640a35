package dev.fencing.agent.watchdog;

/** The watchdog device is missing or failed an operation; the message says which device, what and why. */
public final class WatchdogException extends Exception {

  private static final long serialVersionUID = 1L;

  public WatchdogException(String message) {
    super(message);
  }
}
