package dev.fencing.agent.disk;

import java.io.IOException;
import java.util.Arrays;

/** A block device in memory for tests: one shared byte array, optionally failing or blocking every request. */
public final class InMemoryBlockDevice implements BlockDevice {

  private final byte[] bytes;
  private final int sectorSize;
  private volatile IOException failure;

  private volatile java.util.concurrent.CountDownLatch gate;

  public InMemoryBlockDevice(int sizeBytes, int sectorSize) {
    this.bytes = new byte[sizeBytes];
    this.sectorSize = sectorSize;
  }

  /** Every later request fails with {@code e} (null: works again). */
  public void failWith(IOException e) {
    failure = e;
  }

  /** Every later request blocks (a hung device) until {@link #release()}. */
  public void hang() {
    gate = new java.util.concurrent.CountDownLatch(1);
  }

  /** Ends {@link #hang()}. */
  public void release() {
    java.util.concurrent.CountDownLatch g = gate;
    gate = null;
    if (g != null) {
      g.countDown();
    }
  }

  /** A device created as {@code sbd create} does. */
  public static InMemoryBlockDevice sbdFormatted() throws IOException {
    InMemoryBlockDevice d = new InMemoryBlockDevice(1 << 20, 512);
    new SbdDevice(d).create(new java.util.UUID(1, 2));
    return d;
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
  public byte[] read(long sector, int count) throws IOException {
    awaitGate();
    return readNow(sector, count);
  }

  private synchronized byte[] readNow(long sector, int count) throws IOException {
    check();
    int from = Math.toIntExact(sector * sectorSize);
    if (from + count * sectorSize > bytes.length) {
      throw new IOException("read past the end");
    }
    return Arrays.copyOfRange(bytes, from, from + count * sectorSize);
  }

  @Override
  public void write(long sector, byte[] data) throws IOException {
    awaitGate();
    writeNow(sector, data);
  }

  private void awaitGate() throws IOException {
    java.util.concurrent.CountDownLatch g = gate;
    if (g != null) {
      try {
        g.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted");
      }
    }
  }

  private synchronized void writeNow(long sector, byte[] data) throws IOException {
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
  public void close() {
    // shared by every node of a test: stays usable
  }
}
