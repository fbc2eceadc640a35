package dev.fencing.agent.watchdog;

/**
 * The few libc calls a Linux watchdog needs, as a seam: the JNA binding in production and a recording fake in tests.
 * Every call returns the C return value; on -1 {@link #lastErrno()} tells why.
 */
public interface Libc {

  int O_WRONLY = 0x1;
  int O_NONBLOCK = 0x800;
  int O_CLOEXEC = 0x80000;

  int ENOENT = 2;
  int ENXIO = 6;
  int EAGAIN = 11;
  int EACCES = 13;
  int EBUSY = 16;
  int EINVAL = 22;
  int ENOTTY = 25;
  int EOPNOTSUPP = 95;

  int open(String path, int flags);

  /** ioctl with an {@code int*} argument, read and written through {@code value[0]}. */
  int ioctlInt(int fd, long request, int[] value);

  /** ioctl with a buffer argument (e.g. struct watchdog_info). */
  int ioctlBuffer(int fd, long request, byte[] buffer);

  int write(int fd, byte[] data);

  int close(int fd);

  /** errno of the last failed call on this thread. */
  int lastErrno();

  /** A short description of an errno value ({@code strerror}). */
  String describe(int errno);
}
