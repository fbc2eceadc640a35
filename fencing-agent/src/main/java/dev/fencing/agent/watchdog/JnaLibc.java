package dev.fencing.agent.watchdog;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;

/** {@link Libc} through JNA direct calls into the C library. */
public final class JnaLibc implements Libc {

  /** The C declarations used; errno is captured by JNA's LastErrorException. */
  interface C extends Library {
    int open(String path, int flags) throws LastErrorException;

    int ioctl(int fd, NativeLong request, int[] value) throws LastErrorException;

    int ioctl(int fd, NativeLong request, byte[] buffer) throws LastErrorException;

    int write(int fd, byte[] data, NativeLong count) throws LastErrorException;

    int close(int fd) throws LastErrorException;

    String strerror(int errno);
  }

  private final C c;
  private final ThreadLocal<int[]> errno = ThreadLocal.withInitial(() -> new int[1]);

  private JnaLibc(C c) {
    this.c = c;
  }

  /**
   * Loads the C library.
   *
   * @throws UnsatisfiedLinkError when JNA cannot load libc (reported as an unavailable watchdog by the caller)
   */
  public static JnaLibc load() {
    return new JnaLibc(Native.load("c", C.class));
  }

  @Override
  public int open(String path, int flags) {
    try {
      return c.open(path, flags);
    } catch (LastErrorException e) {
      return fail(e);
    }
  }

  @Override
  public int ioctlInt(int fd, long request, int[] value) {
    try {
      return c.ioctl(fd, new NativeLong(request), value);
    } catch (LastErrorException e) {
      return fail(e);
    }
  }

  @Override
  public int ioctlBuffer(int fd, long request, byte[] buffer) {
    try {
      return c.ioctl(fd, new NativeLong(request), buffer);
    } catch (LastErrorException e) {
      return fail(e);
    }
  }

  @Override
  public int write(int fd, byte[] data) {
    try {
      return c.write(fd, data, new NativeLong(data.length));
    } catch (LastErrorException e) {
      return fail(e);
    }
  }

  @Override
  public int close(int fd) {
    try {
      return c.close(fd);
    } catch (LastErrorException e) {
      return fail(e);
    }
  }

  @Override
  public int lastErrno() {
    return errno.get()[0];
  }

  @Override
  public String describe(int errnoValue) {
    return c.strerror(errnoValue);
  }

  private int fail(LastErrorException e) {
    errno.get()[0] = e.getErrorCode();
    return -1;
  }
}
