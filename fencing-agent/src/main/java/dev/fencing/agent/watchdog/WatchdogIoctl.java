package dev.fencing.agent.watchdog;

/** Linux watchdog ioctl request numbers and option bits ({@code include/uapi/linux/watchdog.h}). */
final class WatchdogIoctl {

  static final long WDIOC_GETSUPPORT = 0x80285700L;
  static final long WDIOC_SETOPTIONS = 0x80045704L;
  static final long WDIOC_KEEPALIVE = 0x80045705L;
  static final long WDIOC_SETTIMEOUT = 0xC0045706L;
  static final long WDIOC_GETTIMEOUT = 0x80045707L;
  static final long WDIOC_GETTIMELEFT = 0x8004570AL;

  /** Size of struct watchdog_info: u32 options, u32 firmware_version, u8 identity[32]. */
  static final int WATCHDOG_INFO_BYTES = 40;

  static final int WDIOF_SETTIMEOUT = 0x0080;
  static final int WDIOF_MAGICCLOSE = 0x0100;
  static final int WDIOF_KEEPALIVEPING = 0x8000;

  static final int WDIOS_DISABLECARD = 0x0001;

  private WatchdogIoctl() {}
}
