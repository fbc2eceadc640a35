package dev.fencing.agent.watchdog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.quorum.MonotonicClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The feeder thread is woken by a new permission only when it would otherwise look too late; the real thread on the
 * real clock, with intervals long enough that a missing wake shows as a missing feed, not as a slow one.
 */
class WatchdogFeederWakeTest {

  private static final Duration LONG = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(100);

  private final RecordingWatchdogDevice device = new RecordingWatchdogDevice();
  private final WatchdogFeeder feeder = new WatchdogFeeder(device, MonotonicClock.system(), "node=a group=g");
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final Thread thread = new Thread(() -> feeder.run(running::get), "test-feeder");

  @AfterEach
  void stop() throws InterruptedException {
    running.set(false);
    feeder.wake();
    thread.join(5_000);
    assertThat(thread.isAlive()).isFalse();
  }

  private static long later(Duration d) {
    return System.nanoTime() + d.toNanos();
  }

  @Test
  void aMovedDeadlineDoesNotWakeTheFeederButAShorterIntervalDoes() throws Exception {
    feeder.open(Duration.ofSeconds(60), System.nanoTime());
    thread.start();
    feeder.allowUntil(later(Duration.ofMinutes(2)), SHORT);
    await().atMost(Duration.ofSeconds(10)).until(() -> feeder.feedsTotal() >= 3);

    // A longer interval: the feeder finds it at its next look (100 ms away) and then plans 30 s ahead.
    feeder.allowUntil(later(Duration.ofMinutes(2)), LONG);
    await().atMost(Duration.ofSeconds(10)).until(() -> feeder.lastFeedNanos().isPresent()
        && feeder.plannedWakeNanos() - feeder.lastFeedNanos().getAsLong() == LONG.toNanos());
    long feeds = feeder.feedsTotal();
    long wakeups = feeder.permissionWakeups();

    // What the quorum loop does at every tick while quorum holds: the same interval, a later deadline.
    for (int tick = 0; tick < 50; tick++) {
      feeder.allowUntil(later(Duration.ofMinutes(2)), LONG);
    }
    assertThat(feeder.permissionWakeups()).as("no wake for a moved deadline").isEqualTo(wakeups);
    assertThat(feeder.feedsTotal()).isEqualTo(feeds);

    // A shorter interval makes a feed due long before the feeder's planned look: it must be woken, and feeds at
    // once (without the wake the next feed would come 30 s after the last one).
    feeder.allowUntil(later(Duration.ofMinutes(2)), SHORT);
    assertThat(feeder.permissionWakeups()).isEqualTo(wakeups + 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> feeder.feedsTotal() > feeds);
  }

  @Test
  void aPermissionAfterAPauseWakesTheIdleFeederWhenAFeedIsDueBeforeItsNextLook() throws Exception {
    feeder.open(Duration.ofSeconds(60), System.nanoTime());
    thread.start();
    // Not allowed yet: the feeder idles (a 1 s look). Its open counts as a feed, so with a 30 s interval nothing is
    // due before that look: no wake.
    await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.TIMED_WAITING);
    await().atMost(Duration.ofSeconds(10)).until(() -> feeder.plannedWakeNanos() != 0);
    feeder.allowUntil(later(Duration.ofMinutes(2)), LONG);
    assertThat(feeder.permissionWakeups()).isZero();

    // Feeding withdrawn (fencing would do this; it wakes no one), then allowed again with a feed long overdue: the
    // feeder, asleep until its 1 s look or the 30 s feed, is woken at once.
    feeder.stop();
    feeder.allowUntil(later(Duration.ofMinutes(2)), Duration.ofMillis(1));
    assertThat(feeder.permissionWakeups()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> feeder.feedsTotal() >= 2);
  }
}
