package dev.fencing.agent.watchdog;

import dev.fencing.proto.fencing.v1.DisarmReason;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;

/**
 * The meters of the watchdog device's availability and of why it is not armed; the agent registers them once, over
 * its latest status.
 */
public final class WatchdogMetrics {

  private WatchdogMetrics() {}

  /**
   * Registers {@code fencing_watchdog_unavailable} (1 while the device is missing or could not be opened),
   * {@code fencing_watchdog_open_failures_total}, and {@code fencing_disarm_reason{kind}}: one series per disarm
   * reason kind of the proto (a fixed label set), 1 while that reason is active. Alerts tell a disarm on purpose
   * (disable file, maintenance, being removed, mode Notify) from one that needs attention by it.
   *
   * @param registry where to register
   * @param status the supervisor's latest status (read on every scrape)
   * @param feeder the agent's feeder, which counts failed opens
   */
  public static void register(MeterRegistry registry, Supplier<WatchdogStatus> status, WatchdogFeeder feeder) {
    Gauge.builder("fencing.watchdog.unavailable", status, s -> s.get().deviceUnavailable() ? 1 : 0)
        .description("1 while the watchdog device is missing or could not be opened (re-tried periodically; the"
            + " disarm reason WATCHDOG_UNAVAILABLE says why)")
        // The supplier is usually a lambda nobody else holds: a weak reference would let it go and the gauge read NaN.
        .strongReference(true).register(registry);
    FunctionCounter.builder("fencing.watchdog.open.failures", feeder, WatchdogFeeder::openFailures)
        .description("Failed attempts to open the watchdog device").register(registry);
    for (DisarmReason.Kind kind : DisarmReason.Kind.values()) {
      if (kind == DisarmReason.Kind.KIND_UNSPECIFIED || kind == DisarmReason.Kind.UNRECOGNIZED) {
        continue;
      }
      Gauge.builder("fencing.disarm.reason", status, s -> s.get().disarmedBy(kind) ? 1 : 0)
          .tag("kind", WatchdogStatus.kindName(kind))
          .description("1 while this disarm reason keeps the watchdog closed (agent status lists each with a detail)")
          .strongReference(true).register(registry);
    }
  }
}
