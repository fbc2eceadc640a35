package dev.fencing.memberlist.codec;

import java.util.HexFormat;

/** Hex helpers for codec tests; spaces in literals are ignored so vectors can be grouped for reading. */
final class Hex {
  private Hex() {}

  static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex.replace(" ", ""));
  }

  static String of(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
