package dev.fencing.agent.disk;

import java.io.Closeable;
import java.io.IOException;

/**
 * A block device addressed in whole sectors. Reads and writes bypass the page cache (O_DIRECT, or O_DSYNC where the
 * file system refuses O_DIRECT), so what one node writes is what every other node reads. Calls may block for as long
 * as the device does: only the disk thread calls them.
 */
public interface BlockDevice extends Closeable {

  /** Path or name, for logs. */
  String name();

  /** The logical block size (the unit of O_DIRECT I/O and SBD's sector size). */
  int sectorSize();

  /** "O_DIRECT", or "O_DSYNC (why O_DIRECT was not used)". */
  String ioMode();

  /** Reads {@code count} sectors starting at {@code sector}. */
  byte[] read(long sector, int count) throws IOException;

  /** Writes whole sectors starting at {@code sector}; returns once the device has them. */
  void write(long sector, byte[] data) throws IOException;

  @Override
  void close() throws IOException;
}
