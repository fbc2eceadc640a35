package dev.fencing.agent.disk;

import java.io.IOException;
import java.util.Arrays;

/** A block device in memory for tests: one shared byte array, optionally failing every request. */
final class InMemoryBlockDevice implements BlockDevice {

  private final byte[] bytes;
  private final int sectorSize;
  private volatile IOException failure;

  InMemoryBlockDevice(int sizeBytes, int sectorSize) {
    this.bytes = new byte[sizeBytes];
    this.sectorSize = sectorSize;
  }

  /** Every later request fails with {@code e} (null: works again). */
  void failWith(IOException e) {
    failure = e;
  }

  byte[] raw() {
    return bytes;
  }

  @Override
  public String name() {
    return "memory";
  }

  @Override
  public int sectorSize() {
    return sectorSize;
  }

  @Override
  public String ioMode() {
    return "memory";
  }

  @Override
  public synchronized byte[] read(long sector, int count) throws IOException {
    check();
    int from = Math.toIntExact(sector * sectorSize);
    if (from + count * sectorSize > bytes.length) {
      throw new IOException("read past the end");
    }
    return Arrays.copyOfRange(bytes, from, from + count * sectorSize);
  }

  @Override
  public synchronized void write(long sector, byte[] data) throws IOException {
    check();
    int from = Math.toIntExact(sector * sectorSize);
    if (from + data.length > bytes.length) {
      throw new IOException("write past the end");
    }
    System.arraycopy(data, 0, bytes, from, data.length);
  }

  private void check() throws IOException {
    IOException e = failure;
    if (e != null) {
      throw e;
    }
  }

  @Override
  public void close() {}
}
