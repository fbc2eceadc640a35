package dev.fencing.memberlist.node;

import java.time.Duration;

/** Parses Go's time.ParseDuration syntax ({@code 1s}, {@code 200ms}, {@code 1m30s}, {@code 1.5s}) so flags match the Go peer's. */
final class GoDuration {
  private GoDuration() {}

  static Duration parse(String text) {
    String s = text.trim();
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    double totalNanos = 0;
    int i = 0;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      if (start == i) {
        throw new IllegalArgumentException("bad duration \"" + text + "\" (expected e.g. 1s, 200ms, 1m30s)");
      }
      double value;
      try {
        value = Double.parseDouble(s.substring(start, i));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bad number in duration \"" + text + "\"");
      }
      int unitStart = i;
      while (i < s.length() && Character.isLetter(s.charAt(i))) {
        i++;
      }
      String unit = s.substring(unitStart, i);
      long nanosPerUnit =
          switch (unit) {
            case "ns" -> 1L;
            case "us", "µs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalArgumentException(
                "bad unit \"" + unit + "\" in duration \"" + text + "\" (use ns, us, ms, s, m, h)");
          };
      totalNanos += value * nanosPerUnit;
    }
    return Duration.ofNanos(Math.round(totalNanos));
  }
}
