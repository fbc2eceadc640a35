package dev.fencing.agent.runtime;

import dev.fencing.agent.watchdog.WatchdogDevice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A thread-safe fake watchdog recording opens, keepalives (with their monotonic time) and closes. */
final class RecordingDevice implements WatchdogDevice {

  private final List<String> events = new ArrayList<>();
  private final List<Long> feedTimes = new ArrayList<>();
  private boolean open;

  @Override
  public synchronized Duration open(Duration requested) {
    open = true;
    events.add("open");
    feedTimes.add(System.nanoTime());
    return Duration.ofSeconds(requested.toSeconds());
  }

  @Override
  public synchronized void keepalive() {
    events.add("feed");
    feedTimes.add(System.nanoTime());
  }

  @Override
  public synchronized void magicClose() {
    open = false;
    events.add("magic-close");
  }

  @Override
  public synchronized void closeWithoutMagic() {
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
  public synchronized boolean isOpen() {
    return open;
  }

  @Override
  public Optional<Boolean> nowayout() {
    return Optional.of(false);
  }

  @Override
  public String name() {
    return "recording";
  }

  synchronized List<String> events() {
    return List.copyOf(events);
  }

  synchronized int feeds() {
    return feedTimes.size();
  }

  /** Monotonic time of the latest open or keepalive. */
  synchronized long lastFeedNanos() {
    return feedTimes.isEmpty() ? Long.MIN_VALUE : feedTimes.get(feedTimes.size() - 1);
  }
}
