package dev.fencing.agent.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The agent's state dir (default {@code /var/lib/fencing-agent}). A write is durable when {@link #write} returns:
 * the content goes to a temp file in the same directory, created owner-only ({@code 0600}: the cached controller
 * config holds the gossip keyring), which is fsynced, renamed over the old file and then the directory is fsynced,
 * so the rename itself survives a power loss. A crash at any point leaves the old or the new content, never a torn
 * file, and a record that {@link #write} reported written is on disk.
 */
public final class StateDirectory {

  /** Default location. */
  public static final Path DEFAULT = Path.of("/var/lib/fencing-agent");

  private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");

  /** Flushes an open file or directory to stable storage; a seam so tests can see what was synced, and when. */
  @FunctionalInterface
  public interface Sync {
    /** Forces {@code channel} (opened on {@code path}) to disk. */
    void force(FileChannel channel, Path path) throws IOException;

    /** {@link FileChannel#force(boolean)} with metadata. */
    Sync FSYNC = (channel, path) -> channel.force(true);
  }

  private final Path dir;
  private final Sync sync;

  public StateDirectory(Path dir) {
    this(dir, Sync.FSYNC);
  }

  /** As {@link #StateDirectory(Path)}, forcing data to disk through {@code sync}. */
  public StateDirectory(Path dir, Sync sync) {
    this.dir = Objects.requireNonNull(dir, "dir");
    this.sync = Objects.requireNonNull(sync, "sync");
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
    }
    Path target = dir.resolve(name);
    FileAttribute<?>[] ownerOnly = posix
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE)}
        : new FileAttribute<?>[0];
    Path temp = Files.createTempFile(dir, "." + name, ".tmp", ownerOnly);
    try {
      try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer buffer = ByteBuffer.wrap(content);
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        sync.force(out, temp);
      }
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
      // The rename is an entry in the directory: without this fsync a power loss may bring back the old file.
      try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
        sync.force(directory, dir);
      }
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /** Reads {@code name}; empty when it does not exist. */
  public Optional<byte[]> read(String name) throws IOException {
    Path file = dir.resolve(name);
    return Files.exists(file) ? Optional.of(Files.readAllBytes(file)) : Optional.empty();
  }
}
