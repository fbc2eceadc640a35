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
import java.util.Set;

/**
 * Replaces a file atomically and durably: the content goes to a temp file in the same directory (created with the
 * target's mode), which is fsynced, renamed over the target, and then the directory is fsynced, so the rename itself
 * survives a power loss. A reader sees the old or the new content, never a torn file; a crash at any point leaves one
 * of the two. The one home of this logic for the state dir ({@link StateDirectory}) and the host status file.
 */
public final class AtomicFileReplacer {

  /** Flushes an open file or directory to stable storage; a seam so tests can see what was synced, and when. */
  @FunctionalInterface
  public interface Sync {
    /** Forces {@code channel} (opened on {@code path}) to disk. */
    void force(FileChannel channel, Path path) throws IOException;

    /** {@link FileChannel#force(boolean)} with metadata. */
    Sync FSYNC = (channel, path) -> channel.force(true);
  }

  private final Sync sync;

  /** Replaces files forcing data to disk through {@code sync}. */
  public AtomicFileReplacer(Sync sync) {
    this.sync = Objects.requireNonNull(sync, "sync");
  }

  /**
   * Replaces {@code target} (whose directory must exist) with {@code content}; the new file has {@code mode} where the
   * file system is POSIX (set explicitly, so the umask does not narrow it). When this returns the new content
   * survives a crash or power loss.
   */
  public void replace(Path target, byte[] content, Set<PosixFilePermission> mode) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    // Created owner-only first: the content may be secret until the mode below is set on the complete file.
    FileAttribute<?>[] ownerOnly = posix
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
        : new FileAttribute<?>[0];
    Path temp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp", ownerOnly);
    boolean moved = false;
    try {
      try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer buffer = ByteBuffer.wrap(content);
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        sync.force(out, temp);
      }
      if (posix) {
        Files.setPosixFilePermissions(temp, mode);
      }
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
      moved = true;
      // The rename is an entry in the directory: without this fsync a power loss may bring back the old file.
      try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
        sync.force(directory, dir);
      }
    } finally {
      // Only a failed replace leaves the temp file (deleting a file already renamed away costs an exception).
      if (!moved) {
        Files.deleteIfExists(temp);
      }
    }
  }
}
