package dev.fencing.agent.watchdog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A watchdog fake that records opens, feeds and closes. */
final class RecordingWatchdogDevice implements WatchdogDevice {

  final List<String> events = new ArrayList<>();
  boolean open;
  Optional<Boolean> nowayout = Optional.of(false);
  String failOpen;
  String failKeepalive;

  @Override
  public Duration open(Duration requested) throws WatchdogException {
    if (failOpen != null) {
      events.add("open-failed");
      throw new WatchdogException(failOpen);
    }
    open = true;
    events.add("open " + requested.toSeconds() + "s");
    return Duration.ofSeconds(requested.toSeconds());
  }

  @Override
  public void keepalive() throws WatchdogException {
    if (failKeepalive != null) {
      throw new WatchdogException(failKeepalive);
    }
    events.add("feed");
  }

  @Override
  public void magicClose() {
    open = false;
    events.add("magic-close");
  }

  @Override
  public void closeWithoutMagic() {
    open = false;
    events.add("close-without-magic");
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
    return open;
  }

  @Override
  public Optional<Boolean> nowayout() {
    return nowayout;
  }

  @Override
  public String name() {
    return "fake";
  }

  long feeds() {
    return events.stream().filter("feed"::equals).count();
  }
}
