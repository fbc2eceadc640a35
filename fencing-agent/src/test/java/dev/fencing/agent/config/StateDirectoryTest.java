package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirectoryTest {

  @TempDir Path root;

  /** What was forced, and what the target file held at that moment. */
  private record Synced(Path path, String targetContent) {}

  @Test
  void theTempFileIsSyncedBeforeTheRenameAndTheDirectoryAfterIt() throws IOException {
    Path dir = root.resolve("state");
    List<Synced> synced = new ArrayList<>();
    StateDirectory state = new StateDirectory(dir, (channel, path) -> {
      channel.force(true);
      Path target = dir.resolve("record");
      synced.add(new Synced(path, Files.exists(target) ? Files.readString(target) : "<none>"));
    });

    state.write("record", "first".getBytes(StandardCharsets.UTF_8));
    state.write("record", "second".getBytes(StandardCharsets.UTF_8));

    assertThat(synced).hasSize(4);
    assertThat(synced.get(0).path().getFileName().toString()).startsWith(".record").endsWith(".tmp");
    assertThat(synced.get(0).targetContent()).as("file synced before the rename").isEqualTo("<none>");
    assertThat(synced.get(1)).as("directory synced after the rename").isEqualTo(new Synced(dir, "first"));
    assertThat(synced.get(2).targetContent()).isEqualTo("first");
    assertThat(synced.get(3)).isEqualTo(new Synced(dir, "second"));
    assertThat(state.read("record")).get().extracting(b -> new String(b, StandardCharsets.UTF_8))
        .isEqualTo("second");
    try (var files = Files.list(dir)) {
      assertThat(files).as("no temp file left behind").containsExactly(dir.resolve("record"));
    }
  }

  @Test
  void aFailedSyncFailsTheWriteAndKeepsTheOldContent() throws IOException {
    Path dir = root.resolve("state");
    new StateDirectory(dir).write("record", "old".getBytes(StandardCharsets.UTF_8));
    StateDirectory failing = new StateDirectory(dir, (channel, path) -> {
      throw new IOException("disk gone (test)");
    });

    assertThatThrownBy(() -> failing.write("record", "new".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("disk gone");
    assertThat(Files.readString(dir.resolve("record"))).isEqualTo("old");
    try (var files = Files.list(dir)) {
      assertThat(files).as("the failed write's temp file is removed").containsExactly(dir.resolve("record"));
    }
  }

  @Test
  void aFailedDirectorySyncFailsTheWriteAfterTheRenameAndLeavesNoTempFile() throws IOException {
    Path dir = root.resolve("state");
    new StateDirectory(dir).write("record", "old".getBytes(StandardCharsets.UTF_8));
    StateDirectory failing = new StateDirectory(dir, (channel, path) -> {
      if (path.equals(dir)) {
        throw new IOException("directory sync failed (test)");
      }
    });

    assertThatThrownBy(() -> failing.write("record", "new".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("directory sync failed");
    // Renamed already: the new content is in place, only its durability is unknown (the caller is told).
    assertThat(Files.readString(dir.resolve("record"))).isEqualTo("new");
    try (var files = Files.list(dir)) {
      assertThat(files).containsExactly(dir.resolve("record"));
    }
  }

  @Test
  void filesAreOwnerOnlyEvenWhenTheyReplaceAReadableOne() throws IOException {
    Path dir = root.resolve("state");
    Files.createDirectories(dir);
    Path target = dir.resolve("controller-config.bin");
    Files.writeString(target, "was world-readable");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));

    new StateDirectory(dir).write("controller-config.bin", new byte[] {1, 2, 3});

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rw-------");
  }

  @Test
  void aMissingStateDirIsCreatedOwnerOnly() throws IOException {
    Path dir = root.resolve("fresh/state");
    new StateDirectory(dir).write("last-fence", new byte[] {1});
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("last-fence"))))
        .isEqualTo("rw-------");
  }

  /** The kubelet creates the DaemonSet's hostPath (DirectoryOrCreate) 0755 before the agent starts. */
  @Test
  void aStateDirSomeoneElseCreatedReadableBecomesOwnerOnlyAtTheFirstWrite() throws IOException {
    Path dir = root.resolve("by-kubelet");
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    new StateDirectory(dir).write("controller-config.bin", new byte[] {1});
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
  }
}
