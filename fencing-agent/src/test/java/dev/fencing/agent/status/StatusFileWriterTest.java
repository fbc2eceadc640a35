package dev.fencing.agent.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AtomicFileReplacer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StatusFileWriterTest {

  private static final AtomicFileReplacer NO_FSYNC = new AtomicFileReplacer((channel, path) -> { });
  private static final HostStatus ARMED = new HostStatus("node-a", "workers", 4242, true, List.of(), false,
      HostStatus.Quorum.HELD, 7);

  @TempDir Path dir;
  private final AtomicLong wallSeconds = new AtomicLong(1_790_000_000L);
  private final AtomicLong monotonic = new AtomicLong(5_000_000_000L);
  private final AtomicReference<HostStatus> status = new AtomicReference<>(ARMED);

  private StatusFileWriter writer(Path file) {
    return new StatusFileWriter(file, status::get, () -> Instant.ofEpochSecond(wallSeconds.get()), monotonic::get,
        NO_FSYNC, "node=node-a");
  }

  @Test
  void theFileHasTheContractKeysInOrder() throws Exception {
    Path file = dir.resolve("status");
    status.set(new HostStatus("node-a", "workers", 4242, false, List.of("DISABLE_FILE", "MAINTENANCE"), true,
        HostStatus.Quorum.LOST, 0));

    assertThat(writer(file).writeIfDue()).isTrue();

    assertThat(Files.readString(file)).isEqualTo("""
        # fencing-agent status (informational; replaced atomically)
        version=1
        node=node-a
        group=workers
        pid=4242
        armed=false
        reasons=DISABLE_FILE,MAINTENANCE
        disable_file=present
        quorum=lost
        revision=0
        updated_unix=1790000000
        """);
    assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
  }

  @Test
  void anArmedNodeSaysNoneAndAnUnconfiguredOneUnknownQuorumAndAnEmptyGroup() {
    assertThat(ARMED.render(1)).contains("\narmed=true\nreasons=none\ndisable_file=absent\nquorum=held\nrevision=7\n");
    HostStatus fresh = new HostStatus("node-a", "", 1, false, List.of("NO_CONFIG"), false, HostStatus.Quorum.UNKNOWN,
        0);
    assertThat(fresh.render(1)).contains("\ngroup=\n").contains("\nquorum=unknown\n");
  }

  @Test
  void aNameWithALineBreakCannotForgeAKey() {
    HostStatus forged = new HostStatus("node-a\narmed=false", "g", 1, true, List.of(), false,
        HostStatus.Quorum.HELD, 0);
    assertThat(forged.render(1)).contains("node=node-a?armed=false\n").containsOnlyOnce("\narmed=");
  }

  @Test
  void everyChangeIsWrittenAtOnceAndAnUnchangedStatusIsRefreshedWithinFiveSeconds() throws Exception {
    Path file = dir.resolve("status");
    StatusFileWriter writer = writer(file);
    assertThat(writer.writeIfDue()).isTrue();

    wallSeconds.incrementAndGet();
    monotonic.addAndGet(Duration.ofMillis(200).toNanos());
    assertThat(writer.writeIfDue()).as("unchanged, refresh not due").isFalse();
    status.set(new HostStatus("node-a", "workers", 4242, false, List.of("DISABLE_FILE"), true,
        HostStatus.Quorum.HELD, 7));
    assertThat(writer.writeIfDue()).as("a field changed").isTrue();
    assertThat(Files.readString(file)).contains("armed=false\nreasons=DISABLE_FILE\ndisable_file=present\n")
        .endsWith("updated_unix=1790000001\n");

    monotonic.addAndGet(StatusFileWriter.REFRESH_INTERVAL.toNanos() - 1);
    wallSeconds.addAndGet(4);
    assertThat(writer.writeIfDue()).isFalse();
    monotonic.incrementAndGet();
    assertThat(writer.writeIfDue()).as("refresh due").isTrue();
    assertThat(Files.readString(file)).endsWith("updated_unix=1790000005\n");
    assertThat(StatusFileWriter.REFRESH_INTERVAL).as("leaves a second for scheduling and rounding")
        .isLessThanOrEqualTo(Duration.ofSeconds(4));
    assertThat(writer.writes()).isEqualTo(3);
  }

  @Test
  void anOfferedChangeIsWrittenAtOnceOnTheSchedulerAndAnUnchangedOfferAsksForNothing() throws Exception {
    Path file = dir.resolve("status");
    StatusFileWriter writer = writer(file);
    List<Runnable> executed = new ArrayList<>();
    java.util.concurrent.ScheduledExecutorService scheduler =
        new java.util.concurrent.ScheduledThreadPoolExecutor(1) {
          @Override
          public void execute(Runnable command) {
            executed.add(command);
          }
        };
    try {
      assertThat(writer.offer(ARMED)).as("not started: nothing to wake").isFalse();
      writer.start(scheduler);
      assertThat(writer.writes()).as("start writes at once").isEqualTo(1);

      assertThat(writer.offer(ARMED)).as("first offer after start").isTrue();
      assertThat(writer.offer(ARMED)).as("same status again").isFalse();
      HostStatus disarmed = new HostStatus("node-a", "workers", 4242, false, List.of("DISABLE_FILE"), true,
          HostStatus.Quorum.HELD, 7);
      status.set(disarmed);
      assertThat(writer.offer(disarmed)).isTrue();
      assertThat(executed).hasSize(2);
      executed.get(1).run();
      assertThat(writer.writes()).as("the check the offer asked for wrote the change").isEqualTo(2);
      assertThat(Files.readString(file)).contains("armed=false\nreasons=DISABLE_FILE\ndisable_file=present\n");

      writer.close();
      assertThat(writer.offer(ARMED)).as("closed: nothing to wake").isFalse();
      assertThat(executed).hasSize(2);
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void aReaderNeverSeesAPartialFile() throws Exception {
    Path file = dir.resolve("status");
    StatusFileWriter writer = writer(file);
    writer.writeIfDue();
    AtomicBoolean writing = new AtomicBoolean(true);
    CompletableFuture<List<String>> reader = CompletableFuture.supplyAsync(() -> {
      List<String> torn = new ArrayList<>();
      int reads = 0;
      while (writing.get() && reads < 1_000_000) {
        reads++;
        try {
          String content = Files.readString(file);
          if (!content.startsWith("# fencing-agent status") || !content.matches("(?s).*\nupdated_unix=\\d+\n")) {
            torn.add(content);
          }
        } catch (java.io.IOException e) {
          torn.add("unreadable: " + e);
        }
      }
      return torn;
    });
    for (int i = 1; i <= 400; i++) {
      // Alternate lengths, so a torn write would show as a truncated or overlong file.
      status.set(i % 2 == 0 ? ARMED : new HostStatus("node-a", "a-much-longer-group-name-" + i, 4242, false,
          List.of("DISABLE_FILE", "MAINTENANCE", "BEING_REMOVED"), true, HostStatus.Quorum.LOST, i));
      assertThat(writer.writeIfDue()).isTrue();
    }
    writing.set(false);

    assertThat(reader.get(30, TimeUnit.SECONDS)).isEmpty();
    try (var leftovers = Files.list(dir)) {
      assertThat(leftovers.map(p -> p.getFileName().toString())).containsExactly("status");
    }
  }

  @Test
  void anUnwritablePathNeverThrowsAndIsWrittenOnceItBecomesWritable() throws Exception {
    Path blocker = dir.resolve("run");
    Files.writeString(blocker, "a regular file where the directory should be");
    Path file = blocker.resolve("status");
    StatusFileWriter writer = writer(file);

    assertThat(writer.writeIfDue()).isFalse();
    assertThat(writer.writeIfDue()).as("not retried before a change or the refresh").isFalse();

    Files.delete(blocker);
    monotonic.addAndGet(StatusFileWriter.REFRESH_INTERVAL.toNanos());
    assertThat(writer.writeIfDue()).as("the directory is created").isTrue();
    assertThat(Files.readString(file)).contains("armed=true");
  }

  @Test
  void aFailingStatusSourceIsAFailedWriteNotAnException() {
    StatusFileWriter writer = new StatusFileWriter(dir.resolve("status"), () -> {
      throw new IllegalStateException("boom");
    }, () -> Instant.EPOCH, monotonic::get, NO_FSYNC, "node=node-a");

    assertThat(writer.writeIfDue()).isFalse();
    assertThat(Files.exists(dir.resolve("status"))).isFalse();
  }

  @Test
  void closingWritesTheFinalStatusOnce() throws Exception {
    Path file = dir.resolve("status");
    java.util.concurrent.ScheduledExecutorService scheduler =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    try {
      StatusFileWriter writer = writer(file);
      writer.start(scheduler);
      assertThat(Files.readString(file)).contains("armed=true");
      status.set(new HostStatus("node-a", "workers", 4242, false, List.of("SHUTTING_DOWN"), false,
          HostStatus.Quorum.HELD, 7));
      writer.close();
      assertThat(Files.readString(file)).contains("armed=false\nreasons=SHUTTING_DOWN\n");
      long writes = writer.writes();
      writer.close();
      assertThat(writer.writes()).isEqualTo(writes);
    } finally {
      scheduler.shutdownNow();
    }
  }
}
