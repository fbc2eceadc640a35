package dev.fencing.agent.disk;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A device or file opened with O_DIRECT ({@link ExtendedOpenOption#DIRECT}) and page-aligned buffers. When the file
 * system refuses O_DIRECT (tmpfs, some overlay file systems) it falls back to O_DSYNC and says why in
 * {@link #ioMode()}: writes still reach the device before returning, but reads may come from this host's page cache,
 * which is coherent only for nodes on the same host (a lab), never across hosts.
 */
public final class DirectBlockDevice implements BlockDevice {

  private static final int ALIGNMENT = 4096;

  private final Path path;
  private final FileChannel channel;
  private final int sectorSize;
  private final String ioMode;

  private DirectBlockDevice(Path path, FileChannel channel, int sectorSize, String ioMode) {
    this.path = path;
    this.channel = channel;
    this.sectorSize = sectorSize;
    this.ioMode = ioMode;
  }

  /** Opens {@code path} read-write, O_DIRECT where possible. */
  public static DirectBlockDevice open(Path path) throws IOException {
    int sectorSize = logicalBlockSize(path);
    try {
      FileChannel direct = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
          ExtendedOpenOption.DIRECT);
      return new DirectBlockDevice(path, direct, sectorSize, "O_DIRECT");
    } catch (UnsupportedOperationException | IOException e) {
      FileChannel sync = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
          StandardOpenOption.DSYNC);
      return new DirectBlockDevice(path, sync, sectorSize, "O_DSYNC (O_DIRECT refused: " + e.getMessage() + ")");
    }
  }

  /** The kernel's logical block size for a block device, 512 for a regular file. */
  static int logicalBlockSize(Path path) {
    try {
      Path real = path.toRealPath();
      if (real.getParent() != null && real.getParent().toString().equals("/dev")) {
        Path sysfs = Path.of("/sys/class/block", real.getFileName().toString(), "queue", "logical_block_size");
        if (Files.isReadable(sysfs)) {
          return Integer.parseInt(Files.readString(sysfs).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      return 512;
    }
    return 512;
  }

  @Override
  public String name() {
    return path.toString();
  }

  @Override
  public int sectorSize() {
    return sectorSize;
  }

  @Override
  public String ioMode() {
    return ioMode;
  }

  @Override
  public byte[] read(long sector, int count) throws IOException {
    int length = count * sectorSize;
    ByteBuffer buffer = aligned(length);
    long position = sector * sectorSize;
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, position + buffer.position());
      if (n < 0) {
        throw new IOException("end of device at byte " + (position + buffer.position()) + " reading sector " + sector);
      }
    }
    byte[] out = new byte[length];
    buffer.flip().get(out);
    return out;
  }

  @Override
  public void write(long sector, byte[] data) throws IOException {
    if (data.length % sectorSize != 0) {
      throw new IllegalArgumentException("write of " + data.length + " bytes is not whole sectors of " + sectorSize);
    }
    ByteBuffer buffer = aligned(data.length).put(data).flip();
    long position = sector * sectorSize;
    while (buffer.hasRemaining()) {
      channel.write(buffer, position + buffer.position());
    }
  }

  private static ByteBuffer aligned(int length) {
    return ByteBuffer.allocateDirect(length + ALIGNMENT).alignedSlice(ALIGNMENT).limit(length);
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
