package dev.fencing.agent.watchdog;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads whether a watchdog driver has {@code nowayout} set, from sysfs, before the device is opened: with nowayout
 * not even a magic close stops the timer, so every disarm (maintenance, disable file, agent restart) would reset
 * the node. Looks at {@code /sys/class/watchdog/watchdogN/nowayout} for {@code /dev/watchdogN} ({@code /dev/watchdog}
 * is watchdog0), then at softdog's module parameter.
 */
public final class NowayoutProbe {

  private static final Pattern DEVICE_NUMBER = Pattern.compile("watchdog(\\d*)");

  private final Path sysRoot;

  /** @param sysRoot the sysfs mount, {@code /sys} in production; a temp dir in tests */
  public NowayoutProbe(Path sysRoot) {
    this.sysRoot = sysRoot;
  }

  /** The probe for the real sysfs. */
  public static NowayoutProbe system() {
    return new NowayoutProbe(Path.of("/sys"));
  }

  /** Empty when sysfs says nothing about this device (e.g. a FIFO, or no sysfs). */
  public Optional<Boolean> read(Path device) {
    // Only kernel devices have a sysfs entry; a FIFO (the emulator) or any other file says nothing.
    if (!device.startsWith("/dev") || device.getFileName() == null) {
      return Optional.empty();
    }
    Matcher matcher = DEVICE_NUMBER.matcher(device.getFileName().toString());
    if (!matcher.matches()) {
      return Optional.empty();
    }
    String index = matcher.group(1).isEmpty() ? "0" : matcher.group(1);
    Optional<Boolean> perDevice = readFlag(sysRoot.resolve("class/watchdog/watchdog" + index + "/nowayout"));
    if (perDevice.isPresent()) {
      return perDevice;
    }
    return readFlag(sysRoot.resolve("module/softdog/parameters/nowayout"));
  }

  private static Optional<Boolean> readFlag(Path file) {
    try {
      String value = Files.readString(file, StandardCharsets.US_ASCII).trim();
      return switch (value) {
        case "1", "Y", "y" -> Optional.of(true);
        case "0", "N", "n" -> Optional.of(false);
        default -> Optional.empty();
      };
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
  }
}
