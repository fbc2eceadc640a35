package dev.fencing.agent.disk;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * A device opened with {@code O_DIRECT | O_DSYNC} through libc ({@code open}, {@code pread}, {@code pwrite} on
 * page-aligned buffers), so every read comes from the device and every write is on it when the call returns: what one
 * node writes is what every other node reads. The JDK's own {@code ExtendedOpenOption.DIRECT} is not used: it demands
 * the file system's block size (4096 on /dev) for every transfer, while SBD writes single 512-byte sectors, and a
 * read-modify-write of 4 KiB would overwrite neighbouring slots and mailboxes (a poison pill among them).
 *
 * <p>Where {@code O_DIRECT} is refused (tmpfs, some overlay file systems, an architecture whose flag value is not
 * known here, libc not loadable) it falls back to a {@code FileChannel} with {@code DSYNC} and says why in
 * {@link #ioMode()}: writes still reach the device before returning, but reads may come from this host's page cache,
 * which is coherent only for nodes on the same host (a lab), never across hosts, so {@link #coherentAcrossHosts()} is
 * false and the disk arbiter breaks no ties and gives no cut-off evidence on it.
 */
public final class DirectBlockDevice implements BlockDevice {

  private static final int ALIGNMENT = 4096;
  private static final int O_RDWR = 0x2;
  private static final int O_DSYNC = 0x1000;
  private static final int O_CLOEXEC = 0x80000;

  /** The libc calls used; errno arrives as LastErrorException. */
  interface C extends Library {
    int open(String path, int flags) throws LastErrorException;

    NativeLong pread(int fd, Pointer buffer, NativeLong count, long offset) throws LastErrorException;

    NativeLong pwrite(int fd, Pointer buffer, NativeLong count, long offset) throws LastErrorException;

    int close(int fd) throws LastErrorException;
  }

  private final Path path;
  private final int sectorSize;
  private final String ioMode;
  private final C libc;
  private final int fd;
  private final FileChannel channel;

  private DirectBlockDevice(Path path, int sectorSize, String ioMode, C libc, int fd, FileChannel channel) {
    this.path = path;
    this.sectorSize = sectorSize;
    this.ioMode = ioMode;
    this.libc = libc;
    this.fd = fd;
    this.channel = channel;
  }

  /** Opens {@code path} read-write, O_DIRECT where possible. */
  public static DirectBlockDevice open(Path path) throws IOException {
    int sectorSize = logicalBlockSize(path);
    String why;
    OptionalInt direct = oDirect(System.getProperty("os.arch", ""));
    if (direct.isEmpty()) {
      why = "the O_DIRECT flag of architecture " + System.getProperty("os.arch") + " is not known here";
    } else {
      try {
        C c = Native.load("c", C.class);
        int fd = c.open(path.toString(), O_RDWR | O_DSYNC | O_CLOEXEC | direct.getAsInt());
        return new DirectBlockDevice(path, sectorSize, "O_DIRECT", c, fd, null);
      } catch (LastErrorException e) {
        if (e.getErrorCode() != 22) { // anything but EINVAL (O_DIRECT refused) is a real failure to open
          throw new IOException("cannot open " + path + ": errno " + e.getErrorCode() + " (" + e.getMessage() + ")");
        }
        why = "O_DIRECT refused by the file system (EINVAL)";
      } catch (UnsatisfiedLinkError e) {
        why = "libc not loadable: " + e.getMessage();
      }
    }
    FileChannel sync = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
        StandardOpenOption.DSYNC);
    return new DirectBlockDevice(path, sectorSize, "O_DSYNC (" + why + ")", null, -1, sync);
  }

  /** Linux's O_DIRECT: 040000 on x86, 0200000 on arm64 (where 040000 is O_DIRECTORY). */
  static OptionalInt oDirect(String arch) {
    return switch (arch.toLowerCase(Locale.ROOT)) {
      case "amd64", "x86_64", "x86", "i386" -> OptionalInt.of(0x4000);
      case "aarch64", "arm64" -> OptionalInt.of(0x10000);
      default -> OptionalInt.empty();
    };
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
  public boolean coherentAcrossHosts() {
    return channel == null;
  }

  @Override
  public byte[] read(long sector, int count) throws IOException {
    int length = count * sectorSize;
    long position = sector * sectorSize;
    if (channel != null) {
      ByteBuffer buffer = ByteBuffer.allocate(length);
      while (buffer.hasRemaining()) {
        if (channel.read(buffer, position + buffer.position()) < 0) {
          throw new IOException("end of device at byte " + (position + buffer.position()));
        }
      }
      return buffer.array();
    }
    Memory memory = new Memory(length + ALIGNMENT);
    Pointer aligned = memory.align(ALIGNMENT);
    int done = 0;
    while (done < length) {
      int offset = done;
      long n = call(() -> libc.pread(fd, aligned.share(offset), new NativeLong(length - offset), position + offset),
          "read", sector);
      if (n == 0) {
        throw new IOException("end of device at byte " + (position + done) + " reading sector " + sector);
      }
      done += (int) n;
    }
    return aligned.getByteArray(0, length);
  }

  @Override
  public void write(long sector, byte[] data) throws IOException {
    if (data.length % sectorSize != 0) {
      throw new IllegalArgumentException("write of " + data.length + " bytes is not whole sectors of " + sectorSize);
    }
    long position = sector * sectorSize;
    if (channel != null) {
      ByteBuffer buffer = ByteBuffer.wrap(data);
      while (buffer.hasRemaining()) {
        channel.write(buffer, position + buffer.position());
      }
      return;
    }
    Memory memory = new Memory(data.length + ALIGNMENT);
    Pointer aligned = memory.align(ALIGNMENT);
    aligned.write(0, data, 0, data.length);
    int done = 0;
    while (done < data.length) {
      int offset = done;
      done += (int) call(() -> libc.pwrite(fd, aligned.share(offset), new NativeLong(data.length - offset),
          position + offset), "write", sector);
    }
  }

  private interface Io {
    NativeLong run();
  }

  private long call(Io io, String what, long sector) throws IOException {
    try {
      return io.run().longValue();
    } catch (LastErrorException e) {
      throw new IOException(what + " of sector " + sector + " on " + path + " failed: errno " + e.getErrorCode());
    }
  }

  @Override
  public void close() throws IOException {
    if (channel != null) {
      channel.close();
    } else {
      try {
        libc.close(fd);
      } catch (LastErrorException e) {
        throw new IOException("close " + path + ": errno " + e.getErrorCode());
      }
    }
  }
}
