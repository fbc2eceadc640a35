package dev.fencing.agent.config;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;

/**
 * The agent's state dir (default {@code /var/lib/fencing-agent}). Every file is written to a temp file in the same
 * directory and renamed over the old one, so a crash or power loss leaves the old or the new content, never a torn
 * file.
 */
public final class StateDirectory {

  /** Default location. */
  public static final Path DEFAULT = Path.of("/var/lib/fencing-agent");

  private final Path dir;

  public StateDirectory(Path dir) {
    this.dir = dir;
  }

  public Path path() {
    return dir;
  }

  /** Writes {@code name} atomically. */
  public void write(String name, byte[] content) throws IOException {
    Files.createDirectories(dir);
    Path target = dir.resolve(name);
    Path temp = Files.createTempFile(dir, "." + name, ".tmp");
    try {
      Files.write(temp, content);
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
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
