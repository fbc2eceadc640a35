package dev.fencing.agent.watchdog;

import java.time.Duration;
import java.util.Optional;

/**
 * One watchdog device (Linux {@code /dev/watchdog}, a FIFO read by the softdog emulator, or a test fake). Once
 * opened, the device resets the node unless {@link #keepalive()} is called within the timeout; only
 * {@link #magicClose()} stops it. Implementations are used by one thread at a time ({@link WatchdogFeeder} serialises
 * the feeder thread and the supervisor).
 */
public interface WatchdogDevice {

  /**
   * Opens (arms) the device and sets its timeout.
   *
   * @param requested the timeout to ask for; devices count whole seconds, so it is rounded up
   * @return the timeout the device actually runs with (read back); equal to the rounded request for devices
   *     without ioctls
   * @throws WatchdogException when the device is missing, busy, or cannot be configured; the device is closed with
   *     the magic character again in that case, so a failed open never leaves a running timer behind
   */
  Duration open(Duration requested) throws WatchdogException;

  /** Resets the timer. */
  void keepalive() throws WatchdogException;

  /**
   * Disarms: writes {@code 'V'} then closes, so the driver stops the timer. The device is closed afterwards even when
   * this throws; the timer may then still run.
   */
  void magicClose() throws WatchdogException;

  /** Closes without the magic character: the timer keeps running and the node is reset unless reopened and fed. */
  void closeWithoutMagic() throws WatchdogException;

  /** Seconds left before the reset as the driver reports it (GETTIMELEFT); empty when the device cannot say. */
  Optional<Duration> timeLeft();

  /** True when the device answers the watchdog ioctls (false for a FIFO; known after {@link #open}). */
  boolean supportsIoctl();

  /** True between a successful {@link #open} and a close. */
  boolean isOpen();

  /**
   * Whether the driver has {@code nowayout} set (then not even magic close stops the timer), read before arming;
   * empty when it cannot be determined (e.g. a FIFO).
   */
  Optional<Boolean> nowayout();

  /** Path or name for logs and status. */
  String name();

  /**
   * Why an {@link #open} would fail, when that is known without opening (e.g. the device node does not exist: no
   * driver loaded yet); empty when an open may succeed or the device is open. Cheap (a stat at most): the supervisor
   * asks while disarmed, at its reopen backoff, so a missing device is reported before quorum allows arming and a
   * driver loaded later is noticed without a restart.
   */
  default Optional<String> presenceProblem() {
    return Optional.empty();
  }
}
