package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AtomicFileReplacer;
import dev.fencing.agent.status.HostStatus;
import dev.fencing.agent.status.StatusFileWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When {@link StatusFileWriter} wakes on its scheduler ({@link ManualScheduler}, simulated time): at each refresh due
 * time and not in between, an offered change at once, and the refresh after it four seconds later.
 */
class StatusFileScheduleTest {

  static final long S = 1_000_000_000L;

  private static final HostStatus ARMED = new HostStatus("node-a", "workers", 4242, true, List.of(), false,
      HostStatus.Quorum.HELD, 7);

  @TempDir Path dir;
  private final ManualScheduler scheduler = new ManualScheduler();
  private final AtomicReference<HostStatus> status = new AtomicReference<>(ARMED);
  private final AtomicInteger asked = new AtomicInteger();

  @Test
  void anIdleWriterWakesOnlyWhenTheRefreshIsDueAndAnOfferMovesTheRefresh() throws Exception {
    Path file = dir.resolve("status");
    StatusFileWriter writer = new StatusFileWriter(file, () -> {
      asked.incrementAndGet();
      return status.get();
    }, () -> Instant.ofEpochSecond(1_790_000_000L + scheduler.nanoTime() / S), scheduler::nanoTime,
        new AtomicFileReplacer((channel, path) -> { }), "node=node-a");
    writer.start(scheduler);
    assertThat(writer.writes()).isEqualTo(1);

    scheduler.advance(12 * S);
    assertThat(writer.writes()).as("refreshed at 4, 8 and 12 s").isEqualTo(4);
    assertThat(asked.get()).as("the status was read only at those checks, not every second").isEqualTo(4);
    assertThat(Files.readString(file)).endsWith("updated_unix=1790000012\n");
    assertThat(scheduler.pending()).as("one check waits").isEqualTo(1);

    scheduler.advance(S);
    HostStatus disarmed = new HostStatus("node-a", "workers", 4242, false, List.of("DISABLE_FILE"), true,
        HostStatus.Quorum.HELD, 7);
    status.set(disarmed);
    assertThat(writer.offer(disarmed)).isTrue();
    scheduler.runDue();
    assertThat(writer.writes()).as("an offered change is written at once (13 s)").isEqualTo(5);

    scheduler.advance(3 * S);
    assertThat(writer.writes()).as("the check due at 16 s finds the 13 s write fresh").isEqualTo(5);
    scheduler.advance(S);
    assertThat(writer.writes()).as("refreshed 4 s after the offered write").isEqualTo(6);
    assertThat(Files.readString(file)).contains("armed=false").endsWith("updated_unix=1790000017\n");

    writer.close();
    assertThat(scheduler.pending()).as("close cancels the check").isZero();
    scheduler.advance(10 * S);
    assertThat(writer.writes()).as("the final write at close, nothing after").isEqualTo(7);
  }

  @Test
  void aStatusThatCannotBeReadIsAskedForAgainEveryIntervalNotInALoop() {
    AtomicInteger asks = new AtomicInteger();
    StatusFileWriter writer = new StatusFileWriter(dir.resolve("status"), () -> {
      asks.incrementAndGet();
      throw new IllegalStateException("no snapshot yet");
    }, () -> Instant.ofEpochSecond(1_790_000_000L), scheduler::nanoTime, new AtomicFileReplacer((channel, path) -> { }),
        "node=node-a");
    writer.start(scheduler);
    scheduler.advance(12 * S);
    assertThat(asks.get()).as("at start, then at 4, 8 and 12 s").isEqualTo(4);
    assertThat(writer.writes()).isZero();
    writer.close();
  }
}
