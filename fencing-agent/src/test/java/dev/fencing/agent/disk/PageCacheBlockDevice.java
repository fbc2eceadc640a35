package dev.fencing.agent.disk;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * One host's view of a shared device as {@link DirectBlockDevice}'s fallback opens it ({@code O_DSYNC} without
 * {@code O_DIRECT}): writes go through to the device, but once {@link #startCaching()} is called a sector read is
 * kept in this host's page cache, which only this host's own writes update; other hosts' later writes are never seen.
 */
final class PageCacheBlockDevice implements BlockDevice {

  static final String IO_MODE = "O_DSYNC (O_DIRECT refused by the file system (EINVAL))";

  private final BlockDevice device;
  private final Map<Long, byte[]> cache = new HashMap<>();
  private boolean caching;

  PageCacheBlockDevice(BlockDevice device) {
    this.device = device;
  }

  /** From now on a sector once read is served from this host's cache. */
  synchronized void startCaching() {
    caching = true;
  }

  @Override
  public String name() {
    return device.name();
  }

  @Override
  public int sectorSize() {
    return device.sectorSize();
  }

  @Override
  public String ioMode() {
    return IO_MODE;
  }

  @Override
  public boolean coherentAcrossHosts() {
    return false;
  }

  @Override
  public synchronized byte[] read(long sector, int count) throws IOException {
    int size = sectorSize();
    byte[] out = new byte[count * size];
    for (int i = 0; i < count; i++) {
      byte[] data = caching ? cache.get(sector + i) : null;
      if (data == null) {
        data = device.read(sector + i, 1);
        if (caching) {
          cache.put(sector + i, data);
        }
      }
      System.arraycopy(data, 0, out, i * size, size);
    }
    return out;
  }

  @Override
  public synchronized void write(long sector, byte[] data) throws IOException {
    device.write(sector, data);
    int size = sectorSize();
    for (int i = 0; i < data.length / size; i++) {
      if (caching) {
        cache.put(sector + i, java.util.Arrays.copyOfRange(data, i * size, (i + 1) * size));
      }
    }
  }

  @Override
  public void close() throws IOException {
    device.close();
  }
}
