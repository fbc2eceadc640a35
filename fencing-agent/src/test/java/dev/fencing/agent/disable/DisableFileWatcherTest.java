package dev.fencing.agent.disable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DisableFileWatcherTest {

  // A change is seen at the next poll (500 ms); the rest is slack for a loaded machine.
  private static final Duration NOTICED_WITHIN = Duration.ofSeconds(5);

  @TempDir Path dir;

  // Like bashible should: a reader polling in between never sees a created-but-empty file.
  private void writeAtomically(Path file, String content) throws IOException {
    Path tmp = Files.writeString(dir.resolve(".disable.tmp"), content);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void creationAndRemovalAreEachNoticedWithinOneSecond() throws IOException {
    Path file = dir.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = new DisableFileWatcher(file, changes::add)) {
      watcher.start();
      assertThat(watcher.current()).isEqualTo(DisableState.ABSENT);

      writeAtomically(file, "maintenance: kernel upgrade (bashible)\nstep 3\n");
      await().atMost(NOTICED_WITHIN).untilAsserted(() -> assertThat(changes).containsExactly(
          DisableState.ABSENT, new DisableState(true, "maintenance: kernel upgrade (bashible)")));
      assertThat(watcher.current().present()).isTrue();

      Files.delete(file);
      await().atMost(NOTICED_WITHIN).untilAsserted(() -> assertThat(changes).hasSize(3));
      assertThat(changes.get(2)).isEqualTo(DisableState.ABSENT);
      assertThat(watcher.current()).isEqualTo(DisableState.ABSENT);
    }
  }

  @Test
  void fileExistingAtStartIsDeliveredOnceByStart() throws IOException {
    Path file = dir.resolve("disable");
    writeAtomically(file, "drain");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = new DisableFileWatcher(file, changes::add)) {
      watcher.start();

      assertThat(changes).containsExactly(new DisableState(true, "drain"));
      assertThat(watcher.current()).isEqualTo(new DisableState(true, "drain"));
      await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 1);
    }
  }

  @Test
  void listenerIsCalledOnlyOnChangesIncludingAChangedReason() throws IOException {
    Path file = dir.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = new DisableFileWatcher(file, changes::add)) {
      watcher.start();
      writeAtomically(file, "first");
      await().atMost(NOTICED_WITHIN).until(() -> changes.size() == 2);
      await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 2);

      writeAtomically(file, "second");
      await().atMost(NOTICED_WITHIN).until(() -> changes.size() == 3);
      assertThat(changes).extracting(DisableState::reason).containsExactly("", "first", "second");
    }
  }

  @Test
  void aThrowingListenerDoesNotStopTheWatcher() throws IOException {
    Path file = dir.resolve("disable");
    AtomicInteger calls = new AtomicInteger();
    try (DisableFileWatcher watcher = new DisableFileWatcher(file, s -> {
      if (calls.incrementAndGet() > 1) {
        throw new IllegalStateException("listener bug");
      }
    })) {
      watcher.start();
      writeAtomically(file, "x");
      await().atMost(NOTICED_WITHIN).until(() -> calls.get() == 2);
      Files.delete(file);
      await().atMost(NOTICED_WITHIN).until(() -> calls.get() == 3);
      assertThat(watcher.current().present()).isFalse();
    }
  }

  @Test
  void injectedSchedulerIsUsedAndNotShutDownByClose() throws IOException {
    Path file = dir.resolve("disable");
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try {
      List<DisableState> changes = new CopyOnWriteArrayList<>();
      DisableFileWatcher watcher = new DisableFileWatcher(file, changes::add, scheduler);
      watcher.start();
      Files.createDirectory(file);
      await().atMost(NOTICED_WITHIN).until(() -> changes.size() == 2);
      assertThat(changes.get(1)).isEqualTo(new DisableState(true, ""));

      watcher.close();

      assertThat(scheduler.isShutdown()).isFalse();
    } finally {
      scheduler.shutdownNow();
    }
  }

  /** A watcher on a scheduler of its own, with the given backstop and inotify source. */
  private static DisableFileWatcher watcher(Path file, List<DisableState> changes, Duration backstop,
                                            DisableFileWatcher.WatchServices watchServices) {
    return new DisableFileWatcher(file, changes::add, Executors.newSingleThreadScheduledExecutor(), true, backstop,
        watchServices);
  }

  /** A watcher whose backstop never comes within a test: whatever it notices, it noticed through the watch. */
  private static DisableFileWatcher watchOnly(Path file, List<DisableState> changes) {
    return watcher(file, changes, Duration.ofHours(1), FileSystems.getDefault()::newWatchService);
  }

  /** Writes {@code reason} into the (absent) file and waits for the watcher's second state: present with it. */
  private void createdAndSeen(Path file, List<DisableState> changes, String reason) throws IOException {
    writeAtomically(file, reason);
    await().atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 2);
    assertThat(changes.get(1)).isEqualTo(new DisableState(true, reason));
  }

  @Test
  void changesAreSeenThroughTheDirectoryWatchWithoutAnyPoll() throws IOException {
    Path file = dir.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watchOnly(file, changes)) {
      watcher.start();
      assertThat(watcher.watching()).isTrue();

      writeAtomically(file, "drain");
      await().atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 2);
      // Written in place with one write (no truncation first), so no read can see a half-written file.
      Files.writeString(file, "drain, second try\n", StandardOpenOption.WRITE);
      await().atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 3);
      Files.delete(file);
      await().atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 4);

      assertThat(changes).containsExactly(DisableState.ABSENT, new DisableState(true, "drain"),
          new DisableState(true, "drain, second try"), DisableState.ABSENT);
    }
  }

  @Test
  void otherFilesChangingInTheDirectoryCauseNoRead() throws Exception {
    // The agent's status file sits beside the disable file and is replaced every few seconds.
    Path file = dir.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watchOnly(file, changes)) {
      watcher.start();
      long readsAtStart = watcher.reads();
      for (int i = 0; i < 20; i++) {
        Path tmp = Files.writeString(dir.resolve(".status.tmp"), "armed=true revision=" + i + "\n");
        Files.move(tmp, dir.resolve("status"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Thread.sleep(20); // paced like separate writes, so that their events are not all taken in one batch
      }
      writeAtomically(file, "maintenance");
      await().atMost(Duration.ofSeconds(5)).until(() -> changes.size() == 2);

      // The disable file's own events: its creation, possibly seen in two batches.
      assertThat(watcher.reads() - readsAtStart).isBetween(1L, 2L);
    }
  }

  @Test
  void withoutAWatchTheFileIsPolled() throws IOException {
    Path file = dir.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watcher(file, changes, Duration.ofHours(1), () -> {
      throw new IOException("User limit of inotify instances reached or too many open files");
    })) {
      watcher.start();
      assertThat(watcher.watching()).isFalse();

      writeAtomically(file, "x");
      await().atMost(NOTICED_WITHIN).until(() -> changes.size() == 2);
      Files.delete(file);
      await().atMost(NOTICED_WITHIN).until(() -> changes.size() == 3);
      assertThat(watcher.watching()).isFalse();
    }
  }

  @Test
  void aDirectoryThatAppearsLaterIsWatchedOnceItExists() throws IOException {
    Path run = dir.resolve("run");
    Path file = run.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watchOnly(file, changes)) {
      watcher.start();
      assertThat(watcher.watching()).isFalse();

      Files.createDirectory(run);
      await().atMost(NOTICED_WITHIN).until(watcher::watching);
      createdAndSeen(file, changes, "late");
    }
  }

  @Test
  void aDirectoryDeletedAndCreatedAgainIsWatchedAgain() throws IOException {
    Path run = Files.createDirectory(dir.resolve("run"));
    Path file = run.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watchOnly(file, changes)) {
      watcher.start();
      assertThat(watcher.watching()).isTrue();

      Files.delete(run);
      await().atMost(Duration.ofSeconds(5)).until(() -> !watcher.watching());
      Files.createDirectory(run);
      // Polled meanwhile, so found and watched within a poll or two, although the backstop is an hour away.
      await().atMost(NOTICED_WITHIN).until(watcher::watching);
      createdAndSeen(file, changes, "back");
    }
  }

  @Test
  void aDirectoryMovedAwayAndReplacedIsWatchedAtTheNextBackstop() throws IOException {
    Path run = Files.createDirectory(dir.resolve("run"));
    Path file = run.resolve("disable");
    List<DisableState> changes = new CopyOnWriteArrayList<>();
    try (DisableFileWatcher watcher = watcher(file, changes, Duration.ofMillis(200),
        FileSystems.getDefault()::newWatchService)) {
      watcher.start();
      Object original = Files.readAttributes(run, BasicFileAttributes.class).fileKey();
      assertThat(watcher.watchedDirectory()).isEqualTo(original);

      // The old watch stays valid (it follows the moved directory) and would report nothing about the new one.
      Files.move(run, dir.resolve("run.old"));
      Files.createDirectory(run);
      Object replacement = Files.readAttributes(run, BasicFileAttributes.class).fileKey();
      assertThat(replacement).isNotEqualTo(original);

      await().atMost(Duration.ofSeconds(5)).until(() -> replacement.equals(watcher.watchedDirectory()));
      assertThat(watcher.watching()).isTrue();
    }
  }

  @Test
  void reasonIsTheFirstLineTrimmedCleanedAndShortenedAndNeverMoreThanText() throws IOException {
    assertThat(DisableFileWatcher.reasonFrom("  reboot now; rm -rf /  \r\nsecond".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("reboot now; rm -rf /");
    assertThat(DisableFileWatcher.reasonFrom("a\tb\u0007c".getBytes(StandardCharsets.UTF_8))).isEqualTo("a b c");
    assertThat(DisableFileWatcher.reasonFrom(new byte[] {(byte) 0xff, (byte) 0xfe, 'o', 'k'})).endsWith("ok");
    assertThat(DisableFileWatcher.reasonFrom(new byte[0])).isEmpty();
    assertThat(DisableFileWatcher.reasonFrom("y".repeat(10_000).getBytes(StandardCharsets.UTF_8)))
        .hasSize(DisableFileWatcher.MAX_REASON_LENGTH);

    Path big = dir.resolve("disable");
    Files.write(big, new byte[5_000_000]);
    assertThat(DisableFileWatcher.read(big).present()).isTrue();
  }

  @Test
  void anythingAtThePathCountsAsPresentADanglingLinkIncludedAndNothingElseDoes() throws Exception {
    Path file = dir.resolve("disable");
    assertThat(DisableFileWatcher.read(file)).isEqualTo(DisableState.ABSENT);
    // Other entries of the directory, one of them a prefix of the name, are not the file.
    Files.writeString(dir.resolve("disabled"), "x");
    Files.writeString(dir.resolve("disabl"), "x");
    Files.createDirectory(dir.resolve("sub"));
    assertThat(DisableFileWatcher.read(file)).isEqualTo(DisableState.ABSENT);

    Files.createSymbolicLink(file, dir.resolve("no-such-target"));
    assertThat(DisableFileWatcher.read(file)).isEqualTo(new DisableState(true, ""));
    Files.delete(file);

    Files.writeString(dir.resolve("target"), "maintenance\n");
    Files.createSymbolicLink(file, dir.resolve("target"));
    assertThat(DisableFileWatcher.read(file)).isEqualTo(new DisableState(true, "maintenance"));
    Files.delete(file);

    Files.createDirectory(file);
    assertThat(DisableFileWatcher.read(file)).isEqualTo(new DisableState(true, ""));
    Files.delete(file);

    Process mkfifo = new ProcessBuilder("mkfifo", file.toString()).start();
    assertThat(mkfifo.waitFor()).isZero();
    assertThat(DisableFileWatcher.read(file)).isEqualTo(new DisableState(true, ""));
    Files.delete(file);

    assertThat(DisableFileWatcher.read(file)).isEqualTo(DisableState.ABSENT);
    assertThat(DisableFileWatcher.read(dir.resolve("no-such-dir").resolve("disable"))).isEqualTo(DisableState.ABSENT);
    assertThat(DisableFileWatcher.read(dir.resolve("disabled").resolve("disable"))).isEqualTo(DisableState.ABSENT);
  }
}
