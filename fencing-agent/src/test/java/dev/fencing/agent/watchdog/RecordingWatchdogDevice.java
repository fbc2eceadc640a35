package dev.fencing.agent.watchdog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A thread-safe watchdog fake that records opens, keepalives (with their monotonic time) and closes, and can be told
 * to fail. Shared by the supervisor tests and the real-agent tests.
 */
public final class RecordingWatchdogDevice implements WatchdogDevice {

  private final List<String> events = new ArrayList<>();
  private final List<Long> feedTimes = new ArrayList<>();
  private boolean open;
  private Optional<Boolean> nowayout = Optional.of(false);
  private String failOpen;
  private boolean missing;
  private int presenceChecks;
  private Duration roundsUpBy = Duration.ZERO;

  @Override
  public synchronized Duration open(Duration requested) throws WatchdogException {
    if (missing) {
      events.add("open-failed");
      throw new WatchdogException("missing: recording not found");
    }
    if (failOpen != null) {
      events.add("open-failed");
      throw new WatchdogException(failOpen);
    }
    open = true;
    events.add("open " + requested.toSeconds() + "s");
    feedTimes.add(System.nanoTime());
    return Duration.ofSeconds(requested.toSeconds()).plus(roundsUpBy);
  }

  /** Makes the device run {@code extra} longer than each open asks for, as a driver that rounds the timeout up. */
  public synchronized void roundsUpBy(Duration extra) {
    roundsUpBy = extra;
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
  public synchronized Optional<Boolean> nowayout() {
    return nowayout;
  }

  @Override
  public String name() {
    return "recording";
  }

  @Override
  public synchronized Optional<String> presenceProblem() {
    presenceChecks++;
    return missing && !open ? Optional.of("missing: recording not found") : Optional.empty();
  }

  /** Makes the device node vanish (presence check and open fail) or reappear. */
  public synchronized void missing(boolean value) {
    missing = value;
  }

  /** How often {@link #presenceProblem()} was asked. */
  public synchronized int presenceChecks() {
    return presenceChecks;
  }

  /** Makes every open fail with {@code message} (null: opens succeed again). */
  public synchronized void failOpen(String message) {
    failOpen = message;
  }

  public synchronized void nowayout(Optional<Boolean> value) {
    nowayout = value;
  }

  /** Everything that happened, in order: "open Ns", "open-failed", "feed", "magic-close", "close-without-magic". */
  public synchronized List<String> events() {
    return List.copyOf(events);
  }

  /** Keepalives after the arming open. */
  public synchronized long keepalives() {
    return events.stream().filter("feed"::equals).count();
  }

  /** Opens and keepalives. */
  public synchronized int feeds() {
    return feedTimes.size();
  }

  /** Monotonic times ({@code System.nanoTime()}) of every open and keepalive, in order. */
  public synchronized List<Long> feedTimes() {
    return List.copyOf(feedTimes);
  }

  /** Monotonic time of the latest open or keepalive. */
  public synchronized long lastFeedNanos() {
    return feedTimes.isEmpty() ? Long.MIN_VALUE : feedTimes.get(feedTimes.size() - 1);
  }
}
