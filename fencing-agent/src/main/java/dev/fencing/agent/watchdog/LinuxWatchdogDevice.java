package dev.fencing.agent.watchdog;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * A Linux watchdog driven like SBD and wdmd drive it: open, GETSUPPORT, SETTIMEOUT rounded up to whole seconds and
 * read back with GETTIMEOUT, KEEPALIVE (a write when the ioctl is refused), GETTIMELEFT, and magic close to disarm.
 * A device that answers ioctls with ENOTTY (a FIFO read by the softdog emulator) is driven by writes alone.
 */
public final class LinuxWatchdogDevice implements WatchdogDevice {

  private static final byte[] KEEPALIVE_BYTE = {'.'};
  private static final byte[] MAGIC_BYTE = {'V'};

  private final Path path;
  private final Libc libc;
  private final NowayoutProbe nowayoutProbe;
  private int fd = -1;
  private boolean ioctl;
  private int options;

  public LinuxWatchdogDevice(Path path, Libc libc, NowayoutProbe nowayoutProbe) {
    this.path = path;
    this.libc = libc;
    this.nowayoutProbe = nowayoutProbe;
  }

  @Override
  public String name() {
    return path.toString();
  }

  @Override
  public Optional<String> presenceProblem() {
    return fd < 0 && !Files.exists(path) ? Optional.of(missing(path)) : Optional.empty();
  }

  private static String missing(Path path) {
    return "missing: " + path + " not found (load a watchdog driver, e.g. modprobe softdog)";
  }

  @Override
  public Optional<Boolean> nowayout() {
    return nowayoutProbe.read(path);
  }

  @Override
  public Duration open(Duration requested) throws WatchdogException {
    if (fd >= 0) {
      throw new WatchdogException(path + ": already open");
    }
    int seconds = wholeSecondsRoundedUp(requested);
    int opened = libc.open(path.toString(), Libc.O_WRONLY | Libc.O_NONBLOCK | Libc.O_CLOEXEC);
    if (opened < 0) {
      int errno = libc.lastErrno();
      throw new WatchdogException(switch (errno) {
        case Libc.ENOENT -> missing(path);
        case Libc.ENXIO -> "no reader: " + path + " is a FIFO nobody reads (start the softdog emulator first)";
        case Libc.EBUSY -> "busy: " + path + " is held open by another process (only one may open it)";
        case Libc.EACCES -> "permission denied opening " + path + " (the agent needs root or the device's group)";
        default -> "cannot open " + path + ": " + libc.describe(errno) + " (errno " + errno + ")";
      });
    }
    fd = opened;
    try {
      byte[] info = new byte[WatchdogIoctl.WATCHDOG_INFO_BYTES];
      if (libc.ioctlBuffer(fd, WatchdogIoctl.WDIOC_GETSUPPORT, info) < 0) {
        int errno = libc.lastErrno();
        if (errno != Libc.ENOTTY && errno != Libc.EINVAL && errno != Libc.EOPNOTSUPP) {
          throw new WatchdogException(path + ": GETSUPPORT failed: " + libc.describe(errno));
        }
        ioctl = false;
        writeOrFail(KEEPALIVE_BYTE, "first keepalive");
        return Duration.ofSeconds(seconds);
      }
      ioctl = true;
      options = ByteBuffer.wrap(info).order(ByteOrder.nativeOrder()).getInt(0);
      int actual = configureTimeout(seconds);
      if (actual != seconds) {
        throw new WatchdogException(path + " (" + identity(info) + ") runs with a " + actual
            + "s timeout instead of the requested " + seconds + "s; set spec.fencing.watchdog.timeout to " + actual
            + "s or use a device that supports " + seconds + "s");
      }
      keepalive();
      return Duration.ofSeconds(actual);
    } catch (WatchdogException e) {
      releaseAfterFailedOpen();
      throw e;
    }
  }

  private int configureTimeout(int seconds) throws WatchdogException {
    int[] value = {seconds};
    if ((options & WatchdogIoctl.WDIOF_SETTIMEOUT) != 0
        && libc.ioctlInt(fd, WatchdogIoctl.WDIOC_SETTIMEOUT, value) < 0) {
      throw new WatchdogException(path + ": SETTIMEOUT " + seconds + "s refused: " + libc.describe(libc.lastErrno())
          + "; choose a timeout the device supports");
    }
    int[] readBack = {0};
    if (libc.ioctlInt(fd, WatchdogIoctl.WDIOC_GETTIMEOUT, readBack) < 0) {
      throw new WatchdogException(path + ": GETTIMEOUT failed: " + libc.describe(libc.lastErrno()));
    }
    return readBack[0];
  }

  @Override
  public void keepalive() throws WatchdogException {
    requireOpen("keepalive");
    if (ioctl && (options & WatchdogIoctl.WDIOF_KEEPALIVEPING) != 0
        && libc.ioctlInt(fd, WatchdogIoctl.WDIOC_KEEPALIVE, new int[1]) >= 0) {
      return;
    }
    writeOrFail(KEEPALIVE_BYTE, "keepalive");
  }

  @Override
  public void magicClose() throws WatchdogException {
    requireOpen("magic close");
    try {
      if (ioctl) {
        // As SBD: ask the driver to stop the card, and use the magic character too, to be sure.
        libc.ioctlInt(fd, WatchdogIoctl.WDIOC_SETOPTIONS, new int[] {WatchdogIoctl.WDIOS_DISABLECARD});
      }
      writeOrFail(MAGIC_BYTE, "magic close");
    } finally {
      closeFd();
    }
  }

  @Override
  public void closeWithoutMagic() throws WatchdogException {
    requireOpen("close");
    closeFd();
  }

  @Override
  public Optional<Duration> timeLeft() {
    if (fd < 0 || !ioctl) {
      return Optional.empty();
    }
    int[] left = {0};
    if (libc.ioctlInt(fd, WatchdogIoctl.WDIOC_GETTIMELEFT, left) < 0) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofSeconds(left[0]));
  }

  @Override
  public boolean supportsIoctl() {
    return ioctl;
  }

  @Override
  public boolean isOpen() {
    return fd >= 0;
  }

  static int wholeSecondsRoundedUp(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("watchdog timeout must be positive, got " + timeout);
    }
    long seconds = timeout.getSeconds() + (timeout.getNano() > 0 ? 1 : 0);
    return (int) Math.min(Integer.MAX_VALUE, seconds);
  }

  private void writeOrFail(byte[] data, String what) throws WatchdogException {
    if (libc.write(fd, data) != data.length) {
      int errno = libc.lastErrno();
      throw new WatchdogException(path + ": " + what + " write failed: " + libc.describe(errno)
          + (errno == Libc.EAGAIN ? " (the reader is not draining the FIFO)" : ""));
    }
  }

  private void releaseAfterFailedOpen() {
    if (fd >= 0) {
      libc.write(fd, MAGIC_BYTE);
      closeFd();
    }
  }

  private void closeFd() {
    int toClose = fd;
    fd = -1;
    libc.close(toClose);
  }

  private void requireOpen(String what) throws WatchdogException {
    if (fd < 0) {
      throw new WatchdogException(path + ": " + what + " on a closed device");
    }
  }

  private static String identity(byte[] info) {
    int end = 8;
    while (end < info.length && info[end] != 0) {
      end++;
    }
    return new String(info, 8, end - 8, StandardCharsets.US_ASCII);
  }
}
