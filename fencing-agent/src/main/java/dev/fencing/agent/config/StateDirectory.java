package dev.fencing.agent.config;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The agent's state dir (default {@code /var/lib/fencing-agent}). A write is durable when {@link #write} returns
 * ({@link AtomicFileReplacer}): the content goes to a temp file in the same directory, owner-only ({@code 0600}: the
 * cached controller config holds the gossip keyring), which is fsynced, renamed over the old file and then the
 * directory is fsynced, so the rename itself survives a power loss. A crash at any point leaves the old or the new
 * content, never a torn file, and a record that {@link #write} reported written is on disk.
 */
public final class StateDirectory {

  /** Default location. */
  public static final Path DEFAULT = Path.of("/var/lib/fencing-agent");

  private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");

  private final Path dir;
  private final AtomicFileReplacer replacer;

  public StateDirectory(Path dir) {
    this(dir, AtomicFileReplacer.Sync.FSYNC);
  }

  /** As {@link #StateDirectory(Path)}, forcing data to disk through {@code sync}. */
  public StateDirectory(Path dir, AtomicFileReplacer.Sync sync) {
    this.dir = Objects.requireNonNull(dir, "dir");
    this.replacer = new AtomicFileReplacer(sync);
  }

  public Path path() {
    return dir;
  }

  /**
   * Writes {@code name} atomically and durably: temp file (0600) fsynced, renamed over {@code name}, directory
   * fsynced. When this returns the new content survives a crash or power loss.
   */
  public void write(String name, byte[] content) throws IOException {
    boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    if (!Files.isDirectory(dir)) {
      if (posix) {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR));
      } else {
        Files.createDirectories(dir);
      }
    } else if (posix && !Files.getPosixFilePermissions(dir).equals(OWNER_ONLY_DIR)) {
      // Made by someone else, e.g. the kubelet for the DaemonSet's hostPath (DirectoryOrCreate: 0755).
      Files.setPosixFilePermissions(dir, OWNER_ONLY_DIR);
    }
    replacer.replace(dir.resolve(name), content, OWNER_ONLY_FILE);
  }

  /** Reads {@code name}; empty when it does not exist. */
  public Optional<byte[]> read(String name) throws IOException {
    Path file = dir.resolve(name);
    return Files.exists(file) ? Optional.of(Files.readAllBytes(file)) : Optional.empty();
  }
}
