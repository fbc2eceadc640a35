package dev.fencing.agent.disk;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/** The fixed 64-byte, NUL-terminated name fields of SBD's node slots and mailboxes. */
public final class SbdNames {

  /** Longest name sbd stores (its field is 64 bytes with a terminating NUL). */
  static final int NAME_MAX = 63;

  private SbdNames() {}

  /** Reads a NUL-terminated name of at most {@link #NAME_MAX} bytes at {@code offset}; bytes are kept as Latin-1. */
  static String read(byte[] sector, int offset) {
    int end = offset;
    while (end < offset + NAME_MAX + 1 && sector[end] != 0) {
      end++;
    }
    return new String(sector, offset, Math.min(end - offset, NAME_MAX), StandardCharsets.ISO_8859_1);
  }

  /** Writes {@code name} NUL-padded into the 64-byte field at {@code offset}. */
  static void write(byte[] sector, int offset, String name) {
    byte[] bytes = encodable(name);
    System.arraycopy(bytes, 0, sector, offset, bytes.length);
  }

  /**
   * Why {@code name} cannot have an SBD slot, or empty when it can: it must be 1..63 printable ASCII characters
   * (sbd compares names as C strings, so anything else could not be messaged). Kubernetes node names may be up to
   * 253 characters, so a config with a shared disk is checked with this before it is taken.
   */
  public static Optional<String> unfit(String name) {
    byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
    if (bytes.length == 0 || bytes.length > NAME_MAX) {
      return Optional.of("name '" + name + "' does not fit an SBD slot (1.." + NAME_MAX + " bytes)");
    }
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] < 0x21 || bytes[i] > 0x7e || name.charAt(i) > 0x7e) {
        return Optional.of("name '" + name + "' has a character sbd cannot store at index " + i);
      }
    }
    return Optional.empty();
  }

  /** @throws IllegalArgumentException when {@code name} is {@link #unfit} */
  static byte[] encodable(String name) {
    Optional<String> unfit = unfit(name);
    if (unfit.isPresent()) {
      throw new IllegalArgumentException(unfit.get());
    }
    return name.getBytes(StandardCharsets.US_ASCII);
  }
}
