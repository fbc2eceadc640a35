package dev.fencing.agent.watchdog;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A fake libc that plays a watchdog driver (or a FIFO) and records every call. */
final class RecordingLibc implements Libc {

  final List<String> calls = new ArrayList<>();
  final Map<Long, Integer> failIoctl = new HashMap<>();
  int openErrno;
  /** When not 0, every write fails with this errno (a driver whose ping fails, e.g. under a magic close). */
  int writeErrno;
  boolean fifo;
  int options = WatchdogIoctl.WDIOF_SETTIMEOUT | WatchdogIoctl.WDIOF_MAGICCLOSE | WatchdogIoctl.WDIOF_KEEPALIVEPING;
  int timeoutGranularity = 1;
  int timeout = 60;
  int timeLeft = 42;
  int errno;

  @Override
  public int open(String path, int flags) {
    calls.add("open " + path + " flags=0x" + Integer.toHexString(flags));
    if (openErrno != 0) {
      errno = openErrno;
      return -1;
    }
    return 7;
  }

  @Override
  public int ioctlInt(int fd, long request, int[] value) {
    calls.add("ioctl " + name(request) + (request == WatchdogIoctl.WDIOC_SETTIMEOUT
        || request == WatchdogIoctl.WDIOC_SETOPTIONS ? " " + value[0] : ""));
    if (fifo) {
      errno = ENOTTY;
      return -1;
    }
    if (failIoctl.containsKey(request)) {
      errno = failIoctl.get(request);
      return -1;
    }
    if (request == WatchdogIoctl.WDIOC_SETTIMEOUT) {
      timeout = ((value[0] + timeoutGranularity - 1) / timeoutGranularity) * timeoutGranularity;
      value[0] = timeout;
    } else if (request == WatchdogIoctl.WDIOC_GETTIMEOUT) {
      value[0] = timeout;
    } else if (request == WatchdogIoctl.WDIOC_GETTIMELEFT) {
      value[0] = timeLeft;
    }
    return 0;
  }

  @Override
  public int ioctlBuffer(int fd, long request, byte[] buffer) {
    calls.add("ioctl " + name(request));
    if (fifo) {
      errno = ENOTTY;
      return -1;
    }
    ByteBuffer.wrap(buffer).order(ByteOrder.nativeOrder()).putInt(0, options);
    byte[] identity = "Software Watchdog".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    System.arraycopy(identity, 0, buffer, 8, identity.length);
    return 0;
  }

  @Override
  public int write(int fd, byte[] data) {
    calls.add("write " + new String(data, java.nio.charset.StandardCharsets.US_ASCII));
    if (writeErrno != 0) {
      errno = writeErrno;
      return -1;
    }
    return data.length;
  }

  @Override
  public int close(int fd) {
    calls.add("close");
    return 0;
  }

  @Override
  public int lastErrno() {
    return errno;
  }

  @Override
  public String describe(int errnoValue) {
    return "errno" + errnoValue;
  }

  private static String name(long request) {
    if (request == WatchdogIoctl.WDIOC_GETSUPPORT) {
      return "GETSUPPORT";
    } else if (request == WatchdogIoctl.WDIOC_SETTIMEOUT) {
      return "SETTIMEOUT";
    } else if (request == WatchdogIoctl.WDIOC_GETTIMEOUT) {
      return "GETTIMEOUT";
    } else if (request == WatchdogIoctl.WDIOC_KEEPALIVE) {
      return "KEEPALIVE";
    } else if (request == WatchdogIoctl.WDIOC_GETTIMELEFT) {
      return "GETTIMELEFT";
    } else if (request == WatchdogIoctl.WDIOC_SETOPTIONS) {
      return "SETOPTIONS";
    }
    return Long.toHexString(request);
  }
}
