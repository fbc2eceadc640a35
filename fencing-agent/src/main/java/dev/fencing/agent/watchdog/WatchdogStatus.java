package dev.fencing.agent.watchdog;

import dev.fencing.proto.fencing.v1.DisarmReason;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the supervisor did as of one tick, for status, reports, metrics and logs.
 *
 * @param armed the device is open (feeding, or starving when {@code fencingInProgress})
 * @param fencingInProgress quorum was lost with Fence while armed: feeding stopped for good, the node will reset
 * @param isolated quorum is lost under Exclude: the node announces itself isolated
 * @param disarmReasons why it is not armed (empty when armed)
 * @param lastFeedNanos monotonic time of the latest keepalive, if any
 * @param feedsTotal keepalives since start
 * @param condition device condition: "ok", "not opened", or what failed
 * @param deviceTimeout the timeout the device runs with (read back), when armed
 * @param deviceUnavailable the device could not be opened at the latest attempt or is known to be missing (the
 *     disarm reason WATCHDOG_UNAVAILABLE says why, unless another disarm signal hides it)
 */
public record WatchdogStatus(
    boolean armed,
    boolean fencingInProgress,
    boolean isolated,
    List<DisarmReason> disarmReasons,
    OptionalLong lastFeedNanos,
    long feedsTotal,
    String condition,
    Optional<Duration> deviceTimeout,
    boolean deviceUnavailable) {

  public WatchdogStatus {
    disarmReasons = List.copyOf(disarmReasons);
  }

  /** True while {@code kind} is among the disarm reasons. */
  public boolean disarmedBy(DisarmReason.Kind kind) {
    return disarmReasons.stream().anyMatch(r -> r.getKind() == kind);
  }

  /**
   * A disarm reason kind as the status file, the metrics and the runbook name it: the enum name without
   * {@code KIND_} (KIND_DISABLE_FILE → DISABLE_FILE).
   */
  public static String kindName(DisarmReason.Kind kind) {
    return kind.name().replaceFirst("^KIND_", "");
  }
}
