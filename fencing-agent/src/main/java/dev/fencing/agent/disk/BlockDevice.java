package dev.fencing.agent.disk;

import java.io.Closeable;
import java.io.IOException;

/**
 * A block device addressed in whole sectors. Writes are on the device when the call returns. Reads come from the
 * device only where {@link #coherentAcrossHosts()} says so (O_DIRECT): then what one node writes is what every other
 * node reads. {@link DirectBlockDevice}'s O_DSYNC fallback (the file system refused O_DIRECT, or the flag is unknown
 * here) may read from this host's page cache, which no other host's write invalidates; {@link DiskMonitor} then breaks
 * no ties and gives no cut-off evidence. Calls may block for as long as the device does: only the disk thread calls
 * them.
 */
public interface BlockDevice extends Closeable {

  /** Path or name, for logs. */
  String name();

  /** The logical block size (the unit of O_DIRECT I/O and SBD's sector size). */
  int sectorSize();

  /** "O_DIRECT", or "O_DSYNC (why O_DIRECT was not used)". */
  String ioMode();

  /**
   * True when every read comes from the device, so it returns what any host wrote last (O_DIRECT; memory shared by
   * every node of a test). False when reads may come from this host's page cache and miss other hosts' writes
   * ({@link DirectBlockDevice}'s O_DSYNC fallback): nothing that compares nodes may be decided on them. A device
   * that may read through a cache must say so here.
   */
  default boolean coherentAcrossHosts() {
    return true;
  }

  /** Reads {@code count} sectors starting at {@code sector}. */
  byte[] read(long sector, int count) throws IOException;

  /** Writes whole sectors starting at {@code sector}; returns once the device has them. */
  void write(long sector, byte[] data) throws IOException;

  @Override
  void close() throws IOException;
}
