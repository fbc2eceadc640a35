package dev.fencing.agent.watchdog;

import java.time.Duration;
import java.util.Optional;

/** A watchdog that cannot be used at all (e.g. libc could not be loaded): every open fails with the reason. */
public final class UnavailableWatchdogDevice implements WatchdogDevice {

  private final String name;
  private final String reason;

  public UnavailableWatchdogDevice(String name, String reason) {
    this.name = name;
    this.reason = reason;
  }

  @Override
  public Duration open(Duration requested) throws WatchdogException {
    throw new WatchdogException(name + ": " + reason);
  }

  @Override
  public void keepalive() throws WatchdogException {
    throw new WatchdogException(name + ": not open");
  }

  @Override
  public void magicClose() throws WatchdogException {
    throw new WatchdogException(name + ": not open");
  }

  @Override
  public void closeWithoutMagic() throws WatchdogException {
    throw new WatchdogException(name + ": not open");
  }

  @Override
  public Optional<Duration> timeLeft() {
    return Optional.empty();
  }

  @Override
  public boolean supportsIoctl() {
    return false;
  }

  @Override
  public boolean isOpen() {
    return false;
  }

  @Override
  public Optional<String> presenceProblem() {
    return Optional.of(name + ": " + reason);
  }

  @Override
  public Optional<Boolean> nowayout() {
    return Optional.empty();
  }

  @Override
  public String name() {
    return name;
  }
}
