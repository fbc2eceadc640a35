package dev.fencing.agent.cli;

import com.google.protobuf.Duration;
import com.google.protobuf.ProtocolMessageEnum;
import com.google.protobuf.Timestamp;
import dev.fencing.policy.DurationFormat;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** How the client subcommands render values for people. */
final class HumanFormat {

  private HumanFormat() {}

  /** {@code InternalIP=10.0.0.5,eth1=198.18.0.5} sorted by network, or "-" when there are none. */
  static String addresses(Map<String, String> addresses) {
    if (addresses.isEmpty()) {
      return "-";
    }
    return new TreeMap<>(addresses).entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue())
        .collect(Collectors.joining(","));
  }

  static String time(Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
  }

  /**
   * "1m30s", "4.126s", "250ms", "180us": rounded to milliseconds from one millisecond up, to microseconds below;
   * negative durations (never expected) keep their sign.
   */
  static String duration(Duration d) {
    java.time.Duration value = java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos());
    if (value.isNegative()) {
      return "-" + duration(Duration.newBuilder().setSeconds(-d.getSeconds()).setNanos(-d.getNanos()).build());
    }
    long unit = value.compareTo(java.time.Duration.ofMillis(1)) >= 0 ? 1_000_000L : 1_000L;
    long rounded = (value.toNanos() + unit / 2) / unit * unit;
    return DurationFormat.format(java.time.Duration.ofNanos(rounded));
  }

  /** FENCING_MODE_WATCHDOG → Watchdog, TIE_BREAKER_LOWEST_NAME → LowestName, KIND_DISABLE_FILE → DisableFile. */
  static String enumName(ProtocolMessageEnum value) {
    String name = value.getValueDescriptor().getName();
    String prefix = value.getDescriptorForType().getName().replaceAll("([a-z])([A-Z])", "$1_$2")
        .toUpperCase(Locale.ROOT) + "_";
    if (name.startsWith(prefix)) {
      name = name.substring(prefix.length());
    }
    StringBuilder out = new StringBuilder();
    for (String word : name.split("_")) {
      if (!word.isEmpty()) {
        out.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
      }
    }
    return out.toString();
  }

  static String yesNo(boolean b) {
    return b ? "yes" : "no";
  }
}
